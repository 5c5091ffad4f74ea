"""The example input offered for a run comes from its own validation data, or is the built-in one."""

import transformers_lite as tl
from transformers_lite import GeneratorConfig
from transformers_lite.families import FAMILIES
from transformers_lite.inspect.examples import example_inputs
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
