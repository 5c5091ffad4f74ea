"""Presets: named recipes. Each is the model *as trained*, the trainer's settings and the data settings
of one measured setup, with ``notes`` naming the command that backs it; ``tlite train FAMILY`` starts
from its family's default preset (``families``), ``--preset NAME`` from another.

The posts' own setups are presets too (``post-classifier-original``, ``post-gpt-original``: plain
Adam at a constant rate, no warmup, no clipping, batch 32, 10 epochs, as the posts train). Old names
keep working (``ALIASES``).

Limits: a recipe's ``epochs``/``max_steps``/``max_minutes`` apply only when the user gives none of
them; giving any one replaces the recipe's limits (``--max-minutes 4`` means four minutes).
"""

from __future__ import annotations

from ..config import ClassifierConfig, EncoderLMConfig, GeneratorConfig, Seq2SeqConfig
from ..errors import ConfigError
from ..settings import MUON_LR, TrainConfig
from ..tasks import ClassifierSettings, GeneratorSettings, MaskedLMSettings, Seq2SeqSettings
from .recipe import PRESET_MODELS, Recipe

# tuned on the MARC dev split (docs/results/classifier.md, benchmarks/bench_classifier.py)
_CLASSIFIER_TRAIN = TrainConfig(epochs=3, lr=4e-3, warmup_steps=200, weight_decay=0.1, eval_every=0)
# 18 epochs of ~145 s with seq2seq-small on a 2-core CPU: 44 minutes
_SEQ2SEQ_TRAIN = TrainConfig(epochs=18, lr=1e-3, warmup_steps=300, weight_decay=0.01, eval_every=0)
# 2,048-token batches (twice the optimizer steps of 4,096 in the same time) and a 4,000-token joint BPE (a smaller
# output layer): 38.73 BLEU (beam 4, seed 0) after 18 epochs on a 2-core CPU, 38.16 (mean of 3 seeds) in 30
# minutes with AdamW (seq2seq-budget, with Muon, scores higher); 4,096-token batches and an 8,000-token BPE
# scored 38.52 in 18 epochs and ~33 after 30 minutes (docs/results/translator.md, experiments/translator_budget.py)
_SEQ2SEQ_DATA = Seq2SeqSettings(vocab_size=4000, max_tokens=2048)
_SEQ2SEQ_SMALL = Seq2SeqConfig(share_embeddings=True, src_vocab_size=4000, tgt_vocab_size=4000)
# post-gpt within a time budget (experiments/gpt_recipes.py post-gpt): dropout 0.1 -> 0 at lr 1e-2 took 1-minute
# perplexity from 6.85 to 6.12 (the 44k-parameter model underfits a million characters: dropout only slows it);
# lr 1e-2 beat 1e-3 (8.63) and 2e-2 (6.22); 4-minute runs: cosine to 0 (5.52) beat a floor of 10 % (5.55)
_POST_GPT_TRAIN = TrainConfig(
    lr=1e-2, min_lr_ratio=0.0, warmup_steps=100, weight_decay=0.01, max_minutes=4.0, eval_every=1000
)
# the posts' own training: plain Adam (beta2 0.999, no weight decay) at a constant rate, no warmup and no
# gradient clipping, batch 32, one evaluation before training and one per epoch
_POST_ADAM = TrainConfig(
    lr=1e-3,
    weight_decay=0.0,
    beta2=0.999,
    schedule="constant",
    warmup_steps=0,
    grad_clip=0.0,
    epochs=10,
    eval_every=0,
    eval_at_start=True,
)
# the larger GPTs' training: AdamW on embeddings, head and gains, Muon on the blocks' matrices, and a
# warmup-stable-decay schedule to 0 (experiments/speedrun_ablation.py, docs/results/generator.md)
_MUON_GPT_TRAIN = TrainConfig(
    optimizer="muon",
    muon_lr=MUON_LR,
    schedule="wsd",
    min_lr_ratio=0.0,
    warmup_steps=100,
    weight_decay=0.01,
    eval_every=1000,
    max_minutes=2.0,
)
_BABY_GPT = GeneratorConfig(
    dim=128,
    n_heads=4,
    dim_hidden=512,
    n_blocks=4,
    max_length=64,
    dropout=0.0,
    norm_first=True,
    final_norm=True,
    qkv_bias=False,
    vocab_size=65,
    activation="gelu",
    tie_embeddings=True,
)
# today's small open models' block at baby-gpt's size (Llama, Mistral, Qwen): RMSNorm before each sub-layer and
# at the end, rotary positions, a SwiGLU feed-forward, 2 key/value heads for 4 query heads, no biases; the head
# tied as baby-gpt's. F = 384 = 3C (three matrices): 795,904 parameters against baby-gpt's 808,385
_LLAMA_STYLE = _BABY_GPT.replace(
    norm="rms",
    position="rope",
    ffn="swiglu",
    dim_hidden=384,
    kv_heads=2,
    bias=False,
    head_bias=False,
    tie_embeddings=False,  # its own output matrix, as Llama's: lower in equal minutes, 3 seeds of 3 (llama_style.py)
)
_CLASSIFIER = ClassifierConfig(
    head="mean", max_length=128, dropout=0.5, head_dropout=0.5, pad_id=1, bigram_buckets=32768, members=8
)

PRESETS: dict[str, Recipe] = {
    r.preset: r  # type: ignore[misc]
    for r in (
        # the default for reviews: masked mean pooling, pad-aware, heavy dropout, word-pair vectors, and 8 such
        # classifiers trained together with their probabilities averaged
        Recipe(
            "classifier",
            _CLASSIFIER,
            _CLASSIFIER_TRAIN,
            ClassifierSettings(embedding_init="ppmi"),
            "classifier",
            "PPMI embeddings, 3 epochs, lr 4e-3 (bash experiments/classifier_trials.sh DATA ppmi); word pairs and 8 "
            "members: bash experiments/classifier_trials.sh DATA ensemble",
        ),
        # post 000's model (251,552 trainable parameters, +32,000 position-encoding values) with the project's
        # training and post 000's random N(0, 1) embeddings
        Recipe(
            "classifier",
            ClassifierConfig(),
            _CLASSIFIER_TRAIN,
            ClassifierSettings(embedding_init="random"),
            "post-classifier",
            "the classifier preset's training with post 000's model and its random N(0, 1) embeddings",
        ),
        # post 000's model trained as post 000 trains it: Adam 1e-3 constant, batch 32, 10 epochs, a random 10 %
        # validation split, train and validation loss/accuracy every epoch, reviews padded with the unknown word
        Recipe(
            "classifier",
            ClassifierConfig(),
            _POST_ADAM.replace(eval_train=True),
            ClassifierSettings(batch_size=32, val_fraction=0.1, embedding_init="random", padding="unk"),
            "post-classifier-original",
            "post 000's train!: Adam 1e-3 constant, batch 32, 10 epochs, padding with the unknown word",
        ),
        # post 004's model (44,487 trainable parameters) trained for a time budget; dropout 0 as trained
        Recipe(
            "generator",
            GeneratorConfig(dropout=0.0),
            _POST_GPT_TRAIN,
            GeneratorSettings(batch_size=32),
            "post-gpt",
            "dropout 0 (the post's 0.1 only slows this underfitting model), lr 1e-2, cosine to 0 over the "
            "budget: experiments/gpt_recipes.py post-gpt; result: benchmarks/bench_gpt.py quality",
        ),
        # post 004's model trained as post 004 trains it: Adam(0.01) constant, batch 32, the first 95 % of the text
        # for training, 10 epochs of 0.95 L / (64 x 32) steps, dropout 0.1
        Recipe(
            "generator",
            GeneratorConfig(),
            _POST_ADAM.replace(lr=1e-2),
            GeneratorSettings(batch_size=32, val_fraction=0.05),
            "post-gpt-original",
            "post 004: Adam(0.01) constant, batch 32, 95/5 split, 10 epochs of 0.95 L / (n B) steps",
        ),
        # the post-gpt recipe on the plays of the Complete Works (tlite data download complete-works), with post
        # 004's data setup: 95/5 split, 10 epochs of its definition (0.95 L / (64 x 32) steps)
        Recipe(
            "generator",
            GeneratorConfig(dropout=0.0),
            _POST_GPT_TRAIN.replace(max_minutes=None, epochs=10.0),
            GeneratorSettings(corpus="complete-works", batch_size=32, val_fraction=0.05),
            "complete-works",
            "post-gpt's recipe on the plays of the Complete Works with post 004's 95/5 split and 10 epochs",
        ),
        # a widely used CPU reference configuration ("baby GPT"); at 3,000 steps (experiments/gpt_recipes.py
        # baby-gpt --steps 3000): lr 2e-3 1.684, 1e-3 1.691, 2e-3 with beta2 0.95 + weight decay 0.1 + cosine to
        # 0 1.690, 3e-3 with GPT-2 initialisation 1.697; batch 24 and 8 lost at 1 minute. Then Muon on the blocks'
        # matrices (0.01) with a warmup-stable-decay schedule to 0: -0.178 at 2,000 steps, -0.031 in 5 minutes
        # (experiments/speedrun_ablation.py, experiments/gpt_budget_sweep.py; docs/results/generator.md)
        Recipe(
            "generator",
            _BABY_GPT,
            _MUON_GPT_TRAIN.replace(lr=2e-3, max_minutes=2.0),
            GeneratorSettings(batch_size=12),
            "baby-gpt",
            "lr 2e-3, batch 12: experiments/gpt_recipes.py baby-gpt --steps 3000; Muon 0.01 with wsd to 0: "
            "experiments/speedrun_ablation.py, experiments/gpt_budget_sweep.py",
        ),
        # baby-gpt's size and recipe with a Llama-style block and an untied head (experiments/llama_style.py
        # compares the two at equal minutes, tied and untied)
        Recipe(
            "generator",
            _LLAMA_STYLE,
            _MUON_GPT_TRAIN.replace(lr=2e-3, max_minutes=2.0),
            GeneratorSettings(batch_size=12),
            "llama-style",
            "baby-gpt's recipe (Muon 0.01 on the blocks' matrices, wsd to 0, lr 2e-3, batch 12) on a Llama-style "
            "block: experiments/llama_style.py",
        ),
        # baby-gpt made deeper, wider and longer-sighted (6 x 192, context 128, 2.7 M parameters) for budgets
        # of a quarter of an hour and more; --preset auto picks it when the budget buys its steps
        Recipe(
            "generator",
            _BABY_GPT.replace(dim=192, n_heads=6, dim_hidden=768, n_blocks=6, max_length=128),
            _MUON_GPT_TRAIN.replace(lr=1.5e-3, max_minutes=15.0),
            GeneratorSettings(batch_size=12),
            "small-gpt",
            "baby-gpt's recipe at lr 1.5e-3: experiments/gpt_budget_sweep.py",
        ),
        # a small Multi30k translator; joint BPE: one table for both languages
        Recipe(
            "seq2seq",
            _SEQ2SEQ_SMALL,
            _SEQ2SEQ_TRAIN,
            _SEQ2SEQ_DATA,
            "seq2seq-small",
            "18 epochs of 2,048-token batches, a 4,000-token joint BPE: experiments/translator_budget.py",
        ),
        # the default translator for a budget of minutes (``tlite train seq2seq --max-minutes N`` starts from
        # it): seq2seq-small's model and data, its schedule spanning the minutes whatever the epochs, and Muon
        # on the blocks' matrices: in 30 minutes a Muon step costs 1.4 AdamW steps, yet it scored higher
        Recipe(
            "seq2seq",
            _SEQ2SEQ_SMALL,
            _SEQ2SEQ_TRAIN.replace(epochs=None, max_minutes=30.0, optimizer="muon", muon_lr=MUON_LR),
            _SEQ2SEQ_DATA,
            "seq2seq-budget",
            "seq2seq-small with Muon in 30 minutes (tlite train seq2seq --max-minutes 30): "
            "experiments/translator_budget.py --recipes default adamw",
        ),
        Recipe(
            "seq2seq",
            Seq2SeqConfig(
                dim=64,
                n_heads=4,
                dim_hidden=128,
                n_encoder_blocks=2,
                n_decoder_blocks=2,
                src_vocab_size=1000,
                tgt_vocab_size=1000,
            ),
            _SEQ2SEQ_TRAIN,
            Seq2SeqSettings(vocab_size=1000, max_tokens=_SEQ2SEQ_DATA.max_tokens),  # the BPE its config names
            "seq2seq-tiny",
        ),
        # the default classifier's encoder, pretrained on unlabelled reviews; bash experiments/mlm_trials.sh: a
        # PPMI start beat random embeddings (5-star dev 0.4853 vs 0.4557 after fine-tuning), 10 epochs matched 20
        # (0.4819) in half the time; none beat no pretraining (0.4880, docs/results/classifier.md)
        Recipe(
            "mlm",
            EncoderLMConfig(max_length=128),
            TrainConfig(epochs=10, lr=2e-3, warmup_steps=200, weight_decay=0.01, eval_every=0),
            MaskedLMSettings(embedding_init="ppmi"),
            "mlm",
            "PPMI start, 10 epochs, lr 2e-3: bash experiments/mlm_trials.sh DATA mlm mlm-20 mlm-random",
        ),
    )
}
PRESET_MODELS.update({name: recipe.model for name, recipe in PRESETS.items()})
# names of earlier releases -> today's
ALIASES = {"seed-classifier": "post-classifier", "seed-gpt": "post-gpt"}
# ``--recipe seed`` (until 0.2): the posts' own training setup of a family
ORIGINAL = {"classifier": "post-classifier-original", "generator": "post-gpt-original"}


def get_preset(name: str) -> Recipe:
    """The named preset (an old name is read as today's), or a ``ConfigError`` listing the known names."""
    name = ALIASES.get(name, name)
    if name not in PRESETS:
        raise ConfigError(f"unknown preset {name!r}; known presets: {', '.join(sorted(PRESETS))}")
    return PRESETS[name]


def presets_of(name: str) -> list[str]:
    """The preset names of the family ``name``, in the order above."""
    return [preset for preset, r in PRESETS.items() if name == r.family]
