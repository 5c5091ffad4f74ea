"""Score baselines on a classifier's table: what a transformer has to beat.

Read a table exactly as `tlite train classifier` does (the same columns, classes, label map and
validation split: --val, else the seeded --val-fraction of --train), fit each named baseline on the
training records and score it on the validation records with the metrics of `tlite evaluate`. The
default is the most common class and a TF-IDF of words and characters with a linear SVM (balanced
class weights); `tfidf` is TF-IDF of words with logistic regression. The TF-IDF baselines need
scikit-learn: pip install 'transformers-lite[baseline]'.

    tlite baseline --train fortunes.csv --label-column category
    tlite baseline majority tfidf tfidf-svm --train train.jsonl --val dev.jsonl --labels 5 --json
"""

from __future__ import annotations

import argparse
import dataclasses

from ..errors import ConfigError
from ..evaluation.baselines import (
    BASELINES,
    DEFAULT_BASELINE,
    NGRAM_MAX,
    check_settings,
    score_baseline,
    settings_of,
)
from ..evaluation.prediction import class_names, is_ordinal
from ..families import FAMILIES
from ..numbers import json_text
from ..optional import need
from ..recipes import get_preset
from ..tasks.classifier import RECORD_SETTINGS, read_splits
from .common import command
from .options import add_options, given

OPTION_NAMES = {"c": "--C", "max_features": "--max-features", "min_df": "--min-df", "ngram_max": "--ngrams"}


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = command(sub, name, __doc__)
    p.add_argument(
        "kind",
        nargs="*",
        metavar="NAME",
        help=f"baselines to score: {', '.join(f'{n} ({d})' for n, (d, _) in BASELINES.items())} "
        f"(default: majority {DEFAULT_BASELINE})",
    )
    recipe = get_preset(FAMILIES["classifier"].default_preset)
    skip = tuple(f.name for f in dataclasses.fields(recipe.data) if f.name not in RECORD_SETTINGS)
    names = add_options(p.add_argument_group("data (as tlite train classifier reads it)"), recipe.data, skip=skip)
    p.add_argument("--seed", type=int, default=recipe.train.seed, help="the validation split's random seed "
                   f"(default: {recipe.train.seed}, as training's)")  # fmt: skip
    tfidf = p.add_argument_group("the TF-IDF baselines (each setting only with a baseline that takes it)")
    tfidf.add_argument(
        "--C", dest="c", type=float, help="tfidf, tfidf-svm: inverse regularisation strength (default: 1)"
    )
    tfidf.add_argument("--max-features", type=int, help="tfidf: most frequent words kept (default: 5000)")
    tfidf.add_argument("--min-df", type=int, help="tfidf: least document frequency of a word (default: 2)")
    tfidf.add_argument("--ngrams", dest="ngram_max", type=int, help="tfidf: largest n-gram of words (default: 1, "
                       f"at most {NGRAM_MAX})")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print one JSON object per baseline, one per line")
    p.set_defaults(func=run, data_names=names)


def run(args: argparse.Namespace) -> int:
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
        print(
            f"texts from column {splits.columns[0]!r}, labels from column {splits.columns[1]!r}: {k} classes; "
            f"{len(splits.train.texts):,} training and {len(splits.val.texts):,} validation records"
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
