"""scripts/course_links.py fills the README's OWNER/REPO and HUB links from a remote."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from course_links import binder_link, hub_link, main, owner_repo


@pytest.mark.parametrize("remote", ["https://github.com/acme/wire-course.git",
                                    "https://github.com/acme/wire-course",
                                    "git@github.com:acme/wire-course.git",
                                    "ssh://git@github.com/acme/wire-course.git\n"])
def test_every_form_of_a_github_remote_names_its_owner_and_repo(remote):
    assert owner_repo(remote) == ("acme", "wire-course")


def test_another_host_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="not a GitHub remote"):
        owner_repo("https://gitlab.com/acme/wire-course.git")


def test_the_links_open_the_learners_folder():
    assert binder_link("acme", "wire-course") == \
        "https://mybinder.org/v2/gh/acme/wire-course/main?urlpath=lab/tree/my-work"
    link = hub_link("https://hub.example.org/", "acme", "wire-course")
    parts = urlsplit(link)
    assert parts.path == "/hub/user-redirect/git-pull"
    query = parse_qs(parts.query, strict_parsing=True)
    assert query == {"repo": ["https://github.com/acme/wire-course"], "branch": ["main"],
                     "urlpath": ["lab/tree/wire-course/my-work"]}


def test_the_command_prints_both_links(capsys):
    assert main(["--remote", "git@github.com:acme/wire-course.git",
                 "--hub", "https://hub.example.org"]) == 0
    out = capsys.readouterr().out
    assert "mybinder.org/v2/gh/acme/wire-course/main" in out and "hub.example.org/hub/" in out
    assert main(["--remote", "https://example.com/x/y"]) == 2
