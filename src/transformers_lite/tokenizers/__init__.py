"""Tokenizers: text normalisation, word/character index tokenizers, trainable BPE."""

from .index import CharTokenizer, IndexTokenizer, load_tokenizer, pad_batch, tokenizer_from_dict
from .text import WORD_PATTERN, load_vocabulary, save_vocabulary, select_vocabulary, simplify, words

__all__ = ["CharTokenizer", "IndexTokenizer", "load_tokenizer", "pad_batch", "tokenizer_from_dict", "WORD_PATTERN",
           "load_vocabulary", "save_vocabulary", "select_vocabulary", "simplify", "words"]
