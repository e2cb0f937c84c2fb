"""`make lab` really serves the learner's own folder: start it headless, list it through its
API (seeded from the learner copies, beside the source lessons), stop it."""

from __future__ import annotations

import json
import os
import re
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
# The venv these tests run in: `make lab` is started on it, so that each Python the suite
# runs on (.ci/run: 3.11 and the newest) starts the lab too.
VENV = Path(sys.prefix)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.skipif(not (VENV / "bin" / "jupyter").exists(),
                    reason="not run from a venv with JupyterLab (make test runs it from .venv)")
def test_make_lab_serves_the_notebook_list(tmp_path):
    port, token = free_port(), "reading-the-wire-test"
    args = (f"--no-browser --ip=127.0.0.1 --port={port} --IdentityProvider.token={token} "
            f"--ServerApp.open_browser=False")
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path))
    proc = subprocess.Popen(["make", "-s", "lab", f"VENV={VENV}", f"LAB_ARGS={args}"],
                            cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        names = None
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and names is None:
            if proc.poll() is not None:
                pytest.fail(f"make lab exited early: {proc.stderr.read().decode()[-2000:]}")
            try:
                names = listing(port, token, "my-work")
            except OSError:
                time.sleep(0.5)
        assert names is not None, "the server never answered"
        expected = sorted(p.name for p in (ROOT / "notebooks").glob(plan.LESSON_GLOB))
        assert expected and set(expected) <= set(names)
        assert set(expected) <= set(listing(port, token, "notebooks"))
        opens_on = urllib.request.urlopen(f"http://127.0.0.1:{port}/?token={token}", timeout=5)
        assert "/lab/tree/my-work" in opens_on.url
        page = opens_on.read().decode()
        opens_on.close()
        # No news pop-up over the projector's corner: the plugin that asks is off.
        assert NEWS in page_config(page)["disabledExtensions"]
        # Its terminals find `lesson-lib` (INSTRUCTORS.md: `lesson-lib serve` in the room).
        path = lab_environment(proc.pid).get("PATH", "")
        assert path.split(":")[0] == str(VENV / "bin"), path[:200]
        assert (VENV / "bin" / "lesson-lib").exists()
    finally:
        stop(proc)


NEWS = "@jupyterlab/apputils-extension:announcements"


def page_config(page: str) -> dict:
    """The configuration JupyterLab embeds in its page for the front end."""
    data = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                     page, re.S)
    assert data, "no page config in the lab's page"
    return json.loads(data[1])


def lab_environment(group: int) -> dict[str, str]:
    """The environment of the JupyterLab process `make lab` started (process group `group`)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes().split(b"\0")
            if int(fields[2]) != group or not any(part.endswith(b"jupyter-lab") for part in cmdline):
                continue
            environ = (stat.parent / "environ").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        pairs = (item.decode(errors="replace").partition("=") for item in environ if item)
        return {name: value for name, _, value in pairs}
    pytest.skip("the lab's process cannot be read here (no /proc)")


def dry_run(target: str) -> str:
    """The commands `make TARGET` would run on a fresh machine (no venv yet)."""
    done = subprocess.run(["make", "-n", "-B", target, "VENV=/fresh/.venv"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return done.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_lab_installs_the_lab_extra_only_and_make_test_adds_the_test_tools():
    lab = [line for line in dry_run("lab").splitlines() if "pip install" in line]
    assert lab == ["/fresh/.venv/bin/python -m pip install -q --upgrade pip",
                   "/fresh/.venv/bin/python -m pip install -q -e '.[lab]'"]
    assert f'labextension disable "{NEWS}"' in dry_run("lab")
    test = dry_run("test")
    assert "pip install -q -e '.[lab,test]'" in test and "pytest -n auto --dist loadfile --nbval" in test


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_refuses_a_python_the_course_does_not_support_before_installing():
    lab = dry_run("lab").splitlines()
    check = lab.index("/fresh/.venv/bin/python lesson_lib/course/environment.py")
    assert check < next(i for i, line in enumerate(lab) if "pip install" in line)
    done = subprocess.run([sys.executable, "lesson_lib/course/environment.py"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == "Python 3.11 to 3.13: supported\n"


def listing(port: int, token: str, folder: str) -> list[str]:
    url = f"http://127.0.0.1:{port}/api/contents/{folder}?token={token}"
    with urllib.request.urlopen(url, timeout=5) as response:
        return [item["name"] for item in json.load(response)["content"]]


def stop(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
