"""A trained run, ready to use from Python: ``transformers_lite.load(RUN)`` returns a ``Run``.

    run = tl.load("outputs/shakespeare")
    run.generate("ROMEO:", max_new_tokens=200, temperature=0.8)        # a generator run
    run.classify(["Great coffee, fast delivery."])                     # a classifier run
    run.translate(["Zwei Hunde spielen im Schnee."], beam=4)           # a translator run
    run.evaluate()                                                      # on the run's own validation data

Each method is what the matching ``tlite`` command does; they check their inputs the same way
(empty texts are errors; texts cut to fit are warned about).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import torch

from .data.documents import read_documents
from .devices import resolve_device
from .errors import ConfigError, DataError, warn
from .evaluation.evaluate import evaluate_classifier, evaluate_generator, recorded_file
from .evaluation.prediction import check_texts, class_names, classify_texts
from .evaluation.translation import evaluate_translation
from .generation.generate import generate
from .generation.translate import DecodeSettings, translate_texts
from .tasks.mlm import MaskedLMSettings, MaskedLMTask
from .training.runs import LoadedRun
from .training.runs import load as load_files


class Run(LoadedRun):
    def _expect(self, family: str) -> None:
        if self.config.family != family:
            raise ConfigError(f"{self.run_dir} holds a {self.config.family} model, not a {family}")

    def generate(
        self,
        prompt: str,
        max_new_tokens: int = 200,
        *,
        num_samples: int = 1,
        temperature: float = 1.0,
        top_k: int | None = None,
        top_p: float | None = None,
        seed: int = 0,
        stride: int | None = None,
    ) -> str | list[str]:
        """The prompt and its continuation (a list of ``num_samples`` texts when more than one;
        sample ``i`` is the text ``seed + i`` gives alone)."""
        self._expect("generator")
        if not prompt:
            raise DataError("the prompt is empty; give at least one character to continue")
        ids = self.tokenizer.encode(prompt)
        unknown = sorted({c for c, i in zip(prompt, ids) if i == self.tokenizer.unk_id})
        if unknown:
            warn(
                f"the prompt has characters the model never saw in training ({''.join(unknown)!r}); each reads as "
                "the unknown symbol"
            )
        steps = list(
            generate(
                self.model,
                torch.tensor(ids),
                max_new_tokens,
                num_samples=num_samples,
                temperature=temperature,
                top_k=top_k,
                top_p=top_p,
                seed=seed,
                stride=stride,
            )
        )
        texts = [prompt + self.tokenizer.decode(list(column)) for column in zip(*steps)] or [prompt] * num_samples
        return texts[0] if num_samples == 1 else texts

    def classify(self, texts: list[str], *, progress: bool = False) -> list[dict[str, Any]]:
        """For each text: the predicted class and every class's probability."""
        self._expect("classifier")
        check_texts(texts, self.tokenizer, self.config.max_length)
        names = class_names(self.config.n_labels)
        probs = classify_texts(self.model, self.tokenizer, texts, progress=progress)
        return [
            {
                "text": t,
                "prediction": names[int(p.argmax())],
                "probabilities": {n: round(float(x), 4) for n, x in zip(names, p)},
            }
            for t, p in zip(texts, probs)
        ]

    def translate(
        self,
        texts: list[str],
        *,
        beam: int = 1,
        length_penalty: float = 1.0,
        use_cache: bool = True,
        progress: bool = False,
    ) -> list[str]:
        """One translation per text (greedy, or beam search with ``beam > 1``)."""
        self._expect("seq2seq")
        if beam < 1:
            raise ConfigError(f"--beam must be >= 1, got {beam}")
        settings = DecodeSettings(beam=beam, length_penalty=length_penalty, use_cache=use_cache)
        return translate_texts(self.model, self.src_tokenizer, self.tokenizer, texts, settings, progress=progress)

    def evaluate(
        self,
        data: str | Path | None = None,
        *,
        src: str | Path | None = None,
        ref: str | Path | None = None,
        beam: int = 1,
    ) -> dict[str, Any]:
        """Metrics on a file, or on the run's own validation data when none is given."""
        if self.config.family == "generator":
            return evaluate_generator(self, data)
        if self.config.family == "classifier":
            return evaluate_classifier(self, data)[0]
        if self.config.family == "mlm":
            return evaluate_pretraining(self, data)
        return evaluate_translation(self, src, ref, beam=beam)


def evaluate_pretraining(run: LoadedRun, text: str | Path | None = None) -> dict[str, Any]:
    """Masked-word (or next-word) loss, accuracy and perplexity of a ``tlite train mlm`` run: on the
    documents of ``text``, or on the run's own validation documents (its recorded files, checked)."""
    data = run.hyperparameters.get("data", {})
    names = {f.name for f in dataclasses.fields(MaskedLMSettings)}
    settings = MaskedLMSettings(**{k: v for k, v in data.items() if k in names})
    if text is not None:
        task = MaskedLMTask.scorer(settings, run.config, run.tokenizer)
        return {"task": "mlm", **task.evaluate_documents(run.model, read_documents(text))}
    paths = {k: str(recorded_file(run, k, "--text FILE")) for k in ("reviews", "text") if data.get(k)}
    if not paths:
        raise DataError(f"{run.run_dir} recorded no documents; pass --text FILE")
    settings = dataclasses.replace(settings, reviews=paths.get("reviews"), text=paths.get("text"))
    task = MaskedLMTask(settings, run.config, run.hyperparameters.get("seed", 0), run.tokenizers)
    scores = {k.removeprefix("val_"): v for k, v in task.evaluate(run.model).items()}
    return {"task": "mlm", **scores, "n_sequences": len(task.val_seqs)}


def load(run_dir: str | Path, device: str = "cpu") -> Run:
    """A run directory's model (eval mode), tokenizer(s) and config, validated against each other."""
    files = load_files(run_dir, resolve_device(device))
    return Run(files.model, files.config, files.tokenizers, files.run_dir)
