"""Print the course's Binder link and JupyterHub (nbgitpuller) link for this repository.

The README and INSTRUCTORS.md write the links with ``OWNER/REPO`` and ``HUB``; this
script fills them in from the checkout's ``origin`` remote (GitHub, https or ssh form):

    python scripts/course_links.py                          # the Binder link
    python scripts/course_links.py --hub https://hub.example.org --branch main
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from urllib.parse import quote, urlencode

FOLDER = "my-work"
_GITHUB = re.compile(r"^(?:https://github\.com/|git@github\.com:|ssh://git@github\.com/)"
                     r"(?P<owner>[\w.-]+)/(?P<repo>[\w.-]+?)(?:\.git)?/?$")


def owner_repo(remote: str) -> tuple[str, str]:
    """The GitHub owner and repository a remote URL names (ValueError for another host)."""
    found = _GITHUB.match(remote.strip())
    if not found:
        raise ValueError(f"not a GitHub remote: {remote.strip()!r} (Binder and the "
                         "nbgitpuller link below are written for GitHub)")
    return found["owner"], found["repo"]


def binder_link(owner: str, repo: str, branch: str = "main") -> str:
    """The Binder link that opens the learner's folder."""
    return f"https://mybinder.org/v2/gh/{owner}/{repo}/{branch}?urlpath=lab/tree/{FOLDER}"


def hub_link(hub: str, owner: str, repo: str, branch: str = "main") -> str:
    """The nbgitpuller link: every learner gets a copy and lands in their folder."""
    query = urlencode({"repo": f"https://github.com/{owner}/{repo}", "branch": branch,
                       "urlpath": f"lab/tree/{repo}/{FOLDER}"}, quote_via=quote, safe="")
    return f"{hub.rstrip('/')}/hub/user-redirect/git-pull?{query}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--remote", help="a remote URL (default: git remote get-url origin)")
    parser.add_argument("--hub", help="the hub's address, for the nbgitpuller link")
    parser.add_argument("--branch", default="main")
    args = parser.parse_args(argv)
    remote = args.remote
    if remote is None:
        done = subprocess.run(["git", "remote", "get-url", "origin"], capture_output=True,
                              text=True, check=False)
        if done.returncode != 0:
            print("no `origin` remote: pass --remote https://github.com/OWNER/REPO",
                  file=sys.stderr)
            return 2
        remote = done.stdout
    try:
        owner, repo = owner_repo(remote)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    print("Binder:", binder_link(owner, repo, args.branch))
    if args.hub:
        print("JupyterHub:", hub_link(args.hub, owner, repo, args.branch))
    return 0


if __name__ == "__main__":
    sys.exit(main())
