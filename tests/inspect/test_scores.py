import torch

from transformers_lite import GeneratorConfig, build_model
from transformers_lite.inspect import plots, scores

CFG = GeneratorConfig(vocab_size=10, max_length=12, dim=16, n_heads=2, dim_hidden=32, n_blocks=2)


def test_attention_rows_sum_to_one_and_masked_cells_are_blank():
    model = build_model(CFG)
    w = scores.generator_attention(model, torch.randint(0, 10, (9,)), block=1, head=1)
    assert w.shape == (9, 9)
    future = ~torch.ones(9, 9, dtype=torch.bool).tril()
    assert torch.isnan(w[future]).all() and not torch.isnan(w[~future]).any()
    assert torch.allclose(torch.nan_to_num(w).sum(-1), torch.ones(9), atol=1e-5)


def test_next_token_probabilities_and_similarity_and_projections():
    model = build_model(CFG)
    p = scores.next_token_probabilities(model, torch.randint(0, 10, (30,)))  # longer than the context
    assert p.shape == (10,) and abs(float(p.sum()) - 1) < 1e-5
    sim = scores.cosine_similarity_matrix(model.embeddings()["position"])
    assert sim.shape == (12, 12) and torch.allclose(sim.diagonal(), torch.ones(12), atol=1e-5)
    pts = scores.pca_2d(torch.tensor([[1.0, 0, 0], [-1.0, 0, 0], [0, 0.1, 0]]))
    assert pts.shape == (3, 2) and abs(abs(float(pts[0, 0])) - 1) < 0.1


def test_pngs_are_written(tmp_path):
    model = build_model(CFG)
    w = scores.generator_attention(model, torch.randint(0, 10, (6,)), 0, 0)
    paths = [
        plots.heatmap(w, list("abcdef"), list("abcdef"), tmp_path / "a.png", "attention"),
        plots.bars(list("xyz"), [0.5, 0.3, 0.2], tmp_path / "b.png", "next"),
        plots.scatter_labels(
            scores.tsne_2d(model.embeddings()["token"]), list("0123456789"), tmp_path / "c.png", "t-SNE"
        ),
    ]
    for path in paths:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_an_ensemble_shows_its_first_members_attention_and_embeddings():
    from transformers_lite import ClassifierConfig, build_model
    from transformers_lite.inspect.scores import classifier_attention, token_embeddings

    torch.manual_seed(0)
    config = ClassifierConfig(vocab_size=30, head="mean", max_length=12, pad_id=0, members=2)
    model = build_model(config)
    ids = torch.tensor([4, 5, 6])
    first = classifier_attention(model.members[0], ids)
    got = classifier_attention(model, ids)
    assert len(got) == 1 and torch.equal(got[0], first[0])  # (H, T, T) of member 0
    assert torch.equal(token_embeddings(model), model.members[0].encoder.embedding.weight)
