import subprocess
import sys

from transformers_lite import build_model, get_preset, summary


def test_summary_lists_layers_like_the_posts_and_ends_with_total():
    text = summary(build_model(get_preset("post-gpt").model))
    assert "Embedding(71 => 32)" in text and "Dense(32 => 32; bias=false)" in text
    assert "Dense(32 => 128, relu)" in text
    assert text.splitlines()[-1] == "Total: 44,487 trainable parameters (+0 non-trainable)"


def test_tied_weights_are_counted_once():
    cfg = get_preset("post-gpt").model.replace(tie_embeddings=True)
    last = summary(build_model(cfg)).splitlines()[-1]
    assert last == f"Total: {44_487 - 71 * 32:,} trainable parameters (+0 non-trainable)"


def test_cli_summary_of_both_post_presets():
    for preset, total in (
        ("post-classifier", "251,552 trainable parameters (+32,000 non-trainable)"),
        ("post-gpt", "44,487 trainable parameters (+0 non-trainable)"),
    ):
        out = subprocess.run(
            [sys.executable, "-m", "transformers_lite", "summary", preset], capture_output=True, text=True, check=True
        ).stdout
        assert out.strip().splitlines()[-1] == f"Total: {total}"
    bad = subprocess.run([sys.executable, "-m", "transformers_lite", "summary", "nope"], capture_output=True, text=True)
    assert bad.returncode == 1 and "unknown preset 'nope'" in bad.stderr


def test_an_ensemble_with_word_pairs_counts_every_parameter():
    from transformers_lite import ClassifierConfig, build_model, count_parameters, summary

    model = build_model(ClassifierConfig(vocab_size=50, head="mean", max_length=8, members=3, bigram_buckets=64))
    trainable, _ = count_parameters(model)
    assert trainable == sum(p.numel() for p in model.parameters())
    text = summary(model)
    assert text.count("BigramEmbedding(64 pairs => 32)") == 3 and "ClassifierEnsemble(" in text
