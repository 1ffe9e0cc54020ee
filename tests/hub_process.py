"""A real JupyterHub for the hub tests: the hub, its configurable-http-proxy, one single-user server per user.

Everything listens on 127.0.0.1 on free ports; the hub database, cookie secret, users' homes and the
administrator's config live in one temp dir. Users log in with ``DummyAuthenticator`` (one shared password)
and are spawned by ``SimpleLocalProcessSpawner``: every user's server is a process of the user running the
tests (as root in CI), in its own home under the temp dir — no system users are created. That spawner gives
each user their own process, home and Jupyter dirs, which is what hdsp-agent's isolation rests on; it does
not give them different Unix users (a production hub uses LocalProcessSpawner with real users, or
KubeSpawner: docs/deploy.md).

Each single-user server is ``jupyterhub-singleuser`` from this venv, so it loads hdsp-agent from the
installed package (``PYTHONPATH``/``JUPYTER_PATH`` pass through, so a worktree's copy wins the same way as
for every test).

Also runnable as ``python tests/hub_process.py --port N --model-url URL`` for the browser test through the
hub: it starts the hub, spawns the users and prints ``hub ready`` until killed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import nbformat
import tornado.httpclient
import tornado.websocket
from jupyter_process import free_port

HERE = Path(__file__).parent
PROXY_COMMAND = HERE / "hub" / "node_modules" / ".bin" / "configurable-http-proxy"
PASSWORD = "hub-test-password"
USERS = ("alice", "bob", "carol")
# Started with the hub; carol's server is started by the test that configures her first.
SPAWNED = ("alice", "bob")
ADMIN_SERVICE = "hub-test-admin"

# The hub's own config, as an administrator would write it; {placeholders} filled in by ``Hub``.
HUB_CONFIG = """
import sys
c = get_config()  # noqa: F821
c.JupyterHub.bind_url = "http://127.0.0.1:{port}"
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{hub_port}"
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.command = [{proxy_command!r}]
c.ConfigurableHTTPProxy.pid_file = {proxy_pid_file!r}
c.JupyterHub.db_url = "sqlite:///{db_file}"
c.JupyterHub.cookie_secret_file = {cookie_secret_file!r}
c.JupyterHub.pid_file = {hub_pid_file!r}
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {password!r}
c.Authenticator.allowed_users = set({users!r})
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = {home_template!r}
c.Spawner.cmd = [{singleuser!r}]
# Tests and CI run as root; jupyter-server refuses root without this.
c.Spawner.args = ["--ServerApp.allow_root=True"]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
# Answer a spawn request at once (202) instead of after 10 s, so both users' servers start side by side.
c.JupyterHub.tornado_settings = {{"slow_spawn_timeout": 0}}
# The hub passes on only what it is told to: the interpreter's paths (which hdsp-agent, which labextension).
c.Spawner.env_keep = ["PATH", "PYTHONPATH", "JUPYTER_PATH", "LANG", "LC_ALL", "JUPYTERHUB_SINGLEUSER_APP"]
# Each user's Jupyter dirs in that user's home; the administrator's config dir before the system ones.
c.Spawner.environment = {{
    "JUPYTER_CONFIG_DIR": lambda spawner: spawner.home_dir + "/.jupyter",
    "JUPYTER_DATA_DIR": lambda spawner: spawner.home_dir + "/.local/share/jupyter",
    "JUPYTER_RUNTIME_DIR": lambda spawner: spawner.home_dir + "/.local/share/jupyter/runtime",
    "IPYTHONDIR": lambda spawner: spawner.home_dir + "/.ipython",
    "JUPYTER_CONFIG_PATH": {admin_config_dir!r},
    "OPENAI_API_KEY": "hub-test-key-not-real",
}}
c.JupyterHub.services = [{{"name": {admin_service!r}, "api_token": {admin_token!r}}}]
c.JupyterHub.load_roles = [
    {{
        "name": "hub-test-admin",
        "scopes": ["admin:users", "admin:servers", "tokens", "access:servers"],
        "services": [{admin_service!r}],
    }}
]
"""


def guide_hub_config(guide: str, values: dict[str, str]) -> str:
    """docs/deploy.md's ``jupyterhub_config.py``, its constants (``NAME = "..."`` lines) set to ``values``; a
    constant the guide no longer has is an error, so the test and the guide cannot drift apart silently."""
    for name, value in values.items():
        line = f"{name} = {value!r}"
        guide, count = re.subn(rf'^{name} = "[^"\n]*"', lambda _, line=line: line, guide, flags=re.M)
        if count != 1:
            raise ValueError(f"the guide's hub config has no constant {name} (found {count})")
    return guide


class Hub:
    """``start()`` the hub and spawn the users; ``stop()`` ends every process it started.

    ``guide_config``: the hub config of docs/deploy.md instead of ``HUB_CONFIG``, its constants pointed at
    this hub's temp dir and ports (``guide_hub_config``)."""

    def __init__(
        self,
        model_url: str,
        *,
        admin_config: dict[str, Any] | None = None,
        port: int = 0,
        extra_config: str = "",
        guide_config: str | None = None,
    ) -> None:
        self.scratch = tempfile.TemporaryDirectory(prefix="hdsp-hub-")
        self.dir = Path(self.scratch.name)
        self.port = port or free_port()
        self.admin_token = secrets.token_hex(16)
        self.admin_config_dir = self.dir / "etc-jupyter"
        self.admin_config_dir.mkdir()
        self.homes = self.dir / "home"
        self.homes.mkdir()
        self.log_path = self.dir / "hub.log"
        # Defaults a user may change (ordinary Jupyter config) ...
        defaults = {"HdspAgentApp": {"max_retries": 0, "probe_local_models": False}}
        (self.admin_config_dir / "jupyter_server_config.json").write_text(json.dumps(defaults, indent=1))
        # ... and what everyone gets, whatever their own config says (hdsp_agent/admin_config.py).
        self.write_admin_config({"model": "scripted", "base_url": model_url, **(admin_config or {})})
        singleuser = shutil.which("jupyterhub-singleuser", path=str(Path(sys.executable).parent))
        if singleuser is None:
            raise RuntimeError(
                "jupyterhub-singleuser is not installed beside this Python (pip install jupyterhub)"
            )
        if not PROXY_COMMAND.exists():
            raise RuntimeError(f"{PROXY_COMMAND} is missing: run `npm ci --prefix tests/hub`")
        self.process: subprocess.Popen[bytes] | None = None
        self.config_file = self.dir / "jupyterhub_config.py"
        if guide_config is not None:
            self.config_file.write_text(self._guide(guide_config, singleuser))
            return
        config = HUB_CONFIG.format(
            port=self.port,
            hub_port=free_port(),
            proxy_api_port=free_port(),
            proxy_command=str(PROXY_COMMAND),
            proxy_pid_file=str(self.dir / "proxy.pid"),
            hub_pid_file=str(self.dir / "hub.pid"),
            db_file=self.dir / "jupyterhub.sqlite",
            cookie_secret_file=str(self.dir / "cookie_secret"),
            password=PASSWORD,
            users=USERS,
            home_template=str(self.homes / "{username}"),
            singleuser=singleuser,
            admin_config_dir=str(self.admin_config_dir),
            admin_service=ADMIN_SERVICE,
            admin_token=self.admin_token,
        )
        # More of the administrator's config after the test hub's own (``{dir}``: this hub's temp dir).
        self.config_file.write_text(config + extra_config.replace("{dir}", str(self.dir)))

    def _guide(self, guide: str, singleuser: str) -> str:
        token_file = self.dir / "admin-token"
        token_file.write_text(self.admin_token + "\n")
        values = {
            "VENV": str(Path(singleuser).parent.parent),
            "PROXY": str(PROXY_COMMAND),
            "HUB_DIR": str(self.dir),
            "HOMES": str(self.homes / "{username}"),
            "ADMIN_CONFIG_DIR": str(self.admin_config_dir),
            "ADMIN_TOKEN_FILE": str(token_file),
            "BIND_URL": f"http://127.0.0.1:{self.port}",
            "HUB_API_URL": f"http://127.0.0.1:{free_port()}",
            "PROXY_API_URL": f"http://127.0.0.1:{free_port()}",
            "TRIAL_PASSWORD": PASSWORD,
        }
        # The one line the tests add: answer spawn requests at once, so servers start side by side.
        fast_spawn = '\nc.JupyterHub.tornado_settings = {"slow_spawn_timeout": 0}\n'
        return guide_hub_config(guide, values) + fast_spawn

    # -- the administrator's side --------------------------------------------------------------------------

    def write_admin_config(self, settings: dict[str, Any]) -> None:
        """The system-wide admin file (in production: /etc/jupyter/hdsp_agent/admin.json)."""
        target = self.admin_config_dir / "hdsp_agent" / "admin.json"
        target.parent.mkdir(exist_ok=True)
        target.write_text(json.dumps(settings, indent=1))

    def home(self, user: str) -> Path:
        return self.homes / user

    # -- lifecycle -----------------------------------------------------------------------------------------

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def admin_headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.admin_token}"}

    def start(self, timeout: float = 120) -> None:
        log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(self.config_file)],
            cwd=self.dir,
            stdout=log,
            stderr=subprocess.STDOUT,
            # Its own process group: whatever it leaves behind (the proxy, user servers) is ended with it.
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while True:
            try:
                if httpx.get(f"{self.base}/hub/api", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the hub did not start:\n{self.log_tail()}")
            time.sleep(0.1)

    def log_tail(self, lines: int = 40) -> str:
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def spawn(self, *users: str, timeout: float = 120) -> None:
        """Start these users' servers (as the hub's admin) and wait until each answers through the proxy."""
        for user in users:
            response = httpx.post(
                f"{self.base}/hub/api/users/{user}/server", headers=self.admin_headers, timeout=60
            )
            if response.status_code not in (201, 202, 400):  # 400: already running
                raise RuntimeError(f"spawning {user}: {response.status_code} {response.text}")
        deadline = time.monotonic() + timeout
        for user in users:
            while True:
                model = httpx.get(f"{self.base}/hub/api/users/{user}", headers=self.admin_headers).json()
                server = model.get("servers", {}).get("", {})
                if server.get("ready"):
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{user}'s server did not start:\n{self.log_tail()}")
                time.sleep(0.2)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            # SIGTERM: the hub stops the user servers (cleanup_servers) and the proxy it started, then exits.
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                pass
        if self.process is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)  # anything left in its group
            except ProcessLookupError:
                pass
        for pid in self._user_server_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.scratch.cleanup()

    def _user_server_pids(self) -> list[int]:
        """User servers run in their own sessions; find any that outlived the hub by their home dir."""
        pids = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cwd = os.readlink(entry / "cwd")
            except OSError:
                continue
            if cwd.startswith(str(self.homes)):
                pids.append(int(entry.name))
        return pids

    # -- credentials ---------------------------------------------------------------------------------------

    def token(self, user: str, scopes: list[str]) -> str:
        """A hub API token owned by ``user`` with these scopes (e.g. ``access:servers!user=alice``)."""
        response = httpx.post(
            f"{self.base}/hub/api/users/{user}/tokens",
            headers=self.admin_headers,
            json={"scopes": scopes, "note": "hub test", "expires_in": 3600},
        )
        response.raise_for_status()
        return str(response.json()["token"])

    async def login(self, user: str) -> BrowserSession:
        """Log in at /hub/login and go through the OAuth handshake to the user's server, as a browser does."""
        client = httpx.AsyncClient(base_url=self.base, follow_redirects=True, timeout=60)
        page = await client.get("/hub/login")
        xsrf = _form_xsrf(page.text) or client.cookies.get("_xsrf", "")
        response = await client.post(
            "/hub/login", data={"username": user, "password": PASSWORD, "_xsrf": xsrf}
        )
        if "jupyterhub-session-id" not in client.cookies and response.url.path.endswith("/login"):
            raise RuntimeError(f"login of {user} failed: {response.status_code}")
        landing = await client.get(f"/user/{user}/lab")
        if landing.status_code != 200:
            raise RuntimeError(f"{user}'s server after login: {landing.status_code} {landing.url}")
        return BrowserSession(self, user, client)


def _form_xsrf(html: str) -> str | None:
    found = re.search(r'name="_xsrf"\s+value="([^"]+)"', html)
    return found.group(1) if found else None


class BrowserSession:
    """A logged-in user's cookies, with the XSRF header for cookie-authenticated writes."""

    def __init__(self, hub: Hub, user: str, client: httpx.AsyncClient) -> None:
        self.hub = hub
        self.user = user
        self.client = client

    def headers(self, server_user: str | None = None) -> dict[str, str]:
        """The XSRF token of the server the request goes to (each single-user server sets its own cookie)."""
        xsrf = self._xsrf(server_user or self.user)
        return {"X-XSRFToken": xsrf} if xsrf else {}

    def _xsrf(self, server_user: str) -> str:
        xsrf_cookies = [cookie for cookie in self.client.cookies.jar if cookie.name == "_xsrf"]
        for cookie in xsrf_cookies:
            if cookie.path.startswith(f"/user/{server_user}"):
                return str(cookie.value)
        # No cookie of that server (another user's): send the one we have, as a forged request would.
        return str(xsrf_cookies[-1].value) if xsrf_cookies else ""

    def cookie_header(self) -> str:
        return "; ".join(f"{cookie.name}={cookie.value}" for cookie in self.client.cookies.jar)

    async def close(self) -> None:
        await self.client.aclose()


def server_url(hub: Hub, user: str, *parts: str) -> str:
    return "/".join([hub.base, "user", user, *parts])


async def websocket(url: str, headers: dict[str, str]) -> Any:
    """A WebSocket through the proxy (``http`` URLs become ``ws``)."""
    request = tornado.httpclient.HTTPRequest(url.replace("http://", "ws://", 1), headers=headers)
    return await tornado.websocket.websocket_connect(request, max_message_size=64 * 1024 * 1024)


def main() -> None:
    parser = argparse.ArgumentParser(description="Run the test hub (alice and bob spawned) until killed.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--model-url", required=True)
    parser.add_argument("--notebook", action="append", default=[], help="an empty notebook in each home")
    args = parser.parse_args()
    hub = Hub(args.model_url, port=args.port)
    for user in USERS:
        for name in args.notebook:
            hub.home(user).mkdir(exist_ok=True)
            notebook = nbformat.v4.new_notebook(
                metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
            )
            nbformat.write(notebook, hub.home(user) / name)

    def stop(*_: object) -> None:
        hub.stop()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        hub.start()
        hub.spawn(*SPAWNED)
        print(f"hub ready on {hub.base} (homes in {hub.homes})", flush=True)
        while True:
            time.sleep(3600)
    finally:
        hub.stop()


if __name__ == "__main__":
    main()
