"""The model families, one class and one entry each: what every part of the library asks about a family.

Each class overrides the ``family.Family`` methods its runs have (evaluation, plots, and its part of
inspection: how an input is traced, what the loss scores, where the logit lens reads, what a training
snapshot probes), calling the functions that do the work; ``FAMILIES`` holds one instance of each. The
CLI, ``Run``, the server and the recipes ask ``FAMILIES`` instead of testing a family's name; a new
family is one class and one entry here (plus its config, model and task).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torch import Tensor

from . import validate
from .config import ClassifierConfig, EncoderLMConfig, GeneratorConfig, Seq2SeqConfig
from .devices import resolve_device
from .errors import ConfigError, warn
from .evaluation.baselines import BASELINES
from .evaluation.baselines import DEFAULT_BASELINE as DEFAULT_TABLE_BASELINE
from .evaluation.evaluate import evaluate_classifier, evaluate_generator, kept_line
from .evaluation.metrics import per_class_table
from .evaluation.pair_baselines import PAIR_BASELINES
from .evaluation.pretraining import evaluate_pretraining
from .evaluation.text_baselines import TEXT_BASELINES
from .evaluation.translation import evaluate_translation
from .family import Family
from .inspect import backward, examples, readout, timeline, tracing
from .inspect.classifier_plots import write_classifier_plots
from .inspect.forward import ForwardTrace
from .inspect.generator_plots import write_generator_run_plots
from .inspect.inspection import InspectedRun, Loss
from .inspect.seq2seq_plots import write_translator_plots
from .layers.trace import Trace
from .numbers import shown
from .optional import installed
from .pipeline import Run
from .runs import LoadedRun
from .runs import load as load_files
from .tasks import ClassifierTask, GeneratorTask, MaskedLMTask, Seq2SeqTask
from .tasks.classifier_baseline import run_baseline

Traced = tuple[ForwardTrace, Tensor]


class ClassifierFamily(Family):
    def evaluate(  # noqa: ANN401
        self, run: LoadedRun, data: Any = None, *, plots: bool = False, baseline: str | None = None, **_: Any
    ) -> dict[str, Any]:
        result, arrays = evaluate_classifier(run, data)
        for name in self.baselines_named(baseline):  # fitted on the run's training records, scored on the same
            result["baseline"] = run_baseline(run, name, arrays["texts"], arrays["labels"])
        if plots and not installed("matplotlib"):
            warn("no plots written: they need matplotlib: pip install 'transformers-lite[plots]' (or add --no-plots)")
        elif plots:
            result["plots"] = [str(p) for p in write_classifier_plots(run.run_dir, run.config, arrays)]
        return result

    def scores_line(self, r: dict[str, Any]) -> str:
        return (
            f"accuracy {r['accuracy']:.4f} | macro F1 {r['macro_f1']:.4f}"
            + (f" | MAE {r['mae']:.4f} | off by at most one {r['off_by_one']:.4f}" if "mae" in r else "")
            + f" | n {r['n']:,}\n"
            f"without a model: chance accuracy {r['chance_accuracy']:.4f} | always the most common "
            f"label: accuracy {r['majority_accuracy']:.4f}, macro F1 {r['majority_macro_f1']:.4f}"
            + (f" | always the median class: MAE {r['median_mae']:.4f}" if "median_mae" in r else "")
            + (_baseline_line(r["baseline"]) if "baseline" in r else "")
            + (f"\n{kept_line(r['weights'])}" if "weights" in r else "")
            + (f"\n\n{per_class_table(r['per_class'])}\n" if "per_class" in r else "")
            + "".join(f"\nwrote {p}" for p in r.get("plots", []))
        )

    def trace(self, run: InspectedRun, text: str, target: str | None, trace: Trace) -> Traced:
        return tracing.trace_classifier(run, text, target, trace)

    def lens(self, run: InspectedRun, trace: ForwardTrace, position: int) -> list[tuple[str, Tensor]]:
        return readout.classifier_lens(run, trace, position)

    def loss(
        self, run: InspectedRun, forward: ForwardTrace, logits: Tensor, target: str | None, position: int | None
    ) -> Loss:
        return backward.classifier_loss(run, forward, logits, target, position)

    def kept_target(self, run: InspectedRun, forward: ForwardTrace) -> str | None:
        return forward.classes[int(forward["probabilities"].argmax())]  # the class the model predicts

    def example(self, run: InspectedRun) -> str | None:
        return examples.classifier_example(run)

    def example_label(self, run: InspectedRun) -> str | None:
        return examples.classifier_example_label(run)

    def task_title(self, run: InspectedRun) -> dict[str, str] | None:
        return examples.classifier_task_title(run)

    def probe(self, model: Any, task: Any) -> dict[str, Any]:  # noqa: ANN401
        return timeline.classifier_probe(model, task)


def _text_baselines_after(r: dict[str, Any], line: str) -> str:
    """A generator's scores line, then one line per baseline scored beside it."""
    return line + "".join(
        f"\nbaseline {b['baseline']} ({b['description']}; given the run's {b['train_chars']:,} training characters, "
        f"{b['seconds']:.1f} s): {b['bits_per_char']:.4f} bits per character"
        + (f" (the test text alone: {b['alone_bits_per_char']:.4f})" if "alone_bits_per_char" in b else "")
        + (f" (longest context {b['order']} characters, discount {b['discount']:g})" if "order" in b else "")
        for b in r.get("baselines", ())
    )


def _baseline_line(b: dict[str, Any]) -> str:
    return (
        f"\nbaseline {b['baseline']} ({b['description']}; fitted on the run's {b['train_records']:,} training "
        f"records in {b['seconds']:.1f} s): accuracy {b['accuracy']:.4f} | macro F1 {b['macro_f1']:.4f}"
        + (f" | MAE {b['mae']:.4f}" if "mae" in b else "")
    )


class GeneratorFamily(Family):
    def evaluate(  # noqa: ANN401
        self, run: LoadedRun, data: Any = None, *, baseline: str | None = None, exclude: str | None = None, **_: Any
    ) -> dict[str, Any]:
        return evaluate_generator(run, data, exclude, self.baselines_named(baseline))

    def scores_line(self, r: dict[str, Any]) -> str:
        return _text_baselines_after(
            r,
            f"loss {shown(r['loss'], '.4f')} | perplexity {shown(r['perplexity'], '.3f')} | "
            f"{shown(r['bits_per_char'], '.4f')} bits per character, {shown(r['bits_per_byte'], '.4f')} per byte | "
            f"{r['n_tokens']:,} tokens, {r['n_chars']:,} characters\n"
            f"without a model (uniform over {r['uniform_perplexity']:.0f} tokens): loss "
            f"{r['uniform_loss']:.4f} | perplexity {r['uniform_perplexity']:.0f} | "
            f"{r['uniform_bits_per_char']:.4f} bits per character\n"
            f"reading no context (each token's frequency in this text): loss {r['unigram_loss']:.4f} | perplexity "
            f"{shown(r['unigram_perplexity'], '.3f')} | {r['unigram_bits_per_char']:.4f} bits per character",
        )

    def plots(self, run: LoadedRun, kinds: tuple[str, ...], out: Path, options: dict[str, Any]) -> list[Path]:
        return write_generator_run_plots(run, kinds, out, options)

    def trace(self, run: InspectedRun, text: str, target: str | None, trace: Trace) -> Traced:
        return tracing.trace_generator(run, text, target, trace)

    def lens(self, run: InspectedRun, trace: ForwardTrace, position: int) -> list[tuple[str, Tensor]]:
        return readout.generator_lens(run, trace, position)

    def loss(
        self, run: InspectedRun, forward: ForwardTrace, logits: Tensor, target: str | None, position: int | None
    ) -> Loss:
        return backward.generator_loss(run, forward, logits, target, position)

    def example(self, run: InspectedRun) -> str | None:
        return examples.generator_example(run)

    def probe(self, model: Any, task: Any) -> dict[str, Any]:  # noqa: ANN401
        return timeline.generator_probe(model, task)

    def windows(self, run: InspectedRun, n: int) -> tuple[Tensor, list[int], int]:
        return readout.text_windows(run, n)


class TranslatorFamily(Family):
    def evaluate(
        self,
        run: LoadedRun,
        data: Any = None,
        *,
        src: str | Path | None = None,
        ref: str | Path | None = None,
        beam: int = 1,
        progress: bool = False,
        baseline: str | None = None,
        **_: Any,  # noqa: ANN401
    ) -> dict[str, Any]:
        named = self.baselines_named(baseline)
        return evaluate_translation(run, src, ref, beam=beam, progress=progress, data=data, baselines=named)

    def scores_line(self, r: dict[str, Any]) -> str:
        return (
            f"BLEU {r['bleu']:.2f} | chrF {r['chrf']:.2f} | n {r['n']:,}"
            + (
                f"\nwithout a model (each source sentence copied unchanged): BLEU {r['copy_source_bleu']:.2f} | "
                f"chrF {r['copy_source_chrf']:.2f}"
                if "copy_source_bleu" in r
                else ""
            )
            + "".join(
                f"\nbaseline {b['baseline']} ({b['description']}; given the run's {b['train_pairs']:,} training pairs, "
                f"{b['seconds']:.1f} s): BLEU {b['bleu']:.2f} | chrF {b['chrf']:.2f}"
                for b in r.get("baselines", ())
            )
        )

    def plots(self, run: LoadedRun, kinds: tuple[str, ...], out: Path, options: dict[str, Any]) -> list[Path]:
        return write_translator_plots(run, kinds, out, options)

    def trace(self, run: InspectedRun, text: str, target: str | None, trace: Trace) -> Traced:
        return tracing.trace_translator(run, text, target, trace)

    def lens(self, run: InspectedRun, trace: ForwardTrace, position: int) -> list[tuple[str, Tensor]]:
        return readout.translator_lens(run, trace, position)

    def loss(
        self, run: InspectedRun, forward: ForwardTrace, logits: Tensor, target: str | None, position: int | None
    ) -> Loss:
        return backward.translator_loss(run, forward, logits, target, position)

    def kept_target(self, run: InspectedRun, forward: ForwardTrace) -> str | None:
        scored = forward[forward.find(kind="tokens", side="target")[0]]  # BOS + the translation it scored
        return run.tokenizer.decode(scored[1:].tolist())

    def example(self, run: InspectedRun) -> str | None:
        return examples.translator_example(run)

    def probe(self, model: Any, task: Any) -> dict[str, Any]:  # noqa: ANN401
        return timeline.translator_probe(model, task)


class PretrainingFamily(Family):
    def evaluate(self, run: LoadedRun, data: Any = None, **_: Any) -> dict[str, Any]:  # noqa: ANN401
        return evaluate_pretraining(run, data)

    def scores_line(self, r: dict[str, Any]) -> str:
        what = "masked" if "masked_accuracy" in r else "next"
        return (
            f"loss {shown(r['loss'], '.4f')} | {what}-word accuracy {r[f'{what}_accuracy']:.4f} | "
            f"perplexity {shown(r['perplexity'], '.2f')} | {r['n_sequences']:,} sequences"
        )

    def trace(self, run: InspectedRun, text: str, target: str | None, trace: Trace) -> Traced:
        return tracing.trace_encoder(run, text, target, trace)

    def lens(self, run: InspectedRun, trace: ForwardTrace, position: int) -> list[tuple[str, Tensor]]:
        return readout.encoder_lens(run, trace, position)


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        ClassifierFamily(
            "classifier",
            "text classifier (post 000)",
            ClassifierConfig,
            ClassifierTask,
            "classifier",
            ("classify", "backward", "timeline"),
            ("data", "no_plots", "baseline"),
            "tlite train classifier --train train.jsonl --val dev.jsonl --labels 5",
            "The coffee maker broke after two days and the seller never answered my emails.",
            baselines=tuple(BASELINES),
            default_baselines=(DEFAULT_TABLE_BASELINE,),
        ),
        GeneratorFamily(
            "generator",
            "character GPT (post 004)",
            GeneratorConfig,
            GeneratorTask,
            "post-gpt",
            ("generate", "next-token", "backward", "timeline", "windows", "plots"),
            ("text", "exclude", "baseline"),
            "tlite train generator --text input.txt --preset post-gpt --max-minutes 4",
            "ROMEO:\nBut soft, what light through yonder window breaks?",
            baselines=tuple(TEXT_BASELINES),
            default_baselines=tuple(TEXT_BASELINES),
        ),
        TranslatorFamily(
            "seq2seq",
            "encoder-decoder translator (post 001)",
            Seq2SeqConfig,
            Seq2SeqTask,
            "seq2seq-small",
            ("translate", "backward", "timeline", "plots"),
            ("data", "src", "ref", "beam", "baseline"),
            "tlite train seq2seq --train-src train.de.gz --train-tgt train.en.gz --val-src val.de.gz "
            "--val-tgt val.en.gz",
            "Zwei Hunde spielen im Schnee.",
            budget_preset="seq2seq-budget",
            baselines=tuple(PAIR_BASELINES),
            default_baselines=("memory",),
        ),
        PretrainingFamily(
            "mlm",
            "pretrained encoder (masked or next-word language model)",
            EncoderLMConfig,
            MaskedLMTask,
            "mlm",
            (),
            ("text",),
            "tlite train mlm --reviews train.jsonl --out outputs/mlm && "
            "tlite train classifier --train train.jsonl --val dev.jsonl --init-from outputs/mlm",
            "the coffee was great and the delivery fast",
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


@validate.arguments  # trust_edited="no" would be true
def load(run_dir: str | Path, device: str = "cpu", trust_edited: bool = False) -> Run:
    """A run directory's model (eval mode), tokenizer(s) and config, validated against each other and
    against the sha256 the run recorded of them (``trust_edited=True`` accepts files edited since)."""
    files = load_files(run_dir, resolve_device(device), trust_edited=trust_edited)
    return Run(
        files.model, files.config, files.tokenizers, files.run_dir, trust_edited, family=FAMILIES[files.config.family]
    )
