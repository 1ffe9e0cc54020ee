"""Configuration of the JupyterLab started by playwright.config.ts (never use it for real work).

Port, token and root directory come from the command line; this adds what galata needs, settings
overrides that keep the "Jupyter news" toast from covering the page and hdsp-agent's inline completion off
(tests/inline-completion.spec.ts turns it on), and points hdsp-agent at
the scripted model server that playwright.config.ts starts (port in $HDSP_UI_MODEL_PORT), and configures one
MCP server (tests/mcp.spec.ts).
"""

import json
import os
import sys
import tempfile
from pathlib import Path

import jupyterlab

c = get_config()  # noqa: F821

# galata's in-page helpers extension, shipped with JupyterLab.
c.LabServerApp.extra_labextensions_path = str(Path(jupyterlab.__file__).parent / "galata")
c.LabApp.expose_app_in_browser = True
c.LabApp.workspaces_dir = tempfile.mkdtemp(prefix="hdsp-agent-ui-workspaces-")
c.LabApp.user_settings_dir = tempfile.mkdtemp(prefix="hdsp-agent-ui-settings-")

app_settings_dir = Path(tempfile.mkdtemp(prefix="hdsp-agent-ui-app-settings-"))
(app_settings_dir / "overrides.json").write_text(
    json.dumps(
        {
            "@jupyterlab/apputils-extension:notification": {
                "checkForUpdates": False,
                "fetchNews": "false",
            },
            # hdsp-agent's inline completion would ask the scripted model at every pause in a cell and take
            # the replies other specs scripted: off, and on in tests/inline-completion.spec.ts only.
            "@jupyterlab/completer-extension:inline-completer": {
                "providers": {"hdsp-agent": {"enabled": False}}
            },
        }
    )
)
c.LabApp.app_settings_dir = str(app_settings_dir)

# hdsp-agent talks to the scripted OpenAI-compatible server; each test loads its replies (POST /script).
# HDSP_UI_NO_MODEL=1 (tests/setup.spec.ts): a fresh lab with no model, set up from the sidebar instead.
if not os.environ.get("HDSP_UI_NO_MODEL"):
    c.HdspAgentApp.base_url = f"http://127.0.0.1:{os.environ.get('HDSP_UI_MODEL_PORT', '18766')}/v1"
    c.HdspAgentApp.model = "scripted"
    c.HdspAgentApp.api_key = "scripted-key"
c.HdspAgentApp.max_retries = 0
c.HdspAgentApp.probe_local_models = False
# One store for the whole run (playwright.config.ts sets the folder): a lab restarted by a test finds it again.
_store_dir = os.environ.get("HDSP_UI_STORE_DIR") or tempfile.mkdtemp(prefix="hdsp-agent-ui-store-")
c.HdspAgentApp.store_path = str(Path(_store_dir) / "sessions.sqlite3")
c.HdspAgentApp.audit_log_path = str(Path(c.HdspAgentApp.store_path).parent / "audit.jsonl")
# "Always allow" in a test saves its rule here, never in the user's own ~/.jupyter.
_permissions_dir = Path(tempfile.mkdtemp(prefix="hdsp-agent-ui-permissions-"))
c.HdspAgentApp.permissions_file = str(_permissions_dir / "permissions.json")

# One MCP server for tests/mcp.spec.ts: the demo server of the Python tests over stdio (started lazily, on the
# first turn or when the sidebar's MCP drawer opens), and one disabled entry.
_demo_mcp = {
    "command": sys.executable,
    "args": [str(Path(__file__).resolve().parent.parent / "tests" / "mcp_servers" / "demo_server.py")],
    "autoApprove": ["echo"],
}
c.HdspAgentApp.mcp_servers = {"mcpServers": {"demo": _demo_mcp, "off": {**_demo_mcp, "disabled": True}}}
