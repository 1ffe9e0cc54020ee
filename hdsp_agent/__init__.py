"""hdsp-agent: an AI agent in the JupyterLab sidebar that acts through one audited tool pipeline."""

from __future__ import annotations

try:
    from ._version import __version__
except ImportError:  # a source checkout that was never built: no generated _version.py yet
    import warnings

    warnings.warn("Importing 'hdsp_agent' outside a proper installation.", stacklevel=2)
    __version__ = "dev"

# The npm package name, which is also the labextension's directory name.
LABEXTENSION_NAME = "hdsp-agent"


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": LABEXTENSION_NAME}]


def _jupyter_server_extension_points() -> list[dict[str, object]]:
    from .app import HdspAgentApp

    return [{"module": "hdsp_agent", "app": HdspAgentApp}]
