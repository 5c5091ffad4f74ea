"""Score baselines: what a transformer has to beat, the floor a practitioner computes first.

Read the data exactly as `tlite train` does, fit each named baseline on the training part and score it
on the validation part with the metrics of `tlite evaluate`, printing the seconds each took:

- a table (--train, as `tlite train classifier` reads it: the same columns, classes, label map and
  validation split, --val else the seeded --val-fraction of --train): the most common class and a
  TF-IDF of words and characters with a linear SVM (balanced class weights) by default; `tfidf` is
  TF-IDF of words with logistic regression;
- translation pairs (--train-src, as `tlite train seq2seq` reads them): copying the source, and a
  translation memory (the target of the nearest training source by character n-gram TF-IDF), with BLEU
  and chrF;
- a text (--text, as `tlite train generator` reads it; the last --val-fraction held out, or --val-text):
  xz -9e given the training text and a character n-gram model, in bits per character.

The TF-IDF baselines and the translation memory need scikit-learn: pip install 'transformers-lite[baseline]'.

    tlite baseline --train fortunes.csv --label-column category
    tlite baseline majority tfidf tfidf-svm --train train.jsonl --val dev.jsonl --labels 5 --json
    tlite baseline --train-src pairs.tsv --val-src test.tsv
    tlite baseline --text 'src/**/*.py' --val-text tests/
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from ..data.corpus import read_corpus
from ..errors import ConfigError
from ..evaluation.baselines import (
    BASELINES,
    DEFAULT_BASELINE,
    NGRAM_MAX,
    check_settings,
    score_baseline,
    settings_of,
)
from ..evaluation.pair_baselines import PAIR_BASELINES, score_pair_baseline
from ..evaluation.prediction import class_names, is_ordinal
from ..evaluation.text_baselines import TEXT_BASELINES, score_text_baseline
from ..families import FAMILIES
from ..numbers import json_text
from ..optional import need
from ..recipes import get_preset
from ..tasks.classifier import RECORD_SETTINGS, read_splits
from ..tasks.generator import GeneratorSettings
from ..tasks.seq2seq import Seq2SeqSettings, read_pairs
from .common import command
from .options import add_options, given

OPTION_NAMES = {"c": "--C", "max_features": "--max-features", "min_df": "--min-df", "ngram_max": "--ngrams"}


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = command(sub, name, __doc__)
    p.add_argument(
        "kind",
        nargs="*",
        metavar="NAME",
        help=f"baselines to score: for a table {', '.join(f'{n} ({d})' for n, (d, _) in BASELINES.items())} "
        f"(default: majority {DEFAULT_BASELINE}); for pairs {', '.join(PAIR_BASELINES)} (default: both); for a "
        f"text {', '.join(TEXT_BASELINES)} (default: both)",
    )
    recipe = get_preset(FAMILIES["classifier"].default_preset)
    skip = tuple(f.name for f in dataclasses.fields(recipe.data) if f.name not in RECORD_SETTINGS)
    names = add_options(p.add_argument_group("data (as tlite train classifier reads it)"), recipe.data, skip=skip)
    p.add_argument("--seed", type=int, default=recipe.train.seed, help="the validation split's random seed "
                   f"(default: {recipe.train.seed}, as training's)")  # fmt: skip
    tfidf = p.add_argument_group("the TF-IDF baselines (each setting only with a baseline that takes it)")
    tfidf.add_argument(
        "--C",
        dest="c",
        type=float,
        help="tfidf, tfidf-svm: inverse regularisation strength (default: tfidf 1; tfidf-svm chosen among 0.1, "
        "0.3, 1 and 3 on a stratified tenth of the training records)",
    )
    tfidf.add_argument("--max-features", type=int, help="tfidf: most frequent words kept (default: 5000)")
    tfidf.add_argument("--min-df", type=int, help="tfidf: least document frequency of a word (default: 2)")
    tfidf.add_argument("--ngrams", dest="ngram_max", type=int, help="tfidf: largest n-gram of words (default: 1, "
                       f"at most {NGRAM_MAX})")  # fmt: skip
    pairs = p.add_argument_group("translation pairs (as tlite train seq2seq reads them)")
    pair_names = add_options(pairs, Seq2SeqSettings(), skip=tuple(PAIR_SKIP))
    text = p.add_argument_group("a text (as tlite train generator reads it)")
    text.add_argument("--text", metavar="FILE", help="a text file, folder or quoted glob pattern ('src/**/*.py')")
    text.add_argument(
        "--exclude", metavar="PATTERNS", help=GeneratorSettings.__dataclass_fields__["exclude"].metadata["help"]
    )
    text.add_argument(
        "--val-text",
        metavar="FILE",
        help="the text to score (default: the last --val-fraction of --text, as training holds out)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object per baseline, one per line")
    p.set_defaults(func=run, data_names=names, pair_names=pair_names)


def run(args: argparse.Namespace) -> int:
    if args.text or args.train_src:  # a generator's text, or a translator's pairs
        return run_text(args) if args.text else run_pairs(args)
    kinds = args.kind or ["majority", DEFAULT_BASELINE]
    unknown = [k for k in kinds if k not in BASELINES]
    if unknown:
        raise ConfigError(f"unknown baseline {unknown[0]!r}; choose from {', '.join(BASELINES)}")
    if any(k != "majority" for k in kinds):  # said before anything is read or printed
        need("sklearn", "baseline", "the TF-IDF baseline")
    asked = {key: getattr(args, key) for key in OPTION_NAMES if getattr(args, key) is not None}
    check_settings(asked, kinds, names=OPTION_NAMES)  # before the data is read
    data = dataclasses.replace(get_preset(FAMILIES["classifier"].default_preset).data, **given(args, args.data_names))
    splits = read_splits(data, args.seed)
    n_labels, names = splits.classes
    k, ordinal = max(n_labels, 2), is_ordinal(names, n_labels, data.ordinal)
    classes = class_names(argparse.Namespace(n_labels=n_labels, label_names=names))
    check_settings(asked, kinds, len(splits.train.texts), OPTION_NAMES)  # min_df against the records read
    if not args.json:
        shown = ", ".join(classes[:12]) + (", ..." if len(classes) > 12 else "")
        print(
            f"texts from column {splits.columns[0]!r}, labels from column {splits.columns[1]!r}: {k} classes "
            f"({shown}); {len(splits.train.texts):,} training and {len(splits.val.texts):,} validation records"
        )
    for kind in kinds:
        train, val = (splits.train.texts, splits.train.labels), (splits.val.texts, splits.val.labels)
        mine = {key: value for key, value in asked.items() if key in settings_of(kind)}
        r = score_baseline(kind, train, val, k, ordinal=ordinal, **mine)
        if args.json:
            print(json_text({**r, "labels": n_labels, "classes": classes}))
        else:
            print(
                f"{kind}: accuracy {r['accuracy']:.4f} | macro F1 {r['macro_f1']:.4f}"
                + (f" | MAE {r['mae']:.4f}" if "mae" in r else "")
                + f" | {r['parameters']:,} parameters | n {r['n']:,} | {r['seconds']:.1f} s ({r['description']})"
            )
    return 0


# the seq2seq data settings that say how pairs are read (the rest shape training)
PAIR_READING = ("train_src", "train_tgt", "val_src", "val_tgt", "src_column", "tgt_column")
PAIR_SKIP = [f.name for f in dataclasses.fields(Seq2SeqSettings) if f.name not in PAIR_READING]


def _kinds(args: argparse.Namespace, known: dict[str, Any], what: str) -> list[str]:
    kinds = args.kind or list(known)
    unknown = [k for k in kinds if k not in known]
    if unknown:
        raise ConfigError(f"unknown baseline {unknown[0]!r} for {what}; choose from {', '.join(known)}")
    return kinds


def run_pairs(args: argparse.Namespace) -> int:
    """Copying the source and the translation memory on pairs read as ``tlite train seq2seq`` reads them."""
    kinds = _kinds(args, PAIR_BASELINES, "translation pairs")
    if "memory" in kinds:
        need("sklearn", "baseline", "the translation memory")
    settings = dataclasses.replace(Seq2SeqSettings(**given(args, args.pair_names)), **_val_fraction(args))
    train, val, _, languages = read_pairs(settings, args.seed)
    if not args.json:
        print(
            f"{languages[0]} -> {languages[1]} pairs: {len(train[0]):,} training and {len(val[0]):,} validation pairs"
        )
    for kind in kinds:
        r = score_pair_baseline(kind, train, val)
        print(
            json_text(r)
            if args.json
            else f"{kind}: BLEU {r['bleu']:.2f} | chrF {r['chrf']:.2f} | n {r['n']:,} | {r['seconds']:.1f} s "
            f"({r['description']})"
        )
    return 0


def run_text(args: argparse.Namespace) -> int:
    """The compressor and the character n-gram model on a text read as ``tlite train generator`` reads it."""
    kinds = _kinds(args, TEXT_BASELINES, "a text")
    corpus = read_corpus(args.text, args.exclude)
    if args.val_text:
        train, test = corpus.text, read_corpus(args.val_text).text
    else:
        fraction = _val_fraction(args).get("val_fraction", GeneratorSettings().val_fraction)
        cut = len(corpus.text) - max(int(len(corpus.text) * fraction), 1)
        train, test = corpus.text[:cut], corpus.text[cut:]
    if not args.json:
        print(f"{corpus.report()}; {len(train):,} training and {len(test):,} test characters")
    for kind in kinds:
        r = score_text_baseline(kind, train, test)
        print(
            json_text(r)
            if args.json
            else f"{kind}: {r['bits_per_char']:.4f} bits per character"
            + (f" (the test text alone: {r['alone_bits_per_char']:.4f})" if "alone_bits_per_char" in r else "")
            + (f" (longest context {r['order']} characters, discount {r['discount']:g})" if "order" in r else "")
            + f" | {r['seconds']:.1f} s ({r['description']})"
        )
    return 0


def _val_fraction(args: argparse.Namespace) -> dict[str, Any]:
    """``--val-fraction`` when given (each kind of data has its own default)."""
    return {} if args.val_fraction is None else {"val_fraction": args.val_fraction}
