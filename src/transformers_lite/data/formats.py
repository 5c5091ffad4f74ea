"""What a file holds, decided from its bytes: the one place an input file's format is chosen.

Every reader of a user's file (tables of records, text corpora, parallel sentence files, inputs for
batch inference) opens it here, so a file reads the same whatever its name says:

1. **compression** by the magic bytes (gzip ``1f 8b``, bzip2 ``BZh``, xz ``fd 37 7a 58 5a 00``, a zip
   archive of one file ``PK 03 04``), whatever the suffix or its case (``reviews.csv.gz``,
   ``input.TXT.GZ``, a gzip file named ``.txt``), as often as they say (a ``.gz`` of a ``.gz``); a tar
   archive, an office document (a zip of parts) and UTF-16 text are errors naming what they are;
2. **structure** of the text: a JSON document (an array, or an object) when the whole text parses as
   one, JSON Lines when its first line is a JSON object, else CSV, TSV or plain text; and whether a
   TSV's fields use CSV quoting or are plain, quote marks and all (``tsv_is_quoted``).

The name's suffix (compression suffixes of any case removed: ``reviews.csv.gz`` -> ``.csv``) is a hint
only where the content allows several readings: a CSV file and a text of sentences with commas look
alike, so ``.csv``/``.tsv``/``.txt`` decide there. A ``.txt`` file is JSON Lines only when every line is a
JSON object. Whenever the content overrules the name (a gzip file named ``.txt``, JSON Lines named
``.txt``, a ``.gz`` name on plain bytes) a warning says how the file was read.

A path that is no readable file is a ``FileNotFoundError`` or ``DataError`` naming it and the actual
condition: not found, a symbolic link to nothing, a symbolic link loop, a folder.
"""

from __future__ import annotations

import bz2
import csv
import errno
import gzip
import io
import json
import lzma
import os
import re
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

from ..errors import DataError, warn

MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"), (b"PK\x03\x04", "zip"))
# what other magic bytes say, for a file this reader cannot open: named as what it is, never read as
# text that is "not UTF-8" (a zip without files starts with its end record, ``PK 05 06``)
UNREADABLE = (
    (b"PK\x05\x06", "an empty zip archive (no file in it)", "give the file itself, or a zip of that one file"),
    (b"(\xb5/\xfd", "zstd-compressed", "decompress it (zstd -d FILE) or compress it with gzip, bzip2 or xz"),
    (b"\x04\x22\x4d\x18", "lz4-compressed", "decompress it (lz4 -d FILE) or compress it with gzip, bzip2 or xz"),
    (b"LZIP\x01", "lzip-compressed", "decompress it (lzip -d FILE) or compress it with gzip, bzip2 or xz"),
    (b"\x1f\x9d", "compressed with Unix compress (.Z)", "decompress it (uncompress FILE) or use gzip"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", "extract the file to read from it"),
    (b"Rar!\x1a\x07", "a RAR archive", "extract the file to read from it"),
    (b"%PDF-", "a PDF document", "save its text as a plain text file"),
    (b"SQLite format 3\x00", "an SQLite database", "export the table as CSV"),
)
COMPRESSED_SUFFIXES = {".gz": "gzip", ".gzip": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zip": "zip", ".zst": "zstd"}
SUFFIX_FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".json": "json", ".txt": "text", ".text": "text"}
PARQUET_MAGIC = b"PAR1"


def check_file(path: str | Path) -> Path:
    """``path`` as a ``Path`` when it is a file to read (a link to one included); else an error naming the
    actual condition: not found, a link to nothing, a link loop, a folder or something else."""
    path = Path(path)
    try:
        os.stat(path)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise DataError(
                f"{path}: a symbolic link loop (following its links leads back to a link already followed); "
                "point the link at a file"
            ) from None
        if os.path.islink(path):
            raise FileNotFoundError(f"{path} is a symbolic link to {os.readlink(path)}, which does not exist") from None
        if err.errno == errno.ENOENT:
            raise FileNotFoundError(f"file not found: {path}") from None
        raise DataError(f"{path}: cannot be read ({err.strerror})") from None
    if path.is_dir():
        raise DataError(f"{path} is not a file: it is a folder")
    return path


def hint(path: str | Path) -> str:
    """The suffix that names the format, compression suffixes of any case removed, lowercased."""
    name = Path(path).name.lower()
    while Path(name).suffix in COMPRESSED_SUFFIXES:
        name = name[: -len(Path(name).suffix)]
    return Path(name).suffix


def compression_of(raw: bytes) -> str | None:
    """The compression the magic bytes say, or ``None``."""
    return next((kind for magic, kind in MAGIC if raw.startswith(magic)), None)


def read_bytes(path: str | Path) -> bytes:
    """The file's bytes, decompressed when its magic bytes say it is compressed (see the module docstring)."""
    path = check_file(path)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise DataError(f"{path}: cannot be read ({err.strerror})") from None
    kind = compression_of(raw)
    named = COMPRESSED_SUFFIXES.get(Path(path.name.lower()).suffix)
    out = decompress(raw, path)  # an archive or damaged data is named before anything is said about the name
    if kind is None and named is not None and raw:
        warn(f"{path} is named {path.suffix} but is not {named}-compressed; it was read as it is")
    elif kind is not None and named != kind:
        warn(f"{path} is {kind}-compressed (its name does not say so); it was read decompressed")
    return out


def decompress(raw: bytes, name: str | Path) -> bytes:
    """``raw`` decompressed as often as its magic bytes say (a ``.gz`` of a ``.gz`` too); an archive of
    several files or a tar archive is an error naming ``name``, as is damaged or cut compressed data and
    whatever ``UNREADABLE``'s magic bytes say it is (zstd, an empty zip, a PDF, ...)."""
    for _ in range(4):
        kind = compression_of(raw)
        if kind is None:
            break
        try:
            if kind == "gzip":
                raw = gzip.decompress(raw)
            elif kind == "bzip2":
                raw = bz2.decompress(raw)
            elif kind == "xz":
                raw = lzma.decompress(raw)
            else:
                raw = _unzip(name, raw)
        except (OSError, EOFError, ValueError, lzma.LZMAError, zipfile.BadZipFile) as err:
            raise DataError(f"{name}: cannot be read ({kind} data is damaged or cut short: {err})") from None
    for magic, what, advice in UNREADABLE:
        if raw.startswith(magic):
            raise DataError(f"{name}: {what}, which cannot be read as text; {advice}")
    if raw[257:262] == b"ustar":
        raise DataError(f"{name}: a tar archive, not one file; extract the file to read from it")
    return raw


def _unzip(path: str | Path, raw: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        names = [n for n in archive.namelist() if not n.endswith("/")]
        if "[Content_Types].xml" in names:  # .xlsx, .docx, .odt...: an office document is a zip of parts
            raise DataError(f"{path}: an office document (a spreadsheet?), not a text table; save it as CSV")
        if len(names) != 1:
            raise DataError(f"{path}: a zip archive of {len(names)} files ({', '.join(names[:5])}); give one file")
        return archive.read(names[0])


def decode(raw: bytes, name: str | Path) -> str:
    """UTF-8 text without a byte-order mark; undecodable bytes are an error naming the line."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DataError(f"{name}: UTF-16 text (it starts with its byte-order mark); save the file as UTF-8")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        bad = raw[err.start : err.start + 1]
        raise DataError(f"{name}:{line}: bytes that are not UTF-8 ({bad!r}); save the file as UTF-8") from None
    return text.removeprefix("\ufeff")


def sniff(text: str, suffix: str = "") -> str:
    """The format of a decoded text: ``json``, ``jsonl``, ``csv``, ``tsv`` or ``text`` (``suffix`` is the
    name's hint, see ``hint``)."""
    body = text.strip()
    lines = [line.strip() for line in body.split("\n") if line.strip()]
    named = SUFFIX_FORMATS.get(suffix)
    if body[:1] in ("[", "{") and _parses(body) and not (named == "jsonl" and len(lines) == 1):
        if named != "text" or _holds_records(json.loads(body)):  # a .txt line "[1, 2]" is a text
            return "json"
    if lines and lines[0].startswith(("{", "[")) and _parses(lines[0]):
        if lines[0].startswith("{") or named == "jsonl":
            if named != "text" or all(line.startswith("{") and _parses(line) for line in lines):
                return "jsonl"
    if named in ("json", "jsonl") and (body[:1] in ("[", "{") or _parses(body) or _parses(lines[0] if lines else "")):
        return named  # broken JSON, or a JSON value that is no record (42): its reader names the line and what it holds
    if named in ("csv", "tsv", "text"):
        return named
    first = lines[0] if lines else ""
    return "tsv" if "\t" in first else "csv" if "," in first else "text"


def csv_records(
    text: str, delimiter: str, name: str | Path = "", strict: bool = False
) -> Iterator[tuple[int, list[str]]]:
    """``(line a record starts at, its fields)`` of a text with CSV quoting, whose fields are as long as
    the text lets them be (not the ``csv`` module's 128 KiB); malformed quoting is an error naming the
    line of ``name``."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=strict)
    limit = csv.field_size_limit()
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    try:
        start = 1
        for row in reader:
            yield start, row
            start = reader.line_num + 1
    except csv.Error as err:
        kind = "TSV" if delimiter == "\t" else "CSV"
        raise DataError(f"{name}:{reader.line_num}: malformed {kind} ({err})") from None
    finally:
        csv.field_size_limit(limit)


def tsv_is_quoted(text: str) -> bool:
    """Whether a TSV's fields use CSV quoting (a field in ``"..."`` holding tabs, line breaks or doubled
    quotes ``""``), as spreadsheets and CSV libraries write a TSV; else it is a plain TSV (``paste``,
    ``cut``, a database dump) whose quote marks are text, wherever they stand.

    Quoted when its reading as quoted CSV closes every quote (strictly) and is needed: it is whole (each
    record has the header's number of fields) where the plain reading is not, or goes further before a
    record that is not; or both are whole, every field that starts with a quote is one quoted field, and
    one of them holds a doubled quote or the header's names are quoted too. So a stray quote (``"Hello"
    he said``) is always text; only a text that is wholly in quotes and holds two quotes side by side
    (``"say ""hi"" twice"``) reads as quoted."""
    lines = text.split("\n")
    starting = [f for line in lines for f in line.split("\t") if f.startswith('"')]
    if not starting:
        return False  # a quote inside a field is text in both readings
    quoted_ends, plain_ends = len(lines) + 1, len(lines) + 1  # the line of the first record that is not whole
    try:
        width = None
        for start, row in csv_records(text, "\t", strict=True):
            if row and row != [""]:
                width = len(row) if width is None else width
                if len(row) != width:
                    quoted_ends = start
                    break
    except DataError:  # a quote that is not closed as CSV closes them: the quotes are text
        return False
    plain = [(n, len(line.split("\t"))) for n, line in enumerate(lines, 1) if line.strip()]
    plain_ends = next((n for n, w in plain if w != plain[0][1]), plain_ends)
    if quoted_ends != plain_ends:
        return quoted_ends > plain_ends
    if not all(_QUOTED_FIELD.fullmatch(f) for f in starting):
        return False
    header = text.lstrip("\n").split("\n", 1)[0].split("\t")
    return any('""' in f[1:-1] for f in starting) or all(_QUOTED_FIELD.fullmatch(f) for f in header)


_QUOTED_FIELD = re.compile(r'"(?:[^"]|"")*"')


def _holds_records(value: object) -> bool:
    return isinstance(value, dict) or (isinstance(value, list) and all(isinstance(v, dict) for v in value))


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _named_format(path: Path, raw: bytes, text: str) -> str:
    suffix = hint(path)
    found = "parquet" if raw.startswith(PARQUET_MAGIC) else sniff(text, suffix)
    named = "parquet" if suffix == ".parquet" else SUFFIX_FORMATS.get(suffix)
    if named is not None and found != named and {found, named} != {"json", "jsonl"} and raw.strip():
        warn(f"{path} holds {_SAID[found]}, though its name says {suffix}; it was read as {_SAID[found]}")
    return found


_SAID = {
    "json": "a JSON document",
    "jsonl": "JSON Lines",
    "csv": "CSV",
    "tsv": "TSV",
    "text": "plain text",
    "parquet": "Parquet",
}


def read_text(path: str | Path) -> tuple[str, str]:
    """``(text, format)`` of a file: decompressed, decoded (see ``decode``), its format (see ``sniff``)."""
    p = Path(path)
    raw = read_bytes(p)
    if raw.startswith(PARQUET_MAGIC):
        return "", _named_format(p, raw, "")
    if hint(p) == ".parquet" and not raw.isascii():
        raise DataError(f"{p}: not a readable Parquet file (it does not start with Parquet's PAR1 mark)")
    text = decode(raw, p)
    return text, _named_format(p, raw, text)
