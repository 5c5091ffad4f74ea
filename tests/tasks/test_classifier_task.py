import csv
import json
import random
import subprocess
import sys

import pytest
import torch

from transformers_lite import ClassifierConfig, build_model, get_preset
from transformers_lite.errors import ConfigError
from transformers_lite.tasks.classifier import ClassifierSettings, ClassifierTask
from transformers_lite.training.trainer import TrainConfig, Trainer

from ..conftest import shared_data
from ..helpers import train_run

KEYWORDS = {1: "awful", 2: "poor", 3: "okay", 4: "good", 5: "superb"}
FILLER = "the product arrived in a box and i used it for a week with my family at home".split()


def synthetic_reviews(path, n, seed):
    """Reviews whose star rating is decided by one keyword hidden among filler words."""
    rng = random.Random(seed)
    with open(path, "w") as fh:
        for _ in range(n):
            stars = rng.randint(1, 5)
            words = rng.sample(FILLER, 8)
            words.insert(rng.randint(0, 8), KEYWORDS[stars])
            fh.write(json.dumps({"review_body": " ".join(words).capitalize() + ".", "stars": str(stars)}) + "\n")
    return path


@pytest.fixture
def corpus(tmp_path):
    return synthetic_reviews(tmp_path / "train.jsonl", 1500, 0), synthetic_reviews(tmp_path / "dev.jsonl", 300, 1)


@pytest.mark.parametrize("labels, head", [(5, "mean"), (2, "mean"), (5, "flatten"), (1, "flatten")])
def test_tiny_model_learns_keyword_labels(tmp_path, corpus, labels, head):
    train, dev = corpus
    config = ClassifierConfig(dim=16, n_heads=2, dim_hidden=32, head=head, dropout=0.0, max_length=16)
    task = ClassifierTask.prepare(ClassifierSettings(str(train), str(dev), labels=labels, min_df=1), config)
    config = task.model_config(config)
    torch.manual_seed(0)
    model = build_model(config)
    state = Trainer(
        model, task, TrainConfig(epochs=8, lr=5e-3, warmup_steps=20, eval_every=0), log=lambda *_: None
    ).fit()
    assert state.history[-1]["val_accuracy"] > 0.9
    if labels == 2:
        assert len(task.val_labels) < 300  # 3-star reviews dropped
    # stars are ordered: the 5-class task also scores the mean absolute error and off-by-one accuracy
    assert ("val_mae" in state.history[-1]) == (labels == 5)
    if labels == 5:
        wrong = 1 - state.history[-1]["val_accuracy"]  # every miss costs 1 to 4 stars
        assert wrong - 1e-9 <= state.history[-1]["val_mae"] <= 4 * wrong + 1e-9
        assert state.history[-1]["val_off_by_one"] >= state.history[-1]["val_accuracy"]


TOPICS = {"billing": "invoice", "delivery": "parcel", "login": "password"}


def test_a_users_own_table_with_named_classes_through_the_cli(tmp_path, capsys):
    """A ticket CSV (a header, quoted multi-line records, string labels): trained, classified record by
    record and evaluated with the classes it holds."""
    from transformers_lite.cli.main import main

    rng = random.Random(0)
    rows = []
    for i in range(600):
        topic = rng.choice(sorted(TOPICS))
        words = rng.sample(FILLER, 6)
        words.insert(rng.randint(0, 6), TOPICS[topic])
        text = " ".join(words) + ("\nsent from my phone, thanks" if i % 7 == 0 else "")
        rows.append((f"T-{i}", text, topic))
    path = tmp_path / "tickets.csv"
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["ticket", "comment", "topic"])
        writer.writerows(rows)
    tiny = ["--set", "dim=16", "--set", "n_heads=2", "--set", "dim_hidden=32", "--set", "max_length=16"]
    args = ["train", "classifier", "--train", path, "--min-df", "1", *tiny, "--epochs", "6", "--lr", "5e-3"]
    assert main([str(a) for a in [*args, "--warmup-steps", "20", "--out", tmp_path / "run"]]) == 0
    out = capsys.readouterr().out
    assert "texts from column 'comment', labels from column 'topic': 3 classes (billing, delivery, login)" in out
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["n_labels"] == 3 and config["label_names"] == ["billing", "delivery", "login"]

    assert main(["classify", str(tmp_path / "run"), "--input", str(path), "--output", str(tmp_path / "p.txt")]) == 0
    predicted = (tmp_path / "p.txt").read_text().splitlines()
    assert len(predicted) == len(rows)  # one line per record: no header, no record split at its line break
    assert sum(p == topic for p, (_, _, topic) in zip(predicted, rows)) / len(rows) > 0.9
    headless = tmp_path / "texts.csv"  # one text per line and no header: line 1 would get no output
    headless.write_text("my card was charged twice\nthe parcel never came\n")
    capsys.readouterr()
    assert main(["classify", str(tmp_path / "run"), "--input", str(headless), "--output", str(tmp_path / "h")]) == 0
    err = capsys.readouterr().err
    assert "line 1 reads like a text" in err and "('my card was charged twice')" in err
    assert len((tmp_path / "h").read_text().splitlines()) == 1

    assert main(["evaluate", str(tmp_path / "run"), "--json", "--no-plots"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["classes"] == ["billing", "delivery", "login"] and result["accuracy"] > 0.9
    assert "mae" not in result  # topics have no order

    ordered = [*args, "--label-map", "login,delivery,billing", "--ordinal", "--max-steps", "3"]
    assert main([str(a) for a in [*ordered, "--out", tmp_path / "ordered"]]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "ordered"), "--json", "--no-plots"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["classes"] == ["login", "delivery", "billing"] and {"mae", "off_by_one", "median_mae"} <= set(result)


def test_imbalanced_classes_weighted_split_by_class_and_reported_per_class(tmp_path, capsys):
    """160 / 30 / 10 records: balanced class weights, a stratified validation split that holds the rare
    class and that evaluate reads back, the per-class report, and the kept weights named."""
    from transformers_lite.cli.main import main

    rng = random.Random(1)
    path = tmp_path / "imbalanced.csv"
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["text", "label"])
        for label, n in (("billing", 160), ("delivery", 30), ("login", 10)):
            for _ in range(n):
                words = rng.sample(FILLER, 6)
                words.insert(rng.randint(0, 6), TOPICS[label])
                writer.writerow([" ".join(words), label])
    tiny = ["--set", "dim=16", "--set", "n_heads=2", "--set", "dim_hidden=32", "--set", "max_length=16"]
    args = ["train", "classifier", "--train", path, "--min-df", "1", *tiny, "--max-steps", "24", "--lr", "5e-3"]
    args += ["--warmup-steps", "4", "--eval-every", "8", "--class-weights", "balanced", "--batch-size", "16"]
    assert main([str(a) for a in [*args, "--out", tmp_path / "run"]]) == 0
    out = capsys.readouterr().out
    assert "180 training and 20 validation records (a split stratified by class)" in out
    data = json.loads((tmp_path / "run" / "hyperparameters.json").read_text())["data"]
    assert data["stratify"] is True and data["val_split"] == "stratified"
    # stratified: 16 / 3 / 1 held out, so 144 / 27 / 9 train; balanced = 180 / (3 x count)
    assert data["class_weight_values"] == pytest.approx([180 / (3 * 144), 180 / (3 * 27), 180 / (3 * 9)], rel=1e-6)
    assert "class weights: billing 0.417, delivery 2.22, login 6.67" in out
    assert any(
        line.startswith(("kept the weights of step", "the last step's weights are the best"))
        for line in out.splitlines()
    )

    assert main(["evaluate", str(tmp_path / "run"), "--json", "--no-plots"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["n"] == 20 and [r["support"] for r in result["per_class"][:3]] == [16, 3, 1]
    kept = json.loads((tmp_path / "run" / "kept.json").read_text())
    assert result["weights"] == kept and kept["metric"] == "val_macro_f1" and kept["evaluations"] == 3
    assert main(["evaluate", str(tmp_path / "run"), "--no-plots"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert any(line.startswith(f"the weights of step {kept['step']}") for line in printed)
    header = next(
        i for i, line in enumerate(printed) if line.split() == ["class", "precision", "recall", "f1", "support"]
    )
    assert [line.split()[0] for line in printed[header + 1 : header + 4]] == ["billing", "delivery", "login"]


def test_class_weights_weigh_each_record_by_its_class(corpus):
    import torch.nn.functional as F

    train, dev = corpus
    config = ClassifierConfig(dim=16, n_heads=2, dim_hidden=32, max_length=16)
    for labels in (5, 1):
        weights = "1,2,3,4,5" if labels == 5 else "negative=1,positive=3"
        task = ClassifierTask.prepare(
            ClassifierSettings(str(train), str(dev), labels=labels, class_weights=weights), config
        )
        k = max(labels, 2)
        logits = torch.randn(12, labels, generator=torch.Generator().manual_seed(0))
        y = torch.arange(12) % k
        w = task.class_weights[y]
        if labels == 1:
            per = F.binary_cross_entropy_with_logits(logits[:, 0], y.float(), reduction="none")
        else:
            per = F.cross_entropy(logits, y, reduction="none")
        assert task.loss_from_logits(logits, y).item() == pytest.approx(((per * w).sum() / w.sum()).item(), rel=1e-6)
        assert task.describe()["val_split"] == "file"


def test_classify_and_evaluate_through_the_cli(tmp_path, corpus):
    train, dev = corpus
    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "transformers_lite"]
    trained = subprocess.run(
        cmd
        + [
            "train",
            "classifier",
            "--train",
            str(train),
            "--val",
            str(dev),
            "--labels",
            "5",
            "--min-df",
            "1",
            "--set",
            "dim=16",
            "--set",
            "n_heads=2",
            "--set",
            "dim_hidden=32",
            "--set",
            "max_length=16",
            "--set",
            "members=2",  # still an ensemble, a quarter of the default's eight members' time
            "--epochs",
            "8",
            "--lr",
            "5e-3",
            "--warmup-steps",
            "20",
            "--out",
            str(run),
        ],
        capture_output=True,
        text=True,
    )
    assert trained.returncode == 0, trained.stderr
    out = subprocess.run(cmd + ["evaluate", str(run), "--data", str(dev), "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["task"] == "classifier" and result["labels"] == 5 and result["n"] == 300
    assert result["accuracy"] > 0.9 and len(result["confusion_matrix"]) == 5
    assert sum(map(sum, result["confusion_matrix"])) == 300
    for name in ("confusion_matrix.png", "probabilities_by_true_class.png", "training_curves.png"):
        assert (run / name).read_bytes()[:4] == b"\x89PNG"
    out = subprocess.run(
        cmd + ["classify", str(run), "It was superb, the box too.", "Awful.", "--json"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)["results"]
    assert [r["prediction"] for r in results] == ["5 stars", "1 star"]
    assert abs(sum(results[0]["probabilities"].values()) - 1) < 1e-3


def test_post_classifier_preset_on_real_reviews_smoke(tmp_path):
    data = shared_data("amazon_reviews_multi_en")
    vocab = shared_data("amazon_reviews_vocab", "amazon_reviews_train_en.txt")
    settings = ClassifierSettings(str(data / "train.jsonl"), str(data / "dev.jsonl"), labels=5, vocab=str(vocab))
    task = ClassifierTask.prepare(settings, get_preset("post-classifier").model)
    config = task.model_config(get_preset("post-classifier").model)
    assert config.vocab_size == 6653 + 2 and len(task.train_labels) == 12_456 and len(task.val_labels) == 5_000
    model = build_model(config)
    train = TrainConfig(epochs=1, eval_every=0, lr=2e-3, schedule="constant", warmup_steps=0)
    state = Trainer(model, task, train, log=lambda *_: None).fit()
    assert 0.3 < state.history[-1]["val_accuracy"] < 1.0  # chance is 0.2 on the balanced dev split


def test_ppmi_initialisation_uses_only_the_training_texts(corpus):
    train, dev = corpus
    from transformers_lite.data.cooccurrence import ppmi_vectors

    assert get_preset("classifier").data.embedding_init == "ppmi"
    assert get_preset("post-classifier").data.embedding_init == "random"
    base = get_preset("classifier").model.replace(dim=16, n_heads=2, dim_hidden=32, max_length=16, members=1)
    ppmi_settings = ClassifierSettings(str(train), str(dev), labels=2, min_df=1, embedding_init="ppmi")
    task = ClassifierTask.prepare(ppmi_settings, base)
    config = task.model_config(base)
    model = build_model(config)
    task.init_model(model)
    ids, valid = task.tokenizer.encode_batch(task.unlabelled, 2048)
    assert len(task.unlabelled) == 1500 > len(task.train_labels)  # 3-star reviews count, dev reviews do not
    split = ClassifierTask.prepare(ClassifierSettings(str(train), min_df=1, val_fraction=0.2), base)
    assert len(split.unlabelled) == len(split.train_labels) == 1200  # the split-off validation is not counted
    assert torch.equal(model.encoder.embedding.weight, ppmi_vectors(ids, valid, config.vocab_size, 16, window=10)[0])
    # the keywords' vectors differ: co-occurrence alone tells them apart from the filler words
    kw = [task.tokenizer.encode("awful")[0], task.tokenizer.encode("superb")[0]]
    assert not torch.allclose(model.encoder.embedding.weight[kw[0]], model.encoder.embedding.weight[kw[1]])

    random_task = ClassifierTask.prepare(ClassifierSettings(str(train), str(dev), labels=2, min_df=1), base)
    random_model = build_model(config)
    before = random_model.encoder.embedding.weight.clone()
    random_task.init_model(random_model)
    assert torch.equal(before, random_model.encoder.embedding.weight)
    with pytest.raises(ValueError, match="embedding_init"):
        ClassifierSettings(str(train), embedding_init="word2vec")


def test_the_posts_setup_trains_reads_and_plots(tmp_path, corpus):
    """Post 000's own setup (``--preset post-classifier-original``): no pad token (reviews padded with the
    unknown word), a step-0 evaluation and training-split scores; the binary model's evaluation draws post
    000's bars per true star."""
    pytest.importorskip("matplotlib")
    train, dev = corpus
    cmd = [sys.executable, "-m", "transformers_lite"]
    out = tmp_path / "run"
    tiny = ["--set", "dim=16", "--set", "n_heads=2", "--set", "dim_hidden=32", "--set", "max_length=16"]
    result = subprocess.run(
        cmd + ["train", "classifier", "--train", train, "--val", dev, "--preset", "post-classifier-original",
               "--labels", "1", "--min-df", "1", "--epochs", "1", *tiny, "--out", out],
        capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    config = json.loads((out / "config.json").read_text())
    assert config["pad_id"] is None and "[PAD]" not in (out / "tokenizer.json").read_text()
    history = json.loads((out / "history.json").read_text())
    assert history[0]["step"] == 0 and "train_full_accuracy" in history[-1]
    result = subprocess.run(cmd + ["evaluate", out, "--data", dev, "--json"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert (out / "probabilities_by_star.png").is_file()
    from transformers_lite import load
    from transformers_lite.evaluation.evaluate import evaluate_classifier

    _, arrays = evaluate_classifier(load(out), dev)
    assert sorted(set(arrays["stars"].tolist())) == [1, 2, 3, 4, 5]
    assert arrays["star_probs"].shape == (len(arrays["stars"]), 2)


def test_an_ensemble_trains_each_member_on_its_own_order_and_start(corpus):
    from transformers_lite.data.cooccurrence import ppmi_vectors
    from transformers_lite.tasks.classifier import member_seed

    train, dev = corpus
    base = get_preset("classifier").model.replace(dim=16, n_heads=2, dim_hidden=32, max_length=16, members=3)
    task = ClassifierTask.prepare(ClassifierSettings(str(train), str(dev), min_df=1, embedding_init="ppmi"), base)
    config = task.model_config(base)
    single = ClassifierTask.prepare(ClassifierSettings(str(train), str(dev), min_df=1), config.replace(members=1))
    batches = task.batch(5)
    assert len(batches) == 3
    for got, want in zip(batches[0], single.batch(5)):  # member 0 reads what a single model reads
        assert torch.equal(got, want)
    assert not torch.equal(batches[0][2], batches[1][2]) or not torch.equal(batches[0][0], batches[1][0])
    model = build_model(config)
    task.init_model(model)
    ids, valid = task.tokenizer.encode_batch(task.unlabelled, 2048)
    for k, member in enumerate(model.members):
        want = ppmi_vectors(ids, valid, config.vocab_size, 16, window=10, seeds=[member_seed(0, k)])[0]
        assert torch.equal(member.encoder.embedding.weight, want)
    assert member_seed(7, 0) == 7 and len({member_seed(7, k) for k in range(3)}) == 3
    model.eval()
    loss = task.loss(model, batches)  # the mean of each member's loss on its own batch
    own = [task.loss_from_logits(m(b[0], b[1]), b[2]) for m, b in zip(model.members, batches)]
    assert torch.allclose(loss, torch.stack(own).mean())


def test_an_ensemble_with_bigrams_learns_and_reads_back(tmp_path, corpus):
    from transformers_lite import load

    train, dev = corpus
    config = ClassifierConfig(
        dim=16, n_heads=2, dim_hidden=32, head="mean", dropout=0.0, max_length=16, members=2, bigram_buckets=512
    )
    settings = ClassifierSettings(str(train), str(dev), labels=2, min_df=1)
    result = train_run(config, settings, tmp_path / "r", epochs=4, lr=5e-3, warmup_steps=20, eval_every=0)
    assert result.state.history[-1]["val_accuracy"] > 0.9
    task = ClassifierTask.prepare(settings, config)
    loaded = load(tmp_path / "r")
    torch.manual_seed(0)
    model = build_model(loaded.config)
    model.load_state_dict(loaded.model.state_dict())
    assert loaded.config.members == 2 and len(loaded.model.members) == 2
    assert loaded.model.members[1].bigram_embedding.weight.abs().sum() > 0  # the pair table learned
    ids, valid = task.val_ids[:8], task.val_valid[:8]
    assert torch.equal(loaded.model.eval()(ids, valid), model.eval()(ids, valid))


def test_word_vectors_start_the_rows_of_their_words_scaled_to_the_table(tmp_path, corpus):
    """Post 001's GloVe start, for the classifier: the rows of the file's words, at the table's spread."""
    train, dev = corpus
    vectors = {w: [float(i + j) for j in range(16)] for i, w in enumerate(["awful", "superb", "Box", "absent"])}
    path = tmp_path / "glove.txt"
    path.write_text("".join(f"{w} {' '.join(map(str, v))}\n" for w, v in vectors.items()))
    base = get_preset("post-classifier").model.replace(dim=16, n_heads=2, dim_hidden=32, max_length=16)
    task = ClassifierTask.prepare(ClassifierSettings(str(train), str(dev), labels=2, min_df=1, vectors=str(path)), base)
    assert "word vectors: 2 of" in task.note  # awful, superb ("Box" is not "box"; "absent" is not a token)
    torch.manual_seed(0)
    model = build_model(task.model_config(base))
    before = model.encoder.embedding.weight.detach().clone()
    task.init_model(model)
    after = model.encoder.embedding.weight.detach()
    rows = torch.tensor([vectors["awful"], vectors["superb"]])
    scale = before.std(unbiased=False) / rows.std(unbiased=False)
    ids = [task.tokenizer.encode("awful")[0], task.tokenizer.encode("superb")[0]]
    assert torch.allclose(after[ids], rows * scale)
    others = [i for i in range(len(after)) if i not in ids]
    assert torch.equal(after[others], before[others])
    assert task.describe()["vectors_sha256"]
    with pytest.raises(ConfigError, match="vectors of 16 numbers but the model's dim is 32"):
        ClassifierTask.prepare(
            ClassifierSettings(str(train), str(dev), labels=2, min_df=1, vectors=str(path)), base.replace(dim=32)
        )
    with pytest.raises(ConfigError, match="--init-from or --vectors, not both"):
        ClassifierSettings(str(train), vectors=str(path), init_from=str(tmp_path))


@pytest.mark.parametrize("split", ["words", "punct"])
def test_punctuation_is_read_only_when_the_word_split_keeps_it(tmp_path, split):
    """Questions and exclamations of the same words: a class told by its mark alone is learned with
    ``word_split="punct"`` and cannot be with post 000's words (which drop punctuation); the run's
    tokenizer keeps its split, so a loaded run reads the marks as training did."""
    from transformers_lite.runs import load

    rng = random.Random(0)
    rows = [
        {"text": " ".join(rng.sample(FILLER, 5)) + mark, "label": kind}
        for kind, mark in [("ask", " ?"), ("say", " !")]
        for _ in range(150)
    ]
    rng.shuffle(rows)
    (tmp_path / "marks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = ClassifierConfig(dim=16, n_heads=2, dim_hidden=32, head="mean", dropout=0.0, max_length=16, pad_id=1)
    settings = ClassifierSettings(str(tmp_path / "marks.jsonl"), min_df=1, word_split=split)
    result = train_run(config, settings, tmp_path / "run", epochs=6, lr=5e-3, warmup_steps=10, eval_every=0)
    tokenizer = load(tmp_path / "run").tokenizers["tokenizer"]
    assert tokenizer.split == split
    assert ("?" in tokenizer.lookup) == ("!" in tokenizer.lookup) == (split == "punct")
    accuracy = result.state.history[-1]["val_accuracy"]
    assert accuracy == 1.0 if split == "punct" else accuracy < 0.75
