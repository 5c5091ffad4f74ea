"""The model families, one entry each: what every part of the library asks about a family is here.

A ``Family`` ties together its model config (and so its model and tokenizer files), the task that
trains it (and so its data settings), its default preset, what a run of it can do (``actions``: the
``Run`` methods and inspector views it offers), how it is evaluated and drawn, and an example
command. The CLI, ``Run``, the server and the recipes ask ``FAMILIES`` instead of testing a family's
name; a new family is one entry here (plus its config, model and task).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import ClassifierConfig, EncoderLMConfig, GeneratorConfig, Seq2SeqConfig
from .devices import resolve_device
from .errors import ConfigError, warn
from .evaluation.evaluate import evaluate_classifier, evaluate_generator
from .evaluation.pretraining import evaluate_pretraining
from .evaluation.translation import evaluate_translation
from .inspect import backward, examples, forward, readout, timeline
from .inspect.classifier_plots import write_classifier_plots
from .inspect.generator_plots import write_generator_run_plots
from .inspect.inspection import Inspection
from .inspect.seq2seq_plots import write_translator_plots
from .optional import installed
from .pipeline import Run
from .runs import load as load_files
from .tasks import ClassifierTask, GeneratorTask, MaskedLMTask, Seq2SeqTask


def _classifier_scores(run: Run, data: Any = None, *, plots: bool = False, **_: Any) -> dict[str, Any]:  # noqa: ANN401
    result, arrays = evaluate_classifier(run, data)
    if plots and not installed("matplotlib"):
        warn("no plots written: they need matplotlib: pip install 'transformers-lite[plots]' (or add --no-plots)")
    elif plots:
        result["plots"] = [str(p) for p in write_classifier_plots(run.run_dir, run.config, arrays)]
    return result


def _generator_scores(run: Run, data: Any = None, **_: Any) -> dict[str, Any]:  # noqa: ANN401
    return evaluate_generator(run, data)


def _pretraining_scores(run: Run, data: Any = None, **_: Any) -> dict[str, Any]:  # noqa: ANN401
    return evaluate_pretraining(run, data)


def _translator_scores(run: Run, data: Any = None, *, src=None, ref=None, beam=1, progress=False, **_) -> dict:  # noqa: ANN001, ANN401
    if data is not None:
        raise ConfigError("a translator is evaluated on --src FILE --ref FILE (or its own validation pairs)")
    return evaluate_translation(run, src, ref, beam=beam, progress=progress)


def _masked_line(r: dict[str, Any]) -> str:
    what = "masked" if "masked_accuracy" in r else "next"
    return (
        f"loss {r['loss']:.4f} | {what}-word accuracy {r[f'{what}_accuracy']:.4f} | "
        f"perplexity {r['perplexity']:.2f} | {r['n_sequences']:,} sequences"
    )


@dataclass(frozen=True)
class Family:
    name: str
    title: str
    config: type  # its model config class
    task: Any  # the task class that trains it; ``task.Settings`` are its data settings
    default_preset: str
    actions: tuple[str, ...]  # what its runs do: Run methods and inspector views
    evaluate: Callable[..., dict[str, Any]]  # (run, data=None, **options) -> scores
    evaluate_options: tuple[str, ...]  # the options of ``tlite evaluate`` that apply to it
    scores_line: Callable[[dict[str, Any]], str]  # ``tlite evaluate``'s one line
    plots: Callable[..., list[Path]] | None  # ``tlite inspect``'s model plots: (run, kinds, out, options)
    example: str  # a ``tlite train`` command
    inspection: Inspection  # how the inspector reads, scores and probes its runs


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family(
            "classifier",
            "review classifier (post 000)",
            ClassifierConfig,
            ClassifierTask,
            "classifier",
            ("classify",),
            _classifier_scores,
            ("data", "no_plots"),
            lambda r: (
                f"accuracy {r['accuracy']:.4f} | macro F1 {r['macro_f1']:.4f}"
                + (f" | MAE {r['mae']:.4f} | off by at most one {r['off_by_one']:.4f}" if "mae" in r else "")
                + f" | n {r['n']:,}\n"
                f"without a model: chance accuracy {r['chance_accuracy']:.4f} | always the most common "
                f"label: accuracy {r['majority_accuracy']:.4f}, macro F1 {r['majority_macro_f1']:.4f}"
                + (f" | always the median class: MAE {r['median_mae']:.4f}" if "median_mae" in r else "")
                + "".join(f"\nwrote {p}" for p in r.get("plots", []))
            ),
            None,
            "tlite train classifier --train train.jsonl --val dev.jsonl --labels 5",
            Inspection(
                forward.trace_classifier,
                readout.classifier_lens,
                "The coffee maker broke after two days and the seller never answered my emails.",
                from_validation=examples.classifier_example,
                loss=backward.classifier_loss,
                kept_target=lambda run, trace: trace.classes[int(trace["probabilities"].argmax())],
                probe=timeline.classifier_probe,
            ),
        ),
        Family(
            "generator",
            "character GPT (post 004)",
            GeneratorConfig,
            GeneratorTask,
            "post-gpt",
            ("generate", "next-token"),
            _generator_scores,
            ("text",),
            lambda r: (
                f"loss {r['loss']:.4f} | perplexity {r['perplexity']:.3f} | {r['n_tokens']:,} tokens\n"
                f"without a model (uniform over {r['uniform_perplexity']:.0f} tokens): loss "
                f"{r['uniform_loss']:.4f} | perplexity {r['uniform_perplexity']:.0f}"
            ),
            write_generator_run_plots,
            "tlite train generator --text input.txt --preset post-gpt --max-minutes 4",
            Inspection(
                forward.trace_generator,
                readout.generator_lens,
                "ROMEO:\nBut soft, what light through yonder window breaks?",
                from_validation=examples.generator_example,
                loss=backward.generator_loss,
                probe=timeline.generator_probe,
                windows=readout.text_windows,
            ),
        ),
        Family(
            "seq2seq",
            "encoder-decoder translator (post 001)",
            Seq2SeqConfig,
            Seq2SeqTask,
            "seq2seq-small",
            ("translate",),
            _translator_scores,
            ("src", "ref", "beam"),
            lambda r: f"BLEU {r['bleu']:.2f} | chrF {r['chrf']:.2f} | n {r['n']:,}",
            write_translator_plots,
            "tlite train seq2seq --train-src train.de.gz --train-tgt train.en.gz --val-src val.de.gz "
            "--val-tgt val.en.gz",
            Inspection(
                forward.trace_translator,
                readout.translator_lens,
                "Zwei Hunde spielen im Schnee.",
                from_validation=examples.translator_example,
                loss=backward.translator_loss,
                kept_target=lambda run, trace: run.tokenizer.decode(trace["decoder.tokens"][1:].tolist()),
                probe=timeline.translator_probe,
            ),
        ),
        Family(
            "mlm",
            "pretrained encoder (masked or next-word language model)",
            EncoderLMConfig,
            MaskedLMTask,
            "mlm",
            (),
            _pretraining_scores,
            ("text",),
            _masked_line,
            None,
            "tlite train mlm --reviews train.jsonl --out outputs/mlm && "
            "tlite train classifier --train train.jsonl --val dev.jsonl --init-from outputs/mlm",
            Inspection(forward.trace_encoder, readout.encoder_lens, "the coffee was great and the delivery fast"),
        ),
    )
}


def family(name: str) -> Family:
    """The named family, or a ``ConfigError`` listing the known ones."""
    if name not in FAMILIES:
        raise ConfigError(f"unknown model family {name!r}; choose one of {', '.join(FAMILIES)}")
    return FAMILIES[name]


def expect(what: str, found: str, wanted: str) -> None:
    """A ``ConfigError`` unless ``what`` (a preset, a config file, a run) is of the family ``wanted``."""
    if found != wanted:
        raise ConfigError(f"{what} is for a {found}, not a {wanted}")


def load(run_dir: str | Path, device: str = "cpu", trust_edited: bool = False) -> Run:
    """A run directory's model (eval mode), tokenizer(s) and config, validated against each other and
    against the sha256 the run recorded of them (``trust_edited=True`` accepts files edited since)."""
    if not isinstance(trust_edited, bool):  # "no" would be true
        raise ConfigError(f"trust_edited must be True or False, got {trust_edited!r}")
    files = load_files(run_dir, resolve_device(device), trust_edited=trust_edited)
    return Run(files.model, files.config, files.tokenizers, files.run_dir, FAMILIES[files.config.family])
