"""The score sheet page in a real browser: headless Chromium driven by Selenium through whole games.

Skipped, with the reason, where Chromium, chromedriver or Selenium is missing
(`.ci/run` installs them). With CINQMILLE_SCREENSHOTS=1 the test also writes
docs/figures/serve-phone.png and serve-laptop.png.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("starlette", reason="the web extra is not installed: pip install 'cinqmille[web]'")
pytest.importorskip("uvicorn", reason="the web extra is not installed: pip install 'cinqmille[web]'")
pytest.importorskip("selenium", reason="Selenium is not installed: pip install 'cinqmille[browser]'")

import uvicorn  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import WebDriverException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from cinqmille.cli import main  # noqa: E402
from cinqmille.engine.replay import replay_sheet_log  # noqa: E402
from cinqmille.web.app import create_app  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")
FIGURES = Path(__file__).resolve().parent.parent / "docs" / "figures"
AXE = Path(__file__).resolve().parent / "vendor" / "axe.min.js"
#: The phone of the issue: 390 CSS pixels wide.
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}

if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
    pytest.skip("no headless browser: apt-get install chromium chromium-driver", allow_module_level=True)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache of this module's own, so that the page always meets a ruleset being solved (about 5 s)."""
    return tmp_path_factory.mktemp("browser-cache")


@pytest.fixture(scope="module")
def server(cache_dir: Path) -> Iterator[str]:
    """The app served by uvicorn on a free local port (in a thread), its tables in the module's cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CINQMILLE_CACHE", str(cache_dir))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        app = create_app(share_url=f"http://127.0.0.1:{port}/")  # as `serve --lan` makes it, on loopback
        srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=srv.run, daemon=True)
        thread.start()
        for _ in range(200):
            if srv.started:
                break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
        srv.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def downloads() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as d:
        yield Path(d)


@pytest.fixture(scope="module")
def browser(downloads: Path) -> Iterator[webdriver.Chrome]:
    """Headless Chromium with a fresh profile (so localStorage starts empty)."""
    profile = tempfile.mkdtemp(prefix="cinqmille-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument("--window-size=412,915")
    options.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                              "download.prompt_for_download": False})
    try:
        driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    except WebDriverException as exc:
        shutil.rmtree(profile, ignore_errors=True)
        pytest.skip(f"headless Chromium does not start here: {str(exc).splitlines()[0]}")
    driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def wait(driver: webdriver.Chrome, condition, timeout: float = 10):  # type: ignore[no-untyped-def]
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(condition)


def text(driver: webdriver.Chrome, element_id: str) -> str:
    return driver.find_element(By.ID, element_id).text


def wait_text(driver: webdriver.Chrome, element_id: str, expected: str, timeout: float = 10) -> None:
    wait(driver, lambda d: expected in text(d, element_id), timeout)


def scores(driver: webdriver.Chrome) -> list[str]:
    return [li.find_element(By.CLASS_NAME, "score").text for li in driver.find_elements(By.CSS_SELECTOR, "#scores li")]


def new_game(driver: webdriver.Chrome, rules: str, names: list[str]) -> None:
    wait(driver, lambda d: d.find_element(By.ID, "setup").is_displayed())
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#rules option")) > 0)
    Select(driver.find_element(By.ID, "rules")).select_by_value(rules)
    for _ in range(len(names) - len(driver.find_elements(By.CSS_SELECTOR, "#names input"))):
        driver.find_element(By.ID, "add-player").click()
    for i, name in enumerate(names):
        field = driver.find_element(By.ID, f"name-{i + 1}")
        field.clear()
        field.send_keys(name)
    driver.find_element(By.ID, "start").click()
    wait(driver, lambda d: d.find_element(By.ID, "game").is_displayed())


def enter_bank(driver: webdriver.Chrome, points: int, *, dice: int | None = None, taken: bool = False) -> None:
    """Type the points and press Enter (the keyboard path), with the take-over fields when given."""
    if dice is not None:
        driver.find_element(By.ID, "bank-dice").send_keys(str(dice))
    if taken:
        driver.find_element(By.ID, "taken").click()
    field = driver.find_element(By.ID, "points")
    field.clear()
    field.send_keys(str(points) + Keys.ENTER)


def as_phone(driver: webdriver.Chrome, on: bool = True) -> None:
    """Emulate the 390-pixel phone (or go back to the window's own size)."""
    if on:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    else:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def in_view(driver: webdriver.Chrome, element_id: str) -> bool:
    """Whether the top of the element is inside the viewport."""
    return bool(driver.execute_script(
        "const r = document.getElementById(arguments[0]).getBoundingClientRect();"
        "return r.top >= 0 && r.top < window.innerHeight - 40;", element_id))


def axe_violations(driver: webdriver.Chrome) -> list[str]:
    """The serious and critical violations axe-core finds on the page as it stands (tests/vendor/axe.min.js)."""
    if not driver.execute_script("return typeof window.axe !== 'undefined'"):
        driver.execute_script(AXE.read_text(encoding="utf-8"))
    found = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then((r) => done(r.violations.map((v) => "
        "({id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3)}))))"
        ".catch((e) => done([{id: 'axe failed: ' + e, impact: 'critical', nodes: []}]));")
    return [f"{v['id']} ({v['impact']}): {v['nodes']}" for v in found if v["impact"] in ("serious", "critical")]


def wait_answer(driver: webdriver.Chrome, timeout: float = 240) -> list[str]:
    """Wait for the advice (through a solve's progress); the progress notes seen on the way."""
    seen: list[str] = []

    def answered(d: webdriver.Chrome) -> bool:
        if d.find_element(By.ID, "progress").is_displayed():
            seen.append(text(d, "advice-note"))
        return bool(d.find_elements(By.CSS_SELECTOR, "#options tr.best")) or text(d, "advice-note").startswith(
            ("no ", "give", "roll", "the "))

    wait(driver, answered, timeout=timeout)
    return seen


def settle(driver: webdriver.Chrome, turns: int) -> None:
    wait_text(driver, "turns-box", f"Turns ({turns})")


def advise_json(*args: str) -> dict:
    out = CliRunner().invoke(main, ["advise", "--json", *args])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def shoot(driver: webdriver.Chrome, name: str, width: int, mobile: bool) -> None:
    """Save a screenshot of the whole page `width` pixels wide (only when CINQMILLE_SCREENSHOTS is set)."""
    if not os.environ.get("CINQMILLE_SCREENSHOTS"):
        return
    metrics = {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": mobile}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    assert driver.execute_script("return document.documentElement.scrollWidth") <= width  # one column, no overflow
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {**metrics, "height": min(int(height), 2400)})
    driver.execute_script("window.scrollTo(0, 0)")
    time.sleep(0.2)
    FIGURES.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(FIGURES / name))
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def fresh_page(d: webdriver.Chrome, server: str) -> None:
    """The page as a new visitor sees it: no game kept in localStorage."""
    d.get(server + "/")
    d.execute_script("localStorage.clear()")
    d.refresh()


def test_a_whole_standard_game_with_advice(server: str, browser: webdriver.Chrome, downloads: Path,
                                           cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two players under `standard`: refusals, undo, a reload, advice (progress, then the answer of advise --json)
    brought into view on a 390-pixel phone, the next question of the turn started from the advised keep, and a
    bank-or-roll question whose rows say what they bank and roll."""
    monkeypatch.setenv("CINQMILLE_CACHE", str(cache_dir))
    d = browser
    fresh_page(d, server)
    wait(d, lambda d: "5 dice, first to 5000" in text(d, "rules-info"))  # the preset's description, in words
    new_game(d, "standard", ["Ann", "Bob"])
    assert text(d, "status").startswith("Ann to play")
    enter_bank(d, 800)
    settle(d, 1)
    enter_bank(d, 700)
    wait_text(d, "refusal", "Bob has not opened: the first bank must be at least 750")
    enter_bank(d, 1000)
    settle(d, 2)
    d.find_element(By.ID, "bust").click()
    settle(d, 3)
    d.find_element(By.ID, "undo").click()
    settle(d, 2)
    d.find_element(By.ID, "bust").click()
    settle(d, 3)
    assert scores(d) == ["800", "1000"] and text(d, "status").startswith("Bob to play")

    d.refresh()  # the game survives a reload (localStorage)
    settle(d, 3)
    assert scores(d) == ["800", "1000"] and text(d, "status").startswith("Bob to play")

    # advice for Bob (1000) against Ann (800): 100 set aside, a roll typed and tapped
    d.find_element(By.ID, "turn").clear()
    d.find_element(By.ID, "turn").send_keys("100")
    d.find_element(By.ID, "roll").send_keys("15")
    for face in (3, 3):
        d.find_element(By.ID, f"face-{face}").click()
    assert d.find_element(By.ID, "roll").get_attribute("value") == "1533"
    as_phone(d)
    d.execute_script("window.scrollTo(0, 0)")
    assert in_view(d, "advice-out")  # on the phone the answer's place is under the question, above the fold
    d.find_element(By.ID, "advise").click()
    seen = wait_answer(d)  # solved on first use: progress, then the answer
    assert in_view(d, "advice-out"), d.execute_script(
        "return [document.getElementById('advice-out').getBoundingClientRect().top, window.innerHeight, window.scrollY]")
    as_phone(d, False)
    assert text(d, "advice-note") == ""
    # the table was solved on first use: the page showed the solve's progress, or the solve the game's setup
    # started (`POST /api/sheet`) was already done when the question came
    from urllib.request import urlopen

    from cinqmille.rules import load_rules
    from cinqmille.web.tables import table_key

    with urlopen(f"{server}/api/progress?job={table_key(load_rules('standard'), 2)}", timeout=10) as job:
        started = json.loads(job.read())
    assert any(note.startswith("Solving 'standard'") for note in seen) or started["status"] == "ready", seen
    best = d.find_element(By.CSS_SELECTOR, "#options tr.best")
    cli = advise_json("--me", "1000", "--opp", "800", "--turn", "100", "--roll", "1533")["best"]
    assert best.get_attribute("data-move") == "keep " + "".join(map(str, cli["keep"]))
    assert best.get_attribute("data-then") == cli["then"]
    assert float(best.get_attribute("data-win") or "nan") == cli["win"]
    assert "estimate" not in text(d, "advice-out")  # two players: an exact figure
    shoot(d, "serve-phone.png", 390, True)
    shoot(d, "serve-laptop.png", 1280, False)
    if cli["then"] == "roll":  # the next question of the turn starts from the keep
        assert d.find_element(By.ID, "turn").get_attribute("value") == str(cli["turn"])
        assert d.find_element(By.ID, "dice").get_attribute("value") == str(cli["dice"])
        assert d.find_element(By.ID, "roll").get_attribute("value") == ""
    d.refresh()  # ... and survives a reload within the turn
    settle(d, 3)
    assert d.find_element(By.ID, "turn").get_attribute("value") == str(cli["turn"] if cli["then"] == "roll" else 100)

    for field, value in (("turn", "400"), ("dice", "2"), ("roll", "")):
        d.find_element(By.ID, field).clear()
        if value:
            d.find_element(By.ID, field).send_keys(value)
    d.find_element(By.ID, "advise").click()
    wait(d, lambda d: "bank 400" in text(d, "advice-out") or text(d, "advice-note") not in ("", "…"))
    assert text(d, "advice-note") == "", text(d, "advice-note")
    rows = [td.text for td in d.find_elements(By.CSS_SELECTOR, "#options tbody td:first-child")]
    cli = advise_json("--me", "1000", "--opp", "800", "--turn", "400", "--dice", "2")
    expected = {"bank": "bank 400", "roll": "roll 2 dice"}
    assert rows == [expected[o["action"]] for o in cli["options"]]

    enter_bank(d, 3000)
    settle(d, 4)
    assert d.find_element(By.ID, "turn").get_attribute("value") == "0"  # a new turn forgets the last one's dice
    enter_bank(d, 500)
    settle(d, 5)
    enter_bank(d, 1000)
    wait_text(d, "winner", "Bob wins!")
    assert scores(d) == ["1300", "5000"]
    assert not d.find_element(By.ID, "bank").is_enabled()

    d.find_element(By.ID, "download").click()
    path = downloads / "cinqmille-sheet.json"
    wait(d, lambda _: path.exists() and path.stat().st_size > 0)
    state = replay_sheet_log(json.loads(path.read_text()))
    assert list(state.scores) == [1300, 5000] and state.winner == 1


def test_a_short_game_under_sheet(server: str, browser: webdriver.Chrome) -> None:
    """Under `sheet`: a take-over, a deadly tie, crosses, an overshoot refused, the last round and the winner."""
    d = browser
    fresh_page(d, server)
    new_game(d, "sheet", ["Ann", "Bob"])
    assert d.find_element(By.ID, "taken").is_displayed()
    enter_bank(d, 500, dice=2)
    settle(d, 1)
    enter_bank(d, 600, dice=3)
    settle(d, 2)
    assert "may take over 600" in text(d, "status")
    enter_bank(d, 750, taken=True)
    settle(d, 3)
    assert scores(d) == ["1250", "600"]
    enter_bank(d, 650)  # a deadly tie: Bob's 1250 strikes out Ann's 1250, she falls back to 500
    settle(d, 4)
    assert scores(d) == ["500", "1250"]
    assert "1250" in d.find_element(By.CSS_SELECTOR, "#player-0 .history s").text
    d.find_element(By.ID, "bust").click()
    settle(d, 5)
    assert "✗" in text(d, "player-0")
    d.find_element(By.ID, "bust").click()
    settle(d, 6)
    enter_bank(d, 4600)
    wait_text(d, "refusal", "passes the goal")
    enter_bank(d, 4500)
    settle(d, 7)
    assert "last round" in text(d, "status")
    d.find_element(By.ID, "bust").click()  # Bob's second cross strikes his 1250 out
    wait_text(d, "winner", "Ann wins!")
    assert scores(d) == ["5000", "600"]


def test_the_rules_in_force_are_on_the_sheet_in_the_words_of_the_server(server: str, browser: webdriver.Chrome) -> None:
    """Under `sheet`: the name, the key rules as `cinqmille.web.card.key_rules` words them, and the whole ruleset
    as `rules show` prints it on demand; each player's last five totals, who is to play, the round and the leader."""
    from cinqmille.rules import load_rules, to_toml
    from cinqmille.web.card import key_rules

    d = browser
    fresh_page(d, server)
    new_game(d, "sheet", ["Ann", "Bob", "Cy"])
    assert text(d, "rules-name") == "sheet"
    shown = [li.text for li in d.find_elements(By.CSS_SELECTOR, "#key-rules li")]
    assert shown == [k["text"] for k in key_rules(load_rules("sheet"))]
    assert not d.find_element(By.ID, "rules-toml").is_displayed()
    d.find_element(By.CSS_SELECTOR, "#all-rules summary").click()
    assert d.find_element(By.ID, "rules-toml").text.strip() == to_toml(load_rules("sheet")).strip()
    assert "to play" in text(d, "player-0") and "to play" not in text(d, "player-1")
    turns = 0
    for points in (500, 50, 50, 50, 50, 50):  # six banks of Ann (six totals), two busts after each
        enter_bank(d, points)
        d.find_element(By.ID, "bust").click()
        d.find_element(By.ID, "bust").click()
        turns += 3
        settle(d, turns)
    totals = d.find_element(By.CSS_SELECTOR, "#player-0 .history").text.split()
    assert totals == ["…", "550", "600", "650", "700", "750"]
    assert text(d, "progress-line").startswith("Round 7 · 18 turns · Ann leads with 750 of 5000")


def test_an_instant_win_asks_first(server: str, browser: webdriver.Chrome) -> None:
    """'Five 1s' does not end the game in one tap: it asks, Cancel keeps the game going, Yes ends it."""
    d = browser
    fresh_page(d, server)
    new_game(d, "standard", ["Ann", "Bob"])
    d.find_element(By.ID, "win").click()
    assert d.find_element(By.ID, "win-confirm").is_displayed() and "Ann" in text(d, "win-question")
    d.find_element(By.ID, "win-no").click()
    assert not d.find_element(By.ID, "win-confirm").is_displayed()
    assert text(d, "status").startswith("Ann to play") and not d.find_element(By.ID, "winner").is_displayed()
    d.find_element(By.ID, "win").click()
    d.find_element(By.ID, "win-yes").click()
    wait_text(d, "winner", "Ann wins!")


def test_six_players_are_told_the_figure_is_an_estimate(server: str, browser: webdriver.Chrome,
                                                        tiny_rules_file: Path) -> None:
    """At six players (the five-player table's decisions) the advice says, in words, that its figures are
    estimated by playing the six-player game out, with their margin, the solver's text on demand."""
    d = browser
    fresh_page(d, server)
    wait(d, lambda d: d.find_element(By.ID, "setup").is_displayed())
    d.find_element(By.ID, "rules-file").send_keys(str(tiny_rules_file))
    wait_text(d, "rules-info", "Using the rules file 'tiny'")
    for _ in range(4):
        d.find_element(By.ID, "add-player").click()
    d.find_element(By.ID, "start").click()
    wait(d, lambda d: d.find_element(By.ID, "game").is_displayed())
    assert text(d, "rules-name") == "tiny"
    d.find_element(By.ID, "roll").send_keys("15234")
    d.find_element(By.ID, "advise").click()
    wait_answer(d)
    estimate = text(d, "estimate")
    assert "Estimated" in estimate and "six players" in estimate and "points either way" in estimate
    why = d.find_element(By.ID, "estimate-why")
    assert not why.find_element(By.TAG_NAME, "li").is_displayed()
    why.find_element(By.TAG_NAME, "summary").click()
    assert "read from the 5-player table" in why.find_element(By.TAG_NAME, "li").text
    assert all(c.text.startswith("≈") for c in d.find_elements(By.CSS_SELECTOR, "#options tbody td:nth-child(3)"))  # keep, then, win


def test_the_page_passes_an_accessibility_check(server: str, browser: webdriver.Chrome) -> None:
    """axe-core finds no serious or critical violation on the setup, the sheet with an answer, the rules card
    opened and the instant-win question, at phone and laptop widths; Tab reaches every control of the sheet."""
    d = browser
    fresh_page(d, server)
    wait(d, lambda d: "5 dice" in text(d, "rules-info"))
    found = axe_violations(d)
    new_game(d, "standard", ["Ann", "Bob"])
    d.find_element(By.ID, "roll").send_keys("15332")
    d.find_element(By.ID, "advise").click()
    wait_answer(d)
    d.find_element(By.CSS_SELECTOR, "#all-rules summary").click()
    d.find_element(By.ID, "win").click()
    wait(d, lambda d: d.find_element(By.ID, "join").is_displayed())
    found += axe_violations(d)
    as_phone(d)
    found += axe_violations(d)
    as_phone(d, False)
    assert found == [], "\n".join(found)
    d.find_element(By.ID, "win-no").click()
    reached = set()
    d.execute_script("document.activeElement.blur(); window.scrollTo(0, 0)")
    body = d.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    for _ in range(60):
        reached.add(d.switch_to.active_element.get_attribute("id"))
        d.switch_to.active_element.send_keys(Keys.TAB)
    controls = {"points", "bank", "bust", "undo", "win", "download", "new-game", "turn", "dice", "roll",
                "clear-roll", "face-1", "face-6", "advise", "join-url"}
    assert controls <= reached, controls - reached


def fully_visible(driver: webdriver.Chrome, element_id: str) -> bool:
    """Whether the whole element is inside the viewport (top and bottom edges)."""
    return bool(driver.execute_script(
        "const r = document.getElementById(arguments[0]).getBoundingClientRect();"
        "return r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0;", element_id))


#: The gap, in pixels, between the text of each cell of the options table and the next one (negative: they touch).
CELL_GAPS = """
const gaps = [];
for (const row of document.querySelectorAll('#options tr')) {
  const boxes = Array.from(row.cells).map((c) => { const r = document.createRange(); r.selectNodeContents(c);
    const rects = Array.from(r.getClientRects()); return [Math.min(...rects.map((x) => x.left)),
    Math.max(...rects.map((x) => x.right))]; });
  for (let i = 1; i < boxes.length; i++) gaps.push(boxes[i][0] - boxes[i - 1][1]);
}
return gaps;
"""


def test_asking_and_banking_need_no_scrolling_on_a_phone(server: str, browser: webdriver.Chrome) -> None:
    """At 390 px: the bank, bust and advice controls are above the fold with four players; an answer's sentence
    and its bank button stay inside the screen, the options table fits with a gap between its cells, and the
    bank button enters the advised bank on the sheet in one tap."""
    d = browser
    fresh_page(d, server)
    as_phone(d)
    try:
        new_game(d, "standard", ["Ann", "Bob", "Cy", "Dee"])
        d.execute_script("window.scrollTo(0, 0)")
        for control in ("points", "bank", "bust", "turn", "dice", "roll", "advise", "face-6"):
            assert fully_visible(d, control), control
        fresh_page(d, server)
        new_game(d, "standard", ["Ann", "Bob"])
        d.execute_script("window.scrollTo(0, 0)")
        d.find_element(By.ID, "roll").send_keys("15332")
        d.find_element(By.ID, "advise").click()
        wait_answer(d)
        assert fully_visible(d, "sentence") and fully_visible(d, "advise")
        assert d.execute_script("return document.documentElement.scrollWidth") <= 390
        table = d.find_element(By.ID, "options")
        assert d.execute_script("return arguments[0].scrollWidth <= arguments[0].parentElement.clientWidth", table)
        gaps = d.execute_script(CELL_GAPS)
        assert gaps and min(gaps) >= 4, gaps  # "100 roll 4 dice ≈ 8.12%" no longer runs together
        assert not d.find_elements(By.ID, "bank-advised")  # Ann has not opened: a keep of 100 cannot bank

        for field, value in (("turn", "800"), ("dice", "2"), ("roll", "")):
            d.find_element(By.ID, field).clear()
            if value:
                d.find_element(By.ID, field).send_keys(value)
        d.find_element(By.ID, "advise").click()
        wait(d, lambda d: d.find_elements(By.ID, "bank-advised"))
        assert fully_visible(d, "sentence") and fully_visible(d, "bank-advised")
        assert min(d.execute_script(CELL_GAPS)) >= 4
        button = d.find_element(By.ID, "bank-advised")
        assert button.text == "Bank 800 for Ann"
        button.click()
        settle(d, 1)
        assert scores(d) == ["800", "0"] and text(d, "status").startswith("Bob to play")
        assert text(d, "advice-out") == ""  # the answer was the last turn's
    finally:
        as_phone(d, False)


def test_the_page_reviews_the_game_from_the_questions_asked(server: str, browser: webdriver.Chrome, downloads: Path,
                                                          tiny_rules_file: Path) -> None:
    """The questions asked of the advice are kept with the game; once it is over the page shows its review (the
    chance lost by each player, the costliest decisions in words), the very review of `cinqmille review` on the
    downloaded log, which carries the questions."""
    from cinqmille.app.review import review_log

    d = browser
    fresh_page(d, server)
    wait(d, lambda d: d.find_element(By.ID, "setup").is_displayed())
    d.find_element(By.ID, "rules-file").send_keys(str(tiny_rules_file))
    wait_text(d, "rules-info", "Using the rules file 'tiny'")
    d.find_element(By.ID, "start").click()
    wait(d, lambda d: d.find_element(By.ID, "game").is_displayed())

    def ask(turn: str, dice: str, roll: str) -> None:
        for field, value in (("turn", turn), ("dice", dice), ("roll", roll)):
            d.find_element(By.ID, field).clear()
            if value:
                d.find_element(By.ID, field).send_keys(value)
        d.find_element(By.ID, "advise").click()
        wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#options tr.best") and roll in json.dumps(
            d.execute_script("return JSON.parse(localStorage.getItem('cinqmille.sheet.v1')).questions")),
             timeout=240)  # the first answer may solve the table and compile the kernel (a fresh machine)

    ask("0", "", "15332")  # Player 1 keeps the 1 and rolls 4 dice ...
    ask("100", "", "1124")  # ... keeps 1-1 and banks 300
    enter_bank(d, 300)
    settle(d, 1)
    ask("200", "2", "")  # Player 2, 200 set aside and 2 dice: rolls on, and busts
    d.find_element(By.ID, "bust").click()
    settle(d, 2)
    assert not d.find_element(By.ID, "review").is_displayed()
    enter_bank(d, 200)
    wait_text(d, "winner", "wins!")
    wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#review-lost tbody tr"), timeout=60)
    rows = [r.text for r in d.find_elements(By.CSS_SELECTOR, "#review-lost tbody tr")]
    path = downloads / "cinqmille-sheet.json"
    path.unlink(missing_ok=True)  # an earlier test's download
    d.find_element(By.ID, "download").click()
    wait(d, lambda _: path.exists() and path.stat().st_size > 0 and "questions" in path.read_text())
    review = review_log(json.loads(path.read_text()))
    assert len(review.decisions) >= 3
    assert rows == [f"{name}{' (won)' if review.winner == s else ''} {100 * review.lost[s]:.2f} "
                    f"{sum(1 for x in review.decisions if x.seat == s and x.counted > 0)} of "
                    f"{sum(1 for x in review.decisions if x.seat == s)}" for s, name in enumerate(review.players)]
    shown = [li.text for li in d.find_elements(By.CSS_SELECTOR, "#review-costliest li")]
    assert shown == [w[0].upper() + w[1:] for w in review.as_dict()["costliest_words"]]
    assert axe_violations(d) == []
    path.unlink()
