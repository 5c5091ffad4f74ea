import torch

from transformers_lite import GeneratorConfig, build_model
from transformers_lite.evaluation.metrics import language_model_loss, perplexity
from transformers_lite.generation.generate import generate_tokens
from transformers_lite.tasks.generator import GeneratorSettings, GeneratorTask
from transformers_lite.tokenizers import CharTokenizer
from transformers_lite.training.trainer import TrainConfig, Trainer


def test_tiny_repeated_text_is_learned_to_near_zero_loss(tmp_path):
    text = "abcdefgh" * 200
    path = tmp_path / "t.txt"
    path.write_text(text)
    config = GeneratorConfig(max_length=16, dim=32, n_heads=2, dim_hidden=64, n_blocks=1, dropout=0.0)
    task = GeneratorTask.prepare(GeneratorSettings(str(path), batch_size=16), config)
    config = task.model_config(config)
    torch.manual_seed(0)
    model = build_model(config)
    Trainer(
        model, task, TrainConfig(max_steps=150, lr=1e-2, warmup_steps=10, eval_every=150), log=lambda *_: None
    ).fit()
    loss, _ = language_model_loss(model.eval(), task.val_ids, 16)
    assert loss < 0.05
    tok = task.tokenizer
    out = tok.decode(generate_tokens(model, torch.tensor(tok.encode("abc")), 20, temperature=0.0))
    assert out == "defghabcdefghabcdefg"


def test_uniform_model_perplexity_equals_vocabulary_size():
    tok = CharTokenizer.from_text("abcdefghij")
    model = build_model(GeneratorConfig(vocab_size=len(tok), max_length=8, dim=8, n_heads=2, dim_hidden=8, n_blocks=1))
    with torch.no_grad():
        model.head.weight.zero_()
        model.head.bias.zero_()
    ids = torch.randint(0, len(tok), (101,))
    loss, n = language_model_loss(model.eval(), ids, 8)
    assert n == 100 and abs(perplexity(loss) - len(tok)) < 1e-3
