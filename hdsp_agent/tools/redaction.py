"""Secrets taken out of what a tool hands back, before the model (or the conversation store) sees it.

The permission layers keep tools from reading secrets: the sandbox hides the server's environment and masks
the project's secret files, the policy asks before secret files are read. This is the last line behind them,
for what reaches a tool's output (or the system prompt) anyway — a key the user once printed in a notebook, a
token embedded in a git remote's URL that ``git remote -v`` prints, a log that quotes a request header:

- the server's own secrets, by value: every configured model key (key files read now), the Jupyter token,
  the hub's API token, the saved model-setup key — whatever the ``secrets`` callable returns — and, because
  read-only commands re-encode what they print, those that look like keys also as hex (``xxd``, ``od -x``),
  base64, spaced out one character at a time (``od -c``), reversed and rot13, and any run of ``_PIECE_CHARS``
  characters of one (``cut -c``, ``grep -o``, a page boundary);
- credentials written into URLs, whoever's (``https://user:password@host``, ``https://<token>@host``,
  ``<token>@github.com:org/repo`` and ``user:password@host`` without a scheme), and in authorization headers
  (git's ``http.extraheader = AUTHORIZATION: basic …``, ``Bearer …``).

Redaction by value is a last line, not a wall: an encoding not listed here (gzip, a cipher, every other
character) passes. What keeps a secret from the model is that commands cannot reach it (permissions.md,
"Where secrets cannot go").

What is replaced says what it was, so the model can tell the user why a value is missing.
"""

from __future__ import annotations

import base64
import codecs
import fnmatch
import functools
import re
from collections.abc import Callable, Iterable, Mapping

REDACTED = "[redacted secret]"
# Shorter values are not worth hunting for (and would match ordinary text).
_MIN_SECRET_CHARS = 8
# A run of this many characters of a known secret counts as the secret (pieces printed apart, a value cut at
# a page or line boundary). Shorter pieces would match ordinary text (a key's "sk-proj-" prefix).
_PIECE_CHARS = 10
# Only values that look like keys are looked for re-encoded or in pieces: a secret-named variable can hold a
# path or a word, whose pieces are everywhere.
_TOKEN_LIKE = re.compile(r"[A-Za-z0-9_\-.+=~]{16,}")
_MIXED = re.compile(r"(?=.*[A-Za-z])(?=.*[0-9])")
# scheme://user:password@ — the password part; and scheme://TOKEN@ where the user part is token-like.
_URL_PASSWORD = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*):(?P<secret>[^\s/@]+)@")
_URL_TOKEN = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<secret>[A-Za-z0-9_\-]{20,})@")
# Without a scheme: ``TOKEN@github.com:org/repo`` (a token-like user part before a host that a path or port
# follows; ``git@github.com:`` keeps its short user) and ``user:password@host``.
_BARE_TOKEN = re.compile(
    r"(?<![\w/:@.%+-])(?P<secret>[A-Za-z0-9_\-]{20,})@(?=[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+[:/])"
)
_BARE_PASSWORD = re.compile(
    r"(?P<head>(?<![\w/:@.%+-])[A-Za-z0-9_.\-]+):(?P<secret>[^\s/@:]{6,})@(?=[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)"
)
# Authorization headers as git's ``http.extraheader`` (and logs) write them, and a bare bearer token.
_AUTH_HEADER = re.compile(
    r"(?P<head>\b(?:proxy-)?authorization\s*[:=]\s*(?:(?:basic|bearer|token|digest|negotiate)\s+)?)"
    r"(?P<secret>[A-Za-z0-9._~+/=\-]{8,})",
    re.IGNORECASE,
)
_TOKEN_HEADER = re.compile(
    r"(?P<head>\b(?:private-token|x-api-key|x-auth-token|api-key|x-access-token)\s*[:=]\s*)"
    r"(?P<secret>[A-Za-z0-9._~+/=\-]{8,})",
    re.IGNORECASE,
)
_BEARER = re.compile(r"(?P<head>\bbearer\s+)(?P<secret>[A-Za-z0-9._~+/=\-]{16,})", re.IGNORECASE)
# Between two hex bytes of a dump: nothing, a space or colon (``xxd -p``, ``od -x`` groups), a line break, or
# the rest of a dump line (its ASCII column) and the next line's offset.
_HEX_GAP = r"(?:[ :]{0,2}|[ \t]*\n[ \t]*|[ \t]+[^\n]*\n[ \t]*[0-9a-fA-F]+:?[ \t]+)"
# Between two characters of ``od -c``: its column padding, or a line break and the next line's offset.
_CHAR_GAP = r"(?:[ \t]{1,4}|[ \t]*\n[0-7]+[ \t]+)"


class SecretRedactor:
    def __init__(self, secrets: Callable[[], Iterable[str]] = lambda: ()) -> None:
        self.secrets = secrets

    def redact(self, text: str) -> str:
        if not text:
            return text
        values = self._values()
        for secret in sorted(values, key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, REDACTED)
        tokens = frozenset(value for value in values if _TOKEN_LIKE.fullmatch(value) and _MIXED.search(value))
        if tokens:
            encodings, pieces = _value_patterns(tokens)
            text = encodings.sub(REDACTED, text)
            text = _without_pieces(text, pieces)
        text = _URL_PASSWORD.sub(lambda m: f"{m['head']}:{REDACTED}@", text)
        text = _URL_TOKEN.sub(lambda m: f"{m['head']}{REDACTED}@", text)
        text = _BARE_TOKEN.sub(f"{REDACTED}@", text)
        text = _BARE_PASSWORD.sub(lambda m: f"{m['head']}:{REDACTED}@", text)
        for header in (_AUTH_HEADER, _TOKEN_HEADER, _BEARER):
            text = header.sub(lambda m: f"{m['head']}{REDACTED}", text)
        return text

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


@functools.lru_cache(maxsize=16)
def _value_patterns(secrets: frozenset[str]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Two patterns for ``secrets`` (built once per set: it changes only when a key does): every re-encoding
    listed in the module docstring, and — as a lookahead, so overlapping finds are all seen — every run of
    ``_PIECE_CHARS`` characters of one."""
    encodings: list[str] = []
    pieces: set[str] = set()
    for secret in sorted(secrets, key=len, reverse=True):
        raw = secret.encode("utf-8")
        encodings.append(_HEX_GAP.join(f"(?i:{byte:02x})" for byte in raw))
        encodings.append(_CHAR_GAP.join(re.escape(char) for char in secret))
        encodings += [re.escape(form) for form in _base64_forms(raw)]
        encodings += [re.escape(secret[::-1]), re.escape(codecs.encode(secret, "rot13"))]
        pieces.update(secret[start : start + _PIECE_CHARS] for start in range(len(secret) - _PIECE_CHARS + 1))
    alternatives = "|".join(re.escape(piece) for piece in sorted(pieces, key=len, reverse=True))
    return re.compile("|".join(encodings)), re.compile(f"(?=({alternatives or '(?!)'}))")


def _without_pieces(text: str, pieces: re.Pattern[str]) -> str:
    """``text`` with every stretch covered by pieces of a secret (overlapping finds merged) replaced."""
    spans: list[list[int]] = []
    for match in pieces.finditer(text):
        start, end = match.start(), match.start() + len(match.group(1))
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    if not spans:
        return text
    parts: list[str] = []
    position = 0
    for start, end in spans:
        parts += [text[position:start], REDACTED]
        position = end
    parts.append(text[position:])
    return "".join(parts)


def _base64_forms(raw: bytes) -> list[str]:
    """The part of ``raw``'s base64 that is the same wherever ``raw`` sits in a longer text (three byte
    alignments, standard and URL-safe alphabets), without the edge characters its neighbours change."""
    forms: list[str] = []
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode("ascii").rstrip("=")
        start = -(-shift * 4 // 3)  # characters that depend on the bytes before
        end = (shift + len(raw)) * 4 // 3  # characters that depend only on ``raw``
        stable = encoded[start:end]
        if len(stable) >= _MIN_SECRET_CHARS:
            forms += [stable, stable.replace("+", "-").replace("/", "_")]
    return forms


def environment_secrets(environ: Mapping[str, str], patterns: Iterable[str]) -> list[str]:
    """The values of ``environ``'s variables whose names match ``patterns`` (fnmatch, case-insensitive):
    the server's own ``OPENAI_API_KEY``, ``JUPYTERHUB_API_TOKEN``, ``*_SECRET``, ..."""
    upper = [pattern.upper() for pattern in patterns]
    return [
        value for name, value in environ.items() if any(fnmatch.fnmatchcase(name.upper(), p) for p in upper)
    ]
