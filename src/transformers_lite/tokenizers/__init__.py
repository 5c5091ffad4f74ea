"""Tokenizers behind one interface (``Tokenizer``): word-level, character-level and BPE."""

from .base import Tokenizer, pad_batch
from .bpe import BPETokenizer
from .byte_bpe import ByteLevelBPETokenizer
from .char import CharTokenizer
from .registry import load_tokenizer, tokenizer_from_dict
from .text import (
    WORD_PATTERN,
    load_vocabulary,
    save_vocabulary,
    select_vocabulary,
    simplify,
    words,
    words_and_punctuation,
)
from .word import WordTokenizer

__all__ = [
    "Tokenizer",
    "pad_batch",
    "BPETokenizer",
    "ByteLevelBPETokenizer",
    "CharTokenizer",
    "load_tokenizer",
    "tokenizer_from_dict",
    "WORD_PATTERN",
    "load_vocabulary",
    "save_vocabulary",
    "select_vocabulary",
    "simplify",
    "words",
    "words_and_punctuation",
    "WordTokenizer",
]
