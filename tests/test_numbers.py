"""Numbers are printed as numbers or in words, never as a crash or as ``Infinity`` in JSON: a perplexity
too large for a float says so, and a finite one prints exactly as before (``numbers``,
``evaluation.metrics.perplexity``)."""

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from transformers_lite.evaluation.metrics import perplexity
from transformers_lite.families import FAMILIES
from transformers_lite.numbers import NOT_A_NUMBER, TOO_LARGE, json_text, printable, shown

LOSSES = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.floats(0, 1e6), st.floats(700, 720))


@given(loss=LOSSES, spec=st.sampled_from(["", ".2f", ".3f", ".4f", ".0f", "g"]))
def test_every_loss_gives_a_perplexity_that_prints(loss, spec):
    ppl = perplexity(loss)  # never OverflowError
    if math.isnan(loss):
        assert math.isnan(ppl) and shown(ppl, spec) == NOT_A_NUMBER
    elif loss <= 709:
        assert ppl == math.exp(loss) and shown(ppl, spec) == format(ppl, spec)  # as before
    elif loss > 710:
        assert ppl == math.inf and shown(ppl, spec) == TOO_LARGE
    data = {"loss": loss, "perplexity": ppl, "rows": [ppl, (loss, 1)], "n": 3, "ok": True}
    back = json.loads(json_text(data))  # valid JSON, always (what every printed or written JSON goes through)
    assert back == json.loads(json.dumps(printable(data), allow_nan=False))
    for key in ("loss", "perplexity"):
        assert back[key] == data[key] if math.isfinite(data[key]) else isinstance(back[key], str)
    assert back["n"] == 3 and back["ok"] is True


@given(loss=LOSSES)
def test_evaluate_lines_print_every_loss(loss):
    r = {"loss": loss, "perplexity": perplexity(loss), "n_tokens": 10, "uniform_loss": 3.0, "uniform_perplexity": 21.0}
    r |= {"bits_per_char": loss / math.log(2), "bits_per_byte": loss / math.log(2), "n_chars": 10}
    r |= {"uniform_bits_per_char": 4.3, "unigram_loss": 2.0, "unigram_perplexity": 7.4, "unigram_bits_per_char": 2.9}
    line = FAMILIES["generator"].scores_line(r)
    assert " inf " not in f"{line} " and " nan " not in f"{line} "
    mlm = {"loss": loss, "perplexity": perplexity(loss), "masked_accuracy": 0.5, "n_sequences": 4}
    assert "inf" not in FAMILIES["mlm"].scores_line(mlm).replace("(over", "")
