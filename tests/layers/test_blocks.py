import torch

from transformers_lite.layers import DecoderBlock, EncoderBlock, FeedForward, MeanPoolHead, SeedHead
from transformers_lite.layers.masks import attention_mask

import pytest


def test_encoder_block_post_norm_matches_seed_equations():
    block = EncoderBlock(2, 8, 16, dropout=0.0).eval()
    x = torch.randn(2, 5, 8)
    a, _ = block.attention(x)
    h = block.norm_attention(x + a)
    expected = block.norm_feedforward(h + block.feed_forward(h))
    assert torch.allclose(block(x)[0], expected, atol=1e-6)


def test_encoder_block_pre_norm_option():
    block = EncoderBlock(2, 8, 16, dropout=0.0, norm_first=True).eval()
    x = torch.randn(2, 5, 8)
    a, _ = block.attention(block.norm_attention(x))
    h = x + a
    expected = h + block.feed_forward(block.norm_feedforward(h))
    assert torch.allclose(block(x)[0], expected, atol=1e-6)


def test_feed_forward_activations():
    ff = FeedForward(4, 8, "gelu")
    x = torch.randn(3, 4)
    assert torch.allclose(ff(x), ff.dense2(torch.nn.functional.gelu(ff.dense1(x))))
    with pytest.raises(ValueError, match="'tanh'"):
        FeedForward(4, 8, "tanh")


def test_decoder_block_uses_encoder_output_as_keys():
    """Cross-attention queries come from the decoder, keys/values from the encoder memory."""
    block = DecoderBlock(2, 8, 16, dropout=0.0).eval()
    x, mem = torch.randn(1, 3, 8), torch.randn(1, 6, 8)
    y, scores = block(x, mem, is_causal=True, return_scores=True)
    assert y.shape == (1, 3, 8) and scores.shape == (1, 2, 3, 6)
    y2, _ = block(x, mem + 1.0, is_causal=True)
    assert not torch.allclose(y, y2)


def test_decoder_block_ignores_padded_memory():
    block = DecoderBlock(2, 8, 16, dropout=0.0).eval()
    x, mem = torch.randn(1, 3, 8), torch.randn(1, 4, 8)
    valid = torch.tensor([[True, True, False, False]])
    y1, _ = block(x, mem, memory_mask=attention_mask(valid), is_causal=True)
    mem2 = mem.clone()
    mem2[:, 2:] = torch.randn(1, 2, 8) * 100
    y2, _ = block(x, mem2, memory_mask=attention_mask(valid), is_causal=True)
    assert torch.allclose(y1, y2, atol=1e-6)


def test_gradcheck_blocks_float64():
    enc = EncoderBlock(2, 4, 8, dropout=0.0).double()
    dec = DecoderBlock(2, 4, 8, dropout=0.0, norm_first=True).double()
    x = torch.randn(1, 3, 4, dtype=torch.float64, requires_grad=True)
    mem = torch.randn(1, 2, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a: enc(a, is_causal=True, return_scores=True)[0], (x,))
    assert torch.autograd.gradcheck(lambda a, m: dec(a, m, is_causal=True, return_scores=True)[0], (x, mem))


def test_seed_head_needs_exact_length_and_mean_head_ignores_padding():
    head = SeedHead(4, 6, 3)
    assert head(torch.randn(2, 6, 4)).shape == (2, 3)
    with pytest.raises(ValueError, match="max_length=6"):
        head(torch.randn(2, 5, 4))
    mean = MeanPoolHead(4, 3).eval()
    x = torch.randn(1, 5, 4)
    valid = torch.tensor([[True, True, True, False, False]])
    x2 = x.clone()
    x2[:, 3:] = 99.0
    assert torch.allclose(mean(x, valid), mean(x2, valid))
    assert torch.allclose(mean(x, valid), mean(x[:, :3]))
