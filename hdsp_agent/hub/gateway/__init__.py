"""The model gateway: a JupyterHub service that holds the model key and forwards each user's OpenAI-compatible
requests to the model, under per-user quotas, writing the audit records centrally.

Users' servers call it with their own hub token (``$JUPYTERHUB_API_TOKEN``) as the key; the model's key lives
only in the gateway's process (its environment or a file only the hub's user can read). Run by the hub:
``python -m hdsp_agent.hub.gateway`` (see ``hdsp_agent/hub/config.py`` and docs/deploy.md).
"""
