import pytest
import torch

from transformers_lite.layers import (
    Block,
    BlockSpec,
    DecoderBlock,
    FeedForward,
    FlattenHead,
    MeanPoolHead,
    Residual,
    Trace,
)
from transformers_lite.layers.masks import attention_mask


def spec(**kw):
    return BlockSpec(8, 2, 16, dropout=0.0, **kw)


def memory_of(block, mem):
    return block.cross_attention.memory_keys_values(mem)


def test_residual_post_norm_and_pre_norm_equations():
    f = torch.nn.Linear(6, 6)
    x = torch.randn(2, 3, 6)
    post = Residual(6, 0.0, norm_first=False)
    assert torch.allclose(post.leave(x, f(post.enter(x))), post.norm(x + f(x)))
    pre = Residual(6, 0.0, norm_first=True)
    assert torch.allclose(pre.leave(x, f(pre.enter(x))), x + f(pre.norm(x)))


def test_encoder_block_post_norm_matches_the_posts_equations():
    block = Block(spec()).eval()
    x = torch.randn(2, 5, 8)
    h = block.attention_residual.norm(x + block.attention(x))
    expected = block.feed_forward_residual.norm(h + block.feed_forward(h))
    assert torch.allclose(block(x), expected, atol=1e-6)


def test_encoder_block_pre_norm_option():
    block = Block(spec(norm_first=True)).eval()
    x = torch.randn(2, 5, 8)
    h = x + block.attention(block.attention_residual.norm(x))
    expected = h + block.feed_forward(block.feed_forward_residual.norm(h))
    assert torch.allclose(block(x), expected, atol=1e-6)


def test_the_causal_block_is_the_same_block_with_the_look_ahead_mask():
    torch.manual_seed(0)
    causal = Block(spec(causal=True)).eval()
    encoder = Block(spec()).eval()
    encoder.load_state_dict(causal.state_dict())
    x = torch.randn(1, 6, 8)
    look_ahead = torch.ones(6, 6, dtype=torch.bool).tril()
    assert torch.allclose(causal(x), encoder(x, look_ahead), atol=1e-6)
    changed = x.clone()
    changed[:, 4:] += 1.0
    assert torch.allclose(causal(x)[:, :4], causal(changed)[:, :4], atol=1e-6)  # no leak from the future


def test_a_traced_block_names_its_steps_and_gives_the_same_output():
    block = Block(spec()).eval()
    x = torch.randn(2, 5, 8)
    trace = Trace()
    assert torch.allclose(block(x, trace=trace), block(x), atol=1e-6)
    names = trace.names()
    assert names[0] == "attention.q" and names[-1] == "feed_forward_residual.norm"
    assert {"attention_residual.sum", "feed_forward.hidden", "attention.weights"} <= set(names)
    h = trace["attention_residual.norm"]
    assert torch.allclose(trace["feed_forward_residual.sum"], h + trace["feed_forward.out"], atol=1e-6)


def test_feed_forward_activations():
    ff = FeedForward(BlockSpec(4, 1, 8, activation="gelu"))
    x = torch.randn(3, 4)
    assert torch.allclose(ff(x), ff.dense2(torch.nn.functional.gelu(ff.dense1(x))))
    with pytest.raises(ValueError, match="'tanh'"):
        FeedForward(BlockSpec(4, 1, 8, activation="tanh"))


def test_decoder_block_uses_encoder_output_as_keys():
    """Cross-attention queries come from the decoder, keys/values from the encoder memory."""
    block = DecoderBlock(spec()).eval()
    x, mem = torch.randn(1, 3, 8), torch.randn(1, 6, 8)
    y = block(x, memory_of(block, mem))
    assert y.shape == (1, 3, 8)
    assert not torch.allclose(y, block(x, memory_of(block, mem + 1.0)))


def test_each_decoder_sub_layer_reads_the_previous_ones_output():
    """Unlike post 001's draft, the feed-forward reads the cross-attention's result."""
    block = DecoderBlock(spec()).eval()
    x, mem = torch.randn(1, 3, 8), torch.randn(1, 4, 8)
    trace = Trace()
    block(x, memory_of(block, mem), trace=trace)
    after_cross = trace["cross_attention_residual.norm"]
    assert torch.allclose(after_cross, block.cross_attention_residual.norm(trace["cross_attention_residual.sum"]))
    assert torch.allclose(trace["feed_forward.out"], block.feed_forward(after_cross), atol=1e-6)


def test_decoder_block_ignores_padded_memory():
    block = DecoderBlock(spec()).eval()
    x, mem = torch.randn(1, 3, 8), torch.randn(1, 4, 8)
    valid = torch.tensor([[True, True, False, False]])
    y1 = block(x, memory_of(block, mem), memory_mask=attention_mask(valid))
    mem2 = mem.clone()
    mem2[:, 2:] = torch.randn(1, 2, 8) * 100
    assert torch.allclose(y1, block(x, memory_of(block, mem2), memory_mask=attention_mask(valid)), atol=1e-6)


def test_gradcheck_blocks_float64():
    enc = Block(BlockSpec(4, 2, 8, dropout=0.0, causal=True)).double()
    dec = DecoderBlock(BlockSpec(4, 2, 8, dropout=0.0, norm_first=True)).double()
    x = torch.randn(1, 3, 4, dtype=torch.float64, requires_grad=True)
    mem = torch.randn(1, 2, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a: enc(a), (x,))
    assert torch.autograd.gradcheck(lambda a, m: dec(a, memory_of(dec, m)), (x, mem))


def test_flatten_head_needs_exact_length_and_mean_head_ignores_padding():
    head = FlattenHead(4, 6, 3)
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
