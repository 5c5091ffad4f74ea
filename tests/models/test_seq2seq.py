import pytest
import torch

from transformers_lite import Seq2SeqConfig, build_model, count_parameters, get_preset

CFG = Seq2SeqConfig(
    src_vocab_size=30,
    tgt_vocab_size=25,
    dim=16,
    n_heads=2,
    dim_hidden=32,
    n_encoder_blocks=2,
    n_decoder_blocks=2,
    dropout=0.0,
    max_length=32,
    pad_id=0,
)


@pytest.mark.parametrize("norm_first", [False, True])
def test_source_padding_is_invisible_to_the_decoder(norm_first):
    model = build_model(CFG.replace(norm_first=norm_first)).eval()
    src = torch.tensor([[5, 6, 7]])
    src_padded = torch.tensor([[5, 6, 7, 0, 0, 0]])
    tgt = torch.tensor([[1, 8, 9, 10]])
    assert torch.allclose(model(src, tgt), model(src_padded, tgt), atol=1e-5)


def test_decoder_cannot_see_future_targets():
    model = build_model(CFG).eval()
    src = torch.randint(1, 30, (2, 5))
    tgt = torch.randint(1, 25, (2, 6))
    changed = tgt.clone()
    changed[:, 4:] = torch.randint(1, 25, (2, 2))
    a, b = model(src, tgt), model(src, changed)
    assert torch.allclose(a[:, :4], b[:, :4], atol=1e-6)


def test_target_padding_does_not_change_real_positions():
    model = build_model(CFG).eval()
    src = torch.randint(1, 30, (1, 5))
    tgt = torch.tensor([[1, 4, 5]])
    padded = torch.tensor([[1, 4, 5, 0, 0]])
    assert torch.allclose(model(src, tgt), model(src, padded)[:, :3], atol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_kv_cache_decoding_equals_full_decode(norm_first):
    model = build_model(CFG.replace(norm_first=norm_first)).eval()
    src = torch.tensor([[5, 6, 7, 0], [8, 9, 10, 11]])
    valid = src != 0
    tgt = torch.randint(1, 25, (2, 7))
    memory = model.encode(src, valid)
    full = model.decode(tgt, memory, valid)
    cache = model.start_decoding(memory, valid)
    steps = [model.decode_step(tgt[:, :2], cache)]  # a two-token prefill, then one token at a time
    steps += [model.decode_step(tgt[:, i : i + 1], cache) for i in range(2, 7)]
    assert torch.allclose(torch.stack(steps, 1), full[:, 1:], atol=1e-5)
    cache.reorder(torch.tensor([1, 1]))  # beam search keeps rows; the cache follows
    assert cache.memory_kv[0][0].shape[0] == 2 and torch.equal(cache.memory_kv[0][0][0], cache.memory_kv[0][0][1])


def test_shapes_presets_and_sharing():
    model = build_model(CFG)
    assert model(torch.randint(1, 30, (3, 5)), torch.randint(1, 25, (3, 4))).shape == (3, 4, 25)
    assert model.head.weight is model.tgt_embedding.weight
    shared = build_model(CFG.replace(tgt_vocab_size=30, share_embeddings=True))
    assert shared.encoder.embedding is shared.tgt_embedding
    with pytest.raises(ValueError, match="equal vocabularies"):
        CFG.replace(share_embeddings=True)
    assert count_parameters(build_model(get_preset("seq2seq-small").model))[0] > 1_000_000


@pytest.mark.parametrize("position", ["sinusoidal", "none"])
def test_without_a_position_encoding_the_encoder_reads_a_bag_of_words(position):
    """position="none" (post 001's question): the encoder's output for a reversed source is its output
    for the source, reversed; with the sinusoidal encoding it is not. The decoder's causal mask still
    tells its own positions apart."""
    config = Seq2SeqConfig(
        src_vocab_size=20, tgt_vocab_size=20, dim=16, n_heads=2, dim_hidden=32, max_length=10, position=position
    )
    torch.manual_seed(0)
    model = build_model(config).eval()
    src = torch.tensor([[5, 6, 7, 8, 9]])
    ones = torch.ones_like(src, dtype=torch.bool)
    forward, backward = model.encode(src, ones), model.encode(src.flip(1), ones)
    assert torch.allclose(forward.flip(1), backward, atol=1e-5) == (position == "none")
