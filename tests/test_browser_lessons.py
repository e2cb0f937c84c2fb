"""Every lesson in a real browser: JupyterLab in headless Chromium, driven by Playwright.

One JupyterLab serves copies of every ``notebooks/NN-*.ipynb`` (so autosave
never touches the committed notebooks, and a lesson added later is covered
without a change here). For each lesson: run every cell in order, check that
the only errors are the exercise starters tagged ``raises-exception``, then
in every replay player press Forward and Back and check that the counter and
the marked table row change and come back, in every fault lab press "Save as
capture" and read where it saved, then move its dropdowns in quick succession
and check that its view ends on what they say, check that no widget is wider
than its output area (JupyterLab at 1280x800 with the file browser open: a
968 px output area) and that no pane is pushed out of it, and save a
screenshot to ``test-artifacts/``. Then the widgets' text contrast is measured in
JupyterLab's light and dark themes (WCAG AA: 4.5:1 for text). All lessons
together stay under eight minutes.

Skipped (with the reason) when Chromium is not installed; ``.ci/run``
installs Debian's ``chromium`` so that CI really runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from lesson_lib.course import plan

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "notebooks").glob(plan.LESSON_GLOB))
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--disable-dev-shm-usage"]
BUDGET_S = 480            # every lesson together (lesson 6 runs its checkers over real sockets)
# When the first lesson began (not when this module was imported: under `pytest -n` the
# whole suite is collected first, and other files run before this one).
CLOCK: dict[str, float] = {}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed "
                       "(Debian package `chromium`; .ci/run installs it)"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """One JupyterLab server on copies of every lesson; yields (url, token)."""
    tmp = tmp_path_factory.mktemp("lab")
    work = tmp / "nb"
    work.mkdir()
    for lesson in LESSONS:
        shutil.copy(lesson, work / lesson.name)
    port, token = free_port(), "browser-test"
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
           "--ip=127.0.0.1", f"--IdentityProvider.token={token}", f"--notebook-dir={work}",
           "--LabApp.expose_app_in_browser=True", "--ServerApp.open_browser=False"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
               JUPYTER_CONFIG_DIR=str(tmp / "config"),
               JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"))
    proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=3).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("JupyterLab did not start")
                time.sleep(0.5)
        yield base, token
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=CHROMIUM_FLAGS)
        try:
            yield chromium
        finally:
            chromium.close()


def tagged_raises(path: Path) -> int:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return sum("raises-exception" in c.get("metadata", {}).get("tags", [])
               for c in nb["cells"] if c["cell_type"] == "code")


def open_lesson(page, base: str, token: str, name: str) -> None:
    # `reset`: a fresh workspace, so the lessons opened before are not restored beside it
    page.goto(f"{base}/lab/tree/{name}?reset&token={token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    page.wait_for_function(
        "(name) => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " return w && w.context && w.context.path.endsWith(name) && w.sessionContext"
        " && w.sessionContext.session && w.sessionContext.session.kernel; }",
        arg=name, timeout=120_000)


def shut_down(page) -> None:
    """Stop the lesson's kernel so the next lesson has the machine to itself."""
    page.evaluate("() => { const w = window.jupyterapp.shell.currentWidget;"
                  " return w && w.sessionContext && w.sessionContext.shutdown(); }")


def run_every_cell(page) -> list[dict]:
    """Run the cells one by one ("Run All" stops at the starters, which raise on purpose)
    and read the results from the notebook model (off-screen cells are not in the DOM)."""
    count = page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets.length")
    for i in range(count):
        page.evaluate("""(i) => {
            const panel = window.jupyterapp.shell.currentWidget;
            panel.content.activeCellIndex = i;
            window.__rtwCellDone = false;
            window.jupyterapp.commands.execute('notebook:run-cell')
                .then(() => { window.__rtwCellDone = true; });
        }""", i)
        page.wait_for_function("() => window.__rtwCellDone === true", timeout=120_000)
        press_stop_in_live_views(page)
    return page.evaluate("""() => window.jupyterapp.shell.currentWidget.content.widgets
        .filter(c => c.model.type === 'code')
        .map(c => ({count: c.model.executionCount,
                    tags: c.model.getMetadata('tags') || [],
                    errors: c.model.outputs.toJSON()
                        .filter(o => o.output_type === 'error').map(o => o.ename)}))""")


def press_stop_in_live_views(page) -> None:
    """Lesson 6's live view runs its turn after its cell has ended: press its Stop while
    the answer is still arriving, as a person would."""
    stop = page.locator(".rtw-live button:has-text('Stop'):not([disabled])")
    if stop.count():
        stop.first.scroll_into_view_if_needed()
        stop.first.click()
        page.locator(".rtw-live .rtw-live-status:has-text('ended')").first.wait_for(timeout=60_000)


def check_stopped_live_views(page) -> int:
    """Every live view ended `cancelled` after Stop, and its chat pane kept what arrived."""
    views = page.locator(".rtw-live")
    for k in range(views.count()):
        view = views.nth(k)
        view.scroll_into_view_if_needed()
        status = view.locator(".rtw-live-status").first.text_content() or ""
        assert "ended: cancelled" in status, status
        chat = view.locator(".draw").first.text_content() or ""
        assert "cancelled" in chat and chat.strip(), chat
    return views.count()


def text_of(locator) -> str:
    return locator.inner_text() if locator.count() else ""


def step_every_player(page) -> int:
    """Forward changes the counter and the marked row; Back brings both back."""
    players = page.locator(".rtw-player")
    for k in range(players.count()):
        player = players.nth(k)
        player.scroll_into_view_if_needed()
        counter = player.locator(".rtw-counter")
        row = player.locator(".rtw-current-row").first
        counter.wait_for(timeout=60_000)
        deadline = time.monotonic() + 30
        while not counter.inner_text().strip() and time.monotonic() < deadline:
            page.wait_for_timeout(100)       # the widget's first value is still on its way
        before = (counter.inner_text(), text_of(row))
        assert before[0].strip(), f"player {k}: the counter stayed empty"
        player.locator(".rtw-step-forward").first.click()
        page.wait_for_function("([el, before]) => el.innerText !== before",
                               arg=[counter.element_handle(), before[0]], timeout=30_000)
        after = (counter.inner_text(), text_of(row))
        assert after[0] != before[0], f"player {k}: the counter did not move"
        if before[1]:
            assert after[1] != before[1], f"player {k}: the marked row did not move"
        player.locator(".rtw-step-back").first.click()
        deadline = time.monotonic() + 30
        while counter.inner_text() != before[0] and time.monotonic() < deadline:
            page.wait_for_timeout(100)
        back = (counter.inner_text(), text_of(row))
        assert back == before, f"player {k}: Back gave {back}, not {before} (after {after})"
    return players.count()


def save_in_every_fault_lab(page) -> int:
    """Each fault lab's "Save as capture" button answers with where it saved the broken stream
    (outside a learner's my-work/, as here, a temporary folder)."""
    buttons = page.locator("button:has-text('Save as capture')")
    for k in range(buttons.count()):
        buttons.nth(k).scroll_into_view_if_needed()
        buttons.nth(k).click()
        page.locator("[role=status]:has-text('saved')").nth(k).wait_for(timeout=30_000)
        said = page.locator("[role=status]:has-text('saved')").nth(k).inner_text()
        assert "temporary folder" in said and "not saved" not in said, said
    return buttons.count()


def open_the_file_browser(page) -> None:
    """The side panel open, as a learner has it: the notebook gets what is left."""
    page.evaluate("() => { const shell = window.jupyterapp.shell;"
                  " shell.activateById('filebrowser'); }")
    page.wait_for_function("() => !window.jupyterapp.shell.leftCollapsed", timeout=30_000)


def whip_every_fault_lab(page) -> int:
    """Move each lab's dropdowns one straight after another, without waiting for the
    kernel: the view must end on what the dropdowns say (it once stayed on `swap`)."""
    boxes = page.locator(".widget-vbox:has(.rtw-fault-lab)")
    for k in range(boxes.count()):
        box = boxes.nth(k)
        box.scroll_into_view_if_needed()
        capture, fault = box.locator("select").nth(0), box.locator("select").nth(1)
        labels = capture.locator("option").all_inner_texts()
        for name in ("swap", "duplicate", "cut_at", "swap", "inject_error"):
            fault.select_option(label=name)
        capture.select_option(label=labels[-1])
        fault.select_option(label="cut_at")
        capture.select_option(label=labels[0])
        page.wait_for_function(
            "([box]) => { const view = box.querySelector('.rtw-fault-lab');"
            " const [c, f] = box.querySelectorAll('select');"
            " const label = s => s.options[s.selectedIndex].textContent;"
            " return view && view.dataset.fault === label(f) && label(f) === 'cut_at'"
            " && view.dataset.capture === label(c); }",
            arg=[box.element_handle()], timeout=60_000)
        page.wait_for_timeout(1_000)           # nothing late may move it away again
        shown = box.locator(".rtw-fault-lab").first.evaluate("el => [el.dataset.capture, "
                                                             "el.dataset.fault]")
        assert shown == [labels[0], "cut_at"], f"fault lab {k} shows {shown}"
    return boxes.count()


# Every output area that holds a widget: the area must not scroll sideways, no widget box
# may be wider than its content box, and every pane lies inside the area, not clipped.
LAYOUT_JS = """(out) => {
  const problems = [], area = out.getBoundingClientRect();
  const name = el => (el.className && el.className.baseVal === undefined ? el.className : '')
      .toString().split(' ').filter(c => c.startsWith('rtw') || c.startsWith('widget'))
      .slice(0, 2).join('.') || el.tagName;
  if (out.scrollWidth > out.clientWidth + 1)
    problems.push(`output area ${out.clientWidth} px holds ${out.scrollWidth} px`);
  for (const box of out.querySelectorAll('.jupyter-widgets')) {
    const r = box.getBoundingClientRect();
    if (r.width && r.right > area.right + 1)
      problems.push(`${name(box)} ends at ${Math.round(r.right - area.left)} px of ${area.width}`);
    if (box.matches('.widget-box, .widget-html, .widget-html-content')
        && !['auto', 'scroll'].includes(getComputedStyle(box).overflowX)
        && box.scrollWidth > box.clientWidth + 1)
      problems.push(`${name(box)} holds ${box.scrollWidth} px in ${box.clientWidth}`);
  }
  // (a pane may scroll a wide table inside itself, but the pane itself stays in view)
  for (const pane of out.querySelectorAll('.rtw-pane, .rtw-fault-lab-pane, .rtw-live')) {
    const r = pane.getBoundingClientRect();
    if (!r.width || r.left < area.left - 1 || r.right > area.right + 1)
      problems.push(`${name(pane)} at ${Math.round(r.left - area.left)}..`
                    + `${Math.round(r.right - area.left)} px of ${Math.round(area.width)}`);
  }
  return {width: Math.round(area.width), problems};
}"""


def check_widget_layout(page) -> tuple[int, int, list[str]]:
    """(widget outputs checked, the output area's width, every layout problem found)."""
    outputs = page.locator(".jp-OutputArea-output:has(.jupyter-widgets)")
    problems, width = [], 0
    for k in range(outputs.count()):
        out = outputs.nth(k)
        out.scroll_into_view_if_needed()
        page.wait_for_timeout(100)           # a cell just scrolled in is laid out
        found = out.evaluate(LAYOUT_JS)
        width = max(width, found["width"])
        problems += [f"widget output {k}: {p}" for p in found["problems"]]
    return outputs.count(), width, problems


@pytest.mark.timeout(BUDGET_S + 120)
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_the_lesson_runs_in_jupyterlab_and_its_players_step(lab, browser, lesson):
    started = CLOCK.setdefault("first lesson", time.monotonic())
    base, token = lab
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        open_lesson(page, base, token, lesson.name)
        open_the_file_browser(page)
        cells = run_every_cell(page)
        assert cells and all(c["count"] for c in cells), cells
        for cell in cells:
            if cell["errors"]:
                assert "raises-exception" in cell["tags"], cell
                assert cell["errors"] == ["NotImplementedError"], cell
        assert sum(bool(c["errors"]) for c in cells) <= tagged_raises(lesson)
        players = step_every_player(page)
        code = "".join("".join(c["source"]) for c in json.loads(lesson.read_text(
            encoding="utf-8"))["cells"] if c["cell_type"] == "code")
        assert players or "Player(" not in code, "the lesson makes a player; none rendered"
        labs = save_in_every_fault_lab(page)
        assert labs or "FaultLab(" not in code, "the lesson makes a fault lab; none rendered"
        assert whip_every_fault_lab(page) == labs
        lives = check_stopped_live_views(page)
        assert lives or "LiveView(" not in code, "the lesson makes a live view; none rendered"
        widgets, width, problems = check_widget_layout(page)
        assert width <= 1000 or not widgets, f"the output area is {width} px: is the side open?"
        assert not problems, problems
        if players:
            page.locator(".rtw-player").first.scroll_into_view_if_needed()
        if lives:
            page.locator(".rtw-live").first.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"{lesson.stem}.png"), full_page=False)
    except Exception:
        page.screenshot(path=str(ARTIFACTS / f"{lesson.stem}-failure.png"), full_page=False)
        raise
    finally:
        shut_down(page)
        page.close()
    assert time.monotonic() - started < BUDGET_S, "the lessons took over eight minutes"


# WCAG 2 relative luminance and contrast ratio, in the page, for every visible piece of
# text inside the widgets, against the first opaque background behind it.
CONTRAST_JS = """() => {
  const rgb = s => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map(v => { v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); })
    .reduce((a, v, i) => a + v * [0.2126, 0.7152, 0.0722][i], 0);
  const background = el => { for (; el; el = el.parentElement) {
      const c = rgb(getComputedStyle(el).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.9)) return c.slice(0, 3); }
    return [255, 255, 255]; };
  const out = [];
  const root = document.querySelectorAll('.rtw-player, .rtw-tool-cards, .rtw-slots, .rtw-table');
  for (const scope of root) {
    const walker = document.createTreeWalker(scope, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!n.textContent.trim() || el.closest('[aria-hidden="true"]')) continue;
      const st = getComputedStyle(el);
      if (st.visibility === 'hidden' || st.display === 'none' || !el.offsetParent) continue;
      const fg = rgb(st.color).slice(0, 3), bg = background(el);
      const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
      out.push({text: n.textContent.trim().slice(0, 30), ratio: (a + 0.05) / (b + 0.05),
                fg: st.color, bg: 'rgb(' + bg.join(',') + ')'});
    }
  }
  return out;
}"""


@pytest.mark.timeout(240)
@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_widget_text_meets_wcag_aa_contrast_in_both_themes(lab, browser, theme):
    lesson = next(p for p in LESSONS if p.name.startswith("02-"))
    base, token = lab
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        open_lesson(page, base, token, lesson.name)
        page.evaluate("(theme) => window.jupyterapp.commands.execute("
                      "'apputils:change-theme', {theme})", theme)
        page.wait_for_function("(dark) => document.body.dataset.jpThemeLight === "
                               "(dark ? 'false' : 'true')", arg=theme.endswith("Dark"),
                               timeout=60_000)
        run_every_cell(page)
        page.locator(".rtw-player").first.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        samples = page.evaluate(CONTRAST_JS)
        slug = theme.split()[-1].lower()
        page.screenshot(path=str(ARTIFACTS / f"contrast-{slug}.png"), full_page=False)
    finally:
        shut_down(page)
        page.close()
    assert len(samples) > 20, samples
    poor = [s for s in samples if s["ratio"] < 4.5]
    assert not poor, f"{theme}: text below 4.5:1: {poor[:10]}"
