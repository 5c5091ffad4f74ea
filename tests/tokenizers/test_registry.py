"""Every tokenizer behind the one interface: callers never ask which kind it is."""

import json

import pytest

from transformers_lite.errors import RunError
from transformers_lite.tokenizers import BPETokenizer, CharTokenizer, Tokenizer, WordTokenizer, load_tokenizer

CORPUS = ["ein mann fährt fahrrad .", "eine frau läuft im park .", "ein hund spielt im park ."] * 30


def every_kind():
    return [
        WordTokenizer(["ein", "mann", "im", "park"], "<unk>", pad="<pad>", bos="<bos>", eos="<eos>", split="punct"),
        CharTokenizer.from_text(" ".join(CORPUS)),
        BPETokenizer.train(CORPUS, vocab_size=60),
    ]


@pytest.mark.parametrize("tok", every_kind(), ids=lambda t: t.kind)
def test_protocol_round_trip_and_save_load(tok, tmp_path):
    assert isinstance(tok, Tokenizer) and tok.vocab_size == len(tok)
    text = "ein mann im park"
    ids = tok.encode(text)
    assert isinstance(ids, list) and all(isinstance(i, int) and 0 <= i < len(tok) for i in ids)
    assert tok.decode(ids) == text
    assert all(isinstance(tok.token(i), str) for i in ids)
    tok.save(tmp_path / "t.json")
    back = load_tokenizer(tmp_path / "t.json")
    assert type(back) is type(tok) and back.encode(text) == ids and back.decode(ids) == text


def test_damaged_or_unknown_files_name_the_file(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text('{"kind": "word", "vocab')
    with pytest.raises(RunError, match="tokenizer.json: damaged tokenizer file"):
        load_tokenizer(path)
    path.write_text(json.dumps({"kind": "sentencepiece"}))
    with pytest.raises(RunError, match="unknown tokenizer kind 'sentencepiece'"):
        load_tokenizer(path)
    path.write_text(json.dumps({"kind": "word"}))
    with pytest.raises(RunError, match="tokenizer.json: damaged tokenizer file"):
        load_tokenizer(path)
    with pytest.raises(FileNotFoundError, match="missing.json"):
        load_tokenizer(tmp_path / "missing.json")
