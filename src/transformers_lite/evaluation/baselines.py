"""Baselines for a classifier: what a practitioner gets without a transformer, scored like ``tlite evaluate``.

One table (``BASELINES``), each baseline fitted on training texts and their class indices and scored
on validation texts:

* ``majority``: always the most common training class (no model, no scikit-learn);
* ``tfidf``: TF-IDF of words (the transformer's own ``simplify`` + ``\\w\\w+\\b`` words, so the
  comparison is about the model, not the tokenizer) + logistic regression; post 000 mentions a
  ~10,000-parameter model of this kind;
* ``tfidf-svm`` (the default of ``tlite baseline``): TF-IDF of word 1-2-grams and character 2-5-grams,
  sublinear term frequencies, + a linear SVM with class weights balanced
  against the classes' frequencies: a strong, quick baseline on small and imbalanced tables. Its
  inverse regularisation C, unless given, is chosen among ``C_GRID`` by macro-F1 on a stratified tenth
  of the training records (the rest fitted), then the model is fitted on all of them.

The parameter counts are the linear model's (weights + biases). scikit-learn is the ``baseline`` extra.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import validate
from ..data.tables import split_validation
from ..errors import ConfigError, DataError
from ..optional import need
from ..tokenizers.text import words
from .metrics import accuracy, confusion_matrix, macro_f1, ordinal_errors

Predict = Callable[[list[str]], np.ndarray]
Fitted = tuple[Predict, dict[str, Any]]  # predict(texts) -> class indices, and what to report of the model


def _sklearn(module: str) -> Any:  # noqa: ANN401 - a scikit-learn module
    return need(module, "baseline", "the TF-IDF baseline")


def majority(texts: list[str], labels: np.ndarray, k: int) -> Fitted:
    """Always the most common class of the training labels (the lowest index of a tie)."""
    top = int(np.bincount(labels, minlength=k).argmax())
    return (lambda new: np.full(len(new), top, dtype=np.int64)), {"parameters": 0, "predicts": top}


def tfidf_logistic(
    texts: list[str],
    labels: np.ndarray,
    k: int,
    *,
    max_features: int = 5000,
    min_df: int = 2,
    c: float = 1.0,
    ngram_max: int = 1,
) -> Fitted:
    """TF-IDF of the transformer's words (1..``ngram_max``-grams, the ``max_features`` most frequent with
    document frequency >= ``min_df``), sublinear, + logistic regression with inverse regularisation ``c``."""
    text_module = _sklearn("sklearn.feature_extraction.text")
    LogisticRegression = _sklearn("sklearn.linear_model").LogisticRegression
    shared = {"max_features": max_features, "min_df": min_df, "sublinear_tf": True}
    vectorizer = (
        text_module.TfidfVectorizer(analyzer=words, **shared)
        if ngram_max == 1
        else text_module.TfidfVectorizer(
            tokenizer=words, lowercase=False, token_pattern=None, ngram_range=(1, ngram_max), **shared
        )
    )
    try:
        features = vectorizer.fit_transform(texts)
    except ValueError as err:  # scikit-learn's "After pruning, no terms remain"
        raise DataError(
            f"no word is in at least {min_df} of the {len(texts):,} training texts (the least document "
            f"frequency asked); lower it ({err})"
        ) from None
    model = LogisticRegression(C=c, max_iter=2000).fit(features, labels)
    info = {
        "parameters": int(model.coef_.size + model.intercept_.size),
        "features": len(vectorizer.vocabulary_),
        "C": c,
    }
    return (lambda new: model.predict(vectorizer.transform(new))), info


C_GRID = (0.1, 0.3, 1.0, 3.0)  # the inverse regularisations tfidf-svm chooses among


def _words_and_characters() -> Any:  # noqa: ANN401 - a scikit-learn FeatureUnion
    text_module = _sklearn("sklearn.feature_extraction.text")
    return _sklearn("sklearn.pipeline").FeatureUnion(
        [
            ("words", text_module.TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)),
            ("chars", text_module.TfidfVectorizer(analyzer="char", ngram_range=(2, 5), sublinear_tf=True)),
        ]
    )


def chosen_c(texts: list[str], labels: np.ndarray, k: int) -> float:
    """The C of ``C_GRID`` whose linear SVM, fitted on nine tenths of the training records, scores the best
    macro-F1 on the other tenth (stratified by class; the smaller C on a tie); 1 with too few records."""
    LinearSVC = _sklearn("sklearn.svm").LinearSVC
    fit, held = split_validation(len(texts), 0.1, 0, labels)
    if len(held) == 0 or len(set(labels[fit].tolist())) < 2:
        return 1.0
    vectorizer = _words_and_characters()
    x_fit = vectorizer.fit_transform([texts[i] for i in fit])
    x_held = vectorizer.transform([texts[i] for i in held])
    scores = {}
    for c in C_GRID:
        predicted = LinearSVC(C=c, class_weight="balanced").fit(x_fit, labels[fit]).predict(x_held)
        scores[c] = macro_f1(confusion_matrix(labels[held], predicted, k))
    return max(C_GRID, key=lambda c: (scores[c], -c))


def tfidf_svm(texts: list[str], labels: np.ndarray, k: int, *, c: float | None = None) -> Fitted:
    """TF-IDF of word 1-2-grams and of character 2-5-grams (every one seen in training, spaces and
    punctuation included), both sublinear, side by side; a linear SVM (``LinearSVC``, inverse regularisation
    ``c``, or ``chosen_c``) with balanced class weights (each class weighs as much as the others in the loss)."""
    LinearSVC = _sklearn("sklearn.svm").LinearSVC
    chosen = c is None
    c = chosen_c(texts, labels, k) if c is None else c
    vectorizer = _words_and_characters()
    model = LinearSVC(C=c, class_weight="balanced").fit(vectorizer.fit_transform(texts), labels)
    features = sum(len(v.vocabulary_) for _, v in vectorizer.transformer_list)
    info = {"parameters": int(model.coef_.size + model.intercept_.size), "features": features, "C": c}
    return (lambda new: model.predict(vectorizer.transform(new))), {**info, "C_chosen": chosen}


# name -> (what it is, in one line; the fitting function)
BASELINES: dict[str, tuple[str, Callable[..., Fitted]]] = {
    "majority": ("always the most common training class", majority),
    "tfidf": ("TF-IDF of words + logistic regression", tfidf_logistic),
    "tfidf-svm": (
        "TF-IDF of word 1-2-grams and character 2-5-grams + linear SVM, balanced class weights, C chosen on a "
        "tenth of the training records",
        tfidf_svm,
    ),
}
DEFAULT_BASELINE = "tfidf-svm"
NGRAM_MAX = 8  # the vectorizer counts every n-gram up to this length before it keeps ``max_features``


def settings_of(name: str) -> tuple[str, ...]:
    """The settings baseline ``name`` takes: its fitting function's keyword-only arguments."""
    parameters = inspect.signature(BASELINES[name][1]).parameters.values()
    return tuple(p.name for p in parameters if p.kind is p.KEYWORD_ONLY)


def check_settings(
    options: dict[str, Any], kinds: list[str], records: int | None = None, names: dict[str, str] | None = None
) -> None:
    """Baselines ``kinds``' ``options``, checked before anything is fitted: a setting none of them takes
    is refused (it would change nothing), and every value is in its range: ``min_df`` at most the
    ``records`` the training split has (a larger one keeps no word; None: not read yet). ``names``: how
    the caller's user writes each setting (``{"ngram_max": "--ngrams"}``)."""
    shown = {key: (names or {}).get(key, key) for key in options}
    for key, value in options.items():
        takers = [k for k in BASELINES if key in settings_of(k)]
        if not any(key in settings_of(k) for k in kinds):
            of = f"the {' and '.join(takers)} baseline{'s' if len(takers) > 1 else ''}" if takers else "no baseline"
            raise ConfigError(
                f"{shown[key]} is a setting of {of}, not of the {', '.join(kinds)} asked, so it would change "
                f"nothing; ask for {takers[0] if takers else 'one that takes it'} too, or leave {shown[key]} out"
            )
        if key == "c":
            validate.number(shown[key], value, 0, low_open=True)
        elif key == "max_features":
            validate.integer(shown[key], value, 1)
        elif key == "ngram_max":
            validate.integer(shown[key], value, 1, high=NGRAM_MAX)
        elif key == "min_df":
            validate.integer(shown[key], value, 1)
            if records is not None and value > records:
                raise ConfigError(
                    f"{shown[key]} {value} keeps no word: the training split has {records:,} records, so no word "
                    f"is in more than {records:,} of them; give at most {records:,}"
                )


def score_baseline(
    name: str,
    train: tuple[list[str], np.ndarray],
    val: tuple[list[str], np.ndarray],
    k: int,
    *,
    ordinal: bool = False,
    **options: Any,  # noqa: ANN401 - the named baseline's own settings
) -> dict[str, Any]:
    """Baseline ``name`` fitted on ``train`` ``(texts, class indices)`` and scored on ``val`` over ``k``
    classes, with the metrics of ``tlite evaluate`` (ordered classes add mean absolute error and
    off-by-one accuracy); ``seconds`` is the fitting and scoring time."""
    description, fit = BASELINES[name]
    check_settings(options, [name], len(train[0]))
    start = time.perf_counter()
    predict, info = fit(train[0], np.asarray(train[1]), k, **options)
    labels = np.asarray(val[1])
    preds = np.asarray(predict(val[0]), dtype=np.int64)
    matrix = confusion_matrix(labels, preds, k)
    return {
        "task": "baseline",
        "baseline": name,
        "description": description,
        "n": int(len(labels)),
        "accuracy": accuracy(labels, preds),
        "macro_f1": macro_f1(matrix),
        **(ordinal_errors(labels, preds) if ordinal else {}),
        "confusion_matrix": matrix.tolist(),
        **info,
        "train_records": len(train[0]),
        "seconds": time.perf_counter() - start,
    }
