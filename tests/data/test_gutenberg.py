"""Both Project Gutenberg editions of the Complete Works, as small hand-written excerpts in every
speaker form the real files use, and the account of every line (categories, per-play counts, warnings)."""

import re
import subprocess
import sys
import warnings

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from transformers_lite.data.gutenberg import between_markers, prepare_complete_works
from transformers_lite.data.gutenberg_reader import CATEGORIES, KEPT, read_works
from transformers_lite.data.shakespeare import text_stats
from transformers_lite.errors import DataError, TliteWarning

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
# indented further, stage directions unindented, bracketed or right-aligned, copyright notices between works
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


def prepare(raw: str, **kwargs):
    """``prepare_complete_works`` with its warnings returned instead of shown."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prepared = prepare_complete_works(raw, **kwargs)
    return prepared, [str(w.message) for w in caught if issubclass(w.category, TliteWarning)]


def old_play(title: str, body: list[str], year: str = "1600") -> list[str]:
    """A 1990s-edition play around the given body lines."""
    head = [year, "", title, "", "by William Shakespeare", "", "Dramatis Personae", "", "  DUKE, a duke.", ""]
    return [*head, "ACT I. SCENE I.", "A room.", "", "Enter DUKE.", "", *body, "", "THE END", "", ""]


def current_play(title: str, body: list[str]) -> list[str]:
    """A current-edition play around the given body lines."""
    head = ["", "", title, "", "", "Dramatis Personæ", "", "DUKE, a duke", "", "ACT I", ""]
    return [*head, "SCENE I. A room.", "", " Enter Duke.", "", *body, "", ""]


def passages(prepared) -> list[str]:
    return prepared.text.rstrip("\n").split("\n\n")


def test_current_edition_keeps_speeches_and_bracketed_directions():
    prepared, warned = prepare(CURRENT, min_kept=0.3)
    assert prepared.edition == "current" and prepared.plays == 1 and prepared.passages == 5 and not warned
    assert prepared.text == (
        "[Enter Theseus, Hippolyta, Philostrate and Attendants.]\n\n"
        "LYSANDER.\nHow now, my love? Why is your cheek so pale?\nHow chance the roses there do fade so fast?\n\n"
        "HERMIA.\nBelike for want of rain, which I could well\n"
        "Beteem them from the tempest of my eyes, etc. dipus co.\n\n"
        "LYSANDER.\nAy me! For aught that I could ever read,\nCould ever hear by tale or history,\n"
        "The course of true love never did run smooth.\n\n"
        "[_Exeunt._]\n"
    )
    [play] = prepared.per_play
    assert (play.title, play.speeches) == ("A MIDSUMMER NIGHT’S DREAM", 3)
    assert play.line == CURRENT.replace("\ufeff", "").split("\n").index("A MIDSUMMER NIGHT’S DREAM") + 1
    assert play.characters == len(prepared.text) - 1  # the one play is all of the text but its final newline
    c = prepared.categories
    assert (c["speaker"], c["speech"], c["direction"], c["poem"], c["cast"], c["unrecognised"]) == (3, 7, 2, 3, 2, 0)
    assert c["contents"] == 6 and prepared.lines == len(between_markers(CURRENT).split("\n")) - 1
    assert "Œ" in prepare(CURRENT, ascii_only=False, min_kept=0.3)[0].text


def test_1990s_edition_becomes_the_same_shape():
    prepared, warned = prepare(OLD, min_kept=0.3)
    assert prepared.edition == "1990s" and prepared.plays == 1 and prepared.passages == 5 and not warned
    assert prepared.text == (
        "[Enter Sampson and Gregory, with swords and bucklers, of the house of Capulet.]\n\n"
        "SAMPSON.\nGregory, on my word, we'll not carry coals.\n\n"
        "GREGORY.\nNo, for then we should be colliers.\n\n"
        "SAMPSON.\nI mean, an we be in choler, we'll draw.\nA dog of the house of Montague moves me.\n[Exit.]\n\n"
        "ROMEO.\nBut soft! What light through yonder window breaks?\nIt is the East, and Juliet is the sun! etc.\n"
        "[Aside]\nArise, fair sun, and kill the envious moon,\n[Exeunt]\n"
    )
    c = prepared.categories
    assert (c["speech"], c["speaker"], c["direction"], c["cast"], c["notice"], c["poem"]) == (7, 0, 4, 2, 4, 3)
    assert c["heading"] == 11  # 2 years, 2 titles, 2 by-lines, 2 x THE END, Dramatis Personae, the act, its place
    assert prepared.per_play[0].title == "THE TRAGEDY OF ROMEO AND JULIET" and prepared.per_play[0].speeches == 4


def test_mixed_case_abbreviations_of_the_1990s_hamlet_are_speeches():
    """The plays that vanished: ``  Ham. To be, ...`` was not read as a speaker in capitals."""
    body = [
        "  King. Sweet Gertrude, leave us too;",
        "    For we have closely sent for Hamlet hither.",
        "  Queen. I shall obey you;",
        "  Oph. Madam, I wish it may.                             [Exit Queen.]",
        "  Pol. Ophelia, walk you here.- Gracious, so please you,",
        "    We will bestow ourselves.",
        "                                    Exeunt King and Polonius].",
        "",
        "                           Enter Hamlet.",
        "",
        "  Ham. To be, or not to be- that is the question:",
        "    Whether 'tis nobler in the mind to suffer",
    ]
    prepared, warned = prepare("\n".join(old_play("THE TRAGEDY OF HAMLET, PRINCE OF DENMARK", body)), min_kept=0)
    assert not warned and prepared.per_play[0].speeches == 5
    assert passages(prepared)[1:] == [
        "King.\nSweet Gertrude, leave us too;\nFor we have closely sent for Hamlet hither.",
        "Queen.\nI shall obey you;",
        "Oph.\nMadam, I wish it may. [Exit Queen.]",
        "Pol.\nOphelia, walk you here.- Gracious, so please you,\nWe will bestow ourselves.\n"
        "[Exeunt King and Polonius].",
        "[Enter Hamlet.]",
        "Ham.\nTo be, or not to be- that is the question:\nWhether 'tis nobler in the mind to suffer",
    ]


@pytest.mark.parametrize(
    ("lines", "passage"),
    [
        (["  ROMEO. But soft! What light"], "ROMEO.\nBut soft! What light"),
        (["  First Citizen. Before we proceed"], "First Citizen.\nBefore we proceed"),
        (["  Lady M. Out, damned spot! out, I say!"], "Lady M.\nOut, damned spot! out, I say!"),
        (["  MRS. PAGE. What, have I scap'd love-letters"], "MRS. PAGE.\nWhat, have I scap'd love-letters"),
        (["  M. Wife. Thou shalt not stir one foot"], "M. Wife.\nThou shalt not stir one foot"),
        (["  1. Serv. Where's Potpan, that he helps not?"], "1. Serv.\nWhere's Potpan, that he helps not?"),
        (["  Alb., Corn. Dear sir, forbear!"], "Alb., Corn.\nDear sir, forbear!"),
        (
            ["  ROSENCRANTZ and GUILDENSTERN. We'll wait upon you."],
            "ROSENCRANTZ and GUILDENSTERN.\nWe'll wait upon you.",
        ),
        (["  DROMIO OF EPHESUS. Return'd so soon!"], "DROMIO OF EPHESUS.\nReturn'd so soon!"),
        (["  ALL. Amen."], "ALL.\nAmen."),  # a one-word speech is not part of the name
        (["  NESTOR.Who, Thersites?"], "NESTOR.\nWho, Thersites?"),  # the space after the name is missing
        (["  HAMLET.", "    To be, or not to be"], "HAMLET.\nTo be, or not to be"),  # the speech on the next line
        (["  MALCOLM. Welcome.", "  MALCOLM The worthy Thane of Ross."], "MALCOLM.\nThe worthy Thane of Ross."),
        # slips of the type in the 1990s edition, read for a name the play already has
        (
            ["  Both. Arm'd, my lord.", "  Both [Mar. and Ber.] We do, my lord."],
            "Both.\n[Mar. and Ber.] We do, my lord.",
        ),
        (
            ["  Hor. As I do live.", "  Hor [aside to Hamlet] Is't not possible", "    tongue? You will do't, sir."],
            "Hor.\n[aside to Hamlet] Is't not possible\ntongue? You will do't, sir.",
        ),
        (
            ["  FIRST MURDERER. Ay.", "  FIRST MURDERER-How now, what mean'st thou", "    help'st me not?"],
            "FIRST MURDERER.\nHow now, what mean'st thou\nhelp'st me not?",
        ),
        (  # a line of the speech set at the speakers' margin: it goes on the speech
            ["  HELENA. Nor would I wish you.", "  FIRST give me trust the Count is my husband,", "    And what"],
            "HELENA.\nNor would I wish you.\nFIRST give me trust the Count is my husband,\nAnd what",
        ),
    ],
)
def test_1990s_speaker_forms(lines, passage):
    filler = [f"  DUKE. Speak, sir; {n} times speak." for n in range(3)]
    prepared, warned = prepare("\n".join(old_play("THE PLAY", [*filler, *lines])), min_kept=0)
    assert not warned and passages(prepared)[-1] == passage


@pytest.mark.parametrize(
    ("lines", "passage"),
    [
        (["HAMLET.", "To be, or not to be"], "HAMLET.\nTo be, or not to be"),
        (["Ham.", "To be, or not to be"], "Ham.\nTo be, or not to be"),  # the 1998 single-play texts
        (["QUINCE", "Is all our company here?"], "QUINCE.\nIs all our company here?"),  # no period
        (
            ["ROSENCRANTZ and GUILDENSTERN.", "We'll wait upon you."],
            "ROSENCRANTZ and GUILDENSTERN.\nWe'll wait upon you.",
        ),
        (["FIRST CITIZEN.", "Before we proceed"], "FIRST CITIZEN.\nBefore we proceed"),
        (["1 KEEPER.", "Under this thick-grown brake"], "1 KEEPER.\nUnder this thick-grown brake"),
        (["M. JOURDAIN.", "Come, come."], "M. JOURDAIN.\nCome, come."),
        (["Lady M.", "Out, damned spot!"], "Lady M.\nOut, damned spot!"),
        (["BAPTISTA.  [To TRANIO.]", "Sir, you shall."], "BAPTISTA.\n[To TRANIO.]\nSir, you shall."),
        (
            ["PROLOGUE.", "If we offend, it is with our good will."],
            "PROLOGUE.\nIf we offend, it is with our good will.",
        ),
        (["HAMLET.", "Words,", "[_Aside._]", "words."], "HAMLET.\nWords,\n[_Aside._]\nwords."),
        (["HAMLET.", "Enter the city, clip your wives."], "HAMLET.\nEnter the city, clip your wives."),
    ],
)
def test_current_edition_speaker_forms(lines, passage):
    filler = ["DUKE.", "Speak, sir.", "", "DUKE.", "Speak again.", ""]
    prepared, warned = prepare("\n".join(current_play("THE PLAY", [*filler, *lines])), min_kept=0)
    assert not warned and passages(prepared)[-1] == passage


def test_a_speech_that_goes_on_after_a_direction_keeps_its_speaker():
    body = ["AEGEON. Proceed, Solinus,", "  to procure my fall.", "", "Enter DROMIO", "", "  Here comes the almanac."]
    prepared, _ = prepare("\n".join(old_play("THE COMEDY OF ERRORS", body)), min_kept=0)
    assert passages(prepared)[-3:] == [
        "AEGEON.\nProceed, Solinus,\nto procure my fall.",
        "[Enter DROMIO]",
        "AEGEON.\nHere comes the almanac.",
    ]
    current = ["BARNARDO.", "Last night of all,", "", " [_Enter Ghost._]", "", "The bell then beating one,—"]
    prepared, _ = prepare("\n".join(current_play("HAMLET", current)), min_kept=0)
    assert passages(prepared)[-3:] == [
        "BARNARDO.\nLast night of all,",
        "[_Enter Ghost._]",
        "BARNARDO.\nThe bell then beating one,—",
    ]


def test_an_unnamed_speech_after_a_lone_entrance_is_that_speakers():
    """Pericles opens with ``Enter Gower.`` and Gower's chorus without his name (current edition)."""
    chorus = ["To sing a song that old was sung,", "From ashes ancient Gower is come;", "Assuming man's infirmities,"]
    lines = ["", "", "PERICLES, PRINCE OF TYRE", "", "ACT I", "", " Enter Gower.", "", " Before the palace of Antioch."]
    lines += ["", *chorus, "To glad your ear, and please your eyes.", "", " [_Exit._]", "", "SCENE I. Antioch."]
    lines += ["", "ANTIOCHUS.", "Young prince of Tyre, you have at large received"]
    prepared, warned = prepare("\n".join(lines), min_kept=0)
    assert not warned and prepared.per_play[0].speeches == 2
    assert passages(prepared)[:3] == [
        "[Enter Gower.]",
        "[Before the palace of Antioch.]",
        "GOWER.\n" + "\n".join(chorus) + "\nTo glad your ear, and please your eyes.",
    ]


def test_lines_after_the_end_are_notices_only_when_they_are_about_the_file():
    play = old_play("THE TEMPEST", ["  PROSPERO. Now my charms are all o'erthrown."])
    lines = [*play, "End of this Etext of The Complete Works of William", "Shakespeare, by William Shakespeare", ""]
    prepared, warned = prepare("\n".join([*lines, "Now my charms are all o'erthrown,"]), min_kept=0)
    assert prepared.categories["notice"] == 2 and prepared.unrecognised == (len(lines) + 1,)
    assert warned == [
        f"1 unrecognised line(s) of text in 'THE TEMPEST' were dropped (line {len(lines) + 1}; "
        'first: "Now my charms are all o\'erthrown,")'
    ]


def test_a_play_with_more_direction_lines_than_speech_lines_is_named():
    """The First Folio sets continuation lines flush left, where the 1990s edition sets directions."""
    folio = [
        "  Ham. To be, or not to be, that is the Question:",
        "Whether 'tis Nobler in the minde to suffer",
        "The Slings and Arrowes of outragious Fortune,",
        "  Ophe. Good my Lord,",
        "How does your Honor for this many a day?",
    ]
    prepared, warned = prepare("\n".join(old_play("THE TRAGEDIE OF HAMLET", folio)), min_kept=0)
    play = prepared.per_play[0]
    assert (play.speeches, play.speech_lines, play.direction_lines) == (2, 2, 4)  # "Enter DUKE." is one of them
    assert warned == [
        f"the play 'THE TRAGEDIE OF HAMLET' (line {play.line}) has more stage-direction lines (4) than speech "
        "lines (2); its speeches may be laid out in a way this reader does not know"
    ]


def test_a_play_without_recognised_speeches_is_named_with_its_line():
    good = [f"  DUKE. Speak, sir; {n} times speak." for n in range(20)]
    unknown = [f"  <Hamlet> To be, or not to be, {n}" for n in range(20)]  # a speaker form nobody writes
    lines = [
        "*** START OF THIS PROJECT GUTENBERG EBOOK X ***",
        *old_play("MEASURE FOR MEASURE", good),
        *old_play("THE TRAGEDY OF HAMLET", unknown),
        *old_play("THE TEMPEST", good),
    ]
    prepared, warned = prepare("\n".join(["header", *lines]), min_kept=0)
    file = ["header", *lines]
    title_line, end_line = file.index("THE TRAGEDY OF HAMLET") + 1, file.index("THE TEMPEST") + 1
    assert [p.speeches for p in prepared.per_play] == [20, 0, 20] and prepared.plays == 2 and len(warned) == 2
    assert f"no speeches recognised in the play 'THE TRAGEDY OF HAMLET' (line {title_line})" in warned[0]
    count, first = map(
        int, re.search(r"^(\d+) unrecognised .* 'THE TRAGEDY OF HAMLET' .*\(line (\d+),", warned[1]).groups()
    )
    assert count == prepared.categories["unrecognised"] == len(prepared.unrecognised) >= 20
    assert (
        title_line < first == prepared.unrecognised[0] < end_line
        and file.index(unknown[0]) + 1 in prepared.unrecognised
    )


def test_a_play_far_below_the_others_is_named_and_punctuation_is_not_text():
    many = [f"  DUKE. Speak, sir; {n} times speak." for n in range(20)]
    few = ["  DUKE. Once.", "  DUKE. Twice.", "  ***"]  # a line of punctuation: unrecognised, not text
    lines = [*old_play("ONE", many), *old_play("TWO", many), *old_play("THREE", few), *old_play("FOUR", many)]
    prepared, warned = prepare("\n".join(lines), min_kept=0)
    assert warned == [
        f"only 2 speeches recognised in the play 'THREE' (line {lines.index('THREE') + 1}), against 20 in the "
        "median play; its speaker lines may be in a form this reader does not know"
    ]
    assert prepared.categories["unrecognised"] == 1 and prepared.unrecognised == ()


def test_a_file_that_is_mostly_not_speech_is_refused():
    sonnets_only = OLD.split("1595")[0] + "*** END OF THIS PROJECT GUTENBERG EBOOK ***\n"
    with pytest.raises(DataError, match="only 0% .* are play speeches.*Nothing was written"):
        prepare_complete_works(sonnets_only)
    with pytest.raises(DataError, match="Complete Works"):
        prepare_complete_works(CURRENT)  # the excerpt's contents and sonnets outweigh its three speeches


def test_a_refused_file_still_says_where_its_text_went():
    """The warnings (here: a play with more stage-direction lines than speech) come before the refusal,
    so a file kept at less than half is refused with its diagnosis, not without."""
    play = old_play("THE TRAGEDY OF HAMLET, PRINCE OF DENMARK", ["  Ham. To be, or not to be.", "~~ an odd line ~~"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(DataError, match="Nothing was written"):
            prepare_complete_works("\n".join(play), min_kept=0.99)
    assert any("HAMLET" in str(w.message) and "stage-direction lines" in str(w.message) for w in caught)


_NAMES = st.sampled_from(["HAMLET", "Ham", "First Citizen", "MRS. PAGE", "Lady M", "ROSENCRANTZ and GUILDENSTERN"])
_WORDS = st.lists(
    st.sampled_from(["to", "be", "Or", "not", "soft", "What", "light", "Enter", "ACT"]), min_size=1, max_size=6
)
_LINE = st.one_of(
    st.builds(lambda n: f"{n}.", _NAMES),  # a speaker alone
    st.builds(lambda n, w: f"  {n}. {' '.join(w)}", _NAMES, _WORDS),  # a 1990s speech
    st.builds(lambda i, w: " " * i + " ".join(w), st.integers(0, 50), _WORDS),  # speech, continuation, direction
    st.sampled_from(
        [
            "Enter Ghost.",
            " [_Exit._]",
            " " * 40 + "Exeunt",
            "[Aside]",
            "ACT I",
            "SCENE II. A room.",
            "ACT I. SCENE I.",
            "THE END",
            "EPILOGUE",
            "SONG",
            "1604",
            "by William Shakespeare",
            "THE TEMPEST",
            "Contents",
            "Dramatis Personae",
            "<<THIS ELECTRONIC VERSION",
            "IS COPYRIGHT>>",
            "",
            "   ",
        ]
    ),
    st.text(st.characters(codec="ascii", exclude_characters="\r\n"), max_size=30),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=60), st.sampled_from(["bare", "markers", "1990s play", "current play"]))
@example(["00.Aa", "0A[F", " 0.A"], "1990s play")  # a name alone with a bracket after it: the bracket was lost
def test_every_line_is_counted_once_and_kept_lines_reach_the_text(lines, frame):
    """Generated files mixing every kind of line: the categories add up to every line between the
    markers, blank means blank, and every word of a kept line is in the text."""
    lines = {"1990s play": old_play, "current play": current_play}.get(frame, lambda t, x: x)("THE PLAY", lines)
    if frame == "markers":
        lines = [
            "*** START OF THE PROJECT GUTENBERG EBOOK X ***",
            *lines,
            "*** END OF THE PROJECT GUTENBERG EBOOK X ***",
        ]
    raw = "\n".join(lines)
    body = between_markers(raw)
    expected = body.split("\n")[:-1] if body.endswith("\n") else body.split("\n")
    prepared, _ = prepare(raw, min_kept=0)
    assert prepared.lines == len(expected) and set(prepared.categories) == set(CATEGORIES)
    assert sum(prepared.category_characters.values()) == sum(len(ln) for ln in expected)
    assert prepared.passages == text_stats(prepared.text)["passages"]
    plays_with_text = sum(p.characters > 0 for p in prepared.per_play)
    assert len(prepared.text) == sum(p.characters for p in prepared.per_play) + 2 * plays_with_text - 1 * bool(
        prepared.text
    )
    reading = read_works(expected)
    assert len(reading.categories) == len(expected) and set(reading.categories) <= set(CATEGORIES)
    for line, category in zip(expected, reading.categories):
        if category in KEPT:
            assert all(word in prepared.text for word in re.findall(r"[A-Za-z]+", line))
        assert (category == "blank") == (not line.strip())
    unrecognised = [n + 1 for n, c in enumerate(reading.categories) if c == "unrecognised"]
    assert list(prepared.unrecognised) == [n for n in unrecognised if any(ch.isalpha() for ch in expected[n - 1])]


def test_cli_prints_the_plays_the_categories_and_what_it_kept(tmp_path):
    many = OLD.replace("ACT I. SCENE I.", "ACT I. SCENE I.\n" + "  ROMEO. Speak again, bright angel.\n" * 60)
    (tmp_path / "old.txt").write_text(many)
    cmd = [sys.executable, "-m", "transformers_lite", "data", "prepare-shakespeare"]
    ok = subprocess.run(cmd + [str(tmp_path / "old.txt"), str(tmp_path / "plays.txt")], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    out = ok.stdout.splitlines()
    assert re.fullmatch(r"play +line +speeches +characters", out[0])
    assert re.fullmatch(r"THE TRAGEDY OF ROMEO AND JULIET +\d+ +64 +[\d,]+", out[1])
    assert re.fullmatch(r"speech +67 +[\d,]+", next(ln for ln in out if ln.startswith("speech ")))
    assert out[-2].startswith("1990s edition: kept") and "(64 speeches) from 1 plays" in out[-2]
    assert (tmp_path / "plays.txt").read_text().startswith("ROMEO.\nSpeak again, bright angel.\n\nROMEO.")
    (tmp_path / "sonnets.txt").write_text(OLD.split("1595")[0])
    bad = subprocess.run(
        cmd + [str(tmp_path / "sonnets.txt"), str(tmp_path / "out.txt")], capture_output=True, text=True
    )
    assert bad.returncode == 1 and "Nothing was written" in bad.stderr and not (tmp_path / "out.txt").exists()
    assert len(bad.stderr.strip().splitlines()) == 1


def test_cli_warns_on_stderr_about_a_play_without_speeches(tmp_path):
    lines = [
        *old_play("ONE", [f"  DUKE. Speak, sir; {n} times speak." for n in range(30)]),
        *old_play("TWO", ["Thou art.", "Art thou?"]),
    ]
    (tmp_path / "two.txt").write_text("\n".join(lines))
    cmd = [sys.executable, "-m", "transformers_lite", "data", "prepare-shakespeare", str(tmp_path / "two.txt")]
    run = subprocess.run(cmd + [str(tmp_path / "plays.txt")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert f"tlite: warning: no speeches recognised in the play 'TWO' (line {lines.index('TWO') + 1})" in run.stderr
    assert re.search(r"^TWO +\d+ +0 +0$", run.stdout, re.M)


def test_download_complete_works_prepares_plays_txt(tmp_path, monkeypatch):
    from transformers_lite.data import gutenberg, sources

    many = CURRENT.replace("LYSANDER.\nHow now", "LYSANDER.\nSpeak, Hermia.\n\n" * 40 + "LYSANDER.\nHow now")
    (tmp_path / "pg100.txt").write_text(many)
    monkeypatch.setitem(
        sources.DATASETS, "complete-works", {"pg100.txt": ((tmp_path / "pg100.txt").as_uri(), None)}
    )  # no network in tests
    path, prepared = gutenberg.download_complete_works(tmp_path / "cache")
    assert path == tmp_path / "cache" / "complete-works" / "plays.txt" and prepared.edition == "current"
    assert path.read_text().startswith(
        "[Enter Theseus, Hippolyta, Philostrate and Attendants.]\n\nLYSANDER.\nSpeak, Hermia.\n\n"
    )
    assert prepared.passages == 45 and prepared.speeches == 43


def test_a_1990s_speaker_alone_on_its_line_keeps_the_direction_after_the_name():
    """``  BAPTISTA.  [To TRANIO.]`` over an indented speech: the name starts the speech and the bracket
    is kept as its direction, as in the current edition (it was dropped)."""
    body = ["  DUKE. Go on, my lord, and speak.", "  BAPTISTA.  [To TRANIO.]", "    Go on, sir, I pray you now."]
    prepared, _ = prepare("\n".join(old_play("THE PLAY", body)), min_kept=0)
    assert "BAPTISTA.\n[To TRANIO.]\nGo on, sir, I pray you now." in prepared.text
