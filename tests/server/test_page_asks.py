"""Learning by thinking, as a learner sees it in headless Chromium at 1280×720: the walk asks a question
before each step's map and reveals the run's value beside the learner's with a score; a step's exercise
is done in place and a wrong answer's cells light up on that step's own map; the replay shows how the run
learned, frame by frame; the walk beside another run or with a head switched off draws the difference.
No view scrolls sideways or logs an error."""

import json

import httpx
import pytest

from ..reliability.conftest import files, runs  # noqa: F401 - fixtures
from .test_browser import base_url, browser, console_errors, pick, wait  # noqa: F401 - fixtures

webdriver = pytest.importorskip("selenium.webdriver")
PATTERNS = ("previous", "induction")


def _by():
    from selenium.webdriver.common.by import By

    return By


def _open(driver, url, run, questions=True):
    """The page on ``run``, the questions switched on or off as this browser remembers it."""
    driver.set_window_size(1280, 720)
    driver.get(url + "/")
    driver.execute_script("localStorage.setItem('tlite.questions', arguments[0])", "on" if questions else "off")
    driver.get(url + "/")
    wait(driver, lambda d: d.execute_script("return document.body.dataset.ready") == "1", 30)
    pick(driver, run)
    wait(driver, lambda d: d.find_element(_by().ID, "trace-result").is_displayed(), 30)
    wait(driver, lambda d: not d.find_element(_by().ID, "status").text, 30)


def _overflow(driver):
    return driver.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")


def _said(driver, css):
    """The text of the first element ``css`` finds, read at once (the page may redraw it meanwhile)."""
    return driver.execute_script("const e = document.querySelector(arguments[0]); return e ? e.textContent : ''", css)


def _current(driver):
    return driver.find_element(_by().ID, "trace-step-name").text.split(": ", 1)[1]


def _next(driver):
    before = _current(driver)
    driver.find_element(_by().ID, "trace-next").click()
    wait(driver, lambda d: _current(d) != before)


def _asked(url, text, seed=1):
    """The questions the server asks of this text with this seed (what the page was sent)."""
    answer = httpx.post(f"{url}/api/runs/generator/trace", json={"text": text, "seed": seed}, timeout=60)
    return answer.json()


def _value(values, index):
    for i in index:
        values = values[i]
    return values


def test_the_walk_asks_before_each_map_and_reveals_the_runs_value_with_a_score(base_url, browser):  # noqa: F811
    By = _by()
    _open(browser, base_url, "generator")
    text = browser.find_element(By.ID, "trace-text").get_attribute("value")
    sent = _asked(base_url, text)
    asked, steps = sent["questions"], {s["name"]: s for s in sent["steps"]}
    browser.find_element(By.ID, "guide-start").click()
    wait(browser, lambda d: _current(d) == "tokens")

    # the first step: its question in place of the map, which is not drawn, nor its shape said
    box = browser.find_element(By.ID, "walk-question")
    assert box.is_displayed() and box.get_attribute("data-state") == "asking"
    assert browser.find_element(By.ID, "question-prompt").text == asked["tokens"]["prompt"]
    assert not browser.find_element(By.ID, "trace-view").is_displayed()
    assert not browser.find_elements(By.CSS_SELECTOR, "#trace-view figure")
    assert "its sizes once you answer" in browser.find_element(By.ID, "trace-step-info").text
    fields = box.find_elements(By.CSS_SELECTOR, ".question-input input")
    assert len(fields) == len(asked["tokens"]["answer"])
    for field, size in zip(fields, asked["tokens"]["answer"]):
        field.send_keys(str(size))
    browser.find_element(By.ID, "question-answer").click()
    verdict = browser.find_element(By.ID, "question-verdict")
    assert verdict.get_attribute("data-right") == "1" and verdict.text.startswith("✓ right")
    assert browser.find_element(By.ID, "trace-view").is_displayed()
    assert browser.find_element(By.ID, "quiz-score").text == "score: 1 of 1 right"

    # skipped, then a wrong value, then a value right to the digits given: the score counts each
    _next(browser)
    browser.find_element(By.ID, "question-skip").click()
    assert browser.find_element(By.ID, "question-verdict").text.startswith("skipped: the run's answer is")
    names = [o["name"] for o in sent["outline"]]
    value_step = next(n for n in names if asked[n]["kind"] == "value" and not n.startswith("blocks."))
    while _current(browser) != value_step:
        _next(browser)
        if _current(browser) != value_step and browser.find_elements(By.ID, "question-skip"):
            browser.find_element(By.ID, "question-skip").click()
    q = asked[value_step]
    shown = browser.find_elements(By.CSS_SELECTOR, "#walk-question .shown")
    used = [_value(steps[u]["values"], q["index"]) for u in q["uses"]]
    assert [s.text.split(" = ")[1] for s in shown] == [str(v) for v in used]  # what it is made from, as shown
    browser.find_element(By.ID, "question-value").send_keys(str(q["answer"] + 1))
    browser.find_element(By.ID, "question-answer").click()
    verdict = browser.find_element(By.ID, "question-verdict")
    assert verdict.get_attribute("data-right") == "0" and "off by 1 " in verdict.text
    assert float(verdict.get_attribute("data-answer")) == pytest.approx(q["answer"])
    # the asked cell is outlined on the map (its row and column in the map's layout)
    figure = browser.find_element(By.CSS_SELECTOR, "#trace-view figure.map")
    assert json.loads(figure.get_attribute("data-marked")) == [q["index"]]
    skipped = browser.find_element(By.ID, "quiz-score").text
    assert skipped.startswith("score: 1 of 2 right, ") and skipped.endswith(" skipped")

    # the switch: off, the next map is shown at once; remembered when the page is opened again
    browser.find_element(By.ID, "quiz-on").click()
    _next(browser)
    assert not browser.find_element(By.ID, "walk-question").is_displayed()
    assert browser.find_elements(By.CSS_SELECTOR, "#trace-view figure, #trace-view p")
    browser.get(base_url + "/")
    wait(browser, lambda d: d.execute_script("return document.body.dataset.ready") == "1", 30)
    assert browser.execute_script("return localStorage.getItem('tlite.questions')") == "off"
    assert not console_errors(browser)


def test_the_same_run_input_and_seed_ask_the_same_and_new_questions_others(base_url, browser):  # noqa: F811
    By = _by()
    _open(browser, base_url, "generator")
    browser.find_element(By.ID, "guide-start").click()
    wait(browser, lambda d: _current(d) == "tokens")
    prompts = {}
    for _ in range(12):
        prompts[_current(browser)] = browser.find_element(By.ID, "question-prompt").text
        _next(browser)
    text = browser.find_element(By.ID, "trace-text").get_attribute("value")
    first = _asked(base_url, text, seed=1)["questions"]
    assert prompts == {name: first[name]["prompt"] for name in prompts}  # the server's, for seed 1
    browser.find_element(By.ID, "quiz-new").click()
    wait(browser, lambda d: d.execute_script("return tlite.trace.data.questions") != first)
    second = _asked(base_url, text, seed=2)["questions"]
    assert browser.execute_script("return tlite.trace.data.questions") == second != first
    assert browser.find_element(By.ID, "quiz-score").text == "score: no answer yet"  # a new set, a new score
    assert _overflow(browser) <= 0 and not console_errors(browser)


def _go(driver, step):
    """A step of the first block, opened by its chip (no question: the walk was not started)."""
    driver.execute_script(
        "[...document.querySelectorAll('#trace-steps .step')].find((c) => c.textContent === arguments[0]).click()", step
    )
    wait(driver, lambda d: _current(d) == f"blocks.0.{step}")


def _check(driver, code):
    By = _by()
    driver.execute_script("document.getElementById('walk-exercise-code').value = arguments[0]", code)
    driver.execute_script("document.getElementById('walk-exercise-verdict').textContent = ''")
    driver.find_element(By.ID, "walk-exercise-check").click()
    wait(driver, lambda d: d.find_element(By.ID, "walk-exercise-verdict").text, 60)
    return driver.find_element(By.ID, "walk-exercise-verdict").text


def test_a_steps_exercise_in_the_walk_lights_a_wrong_answers_cells_on_that_steps_map(  # noqa: F811
    base_url,  # noqa: F811
    browser,  # noqa: F811
    tmp_path,
    monkeypatch,
):
    By = _by()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    _open(browser, base_url, "generator", questions=False)
    where = httpx.get(f"{base_url}/api/runs/generator/exercises", timeout=60).json()
    _go(browser, "attention.weights")
    wait(browser, lambda d: d.find_element(By.ID, "walk-exercise-open").text == "Try it yourself: Softmax, forward")
    browser.find_element(By.ID, "walk-exercise-open").click()
    said = browser.find_element(By.ID, "walk-exercise-where").text
    assert said == f"Checked on the text on view, with the tensors of {where['steps']['softmax-forward'][0]}."
    # one row of head 1 left out: exactly that row's cells light up on head 1's map of the weights
    slip = "import torch\n\ndef softmax_forward(s):\n    p = torch.softmax(s, -1)\n    p[1, 3] = 0\n    return p\n"
    verdict = _check(browser, slip)
    assert verdict.startswith("✗ p[1, 3, 0] is 0;")
    assert browser.find_element(By.ID, "trace-head").get_attribute("value") == "1"
    figure = browser.find_element(By.CSS_SELECTOR, "#trace-view figure.map")
    assert figure.find_element(By.CSS_SELECTOR, "figcaption").text == "attention.weights, head 1"
    columns = int(figure.get_attribute("data-cols"))
    assert json.loads(figure.get_attribute("data-lit-cells")) == [[3, j] for j in range(columns)]
    note = browser.find_element(By.CSS_SELECTOR, "#walk-exercise-cells .lit-note").text
    assert note.startswith(f"Lit in yellow on this step's map (head 1): p[1]: the {columns} of ")
    assert not browser.find_elements(By.CSS_SELECTOR, "#walk-exercise-cells figure")  # no map of its own
    # a recognised mistake says its cause on its own line
    verdict = _check(browser, "import torch\n\ndef softmax_forward(s):\n    return torch.softmax(s, -2)\n")
    cause = browser.find_element(By.ID, "walk-exercise-cause").text
    assert cause == "likely cause: a softmax over the wrong axis (each column sums to 1, not each row)"
    assert "likely cause" not in verdict
    # a step of another layout: its exercise says which step it checks, and a wrong answer's own map is drawn
    _go(browser, "attention.q")
    wait(browser, lambda d: "blocks.0.attention.out" in d.find_element(By.ID, "walk-exercise-where").text)
    assert browser.find_element(By.ID, "walk-exercise-open").text == "Try it yourself: A Dense layer, forward"
    verdict = _check(browser, "def dense_forward(x, w, b):\n    return x @ w.T\n")  # the bias left out
    assert verdict.startswith("✗ y[")
    note = browser.find_element(By.CSS_SELECTOR, "#walk-exercise-cells .lit-note").text
    assert note.startswith("Lit in yellow on the map of blocks.0.attention.out: y: the ")
    assert browser.find_elements(By.CSS_SELECTOR, "#walk-exercise-cells figure")
    browser.find_element(By.CSS_SELECTOR, "#walk-exercise-cells .lit-note button").click()
    wait(browser, lambda d: _current(d) == "blocks.0.attention.out")
    figure = browser.find_element(By.CSS_SELECTOR, "#trace-view figure.map")
    assert int(figure.get_attribute("data-lit")) > 0
    assert _overflow(browser) <= 0 and not console_errors(browser)


def test_the_replay_shows_how_the_run_learned_frame_by_frame(base_url, browser):  # noqa: F811
    By = _by()
    _open(browser, base_url, "generator", questions=False)
    data = httpx.get(f"{base_url}/api/runs/generator/timeline", timeout=60).json()
    replay = data["replay"]
    wait(browser, lambda d: d.find_element(By.ID, "replay-body").is_displayed())
    browser.execute_script("document.getElementById('replay').scrollIntoView()")
    slider = browser.find_element(By.ID, "replay-slider")
    assert int(slider.get_attribute("max")) == len(replay["steps"]) - 1
    frames = [s for s in data["snapshots"] if s["step"] in replay["steps"]]
    largest = max(loss for s in frames for loss in s["token_losses"])

    def frame(k):
        browser.execute_script(
            "const s = document.getElementById('replay-slider'); s.value = arguments[0];"
            "s.dispatchEvent(new Event('input'))",
            k,
        )
        losses = browser.find_element(By.CSS_SELECTOR, "#replay-frames figure.replay-losses")
        legend = losses.find_element(By.CSS_SELECTOR, ".legend")
        chips = browser.find_elements(By.CSS_SELECTOR, "#replay-frames .replay-tokens .chip")
        return losses, legend, chips

    for k, snap in enumerate(frames):
        losses, legend, chips = frame(k)
        step = snap["step"]
        assert browser.find_element(By.ID, "replay-step").text.startswith(f"step {step}: snapshot {k + 1} of")
        # every snapshot a row, one loss scale for all of them: the legend's ends are 0 and the largest loss
        assert int(losses.get_attribute("data-rows")) == len(frames)
        assert float(legend.get_attribute("data-hi")) == pytest.approx(largest)
        assert losses.find_element(By.CSS_SELECTOR, "figcaption").text == f"this run: step {step} outlined"
        assert [float(c.get_attribute("data-loss")) for c in chips] == pytest.approx(snap["token_losses"])
        learned = [at for at in replay["learned"] if at is not None and at <= step]
        line = browser.find_element(By.CSS_SELECTOR, "#replay-frames .learned-line").text
        assert line.startswith(f"learned by step {step}: {len(learned)} of {len(replay['learned'])} positions")
        heads = browser.find_elements(By.CSS_SELECTOR, "#replay-frames .thumbs figure")
        assert len(heads) == len(replay["heads"])  # every head's attention at this snapshot
        probability = browser.find_element(By.CSS_SELECTOR, "#replay-frames .thumbs + .legend")
        assert (probability.get_attribute("data-lo"), probability.get_attribute("data-hi")) == ("0", "1")
    # when each head formed its pattern: the table says the server's steps
    rows = browser.find_elements(By.CSS_SELECTOR, "#replay-patterns tbody tr")
    assert len(rows) == len(replay["heads"])
    for row, head in zip(rows, replay["heads"]):
        formed = [c.text for c in row.find_elements(By.CSS_SELECTOR, "td.formed")]
        said = [
            "not formed" if head[p]["formed"] is None else f"step {head[p]['formed']}"
            for p in ("previous", "induction")
        ]
        assert formed == said
    chart = browser.find_element(By.CSS_SELECTOR, "#replay-chart svg")
    assert [t.text for t in chart.find_elements(By.CSS_SELECTOR, "text.mark-label")][0] == "now"
    # play: from the first frame to the last by itself
    frame(0)
    browser.find_element(By.ID, "replay-play").click()
    last = frames[-1]["step"]
    wait(browser, lambda d: d.find_element(By.ID, "replay-step").text.startswith(f"step {last}:"), 10)
    wait(browser, lambda d: d.find_element(By.ID, "replay-play").text == "▶ play", 10)
    # beside another run of the same tokenizer, on one time axis
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element(By.ID, "replay-beside")).select_by_value("more/gpt")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#replay-frames .replay-other figure.replay-losses"))
    other = browser.find_element(By.CSS_SELECTOR, ".replay-other figure.replay-losses figcaption").text
    assert other == f"more/gpt: step {last} outlined"
    assert browser.find_element(By.ID, "replay-axis").is_displayed()
    Select(browser.find_element(By.ID, "replay-axis")).select_by_value("fraction")
    assert "100 % of its training" in browser.find_element(By.ID, "replay-step").text
    assert _overflow(browser) <= 0 and not console_errors(browser)


def test_the_walk_beside_another_run_and_with_a_head_off_shows_their_difference(base_url, browser, runs_folder):  # noqa: F811
    from selenium.webdriver.support.ui import Select

    import transformers_lite as tl

    By = _by()
    _open(browser, base_url, "generator", questions=False)
    picker = Select(browser.find_element(By.ID, "beside-pick"))
    offered = [o.get_attribute("value") for o in picker.options]
    assert offered == ["", "off:blocks.0.attention.head.0", "off:blocks.0.attention.head.1", "run:more/gpt"]
    text = browser.find_element(By.ID, "trace-text").get_attribute("value")
    run = tl.load(runs_folder / "generator")
    plain = run.trace(text)
    off = run.trace(text, switch_off_steps=["blocks.0.attention.head.1"])

    def difference():
        figure = browser.find_element(By.CSS_SELECTOR, "#walk-beside figure.difference")
        return float(figure.get_attribute("data-largest"))

    # a copy of the run: the same step on the same input is the same
    picker.select_by_value("run:more/gpt")
    wait(browser, lambda d: "the run more/gpt" in _said(d, "#walk-beside h3"))
    _go(browser, "attention.weights")
    assert difference() == 0
    # head 1 off: the steps before the switch do not move, those after do, down to the next-token bars
    picker.select_by_value("off:blocks.0.attention.head.1")
    wait(browser, lambda d: "head 1 switched off" in _said(d, "#walk-beside h3"))
    assert difference() == 0  # the weights come before the heads' sum that is switched off
    _go(browser, "attention.out")
    moved = float((plain["blocks.0.attention.out"] - off["blocks.0.attention.out"]).abs().max())
    assert difference() == pytest.approx(moved, abs=2e-4)
    bars = browser.find_elements(By.CSS_SELECTOR, "#walk-beside .beside-bars .bars")
    assert len(bars) == 2  # this walk's next token beside the one with the head off
    assert (
        browser.find_element(By.CSS_SELECTOR, "#walk-beside figure.map figcaption").text
        == "beside (blocks.0.attention head 1 switched off)"
    )
    assert _overflow(browser) <= 0 and not console_errors(browser)


@pytest.mark.parametrize("run", ["classifier", "seq2seq"])
def test_every_familys_walk_asks_and_its_replay_draws_without_an_error_or_sideways_scroll(base_url, browser, run):  # noqa: F811
    """A classifier's and a translator's walk: a question at every step (answered by skipping), each revealed
    with the run's answer; the replay says why a classifier has none and plays a translator's reference."""
    By = _by()
    _open(browser, base_url, run)
    browser.find_element(By.ID, "guide-start").click()
    wait(browser, lambda d: d.find_element(By.ID, "walk-question").get_attribute("data-state") == "asking")
    kinds, steps = set(), 0
    while True:
        kinds.add(browser.find_element(By.ID, "walk-question").get_attribute("data-kind"))
        browser.find_element(By.ID, "question-skip").click()
        assert browser.find_element(By.ID, "question-verdict").text.startswith("skipped: the run's answer is")
        assert not browser.find_element(By.ID, "errors").is_displayed()
        steps += 1
        before = _current(browser)
        browser.find_element(By.ID, "trace-next").click()
        try:
            wait(browser, lambda d, b=before: _current(d) != b, 3)
        except Exception:  # noqa: BLE001 - the walk's last step: next stays
            break
    assert steps > 15 and {"shape", "choice"} <= kinds, kinds
    assert browser.find_element(By.ID, "quiz-score").text == f"score: 0 of 0 right, {steps} skipped"
    assert _overflow(browser) <= 0
    data = httpx.get(f"{base_url}/api/runs/{run}/timeline", timeout=60).json()
    if run == "classifier":
        wait(browser, lambda d: "nothing to replay" in d.find_element(By.ID, "replay-notices").text)
        assert not browser.find_element(By.ID, "replay-body").is_displayed()
    else:  # the reference's tokens, each coloured by its loss at the last snapshot
        wait(browser, lambda d: d.find_element(By.ID, "replay-body").is_displayed())
        last = data["snapshots"][-1]
        chips = browser.find_elements(By.CSS_SELECTOR, "#replay-frames .replay-tokens .chip")
        assert [float(c.get_attribute("data-loss")) for c in chips] == pytest.approx(last["token_losses"])
        shown = [c.text for c in chips]
        assert shown[-1] == "<eos>" and len(shown) == len(last["target_tokens"])
        assert not browser.find_elements(By.CSS_SELECTOR, "#replay-patterns tbody tr")  # cross-attention: no patterns
    assert _overflow(browser) <= 0 and not console_errors(browser)
