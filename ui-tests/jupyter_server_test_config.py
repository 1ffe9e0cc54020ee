"""Configuration of the JupyterLab started by playwright.config.ts (never use it for real work).

Port, token and root directory come from the command line; this adds what galata needs and a
settings override that keeps the "Jupyter news" toast from covering the page.
"""

import json
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
            }
        }
    )
)
c.LabApp.app_settings_dir = str(app_settings_dir)
