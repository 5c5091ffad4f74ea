import torch

from transformers_lite.tokenizers import load_tokenizer
from transformers_lite.tokenizers.bpe import BPETokenizer

CORPUS = ["ein mann fährt fahrrad .", "eine frau läuft im park .", "ein hund spielt im park ."] * 30


def test_trains_to_the_requested_size_with_fixed_specials():
    tok = BPETokenizer.train(CORPUS, vocab_size=80)
    assert len(tok) <= 80
    assert (tok.unk_id, tok.pad_id, tok.bos_id, tok.eos_id) == (0, 1, 2, 3)
    assert len(tok.tokenize("ein mann fährt")) < len("ein mann fährt")  # merges happened


def test_round_trip_padding_and_save_load(tmp_path):
    tok = BPETokenizer.train(CORPUS, vocab_size=80)
    text = "ein hund läuft im park ."
    assert tok.decode(tok.encode(text)) == text
    ids = tok.encode(text, add_bos=True, add_eos=True)
    assert ids[0] == tok.bos_id and ids[-1] == tok.eos_id and tok.decode(ids) == text
    batch, mask = tok.encode_batch(["ein mann", text])
    assert batch[0, mask[0].sum() :].eq(tok.pad_id).all() and mask[1].all()
    tok.save(tmp_path / "bpe.json")
    back = load_tokenizer(tmp_path / "bpe.json")
    assert back.encode(text) == tok.encode(text) and isinstance(back, BPETokenizer)
    assert isinstance(batch, torch.Tensor)
