"""The notebook's "Play the agent" cell as a person finds it: JupyterLab on 127.0.0.1
with a tiny run, in headless Chromium, a whole game played by clicking.

Needs the Debian packages chromium and chromium-driver (.ci/run installs them) and
the Python package selenium (the dev extras); without them the test is skipped,
saying which is missing.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

import runs

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[dev]')")
if CHROMIUM is None or CHROMEDRIVER is None:
    pytest.skip("no headless Chromium here: apt-get install chromium chromium-driver (.ci/run does)",
                allow_module_level=True)

from selenium.common.exceptions import TimeoutException  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

START = "111111"  # column 1 full, X (the human) to move
END = re.compile(r"You win in (\d+) moves!|The agent wins in (\d+) moves\.|Draw: the board is full after (\d+) moves\.")


def notebookCells() -> dict[str, str]:
    """run.ipynb's cell that loads the libraries and its "Play the agent" cell."""
    cells = [cell.source for cell in nbformat.read(ROOT / "run.ipynb", as_version=4).cells
             if cell.cell_type == "code"]
    load = next(source for source in cells if "import funcs" in source)
    play = next(source for source in cells if "play.playInNotebook(" in source)
    return {"load": load, "play": play}


@pytest.fixture
def notebook(tmp_path, tiny_cfg):
    """A notebook in tmp_path: run.ipynb's library cell, the run folder (a tiny run),
    and run.ipynb's play cell starting from START."""
    run_folder = tmp_path / "run"
    runs.openRun(tiny_cfg.replace(RUN_FOLDER=str(run_folder), MCTS_SIMS=8), say=lambda _: None)
    cells = notebookCells()
    play = cells["play"].replace('START = ""', f'START = "{START}"')
    assert play != cells["play"], "the play cell no longer sets START"
    book = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(cells["load"]),
        nbformat.v4.new_code_cell(f"RUN_FOLDER = runs.runFolder(config.DEFAULT.replace(RUN_FOLDER={str(run_folder)!r}))\n"
                                  "run_cfg = runs.runConfig(RUN_FOLDER)"),
        nbformat.v4.new_code_cell(play)])
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    (tmp_path / "notebook").mkdir()
    nbformat.write(book, tmp_path / "notebook" / "play.ipynb")
    return tmp_path / "notebook" / "play.ipynb"


def freePort() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def jupyter(notebook, tmp_path):
    """JupyterLab serving the notebook's folder on 127.0.0.1; yields the notebook's URL."""
    port, token = freePort(), secrets.token_hex(16)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter-config"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    log = open(tmp_path / "jupyter.log", "w")
    server = subprocess.Popen([sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1",
                               f"--port={port}", f"--IdentityProvider.token={token}",
                               f"--ServerApp.root_dir={notebook.parent}", "--allow-root"], env=env, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("JupyterLab did not start: " + (tmp_path / "jupyter.log").read_text()[-2000:])
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/lab/tree/{notebook.name}?token={token}"
    finally:
        server.terminate()
        server.wait(30)
        log.close()


@pytest.fixture
def browser(tmp_path):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1400,1800", f"--user-data-dir={tmp_path / 'chromium'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
    yield driver
    driver.quit()


class Page:
    """What the page shows of the clickable board."""

    def __init__(self, driver):
        self.driver = driver

    def find(self, css):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def columns(self):
        return self.find("button.connect4-column")

    def marks(self, attribute: str = "data-disc") -> list:
        """`attribute` of every disc of the board, read at once (the board is redrawn
        as a whole after each move)."""
        return self.driver.execute_script(
            "return [...document.querySelectorAll('.connect4-board circle')].map(c => c.getAttribute(arguments[0]))",
            attribute)

    def discs(self) -> dict[str, int]:
        marks = self.marks()
        return {"X": marks.count("X"), "O": marks.count("O")}

    def stones(self) -> int:
        return sum(self.discs().values())

    def status(self) -> str:
        return self.driver.execute_script("return document.querySelector('.connect4-status').innerText")

    def ready(self) -> bool:
        """The agent is not thinking: the column buttons take clicks again."""
        buttons = self.columns()
        return bool(buttons) and all(button.is_enabled() for button in buttons) and "thinking" not in self.status()

    def waitUntil(self, condition, seconds=120, what="the page"):
        """Wait for `condition`; on a timeout, fail with what the notebook shows."""
        try:
            return WebDriverWait(self.driver, seconds, poll_frequency=0.2).until(lambda _: condition())
        except TimeoutException:
            shown = "\n".join(element.text for element in self.find(".jp-Notebook"))
            raise AssertionError(f"waited {seconds} s for {what}; the notebook shows:\n{shown[-3000:]}") from None


def runAllCells(driver):
    """JupyterLab's Run > Run All Cells, once the kernel it offers is accepted and idle."""
    wait = WebDriverWait(driver, 180, poll_frequency=0.5)

    def kernelIdle(d):
        for accept in d.find_elements(By.CSS_SELECTOR, ".jp-Dialog .jp-mod-accept"):
            accept.click()
        return (not d.find_elements(By.CSS_SELECTOR, ".jp-Dialog")
                and d.find_elements(By.CSS_SELECTOR, ".jp-Notebook-ExecutionIndicator[data-status='idle']"))
    for _ in range(2):  # the kernel reports idle once before it connects
        wait.until(kernelIdle)
        time.sleep(3)
    driver.find_element(By.XPATH, "//div[contains(@class,'lm-MenuBar-itemLabel') and text()='Run']").click()
    wait.until(lambda d: d.find_elements(By.XPATH, "//div[contains(@class,'lm-Menu-itemLabel') and "
                                                   "text()='Run All Cells']"))[0].click()
    wait.until(lambda d: re.search(r"\[(\*|\d+)\]", d.find_element(By.CSS_SELECTOR, ".jp-Notebook").text))


def test_a_whole_game_by_clicks_in_a_real_browser(jupyter, browser):
    page = Page(browser)
    browser.get(jupyter)
    runAllCells(browser)
    page.waitUntil(lambda: len(page.columns()) == 7 and page.stones() == len(START) and page.ready(), 60,
                   "the board of the play cell")

    # the library cell imported TensorFlow: no red blocks of its start-up chatter anywhere
    assert page.find("[data-mime-type='application/vnd.jupyter.stderr']") == []

    # each column button stands over its column of the board
    circles = page.find(".connect4-board circle")[:7]
    for button, circle in zip(page.columns(), circles):
        centre = button.rect["x"] + button.rect["width"] / 2
        assert abs(centre - (circle.rect["x"] + circle.rect["width"] / 2)) <= 2

    # a full column is refused, visibly again on a second click
    page.columns()[0].click()
    page.waitUntil(lambda: "Column 1 is full" in page.status(), 30, "the refusal")
    first = page.status()
    page.columns()[0].click()
    page.waitUntil(lambda: page.status() != first, 30, "a new refusal message")
    assert "Column 1 is full" in page.status() and page.stones() == len(START)

    # a double-click plays one move (and the agent answers it once)
    ActionChains(browser).double_click(page.columns()[3]).perform()
    page.waitUntil(lambda: page.stones() == len(START) + 2 and page.ready(), 120, "the agent's reply")
    time.sleep(2)  # a queued second click would show by now
    assert page.discs() == {"X": 4, "O": 4} and page.ready()

    # play the game out, leftmost playable column first: each click adds the human's disc and the agent's
    while not END.search(page.status()):
        before = page.stones()
        column = page.marks()[:7].index("-")  # the leftmost column whose top cell is empty
        page.columns()[column].click()
        page.waitUntil(lambda: page.stones() > before and (page.ready() or END.search(page.status())), 120,
                       "the click's disc")
        page.waitUntil(lambda: page.ready() or END.search(page.status()), 120, "the agent's reply")
        assert page.stones() in (before + 1, before + 2)

    match = END.search(page.status())
    moves = int(next(group for group in match.groups() if group))
    assert moves == page.stones()
    wins = [mark for mark in page.marks("data-win") if mark is not None]
    assert len(wins) == (0 if match.group().startswith("Draw") else 4)
    def fontSize(css):
        return float(page.find(css)[0].value_of_css_property("font-size").rstrip("px"))
    assert fontSize(".connect4-status h2") >= 1.4 * fontSize("button.connect4-column")  # the end message stands out
