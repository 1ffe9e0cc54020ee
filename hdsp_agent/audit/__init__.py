"""The audit log of one user's server: every tool call and model call as a JSON line (``log.py``), and the
``hdsp-agent audit`` summary of it (``summary.py``)."""
