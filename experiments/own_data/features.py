"""Which features carry a table's classes? The tuned baseline's TF-IDF + linear SVM (balanced class
weights) trained on one feature set at a time, scored by macro-F1 on a stratified validation tenth of
``train.csv`` (seed 0; the test part is not read):

    .venv/bin/python experiments/own_data/features.py DATA_DIR [SET ...]      # default: fortunes sections

The feature sets: word 1-2-grams and character 2-5-grams (``tfidf-svm``'s two halves and their union),
and the tokens the classifier reads under each ``--word-split`` (``words``: post 000's words,
punctuation dropped; ``punct``: words and punctuation marks). One JSON line per set and features.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import f1_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline, make_union
from sklearn.svm import LinearSVC

from transformers_lite.tokenizers.text import SPLITS


def tfidf(**options: object) -> TfidfVectorizer:
    return TfidfVectorizer(sublinear_tf=True, **options)


FEATURES = {
    "word 1-2-grams": lambda: [tfidf(ngram_range=(1, 2))],
    "character 2-5-grams": lambda: [tfidf(analyzer="char", ngram_range=(2, 5))],
    "both (tfidf-svm)": lambda: [tfidf(ngram_range=(1, 2)), tfidf(analyzer="char", ngram_range=(2, 5))],
    **{
        f"--word-split {name}": (lambda split=split: [tfidf(tokenizer=split, lowercase=False, token_pattern=None)])
        for name, split in SPLITS.items()
    },
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="what experiments/own_data/build.py wrote")
    parser.add_argument("sets", nargs="*", default=["fortunes", "sections"])
    args = parser.parse_args()
    for name in args.sets:
        with open(args.data / name / "train.csv", newline="") as fh:
            rows = list(csv.DictReader(fh))
        texts, labels = [r["text"] for r in rows], [r["label"] for r in rows]
        fit_x, val_x, fit_y, val_y = train_test_split(texts, labels, test_size=0.1, random_state=0, stratify=labels)
        for features, make in FEATURES.items():
            model = make_pipeline(make_union(*make()), LinearSVC(class_weight="balanced")).fit(fit_x, fit_y)
            score = f1_score(val_y, model.predict(val_x), average="macro")
            print(json.dumps({"set": name, "features": features, "val_macro_f1": round(score, 4)}), flush=True)


if __name__ == "__main__":
    main()
