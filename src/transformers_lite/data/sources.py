"""Where datasets come from: an explicit path, ``TLITE_DATA_DIR``, or the user cache.

``TLITE_DATA_DIR`` is a folder laid out like the project's ``../shared/data``. ``download``
fetches the public corpora into the cache with sha256 verification and an atomic rename. The
review corpus (MARC) was withdrawn by Amazon and has no public source: provide the files yourself.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import urllib.error
import urllib.request
from pathlib import Path

from ..atomic import atomic_write
from ..errors import DataError
from .formats import check_file, decode, read_bytes

DATASETS: dict[str, dict[str, tuple[str, str | None]]] = {
    # file -> (url, sha256)
    "tinyshakespeare": {
        "input.txt": (
            "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt",
            "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",
        ),
    },
    # Project Gutenberg updates this file now and then: no fixed digest; prepared into plays.txt after download
    "complete-works": {"pg100.txt": ("https://www.gutenberg.org/cache/epub/100/pg100.txt", None)},
    "multi30k": {
        name: (f"https://github.com/multi30k/dataset/raw/master/data/task1/raw/{name}", digest)
        for name, digest in (
            ("train.de.gz", "726e39b2fa9eb9ffb6dc763fb35a179f80fae06ffc5d28b6ace5faa883de28a6"),
            ("train.en.gz", "d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f"),
            ("val.de.gz", "f0cba2f995189cf5770f29a8a9a537a3ad3f51657ad873405082ff6863a5e75a"),
            ("val.en.gz", "14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28"),
        )
    },
}
NO_PUBLIC_SOURCE = {
    "amazon_reviews_multi_en": "MARC was withdrawn by Amazon in 2023; provide train/dev JSON Lines files with "
    "'review_body' and 'stars' fields (e.g. tlite train classifier --train train.jsonl --val dev.jsonl)",
}


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "transformers-lite" / "data"


def data_roots() -> list[Path]:
    roots = []
    if os.environ.get("TLITE_DATA_DIR"):
        roots.append(Path(os.environ["TLITE_DATA_DIR"]))
    roots.append(cache_dir())
    return roots


def resolve(dataset: str, filename: str, explicit: str | Path | None = None) -> Path:
    """Find ``filename`` of ``dataset``: explicit path, else ``$TLITE_DATA_DIR/dataset``, else the cache."""
    if explicit is not None:
        return check_file(explicit)
    tried = []
    for root in data_roots():
        path = root / dataset / filename
        tried.append(str(path))
        if path.is_file():
            return path
    hint = NO_PUBLIC_SOURCE.get(dataset) or f"run `tlite data download {dataset}`"
    raise FileNotFoundError(f"{dataset}/{filename} not found (looked in {', '.join(tried)}); {hint}")


def sha256(path: str | Path) -> str:
    """The sha256 of a file's bytes; of a folder (a ``datasets`` folder written by ``save_to_disk``), that of
    its files' relative paths and digests in sorted order, so the same files give the same digest wherever
    the folder lies (hidden files, as a ``.lock``, are left out)."""
    path = Path(path)
    if path.is_dir():
        h = hashlib.sha256()
        files = sorted(p for p in path.rglob("*") if p.is_file() and not _hidden(p.relative_to(path)))
        for file in files:
            h.update(f"{file.relative_to(path).as_posix()}\0{sha256(file)}\n".encode())
        return h.hexdigest()
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)


def download(dataset: str, root: Path | None = None, timeout: float = 60.0) -> list[Path]:
    """Fetch every file of ``dataset`` into ``root/dataset`` (default: the cache); skip files already there."""
    if dataset in NO_PUBLIC_SOURCE:
        raise ValueError(f"{dataset} cannot be downloaded: {NO_PUBLIC_SOURCE[dataset]}")
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; downloadable: {', '.join(sorted(DATASETS))}")
    target = (root or cache_dir()) / dataset
    target.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, (url, digest) in DATASETS[dataset].items():
        path = target / name
        if not path.is_file():
            atomic_write(path, functools.partial(_fetch, url, digest=digest, timeout=timeout))
        paths.append(path)
    return paths


def _fetch(url: str, tmp: str, digest: str | None, timeout: float) -> None:
    """Download ``url`` into ``tmp`` (``atomic_write``'s temporary file) and check its sha256."""
    try:
        with open(tmp, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as resp:
            shutil.copyfileobj(resp, out)
    except urllib.error.URLError as err:  # the network's failure, not the file's: said as such
        raise DataError(f"cannot download {url}: {err.reason}; check the connection and try again") from None
    got = sha256(tmp)
    if digest is not None and got != digest:
        raise ValueError(f"{url}: sha256 {got} does not match the expected {digest}")


def read_text_file(path: str | Path) -> str:
    """Read UTF-8 text (compressed or not: ``formats.read_bytes`` decides from the bytes) as Python's text
    mode would: a byte-order mark is dropped and Windows (``\\r\\n``) or old Mac (``\\r``) line endings
    become ``\\n``. Problems are one-line errors naming the file (and line)."""
    return text_of(read_bytes(path), path)


def text_of(raw: bytes, path: str | Path) -> str:
    """A file's bytes (decompressed) as ``read_text_file`` reads them; an empty file is an error."""
    if not raw.strip():
        raise DataError(f"{path}: the file is empty")
    return decode(raw, path).replace("\r\n", "\n").replace("\r", "\n")
