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
        srv = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning"))
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


def test_a_whole_standard_game_with_advice(server: str, browser: webdriver.Chrome, downloads: Path,
                                           cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two players under `standard`: refusals, undo, a reload, advice (progress, then the answer of advise --json)."""
    monkeypatch.setenv("CINQMILLE_CACHE", str(cache_dir))
    d = browser
    d.get(server + "/")
    d.execute_script("localStorage.clear()")
    d.refresh()
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
    d.find_element(By.ID, "advise").click()
    seen: list[str] = []

    def answered(d: webdriver.Chrome) -> bool:
        if d.find_element(By.ID, "progress").is_displayed():
            seen.append(text(d, "advice-note"))
        return bool(d.find_elements(By.CSS_SELECTOR, "#options tr.best")) or text(d, "advice-note").startswith(
            ("no ", "give", "roll", "the "))

    wait(d, answered, timeout=240)  # solved on first use: progress, then the answer
    assert text(d, "advice-note") == ""
    assert any(note.startswith("Solving 'standard'") for note in seen), seen
    best = d.find_element(By.CSS_SELECTOR, "#options tr.best")
    cli = advise_json("--me", "1000", "--opp", "800", "--turn", "100", "--roll", "1533")["best"]
    assert best.get_attribute("data-move") == "keep " + "".join(map(str, cli["keep"]))
    assert best.get_attribute("data-then") == cli["then"]
    assert float(best.get_attribute("data-win") or "nan") == cli["win"]
    shoot(d, "serve-phone.png", 390, True)
    shoot(d, "serve-laptop.png", 1280, False)

    enter_bank(d, 3000)
    settle(d, 4)
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
    d.get(server + "/")
    d.execute_script("localStorage.clear()")
    d.refresh()
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
