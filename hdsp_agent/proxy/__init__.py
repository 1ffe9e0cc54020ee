"""hdsp-agent as an OpenAI-compatible model backend (for Continue and other clients that run their own
tools)."""
