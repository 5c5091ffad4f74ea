"""TF-IDF + logistic regression baseline for the review tasks (scikit-learn).

Uses the same preprocessing as the transformer (``simplify`` + the ``\\w\\w+\\b`` words), so the
comparison is about the model, not the tokenizer. Post 000 mentions a ~10,000-parameter TF-IDF
model of similar accuracy; the parameter count reported here is the logistic regression's
(weights + biases).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..data.reviews import load_reviews, task_labels
from ..optional import need
from ..tokenizers.text import words
from .metrics import accuracy, confusion_matrix, macro_f1


def tfidf_baseline(
    train: str | Path,
    val: str | Path,
    n_labels: int = 5,
    max_features: int = 5000,
    min_df: int = 2,
    c: float = 1.0,
    ngram_max: int = 1,
) -> dict[str, Any]:
    TfidfVectorizer = need("sklearn.feature_extraction.text", "baseline", "the TF-IDF baseline").TfidfVectorizer
    LogisticRegression = need("sklearn.linear_model", "baseline", "the TF-IDF baseline").LogisticRegression

    tr, va = load_reviews(train), load_reviews(val)
    y_tr, keep_tr = task_labels(tr.stars, n_labels)
    y_va, keep_va = task_labels(va.stars, n_labels)
    x_tr = [tr.texts[i] for i in keep_tr]
    x_va = [va.texts[i] for i in keep_va]
    vectorizer = (
        TfidfVectorizer(analyzer=words, max_features=max_features, min_df=min_df, sublinear_tf=True)
        if ngram_max == 1
        else TfidfVectorizer(
            tokenizer=words,
            preprocessor=None,
            lowercase=False,
            token_pattern=None,
            ngram_range=(1, ngram_max),
            max_features=max_features,
            min_df=min_df,
            sublinear_tf=True,
        )
    )
    features = vectorizer.fit_transform(x_tr)
    model = LogisticRegression(C=c, max_iter=2000)
    model.fit(features, y_tr)
    pred = model.predict(vectorizer.transform(x_va))
    k = 2 if n_labels in (1, 2) else 5
    matrix = confusion_matrix(y_va, pred, k)
    params = int(np.prod(model.coef_.shape) + model.intercept_.size)
    return {
        "task": "tfidf-baseline",
        "labels": n_labels,
        "n": int(len(y_va)),
        "accuracy": accuracy(y_va, pred),
        "macro_f1": macro_f1(matrix),
        "confusion_matrix": matrix.tolist(),
        "parameters": params,
        "features": len(vectorizer.vocabulary_),
        "C": c,
    }
