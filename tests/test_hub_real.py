"""The JupyterHub route, for real: a hub, three learners, the README's link.

A pinned JupyterHub with configurable-http-proxy (installed from the npm registry
into ``tests/hub/node_modules`` by ``make test``), a dummy authenticator and a
local process spawner with a home folder per learner under a temporary folder.
Each learner's server runs the Zero to JupyterHub ``postStart`` command that
``INSTRUCTORS.md`` gives, then the learner opens the README's nbgitpuller link,
pointed at a local clone of the course, as the link's page would. Lesson 0's
first cell runs in each learner's kernel through the hub's REST API and the
kernel websocket. One learner's answer in ``my-work/`` survives a course update
pulled by the link and a restart of the server.

The environment the servers run in is this test's own (``sys.executable``):
like the image's, it has ``lesson_lib`` installed editable from a checkout
outside every home (here, the checkout under test).
"""

from __future__ import annotations

import html
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

import pytest
import requests
import websocket
import yaml

from lesson_lib.course.plan import LESSON_GLOB

ROOT = Path(__file__).resolve().parent.parent
PROXY = ROOT / "tests" / "hub" / "node_modules" / ".bin" / "configurable-http-proxy"
WRAPPER = ROOT / "tests" / "hub" / "singleuser_with_hook.py"
USERS = ("alice", "bob", "carol")
COURSE = "reading-the-wire"  # the folder the link and the hook clone into
MARK = "READING_THE_WIRE_HUB_TEST"  # in the environment of every process the hub starts
STARTUP_S = 90


def proxy_or_skip() -> Path:
    """The installed configurable-http-proxy, or skip saying what is missing."""
    if shutil.which("node") is None:
        pytest.skip("node is not on PATH: the hub's proxy (configurable-http-proxy) needs it")
    if not PROXY.exists():
        why = ("npm is not on PATH" if shutil.which("npm") is None
               else "`make hub-proxy` has not installed it")
        pytest.skip(f"configurable-http-proxy is not in tests/hub/node_modules: {why}")
    return PROXY


def free_ports(count: int) -> list[int]:
    """`count` distinct loopback ports that were free a moment ago."""
    with ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in socks]


def marked_processes(mark: str) -> list[int]:
    """Processes (other than this one) whose environment carries ``MARK=mark``."""
    needle = f"{MARK}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def post_start_hook(origin_url: str) -> list[str]:
    """INSTRUCTORS.md's Z2JH ``postStart`` command, pointed at the local course."""
    guide = (ROOT / "INSTRUCTORS.md").read_text(encoding="utf-8")
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", guide, re.S)]
    [config] = [b for b in blocks
                if isinstance(b, dict) and "lifecycleHooks" in b.get("singleuser", {})]
    assert config["singleuser"]["image"]["name"], "the settings name the image"
    command = config["singleuser"]["lifecycleHooks"]["postStart"]["exec"]["command"]
    github = "https://github.com/OWNER/REPO"
    assert github in " ".join(command)
    return [part.replace(github, origin_url).replace("REPO", COURSE) for part in command]


def readme_link(hub_url: str, origin_url: str) -> str:
    """The README's nbgitpuller link, for this hub and the local course."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    [template] = re.findall(r"https://HUB/hub/user-redirect/git-pull\?\S+", readme)
    parts = urlsplit(template)
    query = dict(parse_qsl(parts.query, strict_parsing=True))
    assert unquote(query["repo"]) == "https://github.com/OWNER/REPO"
    query["repo"] = origin_url
    query["urlpath"] = query["urlpath"].replace("REPO", COURSE)
    return f"{hub_url}{parts.path}?{urlencode(query, quote_via=quote)}"


def course_origin(folder: Path) -> tuple[Path, str]:
    """A clone of the repository under test on branch ``main``, and its file URL."""
    origin = folder / COURSE
    head = git(ROOT, "rev-parse", "HEAD")
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(ROOT), str(origin)], check=True)
    git(origin, "checkout", "-q", "-B", "main", head)
    git(origin, "config", "user.name", "Course author")
    git(origin, "config", "user.email", "author@example.invalid")
    return origin, origin.as_uri()


def git(repo: Path, *args: str) -> str:
    """Run git in `repo` and return what it printed."""
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


class Hub:
    """A JupyterHub on loopback ports, its proxy and learners' servers; `stop` ends them all."""

    def __init__(self, folder: Path, proxy: Path, hook: list[str]):
        self.folder = folder
        self.mark = uuid.uuid4().hex
        self.token = secrets.token_hex(16)
        port, hub_port, api_port = free_ports(3)
        self.url = f"http://127.0.0.1:{port}"
        bin_dir = str(Path(sys.executable).parent)
        settings = {
            "JupyterHub.bind_url": self.url,
            "JupyterHub.hub_bind_url": f"http://127.0.0.1:{hub_port}",
            "ConfigurableHTTPProxy.api_url": f"http://127.0.0.1:{api_port}",
            "ConfigurableHTTPProxy.command": [str(proxy)],
            "ConfigurableHTTPProxy.auth_token": secrets.token_hex(16),
            "JupyterHub.db_url": f"sqlite:///{folder / 'hub.sqlite'}",
            "JupyterHub.cookie_secret_file": str(folder / "cookie_secret"),
            "JupyterHub.pid_file": str(folder / "hub.pid"),
            "JupyterHub.authenticator_class": "dummy",
            "Authenticator.allowed_users": set(USERS),
            "JupyterHub.spawner_class": "jupyterhub.spawner.SimpleLocalProcessSpawner",
            "SimpleLocalProcessSpawner.home_dir_template": str(folder / "home" / "{username}"),
            "Spawner.cmd": [sys.executable, str(WRAPPER)],
            "Spawner.args": ["--allow-root"] if os.geteuid() == 0 else [],
            "Spawner.start_timeout": STARTUP_S,
            "Spawner.http_timeout": STARTUP_S,
            "Spawner.environment": {
                MARK: self.mark,
                "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
                "HUB_POST_START": json.dumps(hook),
                "HUB_IMAGE_WORKDIR": str(ROOT),
            },
            "JupyterHub.services": [{"name": "course-check", "api_token": self.token}],
            "JupyterHub.load_roles": [{"name": "admin", "services": ["course-check"]}],
            # A start request returns at once, so the three servers start side by side.
            "JupyterHub.tornado_settings": {"slow_spawn_timeout": 0},
        }
        config = folder / "jupyterhub_config.py"
        config.write_text("".join(f"c.{key} = {value!r}\n" for key, value in settings.items()))
        self.log = folder / "hub.log"
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "jupyterhub", "-f", str(config)], cwd=folder,
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env={**os.environ, MARK: self.mark}, start_new_session=True)

    def log_tail(self, lines: int = 60) -> str:
        """The end of the hub's log (the servers and the hooks write there too)."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def api(self, method: str, path: str, token: str | None = None, **kwargs) -> requests.Response:
        """A REST call to the hub (``/hub/api/...``) or through it to a learner's server."""
        headers = {"Authorization": f"token {token or self.token}"}
        return requests.request(method, f"{self.url}{path}", headers=headers, timeout=60,
                                **kwargs)

    def wait_until(self, what: str, ready, timeout: float = STARTUP_S):
        """Poll `ready()` until it returns something true; fail with the hub's log."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"the hub exited while {what}:\n{self.log_tail()}"
            try:
                value = ready()
            except requests.ConnectionError:
                value = None
            if value:
                return value
            time.sleep(0.5)
        raise AssertionError(f"timed out {what}:\n{self.log_tail()}")

    def wait_for_server(self, user: str, running: bool = True) -> None:
        """Wait until `user`'s server is ready (or, with ``running=False``, gone)."""
        def state():
            server = self.api("GET", f"/hub/api/users/{user}").json()["servers"].get("")
            return bool(server and server["ready"]) if running else server is None
        self.wait_until(f"waiting for {user}'s server to {'start' if running else 'stop'}",
                        state)

    def stop(self) -> list[int]:
        """Stop the hub (it stops the servers and the proxy); force-end any process left.

        Returns the processes that were still there after a graceful stop.
        """
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=45)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        deadline = time.monotonic() + 10
        while (left := marked_processes(self.mark)) and time.monotonic() < deadline:
            time.sleep(0.25)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return left


def open_link(session: requests.Session, link: str, hub: Hub) -> str:
    """Open an nbgitpuller link as a browser would: follow it to the puller's page,
    then do what the page's script does (stream ``git-pull/api``, then go to its
    path). Returns the final page's URL."""
    page = session.get(link, timeout=60)
    assert page.status_code == 200, (page.status_code, page.url, hub.log_tail())
    data = {key: unquote(html.unescape(value))
            for key, value in re.findall(r'data-([a-z-]+)="([^"]*)"', page.text)}
    assert data.get("repo") and data.get("targetpath") == COURSE, page.text[:2000]
    params = {"_xsrf": data["xsrf"], "repo": data["repo"], "targetpath": data["targetpath"],
              "branch": data["branch"]}
    phases = []
    with session.get(f"{hub.url}{data['base-url']}git-pull/api", params=params, stream=True,
                     timeout=120) as stream:
        assert stream.status_code == 200, (stream.status_code, stream.text[:2000])
        for line in stream.iter_lines(decode_unicode=True):
            if line.startswith("data: "):
                event = json.loads(line[len("data: "):])
                phases.append(event)
                if event["phase"] in ("finished", "error"):
                    break
    assert phases and phases[-1]["phase"] == "finished", (phases[-3:], hub.log_tail())
    target = session.get(f"{hub.url}{data['base-url']}{data['path']}", timeout=60)
    assert target.status_code == 200, (target.status_code, target.url)
    return target.url


def log_in(hub: Hub, user: str) -> requests.Session:
    """A browser session logged in to the hub as `user` (any password: dummy authenticator)."""
    session = requests.Session()
    session.get(f"{hub.url}/hub/login", timeout=60)
    answer = session.post(f"{hub.url}/hub/login", timeout=60, allow_redirects=False,
                          data={"username": user, "password": "any",
                                "_xsrf": session.cookies.get("_xsrf", "")})
    assert answer.status_code == 302, (answer.status_code, answer.text[:1000])
    return session


def run_cell(hub: Hub, user: str, token: str, kernel_id: str, code: str) -> list[tuple]:
    """Execute `code` in a learner's kernel over the kernel websocket, through the hub.

    Returns its outputs as (output_type, name or mime type, text), as nbval compares them.
    """
    ws_url = hub.url.replace("http", "ws", 1) + f"/user/{user}/api/kernels/{kernel_id}/channels"
    conn = websocket.create_connection(ws_url, header=[f"Authorization: token {token}"],
                                       timeout=120)
    session_id = uuid.uuid4().hex

    def send(msg_type: str, content: dict) -> str:
        msg_id = uuid.uuid4().hex
        conn.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": msg_type, "session": session_id,
                       "username": user, "version": "5.3"},
            "parent_header": {}, "metadata": {}, "content": content, "channel": "shell",
            "buffers": []}))
        return msg_id

    def replies(msg_id: str):
        while True:
            msg = json.loads(conn.recv())
            if msg.get("parent_header", {}).get("msg_id") == msg_id:
                yield msg

    try:
        info = send("kernel_info_request", {})
        next(m for m in replies(info) if m["msg_type"] == "kernel_info_reply")
        run = send("execute_request", {"code": code, "silent": False, "store_history": True,
                                       "user_expressions": {}, "allow_stdin": False,
                                       "stop_on_error": True})
        outputs = []
        for msg in replies(run):
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                outputs.append(("stream", content["name"], content["text"]))
            elif kind in ("execute_result", "display_data"):
                outputs.append((kind, "text/plain", content["data"].get("text/plain", "")))
            elif kind == "error":
                outputs.append(("error", content["ename"], "\n".join(content["traceback"])))
            elif kind == "status" and content["execution_state"] == "idle":
                return outputs
    finally:
        conn.close()


def expected_outputs(cell: dict) -> list[tuple]:
    """A committed cell's outputs in `run_cell`'s form."""
    def text(value):
        return "".join(value) if isinstance(value, list) else value
    found = []
    for out in cell["outputs"]:
        if out["output_type"] == "stream":
            found.append(("stream", out["name"], text(out["text"])))
        else:
            found.append((out["output_type"], "text/plain", text(out["data"]["text/plain"])))
    return found


def first_code_cell(notebook: dict) -> dict:
    return next(c for c in notebook["cells"] if c["cell_type"] == "code")


def test_the_guides_hook_and_the_readme_link_point_at_one_course_folder():
    """Checked without a hub (and so where npm is missing): the guide's ``postStart``
    clones into the folder the README's link pulls into and opens, then seeds it."""
    origin_url = "file:///srv/courses/" + COURSE
    hook = post_start_hook(origin_url)
    script = hook[-1]
    assert hook[:2] == ["sh", "-c"]
    assert f"gitpuller {origin_url} main {COURSE};" in script
    assert f"learner.seed(Path('{COURSE}'))" in script and script.rstrip().endswith("true")
    query = dict(parse_qsl(urlsplit(readme_link("http://hub", origin_url)).query))
    assert query == {"repo": origin_url, "branch": "main",
                     "urlpath": f"lab/tree/{COURSE}/my-work"}


def learner_gets_the_course(hub: Hub, user: str, origin: Path,
                            origin_url: str) -> tuple[requests.Session, str]:
    """`user` logs in, opens the README's link and runs lesson 0's first cell.

    Returns the learner's browser session and an API token of theirs.
    """
    home = hub.folder / "home" / user
    session = log_in(hub, user)
    final = open_link(session, readme_link(hub.url, origin_url), hub)
    assert urlsplit(final).path == f"/user/{user}/lab/tree/{COURSE}/my-work"
    assert git(home / COURSE, "rev-parse", "HEAD") == git(origin, "rev-parse", "HEAD")

    token = hub.api("POST", f"/hub/api/users/{user}/tokens",
                    json={"note": "course check", "expires_in": 900}).json()["token"]
    listing = hub.api("GET", f"/user/{user}/api/contents/{COURSE}/my-work", token=token)
    assert listing.status_code == 200, listing.text
    lessons = sorted(p.name for p in (ROOT / "notebooks" / "learner").glob(LESSON_GLOB))
    assert lessons
    names = sorted(item["name"] for item in listing.json()["content"])
    assert names == sorted(["README.md", *lessons]), (user, names)

    # Lesson 0's first cell, from the learner's own copy, in a kernel of its own.
    committed = first_code_cell(json.loads((ROOT / "notebooks" / "00-start-here.ipynb")
                                           .read_text(encoding="utf-8")))
    path = f"{COURSE}/my-work/00-start-here.ipynb"
    cell = first_code_cell(hub.api("GET", f"/user/{user}/api/contents/{path}",
                                   token=token).json()["content"])
    assert cell["source"] == "".join(committed["source"])
    started = hub.api("POST", f"/user/{user}/api/sessions", token=token,
                      json={"path": path, "type": "notebook", "kernel": {"name": "python3"}})
    assert started.status_code == 201, started.text
    kernel = started.json()["kernel"]["id"]
    outputs = run_cell(hub, user, token, kernel, cell["source"])
    assert outputs == expected_outputs(committed), (user, outputs)
    where = run_cell(hub, user, token, kernel,
                     "import os, lesson_lib; print(os.getcwd()); print(lesson_lib.__file__)")
    cwd, package = where[0][2].split()
    assert Path(cwd) == home / COURSE / "my-work"
    # Imported from the image's checkout, outside every home (no volume can hide it).
    assert not Path(package).is_relative_to(hub.folder / "home"), package
    assert Path(package) == ROOT / "lesson_lib" / "__init__.py"
    learner_serves_the_captures_through_the_hub(hub, user, token, kernel, session)
    hub.api("DELETE", f"/user/{user}/api/sessions/{started.json()['id']}", token=token)
    return session, token


def learner_serves_the_captures_through_the_hub(hub: Hub, user: str, token: str, kernel: str,
                                               session: requests.Session) -> None:
    """The guide's recipe: `serving()` in a cell takes a free port (learners on one host never
    collide), and the learner's browser reaches the page through the hub's proxy at
    ``/user/<name>/proxy/<port>/`` (jupyter-server-proxy)."""
    started = run_cell(hub, user, token, kernel,
                       "from lesson_lib.cli.serve import serving\n"
                       "_server = serving(speed='instant')\nprint(_server.__enter__())")
    port = int(started[0][2].strip().rsplit(":", 1)[1])
    base = f"{hub.url}/user/{user}/proxy/{port}/"
    page = session.get(base, timeout=60)
    assert page.status_code == 200 and "capture server" in page.text, (user, page.status_code)
    assert 'href="stream/anthropic-messages/hello"' in page.text   # relative: under the prefix
    stream = session.get(base + "stream/anthropic-messages/hello?speed=instant", timeout=60)
    hello = (ROOT / "captures" / "anthropic-messages" / "hello.sse").read_bytes()
    assert stream.status_code == 200 and stream.content == hello
    # The cookie that ends EventSource's reconnect names the path the browser asked for.
    assert f"/user/{user}/proxy/{port}/stream/anthropic-messages/hello" in \
        stream.headers.get("set-cookie", ""), stream.headers.get("set-cookie")
    run_cell(hub, user, token, kernel, "_server.__exit__(None, None, None)")


@pytest.mark.timeout(300)
def test_three_learners_get_the_course_from_the_link_and_run_lesson_0(tmp_path):
    proxy = proxy_or_skip()
    clock, took = time.monotonic(), {}

    def lap(name: str) -> None:
        took[name] = round(time.monotonic() - clock - sum(took.values()), 1)

    origin, origin_url = course_origin(tmp_path / "origin")
    hub = Hub(tmp_path, proxy, post_start_hook(origin_url))
    try:
        hub.wait_until("waiting for the hub's API",
                       lambda: hub.api("GET", "/hub/api/").status_code == 200)
        lap("hub")
        # The servers are started through the API, all three at once; each runs the hook.
        for user in USERS:
            answer = hub.api("POST", f"/hub/api/users/{user}/server")
            assert answer.status_code in (201, 202), (answer.status_code, answer.text)
        for user in USERS:
            hub.wait_for_server(user)
        lap("servers")
        with ThreadPoolExecutor(len(USERS)) as pool:
            runs = {user: pool.submit(learner_gets_the_course, hub, user, origin, origin_url)
                    for user in USERS}
            learners = {user: run.result() for user, run in runs.items()}
        lap("links and lesson 0")

        # Alice saves an answer; the course gets a new commit (a changed lesson and a new one).
        alice, answer_path = "alice", f"{COURSE}/my-work/01-raw-events.ipynb"
        session, token = learners[alice]
        notebook = hub.api("GET", f"/user/alice/api/contents/{answer_path}",
                           token=token).json()["content"]
        notebook["cells"].append({"cell_type": "markdown", "metadata": {}, "id": "my-answer",
                                  "source": "My answer: the text projection hides the cut."})
        saved = hub.api("PUT", f"/user/alice/api/contents/{answer_path}", token=token,
                        json={"type": "notebook", "format": "json", "content": notebook})
        assert saved.status_code == 200, saved.text
        answer_file = tmp_path / "home" / alice / answer_path
        answer = answer_file.read_bytes()
        assert b"My answer: the text projection hides the cut." in answer

        changed = origin / "notebooks" / "learner" / "01-raw-events.ipynb"
        lesson_1 = json.loads(changed.read_text(encoding="utf-8"))
        lesson_1["cells"][0]["source"] = "".join(lesson_1["cells"][0]["source"]) + \
            "\n\nCorrected after the first workshop."
        changed.write_text(json.dumps(lesson_1, indent=1, ensure_ascii=False) + "\n",
                           encoding="utf-8")
        shutil.copyfile(origin / "notebooks" / "learner" / "00-start-here.ipynb",
                        origin / "notebooks" / "learner" / "99-added-later.ipynb")
        git(origin, "add", "-A")
        git(origin, "commit", "-q", "-m", "Course update")

        open_link(session, readme_link(hub.url, origin_url), hub)
        clone = tmp_path / "home" / alice / COURSE
        assert git(clone, "log", "-1", "--format=%s") == "Course update"
        assert "Corrected after the first workshop." in (
            clone / "notebooks" / "learner" / "01-raw-events.ipynb").read_text(encoding="utf-8")
        assert answer_file.read_bytes() == answer, "the second pull changed alice's answer"
        lap("second pull")

        # A restart runs the hook again: it pulls, seeds the new lesson, keeps the answer.
        assert hub.api("DELETE", "/hub/api/users/alice/server").status_code in (202, 204)
        hub.wait_for_server(alice, running=False)
        assert hub.api("POST", "/hub/api/users/alice/server").status_code in (201, 202)
        hub.wait_for_server(alice)
        assert (clone / "my-work" / "99-added-later.ipynb").exists()
        assert answer_file.read_bytes() == answer, "the restart changed alice's answer"
        lap("restart")
    except BaseException:
        hub.stop()
        raise
    left = hub.stop()
    lap("stop")
    assert not left, f"processes left after the hub stopped: {left}\n{hub.log_tail()}"
    print(f"a real hub, three learners: {time.monotonic() - clock:.1f} s {took}")
