"""What a learner sees on the inspector, in a real headless Chromium at 1280×720: the map of their model
matches its config, the guided walk visits every step in order with its own sentence, every map has a
legend whose numbers are the data's range and axes labelled with the tokens, hovering a score lights its
query and key, the sampling bars follow the controls with the numbers generation draws from, and no view
of any family scrolls sideways or logs an error."""

import re
import time

import pytest

from ..reliability.conftest import files, runs  # noqa: F401 - fixtures
from .test_browser import base_url, browser, console_errors, pick, served, wait  # noqa: F401 - fixtures

webdriver = pytest.importorskip("selenium.webdriver")


def _by():
    from selenium.webdriver.common.by import By

    return By


def _open(driver, url, run):
    driver.set_window_size(1280, 720)
    driver.get(url + "/")
    wait(driver, lambda d: d.execute_script("return document.body.dataset.ready") == "1", 30)
    pick(driver, run)
    wait(driver, lambda d: d.find_element(_by().ID, "trace-result").is_displayed(), 30)


def _overflow(driver):
    """How far the page is wider than the window (0: no sideways scrolling)."""
    return driver.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")


def _current(driver):
    return driver.find_element(_by().ID, "trace-step-name").text.split(": ", 1)[1]


def test_the_map_is_this_models_and_the_walk_visits_every_step_in_order(base_url, browser, runs_folder):  # noqa: F811
    import transformers_lite as tl

    By = _by()
    _open(browser, base_url, "generator")
    run = tl.load(runs_folder / "generator")
    text = browser.find_element(By.ID, "trace-text").get_attribute("value")
    traced = run.trace(text)
    groups = browser.find_elements(By.CSS_SELECTOR, "#model-map .map-group.block")
    assert len(groups) == run.config.n_blocks  # one column per block
    scopes = [b.get_attribute("data-scope") for b in groups[0].find_elements(By.CSS_SELECTOR, ".map-box")]
    inner = ["attention", "attention_residual", "feed_forward", "feed_forward_residual"]
    if run.config.norm_first:  # pre-norm: each sub-layer's norm before it, its sum after it
        inner = ["attention_residual", "attention", "attention_residual"] + [
            "feed_forward_residual",
            "feed_forward",
            "feed_forward_residual",
        ]
    assert scopes == [f"blocks.0.{s}" for s in inner]

    # the walk: from the token ids to the probabilities, every step once, in the order the model ran them
    browser.find_element(By.ID, "guide-start").click()
    wait(browser, lambda d: _current(d) == "tokens")
    names, sentences = [], []
    for _ in range(len(traced.tensors)):
        names.append(_current(browser))
        sentences.append(browser.find_element(By.ID, "guide-sentence").text)
        lit = browser.find_elements(By.CSS_SELECTOR, "#model-map .map-box.lit")
        assert len(lit) == 1 and names[-1] in lit[0].get_attribute("data-steps").split()
        before = names[-1]
        browser.find_element(By.ID, "trace-next").click()
        wait(browser, lambda d, b=before: _current(d) != b or b == "probabilities")
    assert names == list(traced.tensors)
    for name, sentence in zip(names, sentences):
        step = traced.traced[name].step
        assert f": {step.meaning}." in sentence, (name, sentence)
        # what it computes as this model has it (its bias or none, its activation, its norm), not its kind's words
        assert f" It is {step.to_dict()['computes']}" in sentence, (name, sentence)
    q = sentences[names.index("blocks.0.attention.q")]
    bias = run.config.qkv_bias
    assert ("plus the bias b_Q" in q) == bias and ("no bias" in q) != bias and "[Q; K; V]" in q, q
    out = sentences[names.index("blocks.0.attention.out")]
    assert "[Q; K; V]" not in out and "a Dense: [A₁ … A_H] times W_Oᵀ, plus the bias b_O" in out, out
    assert not console_errors(browser)


@pytest.fixture(scope="module")
def llama_url(files, tmp_path_factory):  # noqa: F811
    """A tiny llama-style run (RMSNorm, rotary positions, SwiGLU, 2 key/value heads for 4 heads, no biases),
    served alone."""
    from transformers_lite.cli.main import main

    from ..helpers import TINY_GPT, sets

    folder = tmp_path_factory.mktemp("llama")
    args = ["train", "generator", "--preset", "llama-style", "--text", str(files / "text.txt"), *TINY_GPT]
    assert main([*args, *sets("n_heads=4", "kv_heads=2"), "--max-steps", "2", "--out", str(folder / "generator")]) == 0
    with served(folder) as url:
        yield url, folder / "generator"


def test_a_llama_style_models_walk_says_its_own_equations(llama_url, browser):  # noqa: F811
    """The walk of a Llama-style GPT visits every step its forward computed, each with this model's sentence:
    RMS norms, rotary queries and keys, two key/value heads repeated for four query heads, the SiLU gate
    times the up projection, Dense layers without biases; the posts' column says which steps are not theirs."""
    import transformers_lite as tl

    By = _by()
    url, folder = llama_url
    _open(browser, url, "generator")
    traced = tl.load(folder).trace(browser.find_element(By.ID, "trace-text").get_attribute("value"))
    browser.find_element(By.ID, "guide-start").click()
    wait(browser, lambda d: _current(d) == "tokens")
    names, sentences, posts = [], [], {}
    while True:
        names.append(_current(browser))
        sentences.append(browser.find_element(By.ID, "guide-sentence").text)
        cells = browser.find_elements(By.CSS_SELECTOR, "#trace-step-info td")
        posts[names[-1]] = cells[1].text
        if names[-1] == "probabilities":
            break
        before = names[-1]
        browser.find_element(By.ID, "trace-next").click()
        wait(browser, lambda d, b=before: _current(d) != b)
    assert names == list(traced.tensors)  # every step once, in the order the model ran them
    said = dict(zip(names, sentences))
    assert "split into G = 2 key/value heads" in said["blocks.0.attention.k"]
    assert "repeated H / G = 2 times" in said["blocks.0.attention.k_repeated"]
    assert "nonlinearity SiLU" in said["blocks.0.feed_forward.gate"] and "no bias" in said["blocks.0.feed_forward.up"]
    assert "the gate g times the up projection u" in said["blocks.0.feed_forward.hidden"]
    assert "an RMS norm" in said["blocks.0.attention_residual.norm"]
    for name in ("blocks.0.attention.k", "blocks.0.attention.k_repeated", "blocks.0.feed_forward.gate"):
        assert posts[name] == "not in the posts", (name, posts[name])
    assert names.index("blocks.0.attention.k_rotated") < names.index("blocks.0.attention.k_repeated")
    assert not console_errors(browser)


def test_legends_axes_and_hover_say_what_each_colour_and_cell_is(base_url, browser, runs_folder):  # noqa: F811
    import transformers_lite as tl

    By = _by()
    _open(browser, base_url, "generator")
    box = browser.find_element(By.ID, "trace-text")
    box.clear()
    box.send_keys("First Citizen")
    browser.find_element(By.ID, "trace").click()
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#trace-tokens .chip")) == 13)
    chip = "[...document.querySelectorAll('#trace-steps .step')].find((c) => c.textContent === arguments[0])"
    traced = tl.load(runs_folder / "generator").trace("First Citizen")

    # the scores and the scaled scores share one scale: the legend's ends are ± the largest of the three steps
    browser.execute_script(chip + ".click()", "attention.scores")
    wait(browser, lambda d: _current(d) == "blocks.0.attention.scores")
    legend = browser.find_element(By.CSS_SELECTOR, "#trace-view figure.map .legend")
    largest = max(
        float(traced[f"blocks.0.attention.{s}"].masked_fill(traced[f"blocks.0.attention.{s}"] < -1e30, 0).abs().max())
        for s in ("scores", "scaled", "masked")
    )
    assert float(legend.get_attribute("data-hi")) == pytest.approx(largest, rel=1e-3)
    assert float(legend.get_attribute("data-lo")) == pytest.approx(-largest, rel=1e-3)
    browser.execute_script(chip + ".click()", "attention.scaled")
    wait(browser, lambda d: _current(d) == "blocks.0.attention.scaled")
    again = browser.find_element(By.CSS_SELECTOR, "#trace-view figure.map .legend").get_attribute("data-hi")
    assert float(again) == pytest.approx(largest, rel=1e-3)

    # attention weights: the fixed 0-1 scale, the tokens on both axes
    browser.execute_script(chip + ".click()", "attention.weights")
    wait(browser, lambda d: _current(d) == "blocks.0.attention.weights")
    figure = browser.find_element(By.CSS_SELECTOR, "#trace-view figure.map")
    legend = figure.find_element(By.CSS_SELECTOR, ".legend")
    assert (legend.get_attribute("data-lo"), legend.get_attribute("data-hi")) == ("0", "1")
    rows = [s.get_attribute("title") for s in figure.find_elements(By.CSS_SELECTOR, ".axis-y span")]
    cols = [s.get_attribute("title") for s in figure.find_elements(By.CSS_SELECTOR, ".axis-x span")]
    shown = ["␣" if c == " " else c for c in "First Citizen"]
    assert rows == shown and cols == shown

    # hovering cell (query 5, key 2) lights row 5 and column 2, their tokens, and writes the exact weight
    canvas = figure.find_element(By.CSS_SELECTOR, "canvas.heatmap")
    cell = int(canvas.get_attribute("width")) / 13
    hover = (
        "const c = arguments[0]; c.dispatchEvent(new MouseEvent('mousemove', {clientX: c.getBoundingClientRect().left"
        " + 1 + arguments[1], clientY: c.getBoundingClientRect().top + 1 + arguments[2], bubbles: true}))"
    )
    browser.execute_script(hover, canvas, 2.5 * cell, 5.5 * cell)

    def lit(axis):
        labels = figure.find_elements(By.CSS_SELECTOR, f".axis-{axis} span")
        return [i for i, s in enumerate(labels) if "lit" in s.get_attribute("class")]

    assert (lit("y"), lit("x")) == ([5], [2])
    chips = browser.find_elements(By.CSS_SELECTOR, "#trace-tokens .chip")
    assert "query" in chips[5].get_attribute("class") and "key" in chips[2].get_attribute("class")
    weight = float(traced["blocks.0.attention.weights"][0, 5, 2])  # head 0: (H, T, T)
    readout = figure.find_element(By.CSS_SELECTOR, ".readout").text
    assert readout.startswith("position 5 (␣), key 2 (r): ")
    assert float(readout.split(": ")[1]) == pytest.approx(weight, abs=1e-4)
    # the map's border and beyond: nothing lit, nothing thrown
    for x, y in ((-1, -1), (13 * cell + 3, 2), (2, 13 * cell + 3)):
        browser.execute_script(hover, canvas, x, y)
        assert figure.find_element(By.CSS_SELECTOR, ".readout").text.strip() == ""
    assert not console_errors(browser)


def test_the_sampling_bars_follow_the_controls_with_generations_numbers(base_url, browser, runs_folder):  # noqa: F811
    By = _by()
    _open(browser, base_url, "generator")
    for field, value in (("temperature", "0.7"), ("top-k", "5")):
        browser.find_element(By.ID, field).clear()
        browser.find_element(By.ID, field).send_keys(value)
    browser.find_element(By.ID, "max-new-tokens").clear()
    browser.find_element(By.ID, "max-new-tokens").send_keys("12")
    browser.find_element(By.ID, "prompt").clear()
    browser.find_element(By.ID, "prompt").send_keys("Before we")
    browser.find_element(By.ID, "generate").click()
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".tok.gen")) == 12)
    browser.find_elements(By.CSS_SELECTOR, ".tok.gen")[3].click()
    wait(browser, lambda d: d.find_element(By.ID, "gen-inspect").is_displayed())

    def drawn():
        values = browser.find_elements(By.CSS_SELECTOR, "#next-token .bar-value")
        return [float(v.get_attribute("title").split(" → ")[1]) for v in values]

    context = "".join(t.get_attribute("textContent") for t in browser.find_elements(By.CSS_SELECTOR, ".tok")[: 9 + 3])
    import httpx

    server = httpx.post(
        f"{base_url}/api/runs/generator/next-token", json={"context": context, "temperature": 0.7, "top_k": 5}
    ).json()
    ours = drawn()
    assert sum(p > 0 for p in ours) == 5  # top-k 5: five tokens can be drawn, the rest are cut
    for entry in server["top"][:5]:  # the page's numbers for the settings generation used are the server's
        i = server["logits"]["tokens"].index(entry["token"])
        assert ours[i] == pytest.approx(entry["p"], abs=2e-4)
    assert browser.find_element(By.CSS_SELECTOR, "#next-token .cutoff").text.startswith("── top-k 5")

    # the temperature slider redraws at once (no request): hotter spreads the probability
    def spread():  # over about how many tokens what is drawn from is spread (e^entropy)
        return float(re.findall(r"over about ([0-9.]+)", browser.find_element(By.ID, "sampling-note").text)[1])

    before = spread()
    browser.find_element(By.ID, "s-top-k").clear()
    browser.execute_script(
        "const s = document.getElementById('s-temperature'); s.value = 2.5; s.dispatchEvent(new Event('input'))"
    )
    assert spread() > before and sum(p > 0 for p in drawn()) > 5
    assert not console_errors(browser)


@pytest.mark.parametrize("run", ["generator", "classifier", "seq2seq"])
def test_no_view_scrolls_sideways_at_1280_by_720_or_logs_an_error(base_url, browser, run):  # noqa: F811
    By = _by()
    _open(browser, base_url, run)
    assert _overflow(browser) <= 0
    views = {
        "generator": ("generate", ".tok.gen"),
        "classifier": ("classify", "#cls-result"),
        "seq2seq": ("translate", "#mt-result"),
    }
    button, shown = views[run]
    browser.find_element(By.ID, button).click()
    wait(browser, lambda d: any(e.is_displayed() for e in d.find_elements(By.CSS_SELECTOR, shown)), 30)
    if run == "generator":
        browser.find_elements(By.CSS_SELECTOR, ".tok.gen")[2].click()
        wait(browser, lambda d: d.find_element(By.ID, "gen-inspect").is_displayed())
    assert _overflow(browser) <= 0, button
    for _ in range(6):  # a few steps of the walk
        browser.find_element(By.ID, "trace-next").click()
        time.sleep(0.1)
    assert _overflow(browser) <= 0, "forward"
    browser.find_element(By.ID, "backward").click()
    wait(browser, lambda d: d.find_element(By.ID, "backward-result").is_displayed(), 30)
    browser.find_element(By.ID, "take-step").click()
    wait(browser, lambda d: d.find_element(By.ID, "step-result").is_displayed(), 30)
    assert _overflow(browser) <= 0, "backward"
    browser.execute_script("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    assert _overflow(browser) <= 0, "run panel"
    assert not console_errors(browser)


def test_a_run_picked_while_it_trains_before_its_first_checkpoint_opens_when_it_has_one(browser, runs, tmp_path):  # noqa: F811
    """A run whose training holds its lock and has written no weights yet shows its own panel (nothing of the
    run shown before) and says that it is training; its model's views open by themselves once its weights
    are there, and the console stays free of errors throughout (every answer while it waits is a 200)."""
    import shutil
    import socket
    import threading

    import uvicorn

    from transformers_lite.server.app import create_app
    from transformers_lite.server.registry import RunRegistry
    from transformers_lite.training.rundir import RunLock

    By = _by()
    shutil.copytree(runs / "classifier", tmp_path / "a-classifier")
    late = tmp_path / "late"
    shutil.copytree(runs / "generator", late)
    kept = tmp_path / "kept"
    kept.mkdir()
    for name in ("model.safetensors", "checkpoint"):  # the weights it will write
        shutil.move(late / name, kept / name)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(RunRegistry(tmp_path)), host="127.0.0.1", port=port, log_level="warning")
    )
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    try:
        browser.set_window_size(1280, 720)
        browser.get(f"http://127.0.0.1:{port}/")
        wait(browser, lambda d: d.execute_script("return document.body.dataset.ready") == "1", 30)
        assert browser.find_element(By.ID, "view-classifier").is_displayed()
        from selenium.webdriver.support.ui import Select

        with RunLock(late):  # as its training process holds it
            Select(browser.find_element(By.ID, "run-picker")).select_by_value("late")
            wait(browser, lambda d: "still training" in d.find_element(By.ID, "run-training").text)
            assert "opens here with its first checkpoint" in browser.find_element(By.ID, "run-training").text
            assert browser.find_element(By.ID, "status").text.startswith("late is training: step ")
            assert browser.find_element(By.ID, "run-family").text == "generator"
            assert browser.find_element(By.ID, "run-path").text.startswith("late")
            assert len(browser.find_elements(By.CSS_SELECTOR, "#params tbody tr")) > 5  # its own parameters
            for view in ("view-classifier", "view-generator", "view-forward"):  # no model yet, nothing of the last
                assert not browser.find_element(By.ID, view).is_displayed(), view
            for name in ("model.safetensors", "checkpoint"):
                shutil.move(kept / name, late / name)
            wait(browser, lambda d: d.find_element(By.ID, "view-generator").is_displayed(), 20)
            wait(browser, lambda d: d.find_element(By.ID, "view-forward").is_displayed())
        wait(browser, lambda d: not d.find_element(By.ID, "run-training").is_displayed(), 20)  # trained
        assert browser.find_element(By.ID, "status").text == ""
        # a run that appears in the folder joins the picker without a reload
        shutil.copytree(runs / "seq2seq", tmp_path / "new-translator")
        options = "return [...document.querySelectorAll('#run-picker option')].map((o) => o.value)"  # one read
        wait(browser, lambda d: "new-translator" in d.execute_script(options), 20)
        assert not console_errors(browser)
    finally:
        server.should_exit = True


def test_try_it_yourself_from_a_step_of_the_backward_view(base_url, browser, tmp_path, monkeypatch):  # noqa: F811
    By = _by()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    _open(browser, base_url, "generator")
    browser.find_element(By.ID, "backward").click()
    wait(browser, lambda d: d.find_element(By.ID, "backward-result").is_displayed(), 30)
    wait(browser, lambda d: d.find_element(By.ID, "exercise-open").text.startswith("Try it yourself: Cross-entropy"))
    browser.find_element(By.ID, "exercise-open").click()
    code = browser.find_element(By.ID, "exercise-code")
    assert "def cross_entropy_backward(z, y):" in code.get_attribute("value")
    browser.find_element(By.ID, "exercise-hint").click()
    assert len(browser.find_elements(By.CSS_SELECTOR, "#exercise-hints li")) == 1
    answer = (
        "import torch\n\ndef cross_entropy_backward(z, y):\n    p = torch.softmax(z, -1)\n"
        "    p[torch.arange(len(y)), y] -= 1\n    return p\n"  # the 1/N left out
    )
    browser.execute_script("document.getElementById('exercise-code').value = arguments[0]", answer)
    browser.find_element(By.ID, "exercise-check").click()
    wait(browser, lambda d: d.find_element(By.ID, "exercise-verdict").text, 60)
    verdict = browser.find_element(By.ID, "exercise-verdict").text
    assert verdict.startswith("✗ dz[0, ") and "ms of CPU)" in verdict
    assert "a missing or extra 1/" in browser.find_element(By.ID, "exercise-cause").text  # the cause on its own line
    statement = browser.find_element(By.ID, "exercise-statement").text
    assert "Asked: ∂z" in statement and "onehot" not in statement  # the formula waits for the last hint
    caption = browser.find_element(By.CSS_SELECTOR, "#exercise-cells figcaption").text
    figure = browser.find_element(By.CSS_SELECTOR, "#exercise-cells figure")
    rows, cols = (int(figure.get_attribute(a)) for a in ("data-rows", "data-cols"))
    wrong = int(re.search(r"(\d+) of (\d+) cells", caption).group(1))
    # dz is off by the factor N everywhere: (nearly) every cell is wrong, of the whole (T, V) result, too
    # many to outline one by one
    assert caption.startswith("dz: your result minus the expected") and f"of {rows * cols} cells" in caption
    assert wrong > 0.9 * rows * cols and "too many to outline" in caption
    browser.execute_script(
        "document.getElementById('exercise-code').value = arguments[0]", answer.replace("return p", "return p / len(y)")
    )
    browser.find_element(By.ID, "exercise-check").click()
    wait(browser, lambda d: d.find_element(By.ID, "exercise-verdict").text.startswith("✓"), 60)
    assert not browser.find_elements(By.CSS_SELECTOR, "#exercise-cells figure")  # a right answer has no map
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element(By.ID, "exercise-pick")).select_by_value("block-forward")  # any other exercise
    assert "def block_forward(x, w_qkv," in browser.find_element(By.ID, "exercise-code").get_attribute("value")
    assert browser.find_element(By.ID, "exercise-open").text == "Try it yourself: A whole block, forward"
    assert not console_errors(browser)
