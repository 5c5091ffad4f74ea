"""The inspector's words agree with what it draws, read as a learner reads them in a real headless Chromium
at 1280×720: the colour at each end of a signed legend, and of a map cell or a token of known sign, is the
colour the page's words give that sign; maps name their axes (the vocabulary's tokens, a key's token); the
rows a step combined show the whole matrix it read; a mask's strip shows its cells; legends' numbers are
not cut; a heading says what was ranked; the sampling note names the bar it measures; a curve of one point
keeps whole steps; an ensemble's map says what each box is; and a step's equation, map and legend are seen
together in the window."""

import io
import re
from pathlib import Path

import pytest

from ..reliability.conftest import files, runs  # noqa: F401 - fixtures
from .test_browser import base_url, browser, console_errors, wait  # noqa: F401 - fixtures
from .test_page_teaches import _current, _open

webdriver = pytest.importorskip("selenium.webdriver")
Image = pytest.importorskip("PIL.Image")
STATIC = Path(__file__).parents[2] / "src" / "transformers_lite" / "server" / "static"
DOCS = Path(__file__).parents[2] / "docs" / "inspector.md"


def _by():
    from selenium.webdriver.common.by import By

    return By


def colour_name(rgb) -> str:
    """What a learner calls a colour of the signed scale: orange (more red than blue) or purple."""
    r, _, b = rgb[:3]
    assert max(rgb[:3]) - min(rgb[:3]) > 40, f"{rgb} is too grey to name"
    return "orange" if r > b else "purple"


def signed_words(text: str) -> dict[str, str]:
    """The colour a heading gives each sign: "(...; orange positive, purple negative)"."""
    found = re.search(r"(\w+) positive, (\w+) negative", text)
    assert found, text
    return {"positive": found.group(1), "negative": found.group(2)}


def shown(token: str) -> str:
    """A token as the page writes it (dom.js visible)."""
    return token.replace("\n", "↵").replace(" ", "␣") or "∅"


def _trace(driver, text):
    box = driver.find_element(_by().ID, "trace-text")
    box.clear()
    box.send_keys(text)
    driver.find_element(_by().ID, "trace").click()
    wait(driver, lambda d: len(d.find_elements(_by().CSS_SELECTOR, "#trace-tokens .chip")) == len(text))


def _step(driver, name):
    """Go to the step ``name`` of the block on view through its chip."""
    chip = "[...document.querySelectorAll('#trace-steps .step')].find((c) => c.textContent === arguments[0])"
    wait(driver, lambda d: d.execute_script("return " + chip, name) is not None)
    driver.execute_script(chip + ".click()", name)
    wait(driver, lambda d: _current(d).endswith(name))


def _bar_ends(driver, legend):
    """The rendered colours at the two ends of a legend's colour bar, and the numbers written under them."""
    svg = legend.find_element(_by().CSS_SELECTOR, "svg.legend-bar")
    box = driver.execute_script(
        "const r = arguments[0].querySelector('rect').getBoundingClientRect();"
        "const s = arguments[0].getBoundingClientRect();"
        "return [r.left - s.left, r.top - s.top, r.width, r.height]",
        svg,
    )
    picture = Image.open(io.BytesIO(svg.screenshot_as_png)).convert("RGB")
    x, y, w, h = box
    ends = [picture.getpixel((round(x + 3), round(y + h / 2))), picture.getpixel((round(x + w - 3), round(y + h / 2)))]
    ticks = [t.text for t in svg.find_elements(_by().CSS_SELECTOR, "text.tick")]
    return ends, ticks


def test_signed_colours_are_the_colours_the_words_give_each_sign(base_url, browser, runs_folder):  # noqa: F811
    import transformers_lite as tl

    By = _by()
    _open(browser, base_url, "generator")
    _trace(browser, "First Citizen")
    words = signed_words(browser.find_element(By.XPATH, "//h3[contains(., 'through this block')]").text)

    # each end of a signed legend: its number's sign, its colour, and the legend's own words agree
    _step(browser, "attention.scores")
    legend = browser.find_element(By.CSS_SELECTOR, "#trace-view figure.map .legend")
    (low, high), ticks = _bar_ends(browser, legend)
    assert ticks[0].startswith("−") and not ticks[-1].startswith("−"), ticks
    assert (colour_name(low), colour_name(high)) == (words["negative"], words["positive"])
    said = legend.find_element(By.CSS_SELECTOR, ".legend-words")
    assert said.text == f"{words['negative']}: negative, {words['positive']}: positive"

    # a cell of known sign on the map: the largest score and the smallest
    scores = tl.load(runs_folder / "generator").trace("First Citizen")["blocks.0.attention.scores"][0]  # head 0
    canvas = browser.find_element(By.CSS_SELECTOR, "#trace-view figure.map canvas.heatmap")
    cell = int(canvas.get_attribute("width")) / scores.shape[1]
    pixel = (
        "const c = arguments[0]; return [...c.getContext('2d').getImageData("
        "Math.floor((arguments[2] + 0.5) * arguments[3]), Math.floor((arguments[1] + 0.5) * arguments[3]), 1, 1).data]"
    )
    for index, sign in ((int(scores.argmax()), "positive"), (int(scores.argmin()), "negative")):
        i, j = divmod(index, scores.shape[1])
        assert (float(scores[i, j]) > 0) == (sign == "positive")
        assert colour_name(browser.execute_script(pixel, canvas, i, j, cell)) == words[sign], (i, j, sign)

    # gradient × input: the token that pushed the loss up most is in the colour the heading names for "up"
    browser.find_element(By.ID, "backward").click()
    wait(browser, lambda d: d.find_element(By.ID, "backward-result").is_displayed(), 30)
    heading = browser.find_element(By.XPATH, "//h3[contains(., 'Gradient')]").text
    up, down = re.search(r"\((\w+): the token's embedding pushed the loss up; (\w+): down\)", heading).groups()
    assert {words["positive"], words["negative"]} == {up, down} and up == words["positive"]
    chips = browser.find_elements(By.CSS_SELECTOR, "#backward-attribution .chip")
    values = [float(c.get_attribute("data-value")) for c in chips]
    colour = "return getComputedStyle(arguments[0]).backgroundColor"
    for k in {values.index(max(values)), values.index(min(values))}:
        if abs(values[k]) > 0.3 * max(map(abs, values)):
            rgb = [int(v) for v in re.findall(r"\d+", browser.execute_script(colour, chips[k]))]
            assert colour_name(rgb) == (up if values[k] > 0 else down), (values[k], rgb)
    assert not console_errors(browser)


def test_the_signed_words_come_from_one_definition_that_the_docs_follow():
    """scales.js defines the signed scale's colours and words once; the page's headings name no colour
    of their own, and docs/inspector.md says what the definition says."""
    scales = (STATIC / "js" / "scales.js").read_text()
    found = re.search(r'export const SIGNED = .*negative: "(\w+)", zero: "(\w+)", positive: "(\w+)"', scales)
    assert found, "scales.js defines SIGNED with its words for each sign"
    negative, zero, positive = found.groups()
    page = (STATIC / "index.html").read_text()
    assert negative not in page and positive not in page  # every colour word of the page comes from SIGNED
    assert page.count('data-signed="positive"') == page.count('data-signed="negative"') >= 2
    docs = DOCS.read_text()
    assert f"| {negative} (negative) – {zero} (0) – {positive} (positive) |" in docs
    assert f"{positive} (negative)" not in docs and f"{negative} (positive)" not in docs


def test_maps_name_the_vocabulary_and_the_keys_forward_and_backward(base_url, browser, runs_folder):  # noqa: F811
    import transformers_lite as tl

    By = _by()
    run = tl.load(runs_folder / "generator")
    _open(browser, base_url, "generator")
    _trace(browser, "First Citizen")
    for step in ("logits", "probabilities"):
        _step(browser, step)
        figure = browser.find_element(By.CSS_SELECTOR, "#trace-view figure.map")
        labels = figure.find_elements(By.CSS_SELECTOR, ".axis-x span")
        firsts = [int(s.get_attribute("data-first")) for s in labels]
        assert [s.get_attribute("title") for s in labels] == [shown(run.tokenizer.shown(i)) for i in firsts]
        assert int(labels[-1].get_attribute("data-last")) == len(run.tokenizer) - 1  # every token of the vocabulary
    # the backward's scores map: its columns are the keys' tokens, not numbers
    browser.find_element(By.ID, "backward").click()
    wait(browser, lambda d: d.find_element(By.ID, "backward-result").is_displayed(), 30)
    chip = "[...document.querySelectorAll('#backward-steps .step')].find((c) => c.textContent.startsWith(arguments[0]))"
    browser.execute_script(chip + ".click()", "blocks.0.attention.scores")
    wait(browser, lambda d: "attention.scores" in d.find_element(By.ID, "backward-step-name").text)
    figure = browser.find_element(By.CSS_SELECTOR, "#backward-view figure.map")
    assert [s.get_attribute("title") for s in figure.find_elements(By.CSS_SELECTOR, ".axis-x span")] == [
        shown(c) for c in "First Citizen"
    ]
    assert not console_errors(browser)


def test_the_rows_combined_show_the_matrix_read_whole_and_a_mask_shows_its_cells(base_url, browser):  # noqa: F811
    By = _by()
    _open(browser, base_url, "generator")
    _trace(browser, "First Citizen")  # followed: the last position, 12, which may read every key
    for step, whole in (("attention.scores", "attention.k"), ("attention.heads", "attention.v")):
        _step(browser, step)
        rows = browser.find_element(By.ID, "guide-rows")
        matrix = rows.find_element(By.CSS_SELECTOR, ".turned-box")  # every row j of k (of v), as column j
        assert (matrix.get_attribute("data-rows"), matrix.get_attribute("data-cols")) == ("13", "8")
        assert matrix.find_element(By.CSS_SELECTOR, ".lit-column").get_attribute("data-column") == "12"
        assert f"{whole}\nevery row j, as column j" in rows.text

    # the mask at the last position is 0 everywhere: its strip still shows 13 cells, its legend says what 0 is
    _step(browser, "attention.mask")
    rows = browser.find_element(By.ID, "guide-rows")
    legends = rows.find_elements(By.CSS_SELECTOR, ".legend")
    assert [g.get_attribute("data-kind") for g in legends] == ["mask"]
    assert "0: may be read" in legends[0].text and "masked" in legends[0].text
    strip = rows.find_element(By.CSS_SELECTOR, ".strip")
    picture = Image.open(io.BytesIO(strip.screenshot_as_png)).convert("RGB")
    line = [picture.getpixel((x, picture.height // 2)) for x in range(3, picture.width - 3)]
    changes = sum(a != b for a, b in zip(line, line[1:]))
    assert changes >= 2 * 12, "the cells of a constant strip can be told apart"
    assert not console_errors(browser)


def test_legend_numbers_are_never_cut_and_a_one_point_curve_keeps_whole_steps(base_url, browser):  # noqa: F811
    from selenium.webdriver.support.ui import Select

    By = _by()
    _open(browser, base_url, "generator")
    _trace(browser, "First Citizen")
    _step(browser, "attention.scores")
    browser.find_element(By.ID, "backward-position").send_keys("3")
    browser.find_element(By.ID, "backward").click()
    wait(browser, lambda d: d.find_element(By.ID, "backward-result").is_displayed(), 30)
    outside = (
        "return [...document.querySelectorAll('svg.legend-bar')].filter((s) => s.getClientRects().length)"
        ".flatMap((s) =>"
        " [...s.querySelectorAll('text.tick')].filter((t) => { const r = t.getBoundingClientRect(),"
        " b = s.getBoundingClientRect(); return r.left < b.left - 0.5 || r.right > b.right + 0.5; })"
        ".map((t) => t.textContent))"
    )
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.legend-bar")) >= 3
    assert browser.execute_script(outside) == []

    # one example's loss at one position: a Muon step's gradient of rank 1 draws one point, on step 1
    Select(browser.find_element(By.ID, "step-optimizer")).select_by_value("muon")
    browser.execute_script("document.getElementById('take-step').click()")
    wait(browser, lambda d: d.find_element(By.ID, "step-spectra").is_displayed(), 30)
    pick = Select(browser.find_element(By.ID, "step-matrix"))
    for option in range(len(pick.options)):
        pick.select_by_index(option)
        if "rank 1 of" in browser.find_element(By.ID, "step-rank").text:
            break
    else:
        pytest.fail("no matrix's gradient has rank 1")
    chart = browser.find_element(By.CSS_SELECTOR, "#step-spectrum svg")
    h = int(chart.get_attribute("height"))
    ticks = [t.text for t in chart.find_elements(By.CSS_SELECTOR, "text") if float(t.get_attribute("y")) > h - 30]
    ticks = [t for t in ticks if re.fullmatch(r"[−\-0-9.]+", t)]
    assert ticks and all(re.fullmatch(r"\d+", t) for t in ticks), ticks
    assert not console_errors(browser)


def test_the_rank_heading_and_the_sampling_note_say_what_they_measure(base_url, browser):  # noqa: F811
    By = _by()
    _open(browser, base_url, "generator")
    browser.find_element(By.ID, "sweep-windows").send_keys("2")
    browser.find_element(By.ID, "sweep").click()
    wait(browser, lambda d: d.find_element(By.ID, "sweep-result").is_displayed(), 30)
    heading = browser.find_element(By.CSS_SELECTOR, "#sweep-result h3").text
    assert "2 windows of the validation text" in heading and "this input" not in heading
    browser.find_element(By.ID, "sweep-windows").clear()
    browser.find_element(By.ID, "sweep").click()
    wait(browser, lambda d: "on this input" in d.find_element(By.CSS_SELECTOR, "#sweep-result h3").text, 30)

    browser.find_element(By.ID, "max-new-tokens").clear()
    browser.find_element(By.ID, "max-new-tokens").send_keys("6")
    browser.find_element(By.ID, "generate").click()
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".tok.gen")) == 6)
    browser.find_elements(By.CSS_SELECTOR, ".tok.gen")[2].click()
    wait(browser, lambda d: d.find_element(By.ID, "gen-inspect").is_displayed())
    for temperature, longer in (("0.2", "blue"), ("3", "grey")):  # cold: the drawn-from bar is the longest
        browser.execute_script(
            "const s = document.getElementById('s-temperature'); s.value = arguments[0];"
            "s.dispatchEvent(new Event('input'))",
            temperature,
        )
        pairs = [
            [float(x) for x in v.get_attribute("title").split(" → ")]
            for v in browser.find_elements(By.CSS_SELECTOR, "#next-token .bar-value")
        ]
        grey, blue = max(p[0] for p in pairs), max(p[1] for p in pairs)
        assert (blue > grey) == (longer == "blue")
        note = browser.find_element(By.ID, "sampling-note").text
        assert f"the longest bar ({longer}" in note and f"is {max(grey, blue):.3f}" in note, note
    assert not console_errors(browser)


def test_an_ensembles_map_says_what_each_box_is(base_url, browser):  # noqa: F811
    By = _by()
    _open(browser, base_url, "classifier")
    groups = browser.find_elements(By.CSS_SELECTOR, "#model-map .map-group")
    headers = [g.find_element(By.CSS_SELECTOR, ".map-block-name").text for g in groups]
    assert headers == ["member 1 of 8", "encoder.blocks.0", "member 1 of 8", "all 8 members"]
    outside = [
        b.find_element(By.CSS_SELECTOR, ".map-title").text
        for g in groups
        if "block" not in g.get_attribute("class")
        for b in g.find_elements(By.CSS_SELECTOR, ".map-box")
    ]
    assert len(set(outside)) == len(outside), outside  # no two boxes outside the blocks share a title
    assert {"member 1's logits", "logits of the 8 members, mixed"} <= set(outside)
    assert browser.find_element(By.ID, "model-map-note").text.startswith("An ensemble of 8 members")
    # the mixture is logits, the log of the members' mean probability (below 0): drawn signed, not as 0-1
    browser.find_element(By.XPATH, "//*[@id='model-map']//button[contains(., 'members, mixed')]").click()
    wait(browser, lambda d: _current(d) == "logits")
    legend = browser.find_element(By.CSS_SELECTOR, "#trace-view figure.map .legend")
    row = [float(x.text.replace("−", "-")) for x in browser.find_elements(By.CSS_SELECTOR, "#trace-row .num")]
    assert legend.get_attribute("data-kind") == "signed" and min(row) < 0  # the row is printed to 4 digits
    assert float(legend.get_attribute("data-lo")) == pytest.approx(min(row), abs=1e-3)
    assert not console_errors(browser)


@pytest.mark.parametrize("run", ["generator", "classifier"])
def test_the_walk_shows_each_steps_equation_map_and_legend_together_at_1280_by_720(base_url, browser, run):  # noqa: F811
    By = _by()
    _open(browser, base_url, run)
    seen = (
        "const r = arguments[0].getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight && r.height > 0"
    )
    start = browser.find_element(By.ID, "guide-start")
    assert browser.execute_script("return scrollY") == 0 and browser.execute_script(seen, start)  # the first screen
    start.click()
    wait(browser, lambda d: _current(d).endswith("tokens"))
    maps = 0
    while True:
        name = _current(browser)
        skip = browser.find_elements(By.ID, "question-skip")  # the question asked before the map: skipped
        if skip:
            skip[0].click()
        parts = [browser.find_element(By.CSS_SELECTOR, "#trace-step-info tr")]  # the equation
        figure = browser.find_elements(By.CSS_SELECTOR, "#trace-view figure.map")
        if figure:
            parts += [figure[0].find_element(By.CSS_SELECTOR, s) for s in ("canvas.heatmap", ".legend")]  # map, legend
            maps += 1
        assert all(browser.execute_script(seen, p) for p in parts), name
        if name.endswith("probabilities"):
            break
        browser.find_element(By.ID, "trace-next").click()
        wait(browser, lambda d, before=name: _current(d) != before)
    assert maps > 10
    page = "document.documentElement"
    assert browser.execute_script(f"return {page}.scrollWidth - {page}.clientWidth") <= 0  # no sideways scroll
    assert not console_errors(browser)
