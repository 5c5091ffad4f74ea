"""The example input offered for a run comes from its own validation data, or is the built-in one."""

import transformers_lite as tl
from transformers_lite import GeneratorConfig
from transformers_lite.config import ClassifierConfig
from transformers_lite.families import FAMILIES
from transformers_lite.inspect.examples import classifier_task_title, example_inputs
from transformers_lite.tasks.generator import GeneratorSettings

from ..helpers import train_run
from ..reliability.conftest import files, runs  # noqa: F401 - fixtures reused here

CODE = "".join(f"def f{i}(x):\n    return x * {i}\n\n" for i in range(400))


def test_a_model_of_code_is_offered_code_from_its_validation_split(tmp_path):
    (tmp_path / "code.py").write_text(CODE)
    config = GeneratorConfig(dim=16, n_heads=2, dim_hidden=32, n_blocks=1, max_length=16)
    train_run(config, GeneratorSettings(text=str(tmp_path / "code.py")), tmp_path / "run", max_steps=1)
    example = example_inputs(tl.load(tmp_path / "run"))
    validation = CODE[int(len(CODE) * 0.9) :]
    assert example["source"] == "validation"
    assert example["text"].startswith("def f") and example["text"] in validation  # a whole paragraph of it
    assert example["prompt"] == example["text"].split("\n")[0]
    (tmp_path / "code.py").write_text("moved away")  # the recorded data changed: the built-in example
    example = example_inputs(tl.load(tmp_path / "run"))
    assert example["source"] == "built-in" and example["text"] == FAMILIES["generator"].built_in


def test_a_classifiers_example_is_its_first_whole_validation_review_with_its_true_label(runs):  # noqa: F811
    import json

    from transformers_lite.evaluation.prediction import class_names

    run = tl.load(runs / "classifier")
    first = json.loads(open(run.hyperparameters["data"]["val"]).readline())  # noqa: SIM115 - one line
    example = example_inputs(run)
    assert example["source"] == "validation" and example["text"] == first["review_body"]
    assert example["label"] == class_names(run.config)[int(first["stars"]) - 1]
    assert example_inputs(tl.load(runs / "generator"))["label"] is None  # a generator's text has no label


def test_a_classifier_s_task_is_titled_by_its_own_classes():
    from types import SimpleNamespace

    names = ("art", "computers", "cookie", "definitions", "law", "people", "science", "wisdom")
    fortunes = SimpleNamespace(config=ClassifierConfig(n_labels=8, label_names=names))
    title = classifier_task_title(fortunes)
    assert title == {"title": f"Classify a text: 8 classes ({', '.join(names)})", "item": "text"}
    many = SimpleNamespace(config=ClassifierConfig(n_labels=10, label_names=(*names, "x", "y")))
    assert classifier_task_title(many)["title"] == f"Classify a text: 10 classes ({', '.join(names)} and 2 more)"
    sentiment = SimpleNamespace(config=ClassifierConfig(n_labels=2))
    assert classifier_task_title(sentiment)["title"] == "Classify a review: 2 classes (negative, positive)"
