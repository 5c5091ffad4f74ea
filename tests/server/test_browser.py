"""The inspector in a real headless Chromium: the page loads, generation streams, a click on a
character renders the attention heatmaps, classification and translation show their results, and the
JavaScript console stays free of errors.

Needs Debian's ``chromium`` and ``chromium-driver`` (``make setup`` installs them as root) and selenium.
"""

import contextlib
import shutil
import socket
import threading
import time

import pytest

webdriver = pytest.importorskip("selenium.webdriver")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and DRIVER), reason="headless Chromium not installed (apt-get install chromium chromium-driver)"
)


@contextlib.contextmanager
def served(folder):
    """The inspector serving the runs under ``folder`` on a free port, while the block runs: its URL."""
    import uvicorn

    from transformers_lite.server.app import create_app
    from transformers_lite.server.registry import RunRegistry

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(RunRegistry(folder)), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not server.started and time.time() < deadline:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def base_url(runs_folder):
    with served(runs_folder) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,1400",
    ):
        options.add_argument(arg)
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    yield driver
    driver.quit()


def wait(driver, condition, seconds=15):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, seconds).until(condition)


def pick(driver, name):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element(By.ID, "run-picker")).select_by_value(name)
    family = "generator" if name in ("generator", "more/gpt") else name
    wait(driver, lambda d: d.find_element(By.ID, f"view-{family}").is_displayed())
    wait(driver, lambda d: d.find_element(By.ID, "run-family").text == family)


def console_errors(driver):
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def test_the_inspector_in_a_real_browser(base_url, browser, runs_folder):
    from selenium.webdriver.common.by import By

    start = time.perf_counter()
    browser.get(base_url + "/")
    wait(browser, lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    assert time.perf_counter() - start < 10  # generous here; BENCHMARKS.md has the measured time
    names = [o.get_attribute("value") for o in browser.find_elements(By.CSS_SELECTOR, "#run-picker option")]
    assert sorted(names) == ["classifier", "generator", "more/gpt", "seq2seq"]

    # every run: parameter table, training curves, embedding scatter with hover labels
    pick(browser, "generator")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#params tbody tr")) > 5
    assert browser.find_elements(By.CSS_SELECTOR, "#curves svg polyline")
    # the legend names each series in its line's colour, and both axes have ticks with values
    chart = browser.find_element(By.CSS_SELECTOR, "#curves svg")
    lines = [p.get_attribute("stroke") for p in chart.find_elements(By.CSS_SELECTOR, "polyline")]
    legend = chart.find_elements(By.CSS_SELECTOR, "text.legend")
    fills = [browser.execute_script("return getComputedStyle(arguments[0]).fill", t) for t in legend]
    hex_of = browser.execute_script  # the computed fill is rgb(...): compare through the browser's own parser
    assert len(set(fills)) == len(lines) > 1 and all(
        hex_of("const c = document.createElement('div'); c.style.color = arguments[0]; return c.style.color", line)
        == fill
        for line, fill in zip(lines, fills)
    )
    ticks = [
        t.text for t in chart.find_elements(By.CSS_SELECTOR, "text[text-anchor='middle'], text[text-anchor='end']")
    ]
    assert len(ticks) >= 6 and "optimizer step" in ticks
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#embeddings circle title")) > 10)

    # generator: the example input comes from the run's own validation text
    import transformers_lite as tl
    from transformers_lite.inspect.examples import example_inputs

    example = example_inputs(tl.load(runs_folder / "generator"))
    assert example["source"] == "validation" and example["prompt"]
    assert browser.find_element(By.ID, "prompt").get_attribute("value") == example["prompt"]
    # streamed text, then a click on a generated character renders the heatmaps
    prompt = browser.find_element(By.ID, "prompt")
    prompt.clear()
    prompt.send_keys("Before we")
    tokens = browser.find_element(By.ID, "max-new-tokens")
    tokens.clear()
    tokens.send_keys("40")
    browser.find_element(By.ID, "generate").click()
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".tok.gen")) == 40)
    assert len(browser.find_elements(By.CSS_SELECTOR, ".tok.prompt")) == len("Before we")  # a character model
    assert browser.find_element(By.ID, "gen-output").text.startswith("Before we")
    browser.find_elements(By.CSS_SELECTOR, ".tok.gen")[10].click()
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#attention-grid canvas.heatmap")) == 2)
    bars = browser.find_elements(By.CSS_SELECTOR, "#next-token .bar-fill")
    assert len(bars) == 20 and bars[0].size["width"] > 0
    canvas = browser.find_element(By.CSS_SELECTOR, "#attention-grid canvas.heatmap")
    painted = browser.execute_script(
        "const c = arguments[0]; const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        "let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i] < 250) n++; return n;",
        canvas,
    )
    assert painted > 0  # the canvas really holds a drawn heatmap
    canvas.click()
    wait(browser, lambda d: d.find_element(By.ID, "focus").is_displayed())
    assert len(browser.find_elements(By.CSS_SELECTOR, "#attention-focus tbody tr")) == 16  # the context window

    # classifier: prediction, probability bars, words shaded by attention
    pick(browser, "classifier")
    assert browser.find_element(By.ID, "cls-title").text.startswith("Classify a review: 5 classes (1 star,")
    review = browser.find_element(By.ID, "review")
    review.clear()
    review.send_keys("the box was superb for my family")
    browser.find_element(By.ID, "classify").click()
    wait(browser, lambda d: d.find_element(By.ID, "cls-result").is_displayed())
    assert browser.find_element(By.ID, "prediction").text.endswith(("star", "stars"))
    assert len(browser.find_elements(By.CSS_SELECTOR, "#review-words .word")) == 7

    # translator: translation and the cross-attention matrix
    pick(browser, "seq2seq")
    source = browser.find_element(By.ID, "source")
    source.clear()
    source.send_keys("alpha beta gamma")
    browser.find_element(By.ID, "translate").click()
    wait(browser, lambda d: d.find_element(By.ID, "mt-result").is_displayed())
    assert len(browser.find_elements(By.CSS_SELECTOR, "#alignment thead th")) == 1 + 4  # alpha beta gamma <eos>

    # a bad request shows its message on the page
    pick(browser, "generator")
    browser.find_element(By.ID, "temperature").clear()
    browser.find_element(By.ID, "temperature").send_keys("-1")
    browser.find_element(By.ID, "generate").click()
    wait(browser, lambda d: d.find_element(By.ID, "errors").is_displayed())
    assert "temperature" in browser.find_element(By.ID, "errors").text
    errors = [e for e in console_errors(browser) if "422" not in e["message"]]  # the refused request itself
    assert errors == []


def _numbers(driver):
    from selenium.webdriver.common.by import By

    return [float(s.text) for s in driver.find_elements(By.CSS_SELECTOR, "#trace-row .num")]


CHIP = "return [...document.querySelectorAll('#trace-steps .step')].find((c) => c.textContent === arguments[0])"


def _go_to_step(driver, name):
    """Click the step chip ``name`` once the block holding it has arrived (the list is redrawn often)."""
    from selenium.webdriver.common.by import By

    wait(driver, lambda d: d.execute_script(CHIP, name) is not None)
    driver.execute_script(CHIP.replace("return ", "") + ".click()", name)
    wait(driver, lambda d: d.find_element(By.ID, "trace-step-name").text.endswith(name))


def _trace(driver, run, text, target=None):
    """Pick ``run``, type ``text`` (and a translator's ``target``) and trace it."""
    from selenium.webdriver.common.by import By

    pick(driver, run)
    wait(driver, lambda d: d.find_element(By.ID, "trace-result").is_displayed())  # the run's example, traced
    box = driver.find_element(By.ID, "trace-text")
    box.clear()
    box.send_keys(text)
    if target is not None:
        driver.find_element(By.ID, "trace-target").send_keys(target)
    driver.execute_script("document.getElementById('trace-tokens').replaceChildren()")
    driver.find_element(By.ID, "trace").click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#trace-tokens .chip"))  # this text's tokens


def test_the_forward_pass_step_by_step_in_a_real_browser(base_url, browser, runs_folder):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    import transformers_lite as tl

    browser.get(base_url + "/")
    wait(browser, lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    _trace(browser, "generator", "First Citizen")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#trace-tokens .chip")) == len("First Citizen")

    # walk three steps: each names its equation and its shape
    seen = []
    for _ in range(3):
        browser.find_element(By.ID, "trace-next").click()
        seen.append(browser.find_element(By.ID, "trace-step-name").text)
    assert seen == [
        f"{i} / {seen[0].split(' / ')[1].split(':')[0]}: {n}"
        for i, n in ((2, "embedding"), (3, "position"), (4, "input"))
    ]
    info = browser.find_element(By.ID, "trace-step-info").text
    assert "E[ids] + PE[t]" in info and "(T, C) = (13, 16)" in info and "(C, T)" in info
    assert "computed from\nembedding\nposition" in info and "(kind: sum)" in info  # the steps it adds

    # the softmax weights of the last position: a row that sums to 1; head 1 reads differently
    _go_to_step(browser, "attention.weights")
    row = _numbers(browser)
    assert len(row) == 13 and abs(sum(row) - 1) < 1e-3
    Select(browser.find_element(By.ID, "trace-head")).select_by_value("1")
    wait(browser, lambda d: _numbers(d) != row)
    assert abs(sum(_numbers(browser)) - 1) < 1e-3
    assert len(browser.find_elements(By.CSS_SELECTOR, "#trace-view canvas.heatmap")) == 2  # chosen + the other head

    # follow position 3: the causal mask leaves it nothing after itself
    browser.find_elements(By.CSS_SELECTOR, "#trace-tokens .chip")[3].click()
    wait(browser, lambda d: d.find_element(By.ID, "trace-pos").text.startswith("3 "))
    row = _numbers(browser)
    assert all(x == 0 for x in row[4:]) and abs(sum(row[:4]) - 1) < 1e-3
    assert len(browser.find_elements(By.CSS_SELECTOR, "#trace-strips canvas")) >= 5

    # switch head 0 off: its output is zero and the page says how far the output moved
    browser.find_element(By.CSS_SELECTOR, "#trace-switches input[value='blocks.0.attention.head.0']").click()
    wait(browser, lambda d: "switched off" in d.find_element(By.ID, "trace-change").text)
    run = tl.load(runs_folder / "generator")
    plain, off = run.trace("First Citizen"), run.trace("First Citizen", switch_off_steps=["blocks.0.attention.head.0"])
    moved = (off["probabilities"] - plain["probabilities"]).abs().amax(-1)  # (T,): per position
    change = browser.find_element(By.ID, "trace-change").text
    assert f"at position 3 a probability moved by at most {float(moved[3]):.4f}" in change
    assert f"at any position by {float(moved.max()):.4f} (position {int(moved.argmax())}, after" in change
    Select(browser.find_element(By.ID, "trace-head")).select_by_value("0")
    _go_to_step(browser, "attention.heads")
    assert _numbers(browser) and all(x == 0 for x in _numbers(browser))
    assert len(browser.find_elements(By.CSS_SELECTOR, "#trace-lens tr")) == 2  # the input, after block 0
    assert len(browser.find_elements(By.CSS_SELECTOR, "#trace-output .bar-fill")) == 10

    browser.find_element(By.ID, "sweep").click()
    wait(browser, lambda d: d.find_element(By.ID, "sweep-result").is_displayed())
    assert len(browser.find_elements(By.CSS_SELECTOR, "#sweep-table tbody tr")) == 2

    # a classifier: the class probabilities; a translator: cross-attention over the source
    _trace(browser, "classifier", "the box was superb")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#trace-output .bar-fill")) == 5
    _trace(browser, "seq2seq", "alpha beta", target="beta alpha")
    Select(browser.find_element(By.ID, "trace-block")).select_by_value("decoder.blocks.0")
    _go_to_step(browser, "cross_attention.weights")
    row = _numbers(browser)
    assert len(row) == 3 and abs(sum(row) - 1) < 1e-3  # alpha beta <eos>
    assert console_errors(browser) == []


def test_the_backward_pass_in_a_real_browser(base_url, browser, runs_folder):
    """The loss and every step's gradient from the library, shown step by step with the hand-derived
    check; gradient x input colours each token."""
    from selenium.webdriver.common.by import By

    import transformers_lite as tl

    browser.get(base_url + "/")
    wait(browser, lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    pick(browser, "generator")
    box = browser.find_element(By.ID, "trace-text")
    box.clear()
    box.send_keys("First Citizen")
    browser.find_element(By.ID, "backward-position").send_keys("3")
    browser.find_element(By.ID, "backward").click()
    wait(browser, lambda d: d.find_element(By.ID, "backward-result").is_displayed())
    expected = tl.load(runs_folder / "generator").backward_trace("First Citizen", position=3)
    assert browser.find_element(By.ID, "backward-loss").text.startswith(f"loss {expected.loss:.6f}: cross-entropy")
    steps = [s.get_attribute("textContent") for s in browser.find_elements(By.CSS_SELECTOR, "#backward-steps .step")]
    assert steps[0] == "logits \u2713" and len(steps) == len(expected.grads)
    info = browser.find_element(By.ID, "backward-step-info").text
    assert "loss: (softmax(z) − onehot(y)) / N" in info and f"{float(expected.grads['logits'].norm()):.6g}" in info
    captions = [f.text for f in browser.find_elements(By.CSS_SELECTOR, "#backward-view figcaption")]
    assert captions == ["autograd: logits", "hand-derived (loss): logits"]  # the rule's values beside autograd's
    chips = browser.find_elements(By.CSS_SELECTOR, "#backward-attribution .chip")
    values = [float(c.get_attribute("data-value")) for c in chips]
    assert values == expected.attribution and len(values) == len("First Citizen")
    browser.find_element(By.ID, "backward-next").click()
    assert "\u2202L/\u2202(" in browser.find_element(By.ID, "backward-step-info").text
    assert browser.find_elements(By.CSS_SELECTOR, "#backward-view canvas.heatmap")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#backward-params .bar-fill")) > 5
    browser.find_element(By.ID, "take-step").click()  # one optimizer step on a copy: the loss moves
    wait(browser, lambda d: d.find_element(By.ID, "step-result").is_displayed())
    step = tl.load(runs_folder / "generator").take_step("First Citizen", position=3)
    summary = browser.find_element(By.ID, "step-summary").text
    assert summary.startswith(f"loss {step['loss_before']:.4f} \u2192 {step['loss_after']:.4f} after AdamW")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#step-moved tbody tr")) == len(step["moved"])
    assert step["at"] in browser.find_element(By.CSS_SELECTOR, "#step-moved thead").text
    pick(browser, "seq2seq")  # a translator: gradient x input over its source words
    box = browser.find_element(By.ID, "trace-text")
    box.clear()
    box.send_keys("alpha beta gamma")
    browser.find_element(By.ID, "backward").click()
    wait(browser, lambda d: d.find_element(By.ID, "backward-result").is_displayed())
    source = tl.load(runs_folder / "seq2seq").trace("alpha beta gamma").source_tokens
    chips = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "#backward-attribution .chip")]
    assert chips == source
    browser.find_element(By.ID, "take-step").click()  # on the model's own translation
    wait(browser, lambda d: d.find_element(By.ID, "step-result").is_displayed())
    assert not console_errors(browser)


def test_the_training_timeline_in_a_real_browser(base_url, browser, runs_folder):
    """The slider moves the attention map and the per-token losses to an earlier snapshot's."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from transformers_lite.runs.snapshots import read_timeline

    browser.get(base_url + "/")
    wait(browser, lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    pick(browser, "generator")
    wait(browser, lambda d: d.find_element(By.ID, "timeline-body").is_displayed())
    snaps = read_timeline(runs_folder / "generator")
    step = browser.find_element(By.ID, "timeline-step")
    assert step.text.startswith(f"step {snaps[-1]['step']}: ")
    losses = lambda: [
        float(c.get_attribute("data-loss")) for c in browser.find_elements(By.CSS_SELECTOR, "#timeline-losses .chip")
    ]  # noqa: E731
    assert losses() == snaps[-1]["token_losses"]
    browser.execute_script(
        "const s = document.getElementById('timeline-slider'); s.value = 0; s.dispatchEvent(new Event('input'))"
    )
    assert step.text == "step 0 (before training)" and losses() == snaps[0]["token_losses"]
    grads = browser.find_elements(By.CSS_SELECTOR, "#timeline-grads .bar-value")
    strongest = max(snaps[0]["grad_norms"].items(), key=lambda kv: kv[1])
    assert browser.find_element(By.CSS_SELECTOR, "#timeline-grads .bar-label").text == strongest[0]
    assert float(grads[0].get_attribute("title")) == strongest[1]
    assert browser.find_elements(By.CSS_SELECTOR, "#timeline-attention canvas.heatmap")
    assert browser.find_elements(By.CSS_SELECTOR, "#timeline-curve svg polyline")
    # another run of the family beside it, at the snapshot nearest the same step, on the same example
    Select(browser.find_element(By.ID, "timeline-compare")).select_by_value("more/gpt")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#timeline-other canvas.heatmap"))
    assert browser.find_element(By.ID, "timeline-other").text.startswith("more/gpt at step 0")
    assert "(the same validation example)" in browser.find_element(By.ID, "timeline-other").text
    # a translator: its cross-attention, and each reference token's loss labelled with the token it predicts
    pick(browser, "seq2seq")
    wait(browser, lambda d: d.find_element(By.ID, "timeline-body").is_displayed())
    last = read_timeline(runs_folder / "seq2seq")[-1]
    assert browser.find_element(By.CSS_SELECTOR, "#timeline-attention figcaption").text.startswith("cross-attention")
    chips = browser.find_elements(By.CSS_SELECTOR, "#timeline-losses .chip")
    assert [float(c.get_attribute("data-loss")) for c in chips] == last["token_losses"]
    assert chips[-1].text == "<eos>" and chips[0].text == last["target_tokens"][1]
    assert not console_errors(browser)


# a real training in its own process, held at the end of steps 3 and 5 until the test lets it go (a file
# ``go-N`` appears; ``at-N`` says it got there): each moment of a live run is seen whatever the machine's speed
GATED_TRAINING = """
import sys, time
from pathlib import Path
from transformers_lite import GeneratorConfig, Recipe
from transformers_lite.tasks.generator import GeneratorSettings
from transformers_lite.training.callbacks import Callback
from transformers_lite.settings import TrainConfig

out, text = Path(sys.argv[1]), sys.argv[2]

class Gate(Callback):
    def on_step_end(self, trainer, state, loss):
        if state.step in (3, 5):
            (out.parent / f"at-{state.step}").touch()
            while not (out.parent / f"go-{state.step}").exists():
                time.sleep(0.05)

config = GeneratorConfig(dim=16, n_heads=2, dim_hidden=32, n_blocks=1, max_length=16)
train = TrainConfig(max_steps=8, eval_every=4, log_every=1, warmup_steps=1, snapshots=4)
Recipe("generator", config, train, GeneratorSettings(text=text, batch_size=4)).run(out, callbacks=[Gate()], log=print)
"""


def test_a_run_is_seen_live_while_it_trains(browser, runs, files, tmp_path):
    """Picked while it trains, before its first checkpoint: the page says it is training and at which step
    of how many, draws its curve from the rows written so far and its step-0 snapshot; the walk opens once
    the first checkpoint is written (the run still training), the training line goes when it ends, and
    the console stays free of errors throughout."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import uvicorn
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    import transformers_lite
    from transformers_lite.runs.history import read_metrics
    from transformers_lite.server.app import create_app
    from transformers_lite.server.registry import RunRegistry

    served = tmp_path / "served"
    shutil.copytree(runs / "classifier", served / "a-classifier")
    live = served / "live"
    src = str(Path(transformers_lite.__file__).parents[1])
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-c", GATED_TRAINING, str(live), str(files / "text.txt")]
    training = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def reach(step):
        deadline = time.time() + 120
        while not (served / f"at-{step}").exists():
            assert training.poll() is None, training.communicate()[0]
            assert time.time() < deadline, f"the training did not reach step {step}"
            time.sleep(0.05)

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(RunRegistry(served)), host="127.0.0.1", port=port, log_level="warning")
    )
    try:
        reach(3)  # its settings, config and tokenizer written, a few steps taken, no checkpoint yet
        assert not (live / "checkpoint").exists() and not (live / "model.safetensors").exists()
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.05)
        browser.get(f"http://127.0.0.1:{port}/")
        wait(browser, lambda d: d.execute_script("return document.body.dataset.ready") == "1", 30)
        Select(browser.find_element(By.ID, "run-picker")).select_by_value("live")
        wait(browser, lambda d: "still training" in d.find_element(By.ID, "run-training").text, 30)
        said = browser.find_element(By.ID, "run-training").text
        last = read_metrics(live)[-1]["step"]  # the rows written so far (the first at once)
        assert said.startswith(f"still training: step {last:.0f} of 8, ") and 1 <= last <= 3, said
        assert "its model opens here with its first checkpoint" in said
        assert browser.find_element(By.ID, "status").text.startswith(f"live is training: step {last:.0f} of 8")
        curve = browser.find_element(By.CSS_SELECTOR, "#curves svg polyline").get_attribute("points")
        assert (
            len(curve.split()) >= 1
            and browser.find_element(By.CSS_SELECTOR, "#curves svg text.legend").text == "train_loss"
        )
        wait(browser, lambda d: d.find_element(By.ID, "timeline-step").text == "step 0 (before training)")
        assert not browser.find_element(By.ID, "view-forward").is_displayed()  # no weights: no walk yet

        (served / "go-3").touch()
        reach(5)  # the evaluation at step 4 wrote the first checkpoint
        wait(browser, lambda d: d.find_element(By.ID, "guide-start").is_displayed(), 30)
        browser.find_element(By.ID, "guide-start").click()
        wait(browser, lambda d: d.find_element(By.ID, "trace-step-name").text.endswith(": tokens"))
        assert browser.find_element(By.ID, "view-generator").is_displayed()
        wait(browser, lambda d: "of 8" in d.find_element(By.ID, "run-training").text)
        assert "opens here" not in browser.find_element(By.ID, "run-training").text  # opened, still training
        legends = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#curves svg text.legend")]
        assert legends[:2] == ["train_loss", "val_loss"], legends  # the evaluation of step 4 on the curves

        (served / "go-5").touch()
        assert training.wait(120) == 0, training.communicate()[0]
        wait(browser, lambda d: not d.find_element(By.ID, "run-training").is_displayed(), 30)
        assert browser.find_element(By.ID, "status").text == ""
        assert not console_errors(browser)
    finally:
        for step in (3, 5):
            (served / f"go-{step}").touch()
        if training.poll() is None:
            training.kill()
        training.communicate()
        server.should_exit = True
