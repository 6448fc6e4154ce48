"""The real pages in a real headless Chromium (Debian's, through its chromedriver).

Fill the Karbon form, submit, read the percentages off the page and compare them with
the Python API's exact values; cancel a long solve; upload a CSV to the validator; an
invalid field shows its message. Each page is photographed (see the README: set
``EXACTDICE_SCREENSHOT_DIR=tables/web`` to refresh the committed pictures).
"""

from __future__ import annotations

import signal
import time
from fractions import Fraction

import pytest

from exactdice.core.notation import parse_dice
from exactdice.karbon import ContestSetup, contest_odds
from exactdice.web.app import exact_json
from exactdice.web.jobs import CANCELLED_EXIT_CODE

from .contests import LONG_CONTEST, MAIN_CONTEST, TINY_CONTEST, sample_csv

WAIT_SECONDS = 120


def wait_for(condition, timeout=WAIT_SECONDS, what="the page"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def open_page(browser, live_server, path):
    from selenium.webdriver.common.by import By

    browser.get(live_server.url + path)
    form = browser.find_element(By.TAG_NAME, "form")
    wait_for(lambda: form.get_attribute("data-ready") == "yes", 30, "the form to be built")
    return form


def fill(browser, values: dict, root=None):
    """Type each value into its field (a folded section opened first); a field with presets
    (a policy) takes a preset from its list, or "other" and the value typed."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    root = root or browser
    for name, value in values.items():
        element = root.find_element(By.ID, f"f-{name}")
        browser.execute_script("const d = arguments[0].closest('details'); if (d) d.open = true;", element)
        presets = root.find_elements(By.ID, f"f-{name}-preset")
        if presets:
            choice = Select(presets[0])
            known = [option.get_attribute("value") for option in choice.options]
            choice.select_by_value(str(value) if str(value) in known else "__other__")
            if str(value) in known:
                continue
        element.clear()
        element.send_keys(str(value))


def hold_replies(browser, path):
    """Hold the page's replies from ``path`` until `release_replies` (a slow network, under
    the test's control)."""
    browser.execute_script(
        """
        const [path] = arguments, real = window.fetch;
        window.heldReplies = [];
        window.fetch = (url, options) => real(url, options).then(response => String(url).includes(path)
            ? new Promise(resolve => window.heldReplies.push(() => resolve(response))) : response);""",
        path,
    )


def release_replies(browser):
    browser.execute_script("for (const release of window.heldReplies.splice(0)) release();")


def long_solves(live_server):
    """The server's jobs for LONG_CONTEST so far, oldest first."""
    jobs = live_server.app.state.jobs
    with jobs._lock:
        return [
            job
            for job in jobs._jobs.values()
            if job.task == "karbon_odds" and job.arguments["values"].get("ability") == LONG_CONTEST["ability"]
        ]


def plotted(browser, canvas_id):
    """The points a chart on the page plots, read back from Chart.js: [[(x, y), ...] per curve]."""
    return browser.execute_script(
        "const c = Chart.getChart(arguments[0]); return c && c.data.datasets.map(d => d.data.map(p => [p.x, p.y]));",
        canvas_id,
    )


def as_plotted(chart):
    """A library `Chart`'s exact values as the page plots them: percentages rounded to 4 places."""
    return [[[x, float(exact_json(y, 4)["percent"])] for x, y in curve.points()] for curve in chart.curves]


def text_of(browser, element_id):
    from selenium.webdriver.common.by import By

    return browser.find_element(By.ID, element_id).text


def test_karbon_form_answers_the_python_api_exact_values(browser, live_server, screenshots):
    from selenium.webdriver.common.by import By

    open_page(browser, live_server, "/karbon")
    fill(browser, MAIN_CONTEST)
    browser.find_element(By.ID, "compute").click()
    wait_for(lambda: browser.find_elements(By.ID, "pct-win"), what="the answer")
    expected = contest_odds(ContestSetup(ability=3, challenge=2, consequence=2, peril=1))
    for name in ("win", "loss", "tie"):
        shown = text_of(browser, f"pct-{name}")
        assert shown == exact_json(getattr(expected, name))["shown"] + "%"
    # the exact fractions one click away
    browser.find_element(By.ID, "show-exact").click()
    exact_lines = [line.text for line in browser.find_elements(By.CSS_SELECTOR, "#exact-box .exact")]
    assert f"P(win) = {expected.win.numerator}/{expected.win.denominator}" in exact_lines
    assert browser.find_element(By.ID, "copy-exact").is_displayed()
    assert text_of(browser, "played-player") == expected.player_policy.words()
    assert text_of(browser, "played-narrator") == expected.narrator_policy.words()
    assert text_of(browser, "played-rules") == "the default reading"
    assert expected.expected_injuries == 0 and text_of(browser, "exp-injuries") == "0"  # exact 0 reads 0
    rounds = float(text_of(browser, "exp-rounds"))
    assert abs(rounds - float(expected.expected_rounds)) < 5e-5
    from exactdice.karbon.charts import length_chart
    from exactdice.karbon.length import contest_length

    # the what-if strip: P(win) at Challenge 1, 2 (the base) and 3 against the Python API
    strip = wait_for(lambda: plotted(browser, "whatif-challenge"), what="the what-if strip")
    setups = {value: ContestSetup(ability=3, challenge=value, consequence=2, peril=1) for value in (1, 2, 3)}
    assert strip == [
        [[value, float(exact_json(contest_odds(setup).win, 4)["percent"])] for value, setup in setups.items()]
    ]
    assert len(browser.find_elements(By.CSS_SELECTOR, "#whatif canvas")) == 6
    assert wait_for(lambda: plotted(browser, "length-chart"), what="how long it lasts") == as_plotted(
        length_chart(contest_length(expected))
    )
    assert text_of(browser, "length-note").startswith("Exact values. Not ended by round")
    # each outcome's curve in its bar's colour
    colours = browser.execute_script(
        "return Chart.getChart('length-chart').data.datasets.map(d => [d.label, d.borderColor]);"
    )
    bars = {
        name: browser.execute_script(
            "return getComputedStyle(document.querySelector(arguments[0])).backgroundColor;", f".bar .{name}"
        )
        for name in ("win", "loss", "tie")
    }
    for label, colour in colours[1:]:
        outcome = label.rsplit(" ", 1)[-1]
        red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
        assert bars[outcome] == f"rgb({red}, {green}, {blue})", (label, colour, bars)
    browser.find_element(By.ID, "show-exact").click()  # folded again for the picture
    browser.save_screenshot(str(screenshots / "karbon.png"))


def test_an_invalid_field_shows_its_message(browser, live_server, screenshots):
    from selenium.webdriver.common.by import By

    open_page(browser, live_server, "/karbon")
    fill(browser, {"ability": -2, "consequence": 2})
    browser.find_element(By.ID, "compute").click()
    wait_for(lambda: text_of(browser, "err-ability"), 30, "the field's message")
    assert text_of(browser, "err-ability") == "must be >= 0, got -2"
    assert "invalid" in browser.find_element(By.ID, "field-ability").get_attribute("class")
    assert not browser.find_elements(By.ID, "pct-win") or not browser.find_element(By.ID, "answer").is_displayed()
    fill(browser, {"ability": 3, "pool": "3d6,zz"})
    browser.find_element(By.ID, "compute").click()
    wait_for(lambda: text_of(browser, "err-pool"), 30, "the pool's message")
    assert text_of(browser, "err-pool") == '"zz" is not a die; write dice like d8,d8,d10 or 2d8,d10 or none'
    assert text_of(browser, "err-ability") == ""
    browser.save_screenshot(str(screenshots / "karbon-invalid-field.png"))
    # an emptied box, and letters in a number box (the browser sends them as empty), are
    # refused, not computed with a default nobody sees; every bad field at once
    fill(browser, {"ability": "", "pool": "7d6,5d8,3d10"})
    browser.find_element(By.ID, "f-peril").send_keys("abc")
    browser.find_element(By.ID, "compute").click()
    wait_for(lambda: text_of(browser, "err-ability"), 30, "the emptied field's message")
    assert text_of(browser, "err-ability") == "is empty (or not a number); give a whole number, for example 3"
    fill(browser, {"peril": ""})
    browser.find_element(By.ID, "f-peril").send_keys("abc")
    browser.find_element(By.ID, "compute").click()
    wait_for(lambda: text_of(browser, "err-peril"), 30, "the letters' message")
    assert text_of(browser, "err-peril").startswith("is empty (or not a number)")


def test_cancel_really_stops_a_long_solve_and_another_tab_is_not_blocked(browser, live_server):
    from selenium.webdriver.common.by import By

    open_page(browser, live_server, "/karbon")
    fill(browser, LONG_CONTEST)
    browser.find_element(By.ID, "compute").click()
    jobs = live_server.app.state.jobs
    job = wait_for(
        lambda: next((j for j in jobs.running() if j.status == "running"), None), 30, "the long solve to start"
    )
    wait_for(
        lambda: "exploring" in text_of(browser, "status") or "solv" in text_of(browser, "status"),
        30,
        "progress on the page",
    )
    # another tab answers a quick contest while the long solve runs
    long_tab = browser.current_window_handle
    browser.switch_to.new_window("tab")
    open_page(browser, live_server, "/karbon")
    fill(browser, dict(TINY_CONTEST, consequence=2))
    browser.find_element(By.ID, "compute").click()
    wait_for(lambda: browser.find_elements(By.ID, "pct-win"), 60, "the quick answer in the second tab")
    assert job.status == "running"
    browser.close()
    browser.switch_to.window(long_tab)
    browser.find_element(By.ID, "cancel").click()
    wait_for(lambda: text_of(browser, "status") == "cancelled", 30, "the page to say cancelled")
    wait_for(lambda: job.status == "cancelled", 10, "the job to be cancelled")
    # ended by the signal, nothing else
    wait_for(lambda: job.exit_code is not None, 10, "the worker to end")
    assert job.exit_code == CANCELLED_EXIT_CODE == -signal.SIGTERM
    assert not job._process.is_alive()
    assert not browser.find_element(By.ID, "cancel").is_displayed()


def test_validator_takes_an_uploaded_csv(browser, live_server, screenshots, tmp_path):
    from selenium.webdriver.common.by import By

    from exactdice.validation import goodness_of_fit

    odds = contest_odds(ContestSetup(player_dice={6: 1}, narrator_dice={10: 1}, consequence=1, pool={}, reserve={}))
    counts = {"win": 690, "loss": 310}  # z = +2.0 for win: fits at alpha 0.01
    path = tmp_path / "samples.csv"  # the outcome column alone (a rounds column is tested too)
    path.write_text("".join(line.rsplit(",", 1)[0] + "\n" for line in sample_csv(counts).splitlines()))
    open_page(browser, live_server, "/validate")
    browser.find_element(By.ID, "f-samples").send_keys(str(path))
    browser.find_element(By.CSS_SELECTOR, "details summary").click()
    fill(browser, {name: value for name, value in TINY_CONTEST.items()})
    browser.find_element(By.ID, "compute").click()
    wait_for(lambda: text_of(browser, "verdict"), what="the verdict")
    report = goodness_of_fit(
        {"win": odds.win, "loss": odds.loss, "tie": odds.tie, "unfinished": odds.never_ends}, counts
    )
    assert text_of(browser, "verdict") == report.verdict
    assert float(text_of(browser, "p-value")) == pytest.approx(report.p_value, rel=1e-3)
    shown_z = float(browser.find_element(By.CSS_SELECTOR, "#row-win .z").text)
    assert shown_z == pytest.approx(round(report.rows[0].z, 2), abs=0.005)
    browser.save_screenshot(str(screenshots / "validate.png"))
    assert "fits" in text_of(browser, "verdict")
    # a CSV without the column: the message sits next to the file field
    bad = tmp_path / "bad.csv"
    bad.write_text("result\nwin\n")
    browser.find_element(By.ID, "f-samples").send_keys(str(bad))
    browser.find_element(By.ID, "compute").click()
    wait_for(lambda: text_of(browser, "err-samples"), 30, "the file's message")
    assert "has no column 'outcome' (its columns: result)" in text_of(browser, "err-samples")
    # another system's setup starts empty where it has no default (no example filled in:
    # the values must be the ones the samples were simulated with)
    from selenium.webdriver.support.ui import Select

    form = browser.find_element(By.TAG_NAME, "form")
    Select(browser.find_element(By.ID, "f-system-choice")).select_by_value("karst-death")
    wait_for(
        lambda: form.get_attribute("data-ready") == "yes" and browser.find_elements(By.ID, "f-negative_health"),
        30,
        "the Karst death setup",
    )
    assert browser.find_element(By.ID, "f-negative_health").get_attribute("value") == ""


def test_dist_page_charts_at_least(browser, live_server, screenshots):
    from selenium.webdriver.common.by import By

    open_page(browser, live_server, "/dist")
    fill(browser, {"expression": "4d6kh3"})
    browser.find_element(By.ID, "compute").click()
    wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#outcomes tbody tr"), 30, "the table")
    rows = browser.find_elements(By.CSS_SELECTOR, "#outcomes tbody tr")
    distribution = parse_dice("4d6kh3")
    first = rows[0].find_elements(By.TAG_NAME, "td")
    low = min(distribution.probabilities())
    assert first[0].text == str(low)
    assert first[4].text == exact_json(distribution.probabilities()[low])["exact"]
    drawn = browser.execute_script(
        "const c = Chart.getChart('chart'); return [c.data.datasets[0].label, c.data.datasets[0].data.length];"
    )
    assert drawn == ["P(at least) %", len(distribution.probabilities())]
    browser.save_screenshot(str(screenshots / "dist.png"))
    fill(browser, {"expression": "3q6"})
    browser.find_element(By.ID, "compute").click()
    wait_for(lambda: text_of(browser, "err-expression"), 30, "the expression's message")
    assert not browser.find_element(By.ID, "answer").is_displayed()  # no old answer under it
    # only an exact 0 or 1 reads 0 % or 100 %: 10d6 totals 10 with probability 6^-10
    fill(browser, {"expression": "10d6"})
    browser.find_element(By.ID, "compute").click()
    wait_for(lambda: browser.find_element(By.ID, "answer").is_displayed(), 30, "the 10d6 table")
    cells = [
        td.text
        for td in browser.find_elements(By.CSS_SELECTOR, "#outcomes tbody tr")[0].find_elements(By.TAG_NAME, "td")
    ]
    assert cells[:4] == ["10", "1.7e-06%", "100%", "1.7e-06%"]
    second = [
        td.text
        for td in browser.find_elements(By.CSS_SELECTOR, "#outcomes tbody tr")[1].find_elements(By.TAG_NAME, "td")
    ]
    assert second[2] == "100 - 1.7e-06%"  # P(at least 11) = 1 - 6^-10


def test_systems_page_gives_the_exact_outcomes(browser, live_server, screenshots):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from exactdice.contingency.check import expected_distribution, skill_check

    def shown_success():  # read in one script: the table is rebuilt when an answer comes
        return browser.execute_script(
            'const row = document.getElementById("outcome-success"); return row && row.cells[2].textContent;'
        )

    form = open_page(browser, live_server, "/systems")  # it answers as it opens (its example difficulty)
    assert (
        wait_for(shown_success, 60, "the outcomes")
        == exact_json(expected_distribution(skill_check("d6,d8,d10", difficulty=4))["success"])["exact"]
    )
    fill(browser, {"difficulty": 7})
    browser.find_element(By.ID, "compute").click()
    law = expected_distribution(skill_check("d6,d8,d10", difficulty=7))
    wait_for(lambda: shown_success() == exact_json(law["success"])["exact"], 60, "the new outcomes")
    words = {"success": "success", "success-with-condition": "success with a condition", "failure": "failure"}
    for name, p in law.items():
        cells = browser.find_element(By.ID, f"outcome-{name}").find_elements(By.TAG_NAME, "td")
        assert cells[1].text == exact_json(p)["shown"] + "%" and cells[2].text == exact_json(p)["exact"]
        assert cells[0].text == words[name]  # outcomes in words
    # the menu by task
    menu = [option.text for option in Select(browser.find_element(By.ID, "f-system-choice")).options]
    assert menu[:3] == ["Contingency skill check", "Chronica contest", "Karst action roll"] and "Karst attack" in menu
    # the check's chance against difficulty: the library's exact chart, read back off the page
    from exactdice.contingency.charts import success_chart
    from exactdice.contingency.check import solve_check

    chance = success_chart(solve_check(skill_check("d6,d8,d10", difficulty=7)))
    assert wait_for(lambda: plotted(browser, "chance-chart")) == as_plotted(chance)
    assert text_of(browser, "chance-note") == chance.note
    browser.save_screenshot(str(screenshots / "systems-contingency.png"))
    Select(browser.find_element(By.ID, "f-system-choice")).select_by_value("chronica")  # d6 v d6
    first = wait_for(
        lambda: browser.execute_script(
            'const row = document.getElementById("outcome-0"); return row && row.cells[0].textContent;'
        ),
        30,
        "the Chronica answer",
    )
    assert first == "the player (side 0) wins" and text_of(browser, "outcome-0").split()[-2] == "5/12"
    Select(browser.find_element(By.ID, "f-system-choice")).select_by_value("karst-attack")
    wait_for(
        lambda: form.get_attribute("data-ready") == "yes" and browser.find_elements(By.ID, "f-damage"),
        30,
        "the Karst form",
    )
    wait_for(lambda: browser.find_elements(By.ID, "outcome-hit"), 30, "the Karst form's own answer")
    from exactdice.karst.charts import hit_chart

    assert text_of(browser, "outcome-hit").startswith("the attack hits")
    assert wait_for(lambda: plotted(browser, "chance-chart")) == as_plotted(hit_chart(0, 12))
    fill(browser, {"defense": 12, "health": 5, "damage": "2q"})
    browser.find_element(By.ID, "compute").click()
    wait_for(lambda: text_of(browser, "err-damage"), 30, "the damage field's message")
    assert "2q" in text_of(browser, "err-damage")


def test_tables_page_shows_a_heatmap_with_exact_hover_values(browser, live_server, screenshots):
    import json

    from selenium.webdriver.common.by import By

    from exactdice.web.app import default_tables_dir

    name = "karbon/ability_challenge_w2_p1_fixed"
    open_page(browser, live_server, f"/tables?table={name}")
    stored = json.loads((default_tables_dir() / f"{name}.json").read_text())["tables"][0]
    cell = wait_for(lambda: browser.find_elements(By.ID, "cell-2-1"), 30, "the heatmap")[0]
    exact_text = stored["metrics"][0]["exact"][2][1]
    assert cell.get_attribute("title").endswith(exact_text)
    assert cell.text == exact_json(Fraction(exact_text), 1)["shown"] + "%"
    # the menu names tables by their titles, not their files
    chosen = browser.find_element(By.CSS_SELECTOR, "#f-table option:checked")
    assert chosen.get_attribute("value") == name and chosen.text.startswith(stored["title"])
    browser.save_screenshot(str(screenshots / "tables.png"))
    # printed: the table alone (no header, forms or grid maker), every column inside the page
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        for hidden in ("header", "#tables-form", "#grid-form", "#print-table"):
            assert not browser.find_element(By.CSS_SELECTOR, hidden).is_displayed(), hidden
        heatmap = browser.find_element(By.ID, "heatmap")
        assert heatmap.is_displayed()
        assert browser.execute_script("return arguments[0].scrollWidth <= document.body.clientWidth;", heatmap)
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})


def test_a_new_grid_is_made_with_progress(browser, live_server, screenshots):
    from selenium.webdriver.common.by import By

    from exactdice.karbon.tables import contest_cell

    open_page(browser, live_server, "/tables")
    grid_form = browser.find_element(By.ID, "grid-form")
    wait_for(lambda: grid_form.get_attribute("data-ready") == "yes", 30, "the grid form")
    for name, value in {"row_values": "1-3", "column_values": "1-3"}.items():
        element = browser.find_element(By.ID, f"f-{name}")
        element.clear()
        element.send_keys(value)
    browser.find_element(By.CSS_SELECTOR, "#grid-form details summary").click()
    consequence = browser.find_element(By.CSS_SELECTOR, "#grid-form #f-consequence")
    consequence.clear()
    consequence.send_keys("1")
    browser.find_element(By.ID, "grid-compute").click()
    cell = wait_for(lambda: browser.find_elements(By.ID, "grid-cell-2-1"), what="the new grid")[0]
    expected = contest_cell(ability=3, challenge=2, consequence=1, peril=0)["P(win)"]
    assert cell.text == exact_json(expected, 1)["shown"] + "%"
    assert cell.get_attribute("title").endswith(f"{expected.numerator}/{expected.denominator}")
    assert text_of(browser, "grid-caption") == (
        "Ability (A) (rows) x Challenge (C) (columns); Consequence (W) 1, Peril (P) 0, Fortune (F) 0, "
        "Fallout (K) 0, Pool 7d6,5d8,3d10, Reserve 5d6, Player policy fixed, Narrator policy fixed"
    )
    browser.find_element(By.CSS_SELECTOR, "#grid-form details summary").click()
    browser.execute_script("document.getElementById('grid-form').scrollIntoView()")
    browser.save_screenshot(str(screenshots / "tables-new-grid.png"))


def test_optimal_play_past_max_states_shows_certified_bounds(browser, live_server, screenshots):
    from selenium.webdriver.common.by import By

    from exactdice.answers import karbon_bounds
    from exactdice.core.exact import directed_decimal_text, fraction_text

    setup = {
        "ability": 1,
        "challenge": 1,
        "consequence": 1,
        "player_policy": "optimal",
        "max_states": 3000,
        "max_seconds": 60,
    }
    open_page(browser, live_server, "/karbon")
    fill(browser, setup)
    browser.find_element(By.ID, "compute").click()
    interval = wait_for(lambda: text_of(browser, "bounds-interval"), what="the bounds")
    # stopped by its state budget, in one process as a worker searches: the same bounds
    expected = karbon_bounds(setup, advice=True, workers=0)
    lower, upper = Fraction(expected.lower), Fraction(expected.upper)
    assert interval == (f"[{directed_decimal_text(lower, 4, up=False)}, {directed_decimal_text(upper, 4, up=True)}]")
    assert text_of(browser, "bounds-heading").startswith(
        "The exact game is too large (reached 3,000 states (limit 3,000) while exploring; raise the limit with "
        '"Max states")'
    )
    notes = [item.text for item in browser.find_elements(By.CSS_SELECTOR, "#bounds-notes li")]
    assert notes[0] == f'gap {float(upper - lower):.4f}: the search stopped because it reached "Max states" (raise it)'
    assert "(its exact value rounded down; the fraction under Exact fractions)" in notes[1]
    # the strategy's exact odds as bars; no expectations, no what-if strip of exact answers
    assert text_of(browser, "pct-win") == exact_json(expected.strategy_outcomes["win"])["shown"] + "%"
    assert not browser.find_element(By.ID, "expectations").is_displayed()
    assert text_of(browser, "whatif-status").startswith("(not with bounds")
    # the choices folded away under a count (the search stopped far from the answer)
    summary = text_of(browser, "advice-summary")
    certified = sum("(certified best)" in line for line in expected.advice)
    assert summary == f"{len(expected.advice) - 2} risk choices, {certified} of them certified best (click to show)"
    assert not browser.find_element(By.CSS_SELECTOR, "#advice li").is_displayed()
    browser.find_element(By.ID, "advice-summary").click()
    lines = [item.text for item in browser.find_elements(By.CSS_SELECTOR, "#advice li")]
    assert lines == expected.advice
    # bounds further apart than 0.2 (here 0.43: the search stops at 3,000 states) are flagged,
    # with how to get an answer
    assert upper - lower > Fraction(1, 5)
    wide = [note for note in notes if note.startswith("these bounds are still wide")]
    assert len(wide) == 1 and "explicit hands (Player hand, Narrator hand) with a small Pool and Reserve" in wide[0]
    browser.find_element(By.ID, "show-exact").click()
    exact_lines = [line.text for line in browser.find_elements(By.CSS_SELECTOR, "#exact-box .exact")]
    assert exact_lines[0] == f"lower bound = {fraction_text(lower)}"
    bar = browser.find_element(By.ID, "bounds-bar")
    assert bar.size["width"] > 0
    browser.save_screenshot(str(screenshots / "karbon-bounds.png"))


def test_optimal_player_advice_is_shown_in_words(browser, live_server, screenshots):
    from selenium.webdriver.common.by import By

    from exactdice.karbon import PlayerPolicy

    open_page(browser, live_server, "/karbon")
    setup = {
        "ability": 1,
        "challenge": 1,
        "consequence": 1,
        "fortune": 1,
        "pool": "d6,d8,d10",
        "reserve": "none",
        "player_policy": "optimal",
    }
    fill(browser, setup)
    browser.find_element(By.ID, "compute").click()
    wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "#advice li"), what="the advice")
    lines = [item.text for item in browser.find_elements(By.CSS_SELECTOR, "#advice li")]
    expected = contest_odds(
        ContestSetup(ability=1, challenge=1, consequence=1, fortune=1, pool={6: 1, 8: 1, 10: 1}, reserve={}),
        player=PlayerPolicy(kind="optimal"),
        all_states=True,
        draw_values=True,
    )
    from exactdice.karbon.solve import explain_first_round

    assert lines == explain_first_round(expected)
    assert text_of(browser, "pct-win") == exact_json(expected.win)["shown"] + "%"
    browser.save_screenshot(str(screenshots / "karbon-optimal.png"))


def test_a_new_submit_hides_the_last_answer_and_what_if_skips_impossible_values(browser, live_server):
    from selenium.webdriver.common.by import By

    open_page(browser, live_server, "/karbon")
    fill(browser, dict(MAIN_CONTEST, ability=2, peril=0))
    fill(browser, {"pool": "4d8", "max_states": 1000})  # 600 states; Consequence +1 has 1,550
    browser.find_element(By.ID, "compute").click()
    wait_for(lambda: text_of(browser, "whatif-note"), what="the what-if strip")
    # no Peril -1 (it starts at 0); Challenge +1 the pool cannot supply; Consequence +1 past Max states
    assert [x for x, _ in plotted(browser, "whatif-peril")[0]] == [0, 1]
    assert [x for x, _ in plotted(browser, "whatif-challenge")[0]] == [1, 2]
    assert [x for x, _ in plotted(browser, "whatif-consequence")[0]] == [1, 2]
    note = text_of(browser, "whatif-note")
    assert "Challenge 3 (+1): challenge: the pool (2d8) cannot supply 3 dice for the narrator's draw" in note
    assert 'Consequence W 3 (+1): its exact game passes 1,000 states (raise "Max states")' in note
    # a long solve: the answer above is not left beside the new inputs, nor after Cancel
    before = len(long_solves(live_server))
    fill(browser, dict(LONG_CONTEST, pool="7d6,5d8,3d10", max_states=3_000_000))
    browser.find_element(By.ID, "compute").click()
    assert not browser.find_element(By.ID, "answer").is_displayed()
    browser.find_element(By.ID, "cancel").click()
    wait_for(lambda: text_of(browser, "status") == "cancelled", what="the cancel")
    assert not browser.find_element(By.ID, "answer").is_displayed()
    # and Cancel stopped the long solve itself, not a what-if job of the answer before
    # (their progress once shared one variable: the long solve ran on, holding a worker)
    # (and a Cancel before the job's id reached the page stopped it too: it once ran on)
    wait_for(lambda: len(long_solves(live_server)) > before, 10, "the long solve to reach the server")
    wait_for(lambda: all(job.finished for job in long_solves(live_server)), 10, "the long solve to stop")
    jobs = live_server.app.state.jobs
    wait_for(lambda: not [job for job in jobs.running() if job.status == "running"], 10, "every job to stop")


def test_cancel_before_the_job_id_arrives_still_stops_the_job(browser, live_server):
    from selenium.webdriver.common.by import By

    before = len(long_solves(live_server))
    open_page(browser, live_server, "/karbon")
    fill(browser, LONG_CONTEST)
    hold_replies(browser, "/api/karbon/odds")  # the job's id reaches the page only after Cancel
    browser.find_element(By.ID, "compute").click()
    wait_for(lambda: len(long_solves(live_server)) > before, 10, "the long solve to reach the server")
    browser.find_element(By.ID, "cancel").click()
    assert text_of(browser, "status") == "cancelled"
    assert [job.finished for job in long_solves(live_server)[before:]] == [False]  # nobody has its id yet
    release_replies(browser)
    wait_for(lambda: all(job.finished for job in long_solves(live_server)), 10, "the long solve to be cancelled")
    assert [job.status for job in long_solves(live_server)[before:]] == ["cancelled"]
    assert text_of(browser, "status") == "cancelled" and not browser.find_element(By.ID, "answer").is_displayed()


def test_leaving_the_page_stops_its_long_solve(browser, live_server):
    from selenium.webdriver.common.by import By

    before = len(long_solves(live_server))
    open_page(browser, live_server, "/karbon")
    fill(browser, LONG_CONTEST)
    browser.find_element(By.ID, "compute").click()
    wait_for(
        lambda: len(long_solves(live_server)) > before and long_solves(live_server)[-1].status == "running",
        10,
        "the long solve to run",
    )
    open_page(browser, live_server, "/dist")  # nobody is left to read its answer
    wait_for(lambda: long_solves(live_server)[-1].finished, 10, "the long solve to stop")
    assert long_solves(live_server)[-1].status == "cancelled"


def test_every_page_s_cancel_stops_its_job_before_its_id_arrives(browser, live_server):
    """The tables, validate and systems pages share one way to run a job (`exactdice.runJob`)."""
    from selenium.webdriver.common.by import By

    jobs = live_server.app.state.jobs

    def grids():
        with jobs._lock:
            return [job for job in jobs._jobs.values() if job.task == "karbon_grid"]

    before = len(grids())
    open_page(browser, live_server, "/tables")
    grid_form = browser.find_element(By.ID, "grid-form")
    wait_for(lambda: grid_form.get_attribute("data-ready") == "yes", 30, "the grid form")
    browser.find_element(By.CSS_SELECTOR, "#grid-form details summary").click()
    for name, value in {"row_values": "1-5", "column_values": "1-5", "consequence": "5", "peril": "2"}.items():
        element = browser.find_element(By.CSS_SELECTOR, f"#grid-form #f-{name}")
        element.clear()
        element.send_keys(value)
    hold_replies(browser, "/api/karbon/grid")
    browser.find_element(By.ID, "grid-compute").click()
    wait_for(lambda: len(grids()) > before, 10, "the grid's job to reach the server")
    browser.find_element(By.ID, "cancel").click()
    assert text_of(browser, "status") == "cancelled" and not browser.find_element(By.ID, "cancel").is_displayed()
    assert not grids()[-1].finished  # nobody has its id yet
    release_replies(browser)
    wait_for(lambda: grids()[-1].finished, 10, "the grid's job to be cancelled")
    assert grids()[-1].status == "cancelled"
    assert text_of(browser, "status") == "cancelled"
    assert not browser.find_element(By.ID, "grid-answer").is_displayed()
    # the systems page (quick jobs: its job may end first): the page says cancelled, shows no answer
    form = open_page(browser, live_server, "/systems")
    wait_for(lambda: browser.find_elements(By.ID, "outcome-success"), 30, "the first answer")
    hold_replies(browser, "/api/exact/")
    fill(browser, {"difficulty": 7})
    browser.find_element(By.ID, "compute").click()
    browser.find_element(By.ID, "cancel").click()
    release_replies(browser)
    wait_for(lambda: browser.execute_script("return window.heldReplies.length === 0"), 10, "the reply")
    assert text_of(browser, "status") == "cancelled" and not browser.find_element(By.ID, "answer").is_displayed()
    assert form.get_attribute("data-ready") == "yes"


def test_bounds_too_far_apart_are_hatched_not_shaded(browser, live_server):
    import json
    import sys

    from selenium.webdriver.common.by import By

    from exactdice.web.app import default_tables_dir

    name = "karbon/ability_challenge_w1_p1_optimal"  # 10 of its 25 cells are more than 0.2 apart
    stored = json.loads((default_tables_dir() / f"{name}.json").read_text())["tables"][0]["metrics"][0]["exact"]
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # an exact lower bound may have tens of thousands of digits
    try:
        wide = [[Fraction(cell["upper"]) - Fraction(cell["lower"]) > Fraction(1, 5) for cell in row] for row in stored]
    finally:
        sys.set_int_max_str_digits(limit)
    open_page(browser, live_server, f"/tables?table={name}")
    wait_for(lambda: browser.find_elements(By.ID, "cell-0-0"), 30, "the heatmap")
    hatched = [
        [
            ("repeating-linear-gradient" in browser.find_element(By.ID, f"cell-{r}-{c}").get_attribute("style"))
            for c in range(len(row))
        ]
        for r, row in enumerate(stored)
    ]
    assert hatched == wide and 0 < sum(map(sum, wide)) < 25
    assert "Hatched: certified bounds more than 0.2 apart, not shaded." in text_of(browser, "legend")


def test_a_server_open_to_the_network_asks_the_page_for_its_token_once(browser):
    """exactdice serve --allow-remote: the printed link carries the token; without it the page
    asks once, keeps it, and every request of the page (fields, answers) goes through."""
    import os
    import socket
    import subprocess
    import sys

    from selenium.webdriver.common.by import By

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "exactdice.cli.main",
            "serve",
            "--port",
            str(port),
            "--no-cache",
            "--allow-remote",
            "localhost",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "EXACTDICE_SERVE_TOKEN": "t0ken"},
    )

    class Here:
        url = f"http://127.0.0.1:{port}"

    try:

        def up():
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return True
            except OSError:
                return False

        wait_for(up, 60, "the server")
        browser.get(Here.url + "/static/favicon.svg")  # this origin, no request to the API yet
        browser.execute_script("localStorage.clear()")
        browser.get(Here.url + "/dist")
        wait_for(lambda: _alert(browser), 30, "the token prompt")
        alert = browser.switch_to.alert
        alert.send_keys("t0ken")
        alert.accept()
        form = browser.find_element(By.TAG_NAME, "form")
        wait_for(lambda: form.get_attribute("data-ready") == "yes", 30, "the form")
        fill(browser, {"expression": "2d6"})
        browser.find_element(By.ID, "compute").click()
        wait_for(lambda: len(browser.find_elements(By.CSS_SELECTOR, "#outcomes tbody tr")) == 11, 30, "the table")
        browser.get(Here.url + "/static/favicon.svg")  # the printed link carries it too
        browser.execute_script("localStorage.clear()")
        open_page(browser, Here, "/dist#token=t0ken")
        assert browser.execute_script("return localStorage.getItem('exactdice-token')") == "t0ken"
        assert "token" not in browser.current_url
    finally:
        browser.execute_script("localStorage.clear()")
        process.terminate()
        process.wait(30)


def _alert(browser):
    try:
        return browser.switch_to.alert
    except Exception:
        return None
