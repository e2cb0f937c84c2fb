"""What a classroom on JupyterHub or Binder needs, checked offline: the environment file,
the link templates, and a checkout that starts the course with no `.venv` and no `make`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
import yaml
from test_environment_pins import LEARNER_EXTRAS, environment_pins, pyproject_pins

from lesson_lib.course import learner

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("README.md", "INSTRUCTORS.md")


def test_environment_yml_parses_and_installs_the_pins_and_the_checkout():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert env["name"] and env["channels"]
    deps = env["dependencies"]
    assert "python=3.11" in deps and "pip" in deps
    pip = next(d["pip"] for d in deps if isinstance(d, dict))
    pinned = {name.lower(): version for name, _, version in (d.partition("==") for d in pip)
              if version}
    assert pinned == pyproject_pins(LEARNER_EXTRAS) == environment_pins()
    assert "-e ." in pip, "repo2docker must install lesson_lib from the checkout"


def test_postbuild_seeds_the_learners_folder():
    post = ROOT / "postBuild"
    assert os.access(post, os.X_OK)
    assert "learner.seed()" in post.read_text()


def links(pattern: str) -> list[str]:
    found = []
    for doc in DOCS:
        found += re.findall(pattern, (ROOT / doc).read_text(encoding="utf-8"))
    return found


def test_the_nbgitpuller_link_template_is_well_formed_and_opens_my_work():
    found = links(r"https://HUB/hub/user-redirect/git-pull\?\S+")
    assert len(found) >= 2, "README and INSTRUCTORS.md each give the template"
    for link in found:
        parts = urlsplit(link)
        query = parse_qs(parts.query, strict_parsing=True)
        assert sorted(query) == ["branch", "repo", "urlpath"], link
        repo = urlsplit(unquote(query["repo"][0]))
        assert repo.scheme == "https" and repo.path.count("/") == 2, link
        folder = repo.path.rsplit("/", 1)[1]
        assert query["urlpath"][0] == f"lab/tree/{folder}/{learner.FOLDER}", link
        assert query["branch"] == ["main"]


def test_the_binder_badge_opens_my_work():
    found = links(r"https://mybinder\.org/v2/gh/[^)\s`]+")
    assert found
    for link in found:
        parts = urlsplit(link)
        assert re.fullmatch(r"/v2/gh/[\w.-]+/[\w.-]+/main", parts.path), link
        assert parse_qs(parts.query) == {"urlpath": [f"lab/tree/{learner.FOLDER}"]}, link


@pytest.mark.timeout(480)
def test_a_checkout_without_venv_or_make_starts_the_course(tmp_path):
    """`pip install -e .` in a new virtual environment, then `setup()` seeds `my-work/`.

    To stay bounded, the new environment borrows the already installed
    (pinned) dependencies through a path file; lesson_lib itself is installed
    from the copied checkout, which has no `.venv`, as a learner would (pip
    fetches only the build backend, from its cache when warm).
    """
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    checkout = tmp_path / "reading-the-wire"
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, checkout / name)
    assert not (checkout / ".venv").exists()
    assert sorted(p.name for p in (checkout / learner.FOLDER).iterdir()) == ["README.md"]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True).stdout
    Path(site.strip(), "zz-borrowed-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps",
                              "-e", str(checkout)],
                             capture_output=True, text=True, timeout=240)
    assert install.returncode == 0, install.stderr[-3000:]
    started = subprocess.run(
        [str(python), "-c", "import lesson_lib; lesson_lib.setup(quiet=True); "
         "print(lesson_lib.__file__)"],
        cwd=checkout / "notebooks", capture_output=True, text=True, timeout=120)
    assert started.returncode == 0, started.stderr[-3000:]
    assert started.stdout.strip().startswith(str(checkout))
    seeded = sorted(p.name for p in (checkout / learner.FOLDER).glob("*.ipynb"))
    assert seeded == sorted(p.name for p in (checkout / "notebooks" / "learner").glob("*.ipynb"))
    assert seeded
