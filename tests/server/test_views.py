"""The inspector's views give the same numbers as the library's own functions."""

import pytest
import torch

import transformers_lite as tl
from transformers_lite.inspect.scores import next_token_probabilities, pca_2d, token_embeddings
from transformers_lite.server import panel, views


@pytest.fixture(scope="module")
def loaded(runs_folder):
    return {name: tl.load(runs_folder / name) for name in ("generator", "classifier", "seq2seq")}


def test_a_prompt_keeps_its_end_and_names_unknown_characters(loaded, monkeypatch):
    run = loaded["generator"]
    prompt = views.prepare_prompt(run, "Before Zq")
    assert prompt["unknown"] == ["Z", "q"] and "('Z' 'q'; 2 tokens)" in prompt["notices"][0]
    assert prompt["ids"] == run.tokenizer.encode("Before Zq")
    monkeypatch.setattr(views, "LIMITS", views.Limits(prompt_chars=5))
    cut = views.prepare_prompt(run, "Before we proceed")
    assert cut["text"] == "oceed" and "cut to its last 5 characters" in cut["notices"][0]


def test_a_character_prompt_is_its_characters_even_with_unknown_ones(loaded):
    run = loaded["generator"]
    assert views.prepare_prompt(run, "Before Zq")["tokens"] == list("Before Zq")


def test_streamed_tokens_are_the_library_s_sample(loaded):
    run = loaded["generator"]
    streamed = "".join(t["text"] for t in views.stream_tokens(run, "Speak, ", 30, temperature=0.8, top_k=5, seed=3))
    assert "Speak, " + streamed == run.generate("Speak, ", 30, temperature=0.8, top_k=5, seed=3)


def test_next_token_view_matches_the_model_and_attention_is_causal(loaded):
    run = loaded["generator"]
    context = "Before we"
    view = views.next_token_view(run, context)
    probs = next_token_probabilities(run.model, torch.tensor(run.tokenizer.encode(context)))
    assert [t["id"] for t in view["top"]] == torch.topk(probs, 20).indices.tolist()
    assert view["top"][0]["p"] == pytest.approx(float(probs.max()), abs=1e-5)
    assert view["tokens"] == list(context)
    attention = torch.tensor(view["attention"])  # (L, H, T, T)
    assert attention.shape == (run.config.n_blocks, run.config.n_heads, len(context), len(context))
    assert torch.allclose(attention.sum(-1), torch.ones(attention.shape[:-1]), atol=1e-3)
    assert (attention.triu(1) == 0).all()


def test_long_contexts_show_the_last_tokens_and_say_so(loaded, monkeypatch):
    monkeypatch.setattr(views, "LIMITS", views.Limits(heatmap_tokens=4))
    view = views.next_token_view(loaded["generator"], "Before we proceed")
    assert view["tokens"] == list("Before we proceed"[-16:])[-4:]
    assert torch.tensor(view["attention"]).shape[-2:] == (4, 4)
    assert "last 4 of the 16 tokens" in view["notices"][0]


def test_classify_view_matches_classify_and_attention_received_sums_to_one(loaded):
    run = loaded["classifier"]
    text = "the box was superb for my family"
    view = views.classify_view(run, text)
    expected = run.classify([text])[0]
    assert view["prediction"] == expected["prediction"]
    assert view["probabilities"] == pytest.approx(expected["probabilities"], abs=1e-3)
    assert view["words"] == text.split()
    for block in view["received"]:
        for head in block:
            assert len(head) == 7 and sum(head) == pytest.approx(1.0, abs=1e-3)
    with pytest.raises(ValueError, match="text: no word the model knows"):
        views.classify_view(run, "   ")
    assert (
        "never saw in training ('xylophone'; 1 token)"
        in views.classify_view(run, "the box was xylophone")["notices"][0]
    )


def test_translate_view_matches_translate_with_cross_attention_rows_summing_to_one(loaded):
    run = loaded["seq2seq"]
    for beam in (1, 3):
        view = views.translate_view(run, "alpha beta gamma", beam)
        assert view["translation"] == run.translate(["alpha beta gamma"], beam=beam)[0]
        attention = torch.tensor(view["attention"])  # (L, H, T, S)
        assert attention.shape[:2] == (run.config.n_decoder_blocks, run.config.n_heads)
        assert attention.shape[2] == len(view["target_tokens"]) and attention.shape[3] == len(view["source_tokens"])
        assert view["source_tokens"][:3] == ["alpha", "beta", "gamma"]
        assert torch.allclose(attention.sum(-1), torch.ones(attention.shape[:-1]), atol=1e-3)


def test_a_classifier_page_is_titled_by_the_run_s_task(loaded):
    info = panel.run_info("c", loaded["classifier"])
    stars = "Classify a review: 5 classes (1 star, 2 stars, 3 stars, 4 stars, 5 stars)"
    assert info["task"] == {"title": stars, "item": "review"}
    assert panel.run_info("g", loaded["generator"])["task"] is None  # the generator's view names its own


def test_run_info_and_embeddings(loaded):
    run = loaded["generator"]
    info = panel.run_info("generator", run)
    assert (info["total_trainable"], info["total_fixed"]) == tl.count_parameters(run.model) and info[
        "family"
    ] == "generator"
    assert {"train_loss", "val_loss"} <= set(info["curves"])
    view = panel.embedding_view(run, "pca")
    assert len(view["labels"]) == len(run.tokenizer)
    assert torch.allclose(torch.tensor(view["points"]), pca_2d(token_embeddings(run.model)), atol=1e-5)
    assert len(panel.embedding_view(loaded["seq2seq"], "pca")["points"]) == len(loaded["seq2seq"].src_tokenizer)
