"""Secrets taken out of what a tool hands back, before the model (or the conversation store) sees it.

The permission layers keep tools from reading secrets: the sandbox hides the server's environment, the
policy asks before secret files are read. This is the last line behind them, for what reaches a tool's
output anyway — a key the user once printed in a notebook, a token embedded in a git remote's URL that
``git remote -v`` prints, a log that quotes a request header:

- the server's own secrets, by value: every configured model key (key files read now), the Jupyter token,
  the hub's API token, the saved model-setup key — whatever the ``secrets`` callable returns;
- credentials written into URLs (``https://user:password@host``, ``https://<token>@host``), whoever's.

What is replaced says what it was, so the model can tell the user why a value is missing.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Mapping

REDACTED = "[redacted secret]"
# Shorter values are not worth hunting for (and would match ordinary text).
_MIN_SECRET_CHARS = 8
# scheme://user:password@ — the password part; and scheme://TOKEN@ where the user part is token-like.
_URL_PASSWORD = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*):(?P<secret>[^\s/@]+)@")
_URL_TOKEN = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<secret>[A-Za-z0-9_\-]{20,})@")


class SecretRedactor:
    def __init__(self, secrets: Callable[[], Iterable[str]] = lambda: ()) -> None:
        self.secrets = secrets

    def redact(self, text: str) -> str:
        if not text:
            return text
        for secret in sorted(self._values(), key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, REDACTED)
        text = _URL_PASSWORD.sub(lambda m: f"{m['head']}:{REDACTED}@", text)
        return _URL_TOKEN.sub(lambda m: f"{m['head']}{REDACTED}@", text)

    def _values(self) -> set[str]:
        found: set[str] = set()
        try:
            values = list(self.secrets())
        except Exception:  # noqa: BLE001 - an unreadable key file must not fail the tool call
            values = []
        for value in values:
            value = (value or "").strip()
            if len(value) >= _MIN_SECRET_CHARS:
                found.add(value)
        return found


def environment_secrets(environ: Mapping[str, str], patterns: Iterable[str]) -> list[str]:
    """The values of ``environ``'s variables whose names match ``patterns`` (fnmatch, case-insensitive):
    the server's own ``OPENAI_API_KEY``, ``JUPYTERHUB_API_TOKEN``, ``*_SECRET``, ..."""
    upper = [pattern.upper() for pattern in patterns]
    return [
        value for name, value in environ.items() if any(fnmatch.fnmatchcase(name.upper(), p) for p in upper)
    ]
