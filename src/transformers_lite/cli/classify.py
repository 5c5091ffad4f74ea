"""Classify texts with a trained classifier.

Print the predicted class and the probability of every class. With --input, an --output named .csv,
.tsv or .jsonl keeps each input record's columns (or only its --id-column) beside its prediction and
probabilities, so the predictions join back to the input; any other --output name gets one label per line.

    tlite classify RUN "Great coffee, fast delivery." "Broke after a day." --json
    tlite classify RUN --input texts.jsonl --output predictions.jsonl
    tlite classify RUN --input tickets.csv --output predictions.csv --id-column ticket_id
    tlite classify RUN --input tickets.csv --json
"""

from __future__ import annotations

import argparse
import csv
import io
import json
from pathlib import Path
from typing import Any

from ..atomic import atomic_write_text
from ..errors import ConfigError
from ..evaluation.prediction import class_names
from ..numbers import json_text
from ..progress import interactive
from .common import add_run_and_texts, command, input_records, load_run, write_lines

TABLE_OUTPUTS = {".csv": ",", ".tsv": "\t"}


def add_parser(sub, name: str) -> None:  # noqa: ANN001
    p = command(sub, name, __doc__)
    add_run_and_texts(p, "texts to classify")
    p.add_argument(
        "--id-column",
        metavar="COLUMN",
        help="with a table or JSON Lines --input: keep only this column of each record beside its prediction "
        "(default: every column of the record)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    loaded = load_run(args, "classify")
    column = loaded.hyperparameters.get("data", {}).get("text_column")
    texts, records, as_jsonl = input_records(
        args, (column, "text", "review_body") if column else ("text", "review_body")
    )
    suffix = Path(args.output).suffix.lower() if args.output else ""
    if suffix in TABLE_OUTPUTS and args.json:
        raise ConfigError(
            f"--json writes JSON, but --output {args.output} names a table; name it .jsonl, or leave out --json"
        )
    kept = kept_columns(records, args.id_column, args.input)
    names = None if kept is None or records is None else [f"{args.id_column} {r[args.id_column]}" for r in records]
    results = loaded.classify(texts, progress=len(texts) > 1024 and interactive(), names=names)
    if suffix in TABLE_OUTPUTS:
        rows = joined(results, records, kept)
        write_table(rows, class_names(loaded.config), TABLE_OUTPUTS[suffix], args.output)
    elif as_jsonl or suffix == ".jsonl":
        write_lines([json_text(row) for row in joined(results, records, kept)], args.output)
    elif args.json:
        write_lines(
            [
                json_text(
                    {
                        "task": "classifier",
                        "labels": loaded.config.n_labels,
                        "classes": class_names(loaded.config),
                        "results": results,
                    }
                )
            ],
            args.output,
        )
    elif args.output:
        write_lines([r["prediction"] for r in results], args.output)
    else:
        for r in results:
            shown = "  ".join(f"{n}: {x:.2f}" for n, x in r["probabilities"].items())
            excerpt = " ".join(r["text"].split())[:60]  # one line per input, whatever the text holds
            print(f"{r['prediction']:>9} | {shown} | {excerpt}")
    return 0


def kept_columns(records: list[dict[str, Any]] | None, id_column: str | None, source: str | None) -> list[str] | None:
    """The input's columns an output keeps beside each result: ``[id_column]``, or None for every column
    of each record. A column named like a result's own field is an error (it would be written over)."""
    if id_column is not None:
        if records is None:
            raise ConfigError("--id-column names a column of a table or JSON Lines --input; this input has none")
        missing = next((i for i, r in enumerate(records, 1) if id_column not in r), None)
        if missing is not None:
            shown = ", ".join(map(repr, records[missing - 1]))
            raise ConfigError(f"{source}: record {missing} has no column {id_column!r} (--id-column); it has {shown}")
        return [id_column]
    clash = next((c for r in records or [] for c in r if c in ("prediction", "probabilities")), None)
    if clash:
        raise ConfigError(
            f"{source} has a column {clash!r}, which the output writes for each result; rename it, or keep only "
            "an id with --id-column"
        )
    return None


def joined(
    results: list[dict[str, Any]], records: list[dict[str, Any]] | None, kept: list[str] | None
) -> list[dict[str, Any]]:
    """Each result after the input record's columns (``kept`` ones, or all it has); a plain text's result
    (no record) keeps its text."""
    if records is None:
        return results
    return [
        {
            **(r if kept is None else {c: r[c] for c in kept}),
            "prediction": res["prediction"],
            "probabilities": res["probabilities"],
        }
        for r, res in zip(records, results)
    ]


def write_table(rows: list[dict[str, Any]], classes: list[str], delimiter: str, output: str) -> None:
    """``rows`` as CSV (or TSV): the input's columns, ``prediction``, then one ``probability_CLASS`` column
    per class; a value that is no text (a number, a list of a JSON record) is written as JSON."""
    own = ("prediction", "probabilities")
    columns = [c for c in dict.fromkeys(c for row in rows for c in row) if c not in own] + ["prediction"]
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(columns + [f"probability_{name}" for name in classes])
    for row in rows:  # a column one JSON record lacks is an empty cell
        writer.writerow([_cell(row.get(c)) for c in columns] + [row["probabilities"][name] for name in classes])
    atomic_write_text(output, out.getvalue())


def _cell(value: Any) -> str:  # noqa: ANN401 - a record's value, whatever JSON or a table held
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
