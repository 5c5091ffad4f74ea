import dataclasses
import math
import random

import pytest
import torch

from transformers_lite import Seq2SeqConfig, build_model
from transformers_lite.generation.translate import DecodeSettings, greedy_decode
from transformers_lite.tasks.seq2seq import Seq2SeqSettings, Seq2SeqTask
from transformers_lite.tokenizers import pad_batch
from transformers_lite.training.trainer import TrainConfig, Trainer

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()


def write_reverse_task(tmp_path, n, seed):
    rng = random.Random(seed)
    src, tgt = [], []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(3, 7))]
        src.append(" ".join(words))
        tgt.append(" ".join(reversed(words)))
    for name, lines in (("src", src), ("tgt", tgt)):
        (tmp_path / f"{seed}.{name}").write_text("\n".join(lines) + "\n")
    return tmp_path / f"{seed}.src", tmp_path / f"{seed}.tgt"


def test_synthetic_reverse_task_is_learned(tmp_path):
    train = write_reverse_task(tmp_path, 2000, 0)
    val = write_reverse_task(tmp_path, 100, 1)
    settings = Seq2SeqSettings(
        *map(str, train), *map(str, val), tokenizer="word", max_tokens=512, label_smoothing=0.0, bleu_sentences=0
    )
    config = Seq2SeqConfig(
        dim=64, n_heads=4, dim_hidden=128, n_encoder_blocks=2, n_decoder_blocks=2, dropout=0.0, max_length=16
    )
    task = Seq2SeqTask.prepare(settings, config)
    config = task.model_config(config)
    torch.manual_seed(0)
    model = build_model(config)
    train_config = TrainConfig(max_steps=400, lr=3e-3, warmup_steps=50, eval_every=400, weight_decay=0.0)
    Trainer(model, task, train_config, log=lambda *_: None).fit()
    src, _ = pad_batch(task.val_src, config.pad_id)
    out = greedy_decode(model, src, task.tgt_tok.bos_id, task.tgt_tok.eos_id, DecodeSettings())
    correct = sum(a == b for hyp, ref in zip(out, task.val_tgt) for a, b in zip(hyp, ref))
    total = sum(len(ref) for ref in task.val_tgt)
    assert correct / total > 0.97
    assert sum(hyp == ref for hyp, ref in zip(out, task.val_tgt)) / len(out) > 0.9
    # without BLEU sentences the best evaluation is the lowest validation loss; with them, the highest BLEU
    assert (task.main_metric, task.metrics) == ("val_loss", ("val_loss", "val_bits_per_char"))
    # bits per character: the loss's nats over every target token (its words and its end), per character of
    # the target sentences (their end counted as one), which compares translators whatever their tokenizer
    scores = task.evaluate(model)
    tokens = sum(len(ids) + 1 for ids in task.val_tgt)
    characters = sum(len(line) + 1 for line in val[1].read_text().splitlines())
    assert scores["val_bits_per_char"] == pytest.approx(scores["val_loss"] * tokens / math.log(2) / characters)
    bleu = Seq2SeqTask.prepare(dataclasses.replace(settings, bleu_sentences=5), config)
    assert bleu.main_metric == "val_bleu" and set(bleu.metrics) == set(bleu.evaluate(model))


def test_each_epoch_orders_its_batches_once(tmp_path, monkeypatch):
    """The batch order of an epoch is built once per epoch, not once per step (it was rebuilt twice
    per step after the first epoch)."""
    from transformers_lite.tasks import seq2seq

    train = write_reverse_task(tmp_path, 300, 0)
    settings = Seq2SeqSettings(*map(str, train), *map(str, train), tokenizer="word", max_tokens=128)
    task = Seq2SeqTask.prepare(settings, Seq2SeqConfig(dim=16, n_heads=2, dim_hidden=32, max_length=16))
    calls = []
    real = seq2seq.bucket_batches
    monkeypatch.setattr(seq2seq, "bucket_batches", lambda *a, **kw: calls.append(kw.get("seed")) or real(*a, **kw))
    n = task.steps_per_epoch()
    calls.clear()
    first = [task.batch(i) for i in range(3 * n)]
    assert len(calls) == 2  # epochs 1 and 2 (epoch 0's order is already built: it was counted)
    again = Seq2SeqTask.prepare(settings, Seq2SeqConfig(dim=16, n_heads=2, dim_hidden=32, max_length=16))
    for i in (0, n + 1, 2 * n + 2):  # the same batches, whatever order they are asked for in
        assert torch.equal(again.batch(i).src, first[i].src)


def test_your_own_pairs_never_meet_the_default_corpus(tmp_path, monkeypatch):
    """A table of pairs alone: validation is a seeded split of it, no Multi30k file is opened; a target
    file without its source is refused."""
    import pytest

    from transformers_lite.errors import ConfigError
    from transformers_lite.tasks import seq2seq

    def no_default(*args, **kw):
        raise AssertionError("a default corpus was opened beside the user's file")

    monkeypatch.setattr(seq2seq, "resolve", no_default)
    rows = [(f"w{i} x{i % 7}", f"x{i % 7} w{i}") for i in range(200)]
    (tmp_path / "pairs.tsv").write_text("src\ttgt\n" + "".join(f"{a}\t{b}\n" for a, b in rows))
    settings = Seq2SeqSettings(str(tmp_path / "pairs.tsv"), val_fraction=0.1)
    (train, val, files, languages) = seq2seq.read_pairs(settings, seed=3)
    assert len(train[0]) == 180 and len(val[0]) == 20 and languages == ("src", "tgt")
    assert set(zip(*train)).isdisjoint(zip(*val))
    assert sorted([*zip(*train), *zip(*val)]) == sorted(rows)  # every pair once, still paired
    assert list(files) == ["train_src"]
    assert seq2seq.read_pairs(settings, seed=3)[1] == val  # the split is seeded
    with pytest.raises(ConfigError, match="--train-tgt is given without --train-src"):
        seq2seq.read_pairs(Seq2SeqSettings(train_tgt=str(tmp_path / "pairs.tsv")), seed=0)


def test_word_vectors_start_the_source_and_target_rows_of_their_words(tmp_path):
    """Post 001 starts both embeddings from GloVe: each table's rows of the file's words, at its own spread."""
    train = write_reverse_task(tmp_path, 200, 0)
    val = write_reverse_task(tmp_path, 20, 1)
    path = tmp_path / "glove.txt"
    path.write_text("".join(f"{w} {' '.join(str(i - j / 8) for j in range(32))}\n" for i, w in enumerate(WORDS[:3])))
    settings = Seq2SeqSettings(*map(str, train), *map(str, val), tokenizer="word", bleu_sentences=0, vectors=str(path))
    config = Seq2SeqConfig(dim=32, n_heads=4, dim_hidden=64, n_encoder_blocks=1, n_decoder_blocks=1, max_length=16)
    task = Seq2SeqTask.prepare(settings, config)
    assert task.note.count("word vectors: 3 of") == 2  # the source's tokenizer and the target's
    torch.manual_seed(0)
    model = build_model(task.model_config(config))
    tables = {"src": model.encoder.embedding.weight, "tgt": model.tgt_embedding.weight}
    before = {k: t.detach().clone() for k, t in tables.items()}
    task.init_model(model)
    rows = torch.tensor([[i - j / 8 for j in range(32)] for i in range(3)])
    for key, tok in (("src", task.src_tok), ("tgt", task.tgt_tok)):
        ids = [tok.encode(w)[0] for w in WORDS[:3]]
        scale = before[key].std(unbiased=False) / rows.std(unbiased=False)
        assert torch.allclose(tables[key].detach()[ids], rows * scale)
        others = [i for i in range(len(tok)) if i not in ids]
        assert torch.equal(tables[key].detach()[others], before[key][others])


def test_with_one_joint_vocabulary_and_two_tables_both_tables_get_the_vectors(tmp_path):
    train = write_reverse_task(tmp_path, 200, 0)
    val = write_reverse_task(tmp_path, 20, 1)
    path = tmp_path / "glove.txt"
    path.write_text("".join(f"{w} {' '.join(str(i + j / 8) for j in range(32))}\n" for i, w in enumerate(WORDS[:3])))
    settings = Seq2SeqSettings(*map(str, train), *map(str, val), tokenizer="word", bleu_sentences=0, vectors=str(path))
    config = Seq2SeqConfig(dim=32, n_heads=4, dim_hidden=64, n_encoder_blocks=1, n_decoder_blocks=1, max_length=16)
    task = Seq2SeqTask.prepare(settings, config)
    task.tgt_tok, task.vectors = task.src_tok, task.vectors[:1]  # what a joint vocabulary gives: one tokenizer
    torch.manual_seed(0)
    model = build_model(task.model_config(config).replace(tgt_vocab_size=len(task.src_tok), share_embeddings=False))
    assert model.tgt_embedding.weight is not model.encoder.embedding.weight
    task.init_model(model)
    ids = [task.src_tok.encode(w)[0] for w in WORDS[:3]]
    for table in (model.encoder.embedding.weight, model.tgt_embedding.weight):
        rows = table.detach()[ids]
        assert torch.allclose(rows[1] - rows[0], rows[2] - rows[1])  # the file's rows, scaled: evenly spaced


def test_the_task_says_what_it_read_and_what_it_left_out(tmp_path):
    train = write_reverse_task(tmp_path, 30, 0)
    val = write_reverse_task(tmp_path, 10, 1)
    (tmp_path / "0.src").write_text((tmp_path / "0.src").read_text() + " ".join(WORDS * 2) + "\n")  # too long
    (tmp_path / "0.tgt").write_text((tmp_path / "0.tgt").read_text() + "alpha\n")
    settings = Seq2SeqSettings(*map(str, train), *map(str, val), tokenizer="word", bleu_sentences=0)
    config = Seq2SeqConfig(dim=16, n_heads=2, dim_hidden=32, n_encoder_blocks=1, n_decoder_blocks=1, max_length=16)
    with pytest.warns(UserWarning, match="dropped 1 of 31 training pairs longer than max_length=16"):
        task = Seq2SeqTask.prepare(settings, config)
    assert task.note == (
        "src -> tgt pairs from 0.src and 0.tgt: 30 training and 10 validation pairs; left out 1 training "
        "pairs longer than max_length=16 tokens"
    )
