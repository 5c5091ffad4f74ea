"""Bits per character and per byte, and the unigram reference, of a language model's loss."""

import math
from collections import Counter

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformers_lite import GeneratorConfig, build_model
from transformers_lite.evaluation.metrics import bits_per_unit, text_units, unigram_loss
from transformers_lite.tasks.generator import GeneratorSettings, GeneratorTask
from transformers_lite.tokenizers import CharTokenizer

TEXT = "First Citizen:\nBefore we proceed any further, hear me speak.\n" * 12


def task_and_model(text: str) -> tuple[GeneratorTask, torch.nn.Module]:
    tokenizer = CharTokenizer.from_text(text)
    config = GeneratorConfig(vocab_size=len(tokenizer), max_length=8, dim=8, n_heads=2, dim_hidden=8, n_blocks=1)
    ids = torch.tensor(tokenizer.encode(text), dtype=torch.long)
    task = GeneratorTask(GeneratorSettings(val_fraction=0.3), config, tokenizer, ids)
    torch.manual_seed(0)
    return task, build_model(config).eval()


def test_a_character_model_over_ascii_scores_its_loss_over_ln_2_bits_per_character_and_byte():
    task, model = task_and_model(TEXT)
    scores = task.evaluate(model)
    assert scores["val_bits_per_char"] == pytest.approx(scores["val_loss"] / math.log(2), rel=1e-12)
    assert scores["val_bits_per_byte"] == pytest.approx(scores["val_bits_per_char"], rel=1e-12)  # ASCII: 1 byte each
    full = task.evaluate(model, split="train")
    assert full["train_full_bits_per_char"] == pytest.approx(full["train_full_loss"] / math.log(2), rel=1e-12)


def test_characters_of_two_bytes_halve_the_bits_per_byte():
    task, model = task_and_model("éàü ö" * 60)  # 4 of every 5 characters take 2 bytes in UTF-8
    scores = task.evaluate(model)
    assert scores["val_bits_per_char"] == pytest.approx(scores["val_loss"] / math.log(2), rel=1e-12)
    ratio = scores["val_bits_per_char"] / scores["val_bits_per_byte"]
    assert 1.7 <= ratio <= 1.9  # bytes per character of the validation text (9 bytes per 5 characters)


@settings(max_examples=30, deadline=None)
@given(st.text(min_size=2, max_size=40), st.floats(0, 20))
def test_per_character_the_same_bits_whatever_the_units(text, loss):
    tokenizer = CharTokenizer.from_text(text)
    ids = tokenizer.encode(text)
    n = len(ids) - 1  # every token after the first is predicted
    chars, nbytes = text_units(tokenizer.decode(ids[1:]))
    assert chars == n  # a character tokenizer: one token per character (an unknown one included)
    assert bits_per_unit(loss, n, chars) == pytest.approx(loss / math.log(2), rel=1e-12, abs=1e-12)
    # the same total of bits, spread over bytes instead of characters
    assert bits_per_unit(loss, n, nbytes) * nbytes == pytest.approx(bits_per_unit(loss, n, chars) * chars, abs=1e-9)
    assert nbytes >= chars


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=200))
def test_the_unigram_loss_is_the_entropy_of_the_token_frequencies(ids):
    counts = Counter(ids)
    expected = -sum(c / len(ids) * math.log(c / len(ids)) for c in counts.values())
    loss = unigram_loss(torch.tensor(ids))
    assert loss == pytest.approx(expected, abs=1e-12)
    assert -1e-12 <= loss <= math.log(len(counts)) + 1e-12  # at most uniform over the tokens that occur


def test_no_text_is_nan():
    assert math.isnan(bits_per_unit(1.0, 0, 0))
