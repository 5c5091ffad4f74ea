"""`tlite serve` targets: page ready in a real browser, and the first streamed token.

    .venv/bin/python benchmarks/bench_server.py [--text input.txt] [--repeats 10]

Trains a baby-gpt run for one step (the speed of a forward pass does not depend on training), starts
the app on a free local port, then measures:
- time to the first streamed token: from sending ``POST /api/runs/NAME/generate`` (prompt "ROMEO:")
  to receiving its first ``token`` event, with an HTTP client in this process (median of ``--repeats``,
  after one warm-up request);
- page ready: headless Chromium (Debian's chromium + chromium-driver) opening ``/`` until the page
  marks itself ready (run list fetched, views drawn), median of 5 fresh loads;
- the forward trace of a 64-character input (``POST /api/runs/NAME/trace``) for a post-gpt and a
  baby-gpt run: the steps of one block with the outer steps (what the page asks for) and every step,
  and the head sweep (``POST .../sweep``) and the backward pass (``POST .../backward``, the loss at
  position 20, every step's gradient) over the same input, each the median of ``--repeats``;
- the rest of the learner's path on the same input and runs: opening a run (``GET /api/runs/NAME``), the
  trace with a head switched off, and one optimizer step (``POST .../step``), each the median of ``--repeats``;
- a check's verdict on the warm path, for every exercise: its solution as ``tlite exercise solution``
  prints it, sent as the page sends it (``POST .../exercise``, after the page's ``GET /api/exercises?run=``
  made the checker ready), the median of ``--repeats`` per exercise and the slowest exercise; and the
  command line, ``tlite exercise check NAME FILE --run RUN`` as a learner runs it (a new process: its
  own start-up, reading the run and starting the checker are printed apart from the function's time);
- the page on a long input: in Chromium, a baby-gpt run with context 256 traced over 256 characters
  from the button to the drawn step, then every step of the first block drawn in turn (the slowest
  one), the longest task that held the page's main thread (a ``longtask`` observer), and any error the
  page showed;
- learning by thinking, in Chromium on the same run and input: a question drawn in place of each step's
  map (the slowest step), a replay frame drawn as its slider moves (the slowest frame), and a step of the
  walk drawn beside the same step with a head switched off, and beside another run (the slowest step of
  each; target 200 ms each).
One JSON line per measurement, with the machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn
from common import emit

import transformers_lite as tl
from transformers_lite.exercises import EXERCISES
from transformers_lite.server.app import create_app
from transformers_lite.server.registry import RunRegistry

TEXT = Path(__file__).resolve().parents[2] / "shared" / "data" / "tinyshakespeare" / "input.txt"


def first_token_ms(url: str) -> float:
    start = time.perf_counter()
    with httpx.stream("POST", url, json={"prompt": "ROMEO:", "max_new_tokens": 20}, timeout=60) as response:
        for line in response.iter_lines():
            if line == "event: token":
                return 1000 * (time.perf_counter() - start)
    raise RuntimeError("no token event")


def chromium(*extra: str):  # noqa: ANN201 - a selenium WebDriver
    """Headless Chromium (Debian's chromium + chromium-driver) with ``extra`` arguments."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", *extra):
        options.add_argument(arg)
    options.binary_location = shutil.which("chromium") or "chromium"
    return webdriver.Chrome(service=Service(shutil.which("chromedriver") or "chromedriver"), options=options)


def page_ready_ms(base: str, loads: int = 5) -> list[float]:
    from selenium.webdriver.support.ui import WebDriverWait

    driver = chromium()
    try:
        times = []
        for _ in range(loads + 1):  # the first load starts the browser's caches: not counted
            driver.get("about:blank")
            start = time.perf_counter()
            driver.get(base + "/")
            WebDriverWait(driver, 30, poll_frequency=0.005).until(
                lambda d: d.execute_script("return document.body.dataset.ready") == "1"
            )
            times.append(1000 * (time.perf_counter() - start))
        return times[1:]
    finally:
        driver.quit()


PAGE_SCRIPT = """
window.__longest = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
}).observe({ type: "longtask", buffered: false });
"""


def open_run(driver, wait, base: str, run: str, text: str, script: str = "") -> None:  # noqa: ANN001 - selenium
    """The page loaded with ``run`` picked (questions on, as a first visit has them) and ``text`` in the trace
    box, the example's trace cleared; ``script`` runs with it (an observer to install before tracing)."""
    driver.get(base + "/")
    wait.until(lambda d: d.execute_script("return document.body.dataset.ready") == "1")
    driver.execute_script(
        "localStorage.removeItem('tlite.questions'); const p = document.getElementById('run-picker');"
        "p.value = arguments[0]; p.dispatchEvent(new Event('change'));",
        run,
    )
    wait.until(lambda d: d.execute_script("return tlite.state.run") == run and not d.find_element("id", "status").text)
    driver.execute_script("document.getElementById('trace-text').value = arguments[0];" + script, text)
    driver.execute_script("document.getElementById('trace-tokens').replaceChildren()")  # the example's trace


def page_trace(base: str, run: str, text: str) -> dict:
    """The page tracing ``text`` with ``run``: time to the drawn first step, the slowest step to draw,
    the longest main-thread task, and the page's error line (empty when none)."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver = chromium("--window-size=1400,1000")
    wait = WebDriverWait(driver, 300, poll_frequency=0.01)
    try:
        open_run(driver, wait, base, run, text, PAGE_SCRIPT)
        start = time.perf_counter()
        driver.find_element("id", "trace").click()
        wait.until(
            lambda d: (
                d.execute_script("return document.querySelectorAll('#trace-tokens .chip').length")
                and not d.find_element("id", "status").text
            )
        )
        drawn_ms = 1000 * (time.perf_counter() - start)
        steps = driver.execute_script("return tlite.trace.data.steps.length")
        slowest, name = 0.0, ""
        for i in range(1, steps):  # each step of the block drawn in turn, as a click on it draws it
            took = driver.execute_script(
                "const t = performance.now(); tlite.trace.step = arguments[0]; tlite.renderTrace();"
                "return performance.now() - t;",
                i,
            )
            if took > slowest:
                slowest, name = took, driver.execute_script("return tlite.trace.data.steps[tlite.trace.step].name")
        return {
            "tokens": driver.execute_script("return tlite.trace.data.tokens.length"),
            "steps": steps,
            "drawn_ms": round(drawn_ms, 1),
            "slowest_step_ms": round(slowest, 1),
            "slowest_step": name,
            "longest_task_ms": round(driver.execute_script("return window.__longest"), 1),
            "page_error": driver.find_element("id", "errors").text,
        }
    finally:
        driver.quit()


THINKING_SCRIPT = """
const time = (draw) => { const t = performance.now(); draw(); return performance.now() - t; };
const slowest = (times) => Math.max(0, ...times);
const draw = (i) => () => { tlite.trace.step = i; tlite.renderTrace(); };
const each = (n) => slowest(Array.from({length: n}, (_, i) => time(draw(i))));
"""
CHIPS = "return document.querySelectorAll('#trace-tokens .chip').length"
HEADING = (
    "const h = document.querySelector('#walk-beside h3'); return h !== null && h.textContent.includes(arguments[0])"
)


def page_thinking(base: str, run: str, text: str, other: str) -> dict:
    """In Chromium on ``run`` and ``text``: the slowest question drawn in the walk (each step with its
    question waiting), the slowest replay frame, the slowest step drawn beside the same step with head 0
    of the first block off, and beside the run ``other`` (each step's whole draw, in milliseconds)."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver = chromium("--window-size=1280,720")
    wait = WebDriverWait(driver, 300, poll_frequency=0.01)
    idle = lambda d: not d.find_element("id", "status").text  # noqa: E731
    try:
        open_run(driver, wait, base, run, text)
        driver.find_element("id", "trace").click()
        wait.until(lambda d: d.execute_script(CHIPS) and idle(d))
        steps = driver.execute_script("return tlite.trace.data.steps.length")
        each = "return each(arguments[0])"
        driver.execute_script("document.getElementById('guide-start').click()")
        wait.until(lambda d: d.find_element("id", "walk-question").is_displayed())
        question = driver.execute_script(THINKING_SCRIPT + each, steps)
        wait.until(lambda d: d.find_element("id", "replay-body").is_displayed())
        frame = driver.execute_script(
            THINKING_SCRIPT + "const s = document.getElementById('replay-slider');"
            "return slowest(Array.from({length: Number(s.max) + 1}, (_, k) => time(() => {"
            "s.value = k; s.dispatchEvent(new Event('input')); })))"
        )
        driver.execute_script("document.getElementById('quiz-on').click()")  # the maps shown, for the rest
        beside: dict[str, float | None] = {}
        for what, choice, said in (
            ("a head off", "off:blocks.0.attention.head.0", "head 0 switched off"),
            ("another run", f"run:{other}", f"the run {other}"),
        ):
            offered = driver.execute_script(
                "const p = document.getElementById('beside-pick'); p.value = arguments[0];"
                "p.dispatchEvent(new Event('change')); return p.value === arguments[0]",
                choice,
            )
            if not offered:  # not a run of the same tokenizer
                beside[what] = None
                continue
            wait.until(lambda d, said=said: d.execute_script(HEADING, said) and idle(d))
            beside[what] = round(driver.execute_script(THINKING_SCRIPT + each, steps), 1)
        return {
            "tokens": driver.execute_script("return tlite.trace.data.tokens.length"),
            "steps": steps,
            "question_ms": round(question, 1),
            "replay_frame_ms": round(frame, 1),
            "beside_head_off_ms": beside["a head off"],
            "beside_run_ms": beside["another run"],
            "page_error": driver.find_element("id", "errors").text,
        }
    finally:
        driver.quit()


TRACE_TEXT = "ROMEO:\nBut soft, what light through yonder window breaks? It is the east"[:64]


last_size_mb = 0.0  # the size of the last answer post_ms received


def post_ms(url: str, body: dict, repeats: int) -> list[float]:
    global last_size_mb
    answer = httpx.post(url, json=body, timeout=60)  # warm-up
    answer.raise_for_status()
    last_size_mb = len(answer.content) / 1e6
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        httpx.post(url, json=body, timeout=60).raise_for_status()
        times.append(1000 * (time.perf_counter() - start))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--text", default=str(TEXT))
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for preset in ("baby-gpt", "post-gpt"):
            experiment = tl.get_preset(preset).override(text=args.text, max_steps=1, eval_every=1000)
            experiment.run(Path(tmp) / preset, log=lambda *_: None)
        long = tl.get_preset("baby-gpt").override(
            model={"max_length": 256}, text=args.text, max_steps=1, eval_every=1000
        )
        long.run(Path(tmp) / "baby-gpt-256", log=lambda *_: None)  # the page on a full context of 256
        # the run drawn beside it: another seed of the same model (a context of 64 reads only 64 of the 256)
        long.override(seed=1).run(Path(tmp) / "baby-gpt-256-seed-1", log=lambda *_: None)
        registry = RunRegistry(tmp)
        name = "baby-gpt"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(create_app(registry), host="127.0.0.1", port=port, log_level="warning"))
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.05)
        base = f"http://127.0.0.1:{port}"
        url = f"{base}/api/runs/{name}/generate"
        first_token_ms(url)  # warm-up
        ttft = [first_token_ms(url) for _ in range(args.repeats)]
        emit(
            benchmark="server-first-token",
            model="baby-gpt",
            median_ms=round(statistics.median(ttft), 1),
            max_ms=round(max(ttft), 1),
            target_ms=100,
        )
        if shutil.which("chromium") and shutil.which("chromedriver"):
            ready = page_ready_ms(base)
            emit(
                benchmark="server-page-ready",
                median_ms=round(statistics.median(ready), 1),
                max_ms=round(max(ready), 1),
                target_ms=1000,
            )
        else:
            emit(benchmark="server-page-ready", skipped="chromium + chromium-driver not installed")
        if shutil.which("chromium") and shutil.which("chromedriver"):
            long_text = Path(args.text).read_text(encoding="utf-8")[:256]
            emit(
                benchmark="server-page-trace",
                model="baby-gpt, context 256",
                **page_trace(base, "baby-gpt-256", long_text),
            )
            emit(
                benchmark="server-page-thinking",
                model="baby-gpt, context 256",
                target_ms=200,
                **page_thinking(base, "baby-gpt-256", long_text, "baby-gpt-256-seed-1"),
            )
        for preset in ("post-gpt", "baby-gpt"):
            for what, body in (
                ("trace, one block", {"text": TRACE_TEXT, "block": "blocks.0"}),
                ("trace, every step", {"text": TRACE_TEXT}),
                ("head sweep", {"text": TRACE_TEXT}),
                ("backward, every step", {"text": TRACE_TEXT, "position": 20}),
            ):
                path = {"head sweep": "sweep", "backward, every step": "backward"}.get(what, "trace")
                times = post_ms(f"{base}/api/runs/{preset}/{path}", body, args.repeats)
                emit(
                    benchmark=f"server-{path}",
                    model=preset,
                    what=what,
                    input_chars=len(TRACE_TEXT),
                    median_ms=round(statistics.median(times), 1),
                    max_ms=round(max(times), 1),
                    target_ms=200 if path == "trace" else 1000,
                    **({"json_mb": round(last_size_mb, 2)} if path == "backward" else {}),
                )
        for preset in ("post-gpt", "baby-gpt"):
            opened = get_ms(f"{base}/api/runs/{preset}", args.repeats)
            emit(benchmark="server-open-run", model=preset, median_ms=round(statistics.median(opened), 1))
            off = {"text": TRACE_TEXT, "block": "blocks.0", "switch_off": ["blocks.0.attention.head.0"]}
            times = post_ms(f"{base}/api/runs/{preset}/trace", off, args.repeats)
            emit(
                benchmark="server-trace", model=preset, what="a head off", median_ms=round(statistics.median(times), 1)
            )
            times = post_ms(f"{base}/api/runs/{preset}/step", {"text": TRACE_TEXT, "position": 20}, args.repeats)
            emit(benchmark="server-step", model=preset, median_ms=round(statistics.median(times), 1), target_ms=1000)
        verdicts(base, name, Path(tmp) / name, args.repeats)
        server.should_exit = True


def get_ms(url: str, repeats: int) -> list[float]:
    httpx.get(url, timeout=60).raise_for_status()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        httpx.get(url, timeout=60).raise_for_status()
        times.append(1000 * (time.perf_counter() - start))
    return times


def verdicts(base: str, name: str, run_dir: Path, repeats: int) -> None:
    """A check's verdict on the warm path for every exercise, from the page and from the command line."""
    httpx.get(f"{base}/api/exercises", params={"run": name}, timeout=60).raise_for_status()
    per = {}
    for e in EXERCISES:
        body = {"name": e.name, "code": e.solution_source()}
        times = post_ms(f"{base}/api/runs/{name}/exercise", body, repeats)
        per[e.name] = statistics.median(times)
    slowest = max(per, key=per.get)
    emit(
        benchmark="server-exercise-verdict",
        model=name,
        exercises=len(per),
        median_of_medians_ms=round(statistics.median(per.values()), 1),
        slowest=slowest,
        slowest_ms=round(per[slowest], 1),
        target_ms=1000,
    )
    with tempfile.TemporaryDirectory() as folder:
        answer = Path(folder) / "s.py"
        e = EXERCISES[1]
        answer.write_text(e.solution_source())
        command = [
            sys.executable,
            "-m",
            "transformers_lite",
            "exercise",
            "check",
            e.name,
            str(answer),
            "--run",
            str(run_dir),
        ]
        env = {**os.environ, "XDG_DATA_HOME": folder}
        walls, lines = [], ""
        for _ in range(3):
            start = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
            walls.append(time.perf_counter() - start)
            lines = done.stdout.strip().splitlines()[-1]
        emit(
            benchmark="cli-exercise-check",
            exercise=e.name,
            model=name,
            median_s=round(statistics.median(walls), 2),
            said=lines,
        )


if __name__ == "__main__":
    main()
