"""A trained run, ready to use from Python: ``transformers_lite.load(RUN)`` returns a ``Run``.

    run = tl.load("outputs/shakespeare")
    run.generate("ROMEO:", max_new_tokens=200, temperature=0.8)        # a generator run
    run.classify(["Great coffee, fast delivery."])                     # a classifier run
    run.translate(["Zwei Hunde spielen im Schnee."], beam=4)           # a translator run
    run.evaluate()                                                      # on the run's own validation data

Each method is what the matching ``tlite`` command does (the commands call them); they check their
inputs the same way (empty texts are errors; texts cut to fit are warned about). What a run of a
family can do, and how it is evaluated, comes from the family's entry in ``families`` (``family``).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import torch

from . import validate
from .errors import ConfigError, warn
from .evaluation.prediction import check_texts, class_names, classify_texts
from .family import Family
from .generation.generate import generate
from .generation.prompt import read_prompt
from .generation.translate import DecodeSettings, translate_texts
from .inspect.backward import BackwardTrace, trace_backward
from .inspect.forward import ForwardTrace
from .inspect.inspection import InspectedRun
from .inspect.one_step import one_step
from .inspect.tracing import switch_off, trace_forward
from .settings import from_record
from .tokenizers.unknown import unknown_in, unknown_notice


@dataclass
class Run(InspectedRun):
    family: Family = field(kw_only=True)  # its entry of ``families.FAMILIES``: what its runs do, and how

    def check_recorded(self, hyper: dict[str, Any]) -> None:
        """The recorded train and data settings, checked by the classes training applies (``from_record``)."""
        super().check_recorded(hyper)
        train, data = hyper.get("train"), hyper.get("data")
        from_record(train, data, self.family.task.Settings, "recorded settings", strict=False)

    def _can(self, action: str) -> None:
        if action not in self.family.actions:
            raise ConfigError(f"{self.run_dir} holds a {self.config.family} model, which cannot {action}")

    # ---------------------------------------------------------------- generator
    @validate.arguments
    def stream(
        self,
        prompt: str,
        max_new_tokens: int = 200,
        *,
        temperature: float = 1.0,
        top_k: int | None = None,
        top_p: float | None = None,
        seed: int = 0,
        stride: int | None = None,
        path: str = "cache",
        warn_unknown: bool = True,
    ) -> Iterator[dict[str, Any]]:
        """One ``{"id", "text"}`` per generated token of one sample; ``text`` is what the token adds to
        the decoded continuation (a byte-level piece that ends inside a character waits for the rest)."""
        self._can("generate")
        read = read_prompt(self.tokenizer, prompt)
        if warn_unknown and read.notice:
            warn(read.notice)
        out: list[int] = []
        shown = ""
        sampling: dict[str, Any] = dict(temperature=temperature, top_k=top_k, top_p=top_p, seed=seed, stride=stride)
        for (token,) in generate(self.model, torch.tensor(read.ids), max_new_tokens, path=path, **sampling):
            out.append(token)
            text = self.tokenizer.decode(out)
            if text.endswith("\ufffd") and self.tokenizer.kind == "byte-bpe":
                continue  # an incomplete UTF-8 sequence: wait for the next byte
            yield {"id": token, "text": text[len(shown) :]}
            shown = text

    @validate.arguments
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
        path: str = "cache",
    ) -> str | list[str]:
        """The prompt and its continuation (a list of ``num_samples`` texts when more than one;
        sample ``i`` is the text ``seed + i`` gives alone)."""
        self._can("generate")
        read = read_prompt(self.tokenizer, prompt)
        if read.notice:
            warn(read.notice)
        steps = list(
            generate(
                self.model,
                torch.tensor(read.ids),
                max_new_tokens,
                num_samples=num_samples,
                temperature=temperature,
                top_k=top_k,
                top_p=top_p,
                seed=seed,
                stride=stride,
                path=path,
            )
        )
        texts = [prompt + self.tokenizer.decode(list(column)) for column in zip(*steps)] or [prompt] * num_samples
        return texts[0] if num_samples == 1 else texts

    # ---------------------------------------------------------------- classifier
    @overload
    def classify(self, texts: str, *, progress: bool = False, names: list[str] | None = None) -> dict[str, Any]: ...
    @overload
    def classify(
        self, texts: list[str] | tuple[str, ...], *, progress: bool = False, names: list[str] | None = None
    ) -> list[dict[str, Any]]: ...
    @validate.arguments
    def classify(
        self, texts: str | Sequence[str], *, progress: bool = False, names: list[str] | None = None
    ) -> dict[str, Any] | list[dict[str, Any]]:
        """For each text: the predicted class and every class's probability (one text: one result);
        ``names`` call each text in warnings (a record's id), else its place (``text 3``)."""
        self._can("classify")
        if isinstance(texts, str):
            return self.classify([texts], progress=progress, names=names)[0]
        texts = list(texts)
        check_texts(texts, self.tokenizer, self.config.max_length, names)
        names = class_names(self.config)
        probs = classify_texts(self.model, self.tokenizer, texts, progress=progress)
        return [
            {
                "text": t,
                "prediction": names[int(p.argmax())],
                "probabilities": {n: round(float(x), 4) for n, x in zip(names, p)},
            }
            for t, p in zip(texts, probs)
        ]

    # ---------------------------------------------------------------- translator
    @validate.arguments
    def translate(
        self,
        texts: str | Sequence[str],
        *,
        beam: int = 1,
        length_penalty: float = 1.0,
        use_cache: bool = True,
        progress: bool = False,
    ) -> str | list[str]:
        """One translation per text (greedy, or beam search with ``beam > 1``; one text: one string)."""
        self._can("translate")
        if isinstance(texts, str):
            return self.translate(
                [texts], beam=beam, length_penalty=length_penalty, use_cache=use_cache, progress=progress
            )[0]
        # DecodeSettings checks beam and length_penalty (a NaN penalty would rank no hypothesis), naming them
        settings = DecodeSettings(beam=beam, length_penalty=length_penalty, use_cache=use_cache)
        texts = list(texts)
        found = [(i, unknown_in(self.src_tokenizer, t)) for i, t in enumerate(texts, 1) if isinstance(t, str)]
        found = [(i, u) for i, u in found if u.count]
        if found:
            more = f" (and {len(found) - 1} more text(s))" if len(found) > 1 else ""
            warn(f"{unknown_notice(f'text {found[0][0]}', found[0][1])}{more}")
        return translate_texts(self.model, self.src_tokenizer, self.tokenizer, texts, settings, progress=progress)

    # ---------------------------------------------------------------- every family
    @validate.arguments
    def trace(self, text: str, *, target: str | None = None, switch_off_steps: Sequence[str] = ()) -> ForwardTrace:
        """Every step of one forward pass over ``text`` (a prompt, a review, a translator's source with its
        ``target``, by default the greedy translation): Q, K, V, scores, softmax weights, ... down to the
        probabilities, from the model's own forward. ``switch_off_steps`` runs the same forward with heads,
        units or the positions switched off (``blocks.0.attention.head.2``, ``blocks.1.feed_forward.hidden.unit.7``,
        ``position``; ``inspect.tracing.switch_off``)."""
        return trace_forward(self, text, target=target, edits=switch_off(list(switch_off_steps), self.config.n_heads))

    @validate.arguments
    def backward_trace(self, text: str, *, target: str | None = None, position: int | None = None) -> BackwardTrace:
        """The backward pass of one example: its loss and, for every step of the forward trace, the
        gradient of the loss with respect to it (from the logits back to the embedding rows), every
        parameter's gradient, and the posts' hand-derived gradients beside autograd's where they exist
        (``inspect.backward``). A generator predicts each next token of ``text`` (or the one at
        ``position``); a classifier's ``target`` is a class name; a translator's the reference. The
        weights are not changed."""
        return trace_backward(self, text, target=target, position=position)

    @validate.arguments
    def take_step(
        self,
        text: str,
        *,
        target: str | None = None,
        position: int | None = None,
        optimizer: str = "adamw",
        lr: float | None = None,
    ) -> dict[str, Any]:
        """One step of a fresh ``optimizer`` (``adamw`` or ``sgd``; at ``lr``, the run's peak learning rate
        by default) on this example, on a copy of the model: the loss before and after, the probabilities
        that moved most and how far each parameter moved (``inspect.one_step``). The run is not changed."""
        return one_step(self, text, target=target, position=position, optimizer=optimizer, lr=lr)

    @validate.arguments
    def evaluate(self, data: str | os.PathLike[str] | None = None, **options: Any) -> dict[str, Any]:  # noqa: ANN401
        """Metrics on a file (``data``; a translator takes ``src=``/``ref=`` and ``beam=``), or on the run's
        own validation data when none is given; a classifier takes ``baseline="tfidf-svm"`` (or another name
        of ``evaluation.baselines.BASELINES``) to score that baseline, fitted on its training records, beside it.
        An option this run's family does not take is refused by name (``bem=4`` is not ignored)."""
        method = self.family.evaluate
        taken = [n for n, p in inspect.signature(method).parameters.items() if p.kind is p.KEYWORD_ONLY]
        for name in options:
            if name not in taken:
                raise ConfigError(
                    f"evaluate() of a {self.config.family} run takes no option {name!r}; its options: "
                    f"{', '.join(taken) or 'none'}"
                )
        return validate.arguments(method)(self, data=data, **options)
