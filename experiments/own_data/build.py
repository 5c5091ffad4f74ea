"""Build the own-data sets from this machine's Debian packages: tables nobody in the project wrote.

    .venv/bin/python experiments/own_data/build.py OUT_DIR            # every set
    .venv/bin/python experiments/own_data/build.py OUT_DIR --sets fortunes gettext

Writes under OUT_DIR (never commit it):

- ``fortunes/{train,test}.csv``: fortune cookies (package ``fortunes``) in 8 categories, columns
  ``id,text,label``; most texts span several lines, so the CSV holds quoted multi-line records.
- ``sections/{train,test}.csv``: package descriptions from the apt lists (Debian 12's lists hold the
  one-line summary only; a long description, where a list has one, follows it), labelled by their
  Debian section (the 14 largest topical sections: sections of one language's libraries, of
  libraries in general, of documentation or of debug symbols are left out).
- ``priority/{train,test}.csv``: package descriptions labelled by priority, 5 ordered classes
  (``required,important,standard,optional,extra``): every package whose priority is not ``optional``
  and as many ``optional`` ones, drawn with the seed (imbalanced: ``optional`` is half of it).
- ``gettext/{train,test}.jsonl`` (and the test pairs as line files ``test.de``, ``test.en``, as
  ``tlite evaluate --src/--ref`` reads them): German → English pairs (``src`` German, ``tgt`` English) from the
  message catalogs ``/usr/share/locale/de/LC_MESSAGES/*.mo``: msgstr = German, msgid = English
  (plural entries give their singular form, a msgctxt is dropped; whitespace runs become one space;
  each catalog decoded with the charset its header names).
- ``email/train/`` and ``email/test/``: the source of the Python ``email`` package (``.py`` files
  only) as a generator corpus; whole files go to the test folder.

Every set's test part is held out with a fixed seed (``--seed``, default 0) before anything is
trained: classifier tables per class (the same fraction of every class, ``--test-fraction``, default
0.2), translation pairs by distinct English message (a message and all its translations fall on
one side; ``--pairs-test-fraction``, default 0.05), the corpus by file (every fifth file, in sorted
order, shifted by the seed). Exact duplicate texts (pairs) are kept once, the first one, so that no
text sits in both parts. A summary (rows, classes, split) is printed at the end and written to
``OUT_DIR/SUMMARY.md``. Sets whose source is absent are skipped with the command that installs it.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import shutil
import struct
import subprocess
from collections import Counter
from pathlib import Path

FORTUNES = Path("/usr/share/games/fortunes")
# 8 categories, 6,359 fortunes with fortunes 1:1.99.1-7.3 (Debian 12)
FORTUNE_CATEGORIES = ("art", "computers", "cookie", "definitions", "law", "people", "science", "wisdom")
LOCALE = Path("/usr/share/locale/de/LC_MESSAGES")
APT_LISTS = Path("/var/lib/apt/lists")
# sections of one language's packages, of libraries, documentation, debug symbols or meta-packages:
# what they hold is told by the packaging, not by the description's topic
PACKAGING_SECTIONS = frozenset(
    "libs libdevel oldlibs doc debug devel python perl haskell rust golang javascript java ruby gnu-r "
    "php ocaml lisp cli-mono introspection localization metapackages tasks interpreters".split()
)
N_SECTIONS = 14
PRIORITIES = ("required", "important", "standard", "optional", "extra")  # Debian policy's order


def fortunes() -> dict[str, list[tuple[str, str]]] | str:
    """(text, category) records of the chosen fortune files, or why they are absent."""
    missing = [c for c in FORTUNE_CATEGORIES if not (FORTUNES / c).is_file()]
    if missing:
        return f"no {FORTUNES / missing[0]}: apt-get install fortunes"
    records, seen = [], set()
    for category in FORTUNE_CATEGORIES:
        raw = (FORTUNES / category).read_text(encoding="utf-8", errors="replace")
        raw = re.sub(r".\x08", "", raw)  # nroff overstriking (bold/underline as char, backspace)
        for cookie in raw.split("\n%\n"):
            text = cookie.strip("\n").rstrip()
            if text.strip() and text != "%" and text not in seen:
                seen.add(text)
                records.append((text, category))
    return {"all": records}


def _stanzas(text: str) -> list[dict[str, str]]:
    """The records of a Debian control file (Packages list): field -> value, continuation lines kept."""
    out = []
    for stanza in text.split("\n\n"):
        fields: dict[str, str] = {}
        key = None
        for line in stanza.split("\n"):
            if line[:1] in (" ", "\t") and key:
                fields[key] += "\n" + line
            elif ":" in line:
                key, value = line.split(":", 1)
                fields[key] = value.strip()
        if "Package" in fields:
            out.append(fields)
    return out


def _packages_text() -> str | None:
    lists = sorted(APT_LISTS.glob("*_Packages.lz4"))
    if lists and shutil.which("lz4"):
        unpacked = (subprocess.run(["lz4", "-dc", str(p)], capture_output=True, text=True, check=True) for p in lists)
        return "\n\n".join(done.stdout for done in unpacked)
    if shutil.which("apt-cache"):
        done = subprocess.run(["apt-cache", "dumpavail"], capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout
    return None


def _description(value: str) -> str:
    """A Description field as plain text: the short line, then the long one (' .' lines = blank)."""
    short, _, long = value.partition("\n")
    lines = [line[1:] if line.startswith(" ") else line for line in long.split("\n")] if long else []
    lines = ["" if line.strip() == "." else line for line in lines]
    return "\n".join([short, *lines]).strip()


def packages(seed: int) -> dict[str, list[tuple[str, str]]] | str:
    """Package descriptions by section (14 topical sections) and by priority (5 ordered classes)."""
    text = _packages_text()
    if text is None:
        return f"no *_Packages.lz4 under {APT_LISTS} and no apt-cache: apt-get update"
    seen: set[str] = set()
    rows = []
    for fields in sorted(_stanzas(text), key=lambda f: f["Package"]):
        description = _description(fields.get("Description", ""))
        if not description or description in seen:
            continue
        seen.add(description)
        rows.append((description, fields.get("Section", "").split("/")[-1], fields.get("Priority", "")))
    sizes = Counter(section for _, section, _ in rows if section not in PACKAGING_SECTIONS)
    topical = {section for section, _ in sizes.most_common(N_SECTIONS)}
    by_section = [(t, s) for t, s, _ in rows if s in topical]
    rare = [(t, p) for t, _, p in rows if p in PRIORITIES and p != "optional"]
    optional = [(t, p) for t, _, p in rows if p == "optional"]
    by_priority = rare + random.Random(seed).sample(optional, min(len(rare), len(optional)))
    return {"sections": by_section, "priority": by_priority}


def _messages(path: Path) -> dict[str, str]:
    """msgid -> msgstr of one compiled catalog (GNU .mo: a header, then two tables of (length, offset)
    pairs); decoded with the charset its header names; plural entries give their singular forms."""
    data = path.read_bytes()
    magic = struct.unpack("<I", data[:4])[0]
    order = "<" if magic == 0x950412DE else ">"
    _, count, ids_at, strs_at = struct.unpack(order + "4I", data[4:20])

    def entry(table: int, i: int) -> bytes:
        length, offset = struct.unpack(order + "2I", data[table + 8 * i : table + 8 * i + 8])
        return data[offset : offset + length]

    raw = [(entry(ids_at, i), entry(strs_at, i)) for i in range(count)]
    header = dict(raw).get(b"", b"").decode("ascii", errors="replace")
    charset = re.search(r"charset=([-\w]+)", header)
    encoding = charset.group(1) if charset and charset.group(1).upper() != "CHARSET" else "utf-8"
    out = {}
    for msgid, msgstr in raw:
        if msgid:  # the empty msgid holds the header
            key = msgid.split(b"\x00")[0].split(b"\x04")[-1]  # singular, without a msgctxt
            out[key.decode(encoding, errors="replace")] = msgstr.split(b"\x00")[0].decode(encoding, errors="replace")
    return out


def gettext_pairs() -> dict[str, list[tuple[str, str]]] | str:
    """(German, English) pairs of every German catalog, whitespace collapsed, header and empties out."""
    catalogs = sorted(LOCALE.glob("*.mo"))
    if not catalogs:
        return f"no catalogs in {LOCALE}: apt-get install locales-all (or any package with German messages)"
    seen: set[tuple[str, str]] = set()
    pairs = []
    for path in catalogs:
        messages = _messages(path)
        for english, german in messages.items():
            english, german = " ".join(english.split()), " ".join(german.split())
            if english and german and (german, english) not in seen:
                seen.add((german, english))
                pairs.append((german, english))
    return {"all": pairs, "catalogs": [("", str(len(catalogs)))]}


def split_by(records: list, key, fraction: float, seed: int) -> tuple[list, list]:
    """(train, test): for every value of key(record), that fraction of its records (rounded, at least
    one when it has two or more) drawn with the seed goes to test; order within each part kept."""
    groups: dict[object, list[int]] = {}
    for i, record in enumerate(records):
        groups.setdefault(key(record), []).append(i)
    rng = random.Random(seed)
    test: set[int] = set()
    for _, members in sorted(groups.items(), key=lambda kv: str(kv[0])):
        n = round(len(members) * fraction)
        n = max(n, 1) if len(members) >= 2 else n
        test.update(rng.sample(members, n))
    return [r for i, r in enumerate(records) if i not in test], [r for i, r in enumerate(records) if i in test]


def split_groups(records: list, group, fraction: float, seed: int) -> tuple[list, list]:
    """(train, test): whole groups (all records sharing group(record)) drawn with the seed into test."""
    names = sorted({group(r) for r in records})
    chosen = set(random.Random(seed).sample(names, round(len(names) * fraction)))
    return [r for r in records if group(r) not in chosen], [r for r in records if group(r) in chosen]


def write_table(path: Path, records: list[tuple[str, str]], prefix: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fp:
        writer = csv.writer(fp)
        writer.writerow(["id", "text", "label"])
        for i, (text, label) in enumerate(records):
            writer.writerow([f"{prefix}-{i}", text, label])


def write_pairs(path: Path, pairs: list[tuple[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fp:
        for german, english in pairs:
            fp.write(json.dumps({"src": german, "tgt": english}, ensure_ascii=False) + "\n")


def email_corpus(out: Path, seed: int) -> str:
    """Copy the email package's .py files: every fifth file (by seed's offset) to test/."""
    import email

    root = Path(email.__file__).parent
    files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    if not files:
        return f"no .py files under {root}"
    for part in ("train", "test"):
        shutil.rmtree(out / "email" / part, ignore_errors=True)
    offset = seed % 5
    counts = Counter()
    for i, path in enumerate(files):
        part = "test" if i % 5 == offset else "train"
        target = out / "email" / part / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        counts[part, "files"] += 1
        counts[part, "chars"] += len(path.read_text(encoding="utf-8"))
    return (
        f"email (generator corpus, {root}): train {counts['train', 'files']} files, "
        f"{counts['train', 'chars']:,} characters; test {counts['test', 'files']} files, "
        f"{counts['test', 'chars']:,} characters"
    )


def describe_classes(name: str, train: list, test: list, order: tuple[str, ...] | None = None) -> str:
    counts = Counter(label for _, label in train + test)
    labels = order if order else sorted(counts)
    multi = sum("\n" in t for t, _ in train + test) / max(len(train) + len(test), 1)
    lines = [
        f"{name}: {len(train) + len(test):,} rows ({len(train):,} train, {len(test):,} test), "
        f"{len(labels)} classes, {multi:.0%} multi-line",
        "  " + ", ".join(f"{label} {counts[label]}" for label in labels),
    ]
    return "\n".join(lines)


SETS = ("fortunes", "packages", "gettext", "email")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder to write the sets into (not committed)")
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--test-fraction", type=float, default=0.2, help="classifier tables, per class")
    parser.add_argument("--pairs-test-fraction", type=float, default=0.05, help="translation pairs")
    args = parser.parse_args(argv)
    summary = []

    def classifier_set(name: str, rows: list, order: tuple[str, ...] | None = None) -> None:
        """A labelled table split by class into train.csv and test.csv, and its summary line."""
        train, test = split_by(rows, lambda r: r[1], args.test_fraction, args.seed)
        write_table(args.out / name / "train.csv", train, "train")
        write_table(args.out / name / "test.csv", test, "test")
        summary.append(describe_classes(name, train, test, order))

    if "fortunes" in args.sets:
        got = fortunes()
        if isinstance(got, str):
            summary.append(f"fortunes: skipped ({got})")
        else:
            classifier_set("fortunes", got["all"])
    if "packages" in args.sets:
        got = packages(args.seed)
        if isinstance(got, str):
            summary.append(f"sections, priority: skipped ({got})")
        else:
            classifier_set("sections", got["sections"])
            classifier_set("priority", got["priority"], PRIORITIES)
    if "gettext" in args.sets:
        got = gettext_pairs()
        if isinstance(got, str):
            summary.append(f"gettext: skipped ({got})")
        else:
            train, test = split_groups(got["all"], lambda p: p[1], args.pairs_test_fraction, args.seed)
            write_pairs(args.out / "gettext" / "train.jsonl", train)
            write_pairs(args.out / "gettext" / "test.jsonl", test)
            for suffix, side in (("de", 0), ("en", 1)):  # the test pairs as `tlite evaluate --src/--ref` reads them
                lines = "".join(pair[side] + "\n" for pair in test)
                (args.out / "gettext" / f"test.{suffix}").write_text(lines, encoding="utf-8")
            copies = sum(g == e for g, e in train + test) / max(len(train) + len(test), 1)
            summary.append(
                f"gettext (de -> en, {got['catalogs'][0][1]} catalogs): {len(train) + len(test):,} pairs "
                f"({len(train):,} train, {len(test):,} test), {copies:.0%} with the German equal to the English"
            )
    if "email" in args.sets:
        summary.append(email_corpus(args.out, args.seed))
    text = "\n".join(summary)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "SUMMARY.md").write_text(f"seed {args.seed}\n\n{text}\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
