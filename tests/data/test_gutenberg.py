"""Both Project Gutenberg editions of the Complete Works, as small hand-written excerpts."""

import subprocess
import sys

import pytest

from transformers_lite.data.gutenberg import prepare_complete_works
from transformers_lite.errors import DataError

LICENCE = "\n".join(["Updated editions will replace the previous one. START: FULL LICENSE"] * 40)
# the current edition (pg100.txt): a speaker's name alone on its line, then the speech
CURRENT = f"""\ufeffThe Project Gutenberg eBook of The Complete Works of William Shakespeare

This eBook is for the use of anyone anywhere in the United States and most other parts of the world.

*** START OF THE PROJECT GUTENBERG EBOOK THE COMPLETE WORKS OF WILLIAM SHAKESPEARE ***

The Complete Works of William Shakespeare

by William Shakespeare

                    Contents

    THE SONNETS
    A MIDSUMMER NIGHT’S DREAM

THE SONNETS

                    1

From fairest creatures we desire increase,
That thereby beauty’s rose might never die,

A MIDSUMMER NIGHT’S DREAM

Contents

 ACT I
 Scene I. Athens. A room in the Palace of Theseus.

Dramatis Personæ

THESEUS, Duke of Athens.
LYSANDER, in love with Hermia.

ACT I

SCENE I. Athens. A room in the Palace of Theseus.

 Enter Theseus, Hippolyta, Philostrate and Attendants.

LYSANDER.
How now, my love? Why is your cheek so pale?
How chance the roses there do fade so fast?

HERMIA.
Belike for want of rain, which I could well
Beteem them from the tempest of my eyes, &c. Œdipus & co.

LYSANDER.
Ay me! For aught that I could ever read,
Could ever hear by tale or history,
The course of true love never did run smooth.

 [_Exeunt._]

*** END OF THE PROJECT GUTENBERG EBOOK THE COMPLETE WORKS OF WILLIAM SHAKESPEARE ***

{LICENCE}
"""
# the 1990s edition (shaks12.txt / t8.shakespeare.txt): "  NAME. speech" on one line, continuations
# indented further, stage directions in brackets or right-aligned, copyright notices between works
OLD = f"""The Project Gutenberg EBook of The Complete Works of William Shakespeare, by
William Shakespeare

*** START OF THIS PROJECT GUTENBERG EBOOK COMPLETE WORKS--WILLIAM SHAKESPEARE ***

1609

THE SONNETS

by William Shakespeare

                     1
  From fairest creatures we desire increase,
  That thereby beauty's rose might never die,

THE END

<<THIS ELECTRONIC VERSION OF THE COMPLETE WORKS OF WILLIAM
SHAKESPEARE IS COPYRIGHT 1990-1993 BY WORLD LIBRARY, INC., AND IS
PROVIDED BY PROJECT GUTENBERG ETEXT OF ILLINOIS BENEDICTINE COLLEGE
WITH PERMISSION.>>

1595

THE TRAGEDY OF ROMEO AND JULIET

by William Shakespeare

Dramatis Personae

  ESCALUS, Prince of Verona.
  ROMEO, son to Montague.

ACT I. SCENE I.
Verona. A public place.

Enter Sampson and Gregory, with swords and bucklers, of the house of Capulet.

  SAMPSON. Gregory, on my word, we'll not carry coals.
  GREGORY. No, for then we should be colliers.
  SAMPSON. I mean, an we be in choler, we'll draw.
    A dog of the house of Montague moves me.
                                                      Exit.
  ROMEO. But soft! What light through yonder window breaks?
    It is the East, and Juliet is the sun! &c.
    [Aside]
    Arise, fair sun, and kill the envious moon,
                                                [Exeunt]

THE END

*** END OF THIS PROJECT GUTENBERG EBOOK COMPLETE WORKS--WILLIAM SHAKESPEARE ***

{LICENCE}
"""


def test_current_edition_keeps_only_speeches():
    prepared = prepare_complete_works(CURRENT, min_kept=0.3)
    text = prepared.text
    assert prepared.edition == "current" and prepared.passages == 3 and prepared.plays == 1
    assert text.startswith("LYSANDER.\nHow now, my love?")
    assert "HERMIA.\nBelike" in text and text.endswith("never did run smooth.\n")
    for gone in (
        "Gutenberg",
        "Contents",
        "SONNETS",
        "fairest",
        "Dramatis",
        "ACT I",
        "SCENE",
        "LICENSE",
        "&",
        "Enter",
        "Exeunt",
    ):
        assert gone not in text
    assert "etc." in text and "dipus" in text and "Œ" not in text
    assert "Œ" in prepare_complete_works(CURRENT, ascii_only=False, min_kept=0.3).text


def test_1990s_edition_becomes_the_same_shape():
    prepared = prepare_complete_works(OLD, min_kept=0.3)
    assert prepared.edition == "1990s" and prepared.plays == 1 and prepared.passages == 4
    assert prepared.text == (
        "SAMPSON.\nGregory, on my word, we'll not carry coals.\n\n"
        "GREGORY.\nNo, for then we should be colliers.\n\n"
        "SAMPSON.\nI mean, an we be in choler, we'll draw.\nA dog of the house of Montague moves me.\n\n"
        "ROMEO.\nBut soft! What light through yonder window breaks?\nIt is the East, and Juliet is the sun! etc.\n"
        "Arise, fair sun, and kill the envious moon,\n"
    )
    assert "copyright" in prepared.report().lower() or "kept" in prepared.report()


def test_a_file_that_is_mostly_not_speech_is_refused():
    sonnets_only = OLD.split("1595")[0] + "*** END OF THIS PROJECT GUTENBERG EBOOK ***\n"
    with pytest.raises(DataError, match="only 0% .* are play speeches.*Nothing was written"):
        prepare_complete_works(sonnets_only)
    with pytest.raises(DataError, match="Complete Works"):
        prepare_complete_works(CURRENT)  # the excerpt's contents and sonnets outweigh its three speeches


def test_cli_prints_what_it_kept_and_refuses_a_nearly_empty_result(tmp_path):
    many = OLD.replace("ACT I. SCENE I.", "ACT I. SCENE I.\n" + "  ROMEO. Speak again, bright angel.\n" * 60)
    (tmp_path / "old.txt").write_text(many)
    cmd = [sys.executable, "-m", "transformers_lite", "data", "prepare-shakespeare"]
    ok = subprocess.run(cmd + [str(tmp_path / "old.txt"), str(tmp_path / "plays.txt")], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert "1990s edition: kept" in ok.stdout and "from 1 plays" in ok.stdout
    assert (tmp_path / "plays.txt").read_text().startswith("ROMEO.\nSpeak again, bright angel.\n\nROMEO.")
    (tmp_path / "sonnets.txt").write_text(OLD.split("1595")[0])
    bad = subprocess.run(
        cmd + [str(tmp_path / "sonnets.txt"), str(tmp_path / "out.txt")], capture_output=True, text=True
    )
    assert bad.returncode == 1 and "Nothing was written" in bad.stderr and not (tmp_path / "out.txt").exists()
    assert len(bad.stderr.strip().splitlines()) == 1


def test_download_complete_works_prepares_plays_txt(tmp_path, monkeypatch):
    from transformers_lite.data import gutenberg, sources

    many = CURRENT.replace("LYSANDER.\nHow now", "LYSANDER.\nSpeak, Hermia.\n\n" * 40 + "LYSANDER.\nHow now")
    (tmp_path / "pg100.txt").write_text(many)
    monkeypatch.setitem(
        sources.DATASETS, "complete-works", {"pg100.txt": ((tmp_path / "pg100.txt").as_uri(), None)}
    )  # no network in tests
    path, prepared = gutenberg.download_complete_works(tmp_path / "cache")
    assert path == tmp_path / "cache" / "complete-works" / "plays.txt" and prepared.edition == "current"
    assert path.read_text().startswith("LYSANDER.\nSpeak, Hermia.\n\n") and prepared.passages == 43
