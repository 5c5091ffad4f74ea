"""experiments/own_data/build.py: the pieces that read Debian's files and hold out the test parts,
on small generated inputs (the real sets are built from the machine's packages, never committed)."""

import importlib.util
import struct
from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "own_data" / "build.py"
spec = importlib.util.spec_from_file_location("own_data_build", SCRIPT)
build = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build)


def write_mo(path: Path, messages: dict[bytes, bytes]) -> None:
    """A GNU .mo file: magic, revision, count, the two (length, offset) tables, then the strings."""
    keys = sorted(messages)
    ids_at, strs_at = 28, 28 + 8 * len(keys)
    data_at = strs_at + 8 * len(keys)
    blob, id_table, str_table = b"", [], []
    for table, strings in ((id_table, keys), (str_table, [messages[k] for k in keys])):
        for s in strings:
            table.append((len(s), data_at + len(blob)))
            blob += s + b"\x00"
    head = struct.pack("<7I", 0x950412DE, 0, len(keys), ids_at, strs_at, 0, 0)
    tables = b"".join(struct.pack("<2I", *e) for e in id_table + str_table)
    path.write_bytes(head + tables + blob)


def test_a_catalog_is_read_in_its_own_charset_with_plurals_and_contexts(tmp_path):
    write_mo(
        tmp_path / "de.mo",
        {
            b"": b"Content-Type: text/plain; charset=ISO-8859-1\n",
            b"File": "Datei öffnen".encode("latin-1"),
            b"%d file\x00%d files": b"%d Datei\x00%d Dateien",
            b"menu\x04Quit": b"Beenden",
        },
    )
    assert build._messages(tmp_path / "de.mo") == {"File": "Datei öffnen", "%d file": "%d Datei", "Quit": "Beenden"}


def test_a_packages_list_gives_each_package_s_fields_and_description():
    text = "Package: a\nSection: net\nDescription: ping tool\n more text\n .\n last\n\nPackage: b\nSection: x/games\n"
    first, second = build._stanzas(text)
    assert first["Section"] == "net" and build._description(first["Description"]) == "ping tool\nmore text\n\nlast"
    assert second["Package"] == "b" and "Description" not in second


@settings(max_examples=30, deadline=None)
@given(labels=st.lists(st.sampled_from("abcde"), min_size=1, max_size=60), seed=st.integers(0, 3))
def test_the_test_part_takes_every_class_s_share_and_is_fixed_by_the_seed(labels, seed):
    records = [(f"text {i}", label) for i, label in enumerate(labels)]
    train, test = build.split_by(records, lambda r: r[1], 0.2, seed)
    assert sorted(train + test) == sorted(records) and not set(train) & set(test)
    counts, held = Counter(labels), Counter(label for _, label in test)
    for label, n in counts.items():
        assert held[label] == (max(round(n * 0.2), 1) if n >= 2 else round(n * 0.2))
    assert build.split_by(records, lambda r: r[1], 0.2, seed) == (train, test)


def test_pairs_of_one_english_message_stay_on_one_side():
    pairs = [(f"de {i} {j}", f"en {i}") for i in range(40) for j in range(3)]
    train, test = build.split_groups(pairs, lambda p: p[1], 0.25, 0)
    assert len(test) == 30 and not {e for _, e in train} & {e for _, e in test}
