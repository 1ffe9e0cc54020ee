"""The readiness check behind the setup form's **Test**: can hdsp-agent work with this model, and how?

Four plain verdicts, each with the next action:

1. **Streaming** — one streamed request: do the pieces arrive one by one, or all at once (a gateway buffers)?
2. **Tool calls** — one request with a single tiny tool the model is told to call: does the endpoint accept
   ``tools``, does the model return a well-formed native call, or only a call written in text, or nothing?
   This decides the tool-call mode (``native`` or ``text``, see ``text_tools.py``) unless the user set one.
3. **Context window** — the configured window, else the one the server reports, else the assumed default.
4. **Prompt size** — what the tool profile chosen for that window sends before any conversation.

The two requests are capped (``max_tokens``) so a check costs at most ``MAX_CHECK_TOKENS`` tokens; the form
says so before it runs. The result is kept with the model's setup (``ReadinessStore``) and shown in the
picker.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx

from ..tools.profiles import resolve_profile
from ..user_text import user_text
from .context_window import detect_context_window
from .llm import DEFAULT_CONTEXT_WINDOW, ModelSettings
from .model_setup import default_setup_path, normalize_base_url
from .text_tools import parse_call

# Both requests together, prompt and answer: what the form promises before the check runs.
MAX_CHECK_TOKENS = 300
STREAM_MAX_TOKENS = 24
TOOL_MAX_TOKENS = 80
CHECK_TIMEOUT_SECONDS = 60.0
# The share of the window the prompt may take before the check warns / fails.
PROMPT_WARN_SHARE = 0.5
PROMPT_FAIL_SHARE = 0.9
FILE_NAME = "readiness.json"

PROBE_TOOL_NAME = "report_status"
PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": PROBE_TOOL_NAME,
        "description": "Report your status.",
        "parameters": {
            "type": "object",
            "properties": {"status": {"type": "string"}},
            "required": ["status"],
        },
    },
}
PROBE_MESSAGES = [
    {"role": "user", "content": 'Call the tool report_status with status "ready". Write nothing else.'}
]

Verdict = Literal["ok", "warn", "fail"]
Streaming = Literal["streamed", "buffered", "failed"]
ToolSupport = Literal["native", "malformed", "text", "none", "refused", "failed"]


@dataclass
class CheckLine:
    check: Literal["streaming", "tools", "window", "prompt"]
    verdict: Verdict
    text: str
    action: str = ""


@dataclass
class ReadinessReport:
    model: str
    base_url: str
    streaming: Streaming
    tools: ToolSupport
    tool_mode: Literal["native", "text"]
    context_window: int
    window_source: Literal["configuration", "server", "default"]
    profile: str
    prompt_tokens: int
    lines: list[CheckLine] = field(default_factory=list)
    checked_at: float = field(default_factory=time.time)
    max_tokens: int = MAX_CHECK_TOKENS

    @property
    def verdict(self) -> Verdict:
        verdicts = {line.verdict for line in self.lines}
        return "fail" if "fail" in verdicts else "warn" if "warn" in verdicts else "ok"

    def public(self) -> dict[str, Any]:
        return {**asdict(self), "verdict": self.verdict}


# (profile, tool mode) → tokens of the system prompt and tools that profile sends before any conversation.
PromptSize = Callable[[str, str], int]


async def check_readiness(
    settings: ModelSettings,
    prompt_size: PromptSize,
    client: httpx.AsyncClient | None = None,
) -> ReadinessReport:
    """Run the check against ``settings``' endpoint. Never raises for the endpoint's faults: those are
    lines of the report."""
    if client is None:
        async with httpx.AsyncClient(trust_env=True, timeout=CHECK_TIMEOUT_SECONDS) as own:
            return await check_readiness(settings, prompt_size, own)
    url = f"{settings.resolved_base_url().rstrip('/')}/chat/completions"
    headers = {**settings.extra_headers}
    # Only the key given with the settings: never one from the server's environment, which could leave for
    # whatever URL the form names.
    if settings.api_key:
        headers["Authorization"] = f"Bearer {settings.api_key}"
    streaming, stream_line = await _check_streaming(client, url, headers, settings.model)
    tools, tools_line = await _check_tools(client, url, headers, settings.model)
    tool_mode: Literal["native", "text"] = (
        "text" if settings.tool_calls == "text" else "native" if settings.tool_calls == "native" else
        "native" if tools in ("native", "malformed") else "text"
    )  # fmt: skip
    if settings.tool_calls in ("native", "text"):
        tools_line.text = user_text(
            "%1 Mode set in the configuration: %2.", tools_line.text, settings.tool_calls
        )
    window, source = await _window(settings, client)
    profile = resolve_profile(settings.profile, window)
    prompt_tokens = prompt_size(profile, tool_mode)
    return ReadinessReport(
        model=settings.model,
        base_url=settings.resolved_base_url(),
        streaming=streaming,
        tools=tools,
        tool_mode=tool_mode,
        context_window=window,
        window_source=source,
        profile=profile,
        prompt_tokens=prompt_tokens,
        lines=[
            stream_line,
            tools_line,
            _window_line(window, source),
            _prompt_line(prompt_tokens, window, profile),
        ],
    )


async def _check_streaming(
    client: httpx.AsyncClient, url: str, headers: dict[str, str], model: str
) -> tuple[Streaming, CheckLine]:
    body = {
        "model": model,
        "messages": [{"role": "user", "content": "Count from 1 to 20, separated by spaces."}],
        "max_tokens": STREAM_MAX_TOKENS,
        "stream": True,
    }
    reads_with_data = 0
    events = 0
    try:
        async with client.stream("POST", url, json=body, headers=headers) as response:
            if response.status_code != 200:
                detail = (await response.aread()).decode(errors="replace")[:300]
                return "failed", CheckLine(
                    "streaming",
                    "fail",
                    user_text("The endpoint answered HTTP %1: %2", response.status_code, detail),
                    user_text("Check the endpoint URL, the model name and the key."),
                )
            event_stream = "text/event-stream" in response.headers.get("content-type", "")
            async for piece in response.aiter_raw():
                count = piece.count(b"data:")
                if count:
                    reads_with_data += 1
                    events += count
    except httpx.HTTPError as error:
        return "failed", CheckLine(
            "streaming",
            "fail",
            user_text("The streamed request failed: %1", f"{type(error).__name__}: {error}"),
            user_text("Is the server running, and is the URL right?"),
        )
    # A buffering gateway hands over the whole answer in one piece (or not as server-sent events at all).
    # An answer of only one or two events cannot tell the two apart: given the benefit of the doubt.
    if not event_stream or (reads_with_data <= 1 and events > 3):
        return "buffered", CheckLine(
            "streaming",
            "warn",
            user_text(
                "Answers arrive all at once, not piece by piece: something between you and the model "
                "buffers the stream."
            ),
            user_text(
                "Turn off response buffering in the proxy or gateway (nginx: proxy_buffering off); "
                "until then answers appear only when complete."
            ),
        )
    return "streamed", CheckLine(
        "streaming", "ok", user_text("Streaming works: the answer arrives as it is written.")
    )


async def _check_tools(
    client: httpx.AsyncClient, url: str, headers: dict[str, str], model: str
) -> tuple[ToolSupport, CheckLine]:
    body: dict[str, Any] = {
        "model": model,
        "messages": PROBE_MESSAGES,
        "tools": [PROBE_TOOL],
        "tool_choice": "required",
        "max_tokens": TOOL_MAX_TOKENS,
        "stream": False,
    }
    text_mode_action = user_text(
        "hdsp-agent will describe the tools in the prompt and read calls from the answer (text mode): "
        "expect weaker results. Models that call tools natively: Qwen 2.5/3, Llama 3.1+, Mistral, "
        "gpt-oss (on llama.cpp, start llama-server with --jinja)."
    )
    try:
        response = await _post(client, url, body, headers)
        if response.status_code in (400, 422) and not _refuses_tools(response):
            # Some servers reject "required" (llama-cpp-python); ask plainly instead.
            response = await _post(client, url, {**body, "tool_choice": "auto"}, headers)
    except httpx.HTTPError as error:
        return "failed", CheckLine(
            "tools",
            "fail",
            user_text("The tool-call request failed: %1", f"{type(error).__name__}: {error}"),
            user_text("Is the server running, and is the URL right?"),
        )
    if response.status_code != 200:
        if _refuses_tools(response):
            return "refused", CheckLine(
                "tools",
                "warn",
                user_text("The endpoint refuses tools for this model (HTTP %1).", response.status_code),
                text_mode_action,
            )
        return "failed", CheckLine(
            "tools",
            "fail",
            user_text("The tool-call request got HTTP %1: %2", response.status_code, response.text[:300]),
            user_text("Check the model name; the endpoint may not accept OpenAI tool definitions."),
        )
    try:
        message = response.json()["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        return "failed", CheckLine(
            "tools", "fail", user_text("The endpoint answered, but not in the OpenAI format."), ""
        )
    calls = message.get("tool_calls") or []
    if calls:
        function = (calls[0] or {}).get("function") or {}
        try:
            arguments = json.loads(function.get("arguments") or "")
            well_formed = function.get("name") == PROBE_TOOL_NAME and isinstance(arguments, dict)
        except (json.JSONDecodeError, TypeError):
            well_formed = False
        if well_formed:
            return "native", CheckLine("tools", "ok", user_text("Native tool calls work."))
        return "malformed", CheckLine(
            "tools",
            "warn",
            user_text("The model calls tools natively, but its call was malformed."),
            user_text("hdsp-agent repairs small slips; if calls keep failing, try a larger model."),
        )
    if parse_call(str(message.get("content") or "")) is not None or _has_block(
        str(message.get("content") or "")
    ):
        return "text", CheckLine(
            "tools",
            "warn",
            user_text("This model cannot call tools natively, but it wrote the call as text."),
            text_mode_action,
        )
    return "none", CheckLine(
        "tools",
        "warn",
        user_text("This model cannot call tools natively: it answered in prose."),
        text_mode_action,
    )


async def _post(
    client: httpx.AsyncClient, url: str, body: dict[str, Any], headers: dict[str, str]
) -> httpx.Response:
    """POST once more when the kept-alive connection turns out closed (llama-server closes it after a stream):
    a transport quirk, not a verdict on the model."""
    try:
        return await client.post(url, json=body, headers=headers)
    except httpx.RemoteProtocolError:
        return await client.post(url, json=body, headers=headers)


def _has_block(content: str) -> bool:
    from .text_tools import TextToolCallParser

    parser = TextToolCallParser({PROBE_TOOL_NAME})
    parser.feed(content)
    parser.finish()
    return bool(parser.calls)


def _refuses_tools(response: httpx.Response) -> bool:
    text = response.text.lower()
    return "does not support tools" in text or "tools are not supported" in text


async def _window(
    settings: ModelSettings, client: httpx.AsyncClient
) -> tuple[int, Literal["configuration", "server", "default"]]:
    if settings.context_window > 0:
        return settings.context_window, "configuration"
    detected = await detect_context_window(settings, client=client)
    return (detected, "server") if detected else (DEFAULT_CONTEXT_WINDOW, "default")


def _window_line(window: int, source: str) -> CheckLine:
    if source == "server":
        return CheckLine(
            "window", "ok", user_text("Context window: %1 tokens, as the server reports.", f"{window:,}")
        )
    if source == "configuration":
        return CheckLine(
            "window", "ok", user_text("Context window: %1 tokens, as configured.", f"{window:,}")
        )
    return CheckLine(
        "window",
        "warn",
        user_text("The server does not say its context window; assuming %1 tokens.", f"{window:,}"),
        user_text("Set context_window for this model if it is smaller: a longer prompt may be cut silently."),
    )


def _prompt_line(prompt_tokens: int, window: int, profile: str) -> CheckLine:
    share = prompt_tokens / window if window else 1.0
    text = user_text(
        "The %1 tool profile sends about %2 tokens before any conversation: %3 % of the window.",
        profile,
        f"{prompt_tokens:,}",
        round(100 * share),
    )
    if share >= PROMPT_FAIL_SHARE:
        return CheckLine("prompt", "fail", text, user_text("Use a model with a larger context window."))
    if share >= PROMPT_WARN_SHARE:
        return CheckLine(
            "prompt",
            "warn",
            text,
            user_text(
                "Little room is left for the conversation: use a larger window or the compact profile."
            ),
        )
    return CheckLine("prompt", "ok", text)


class ReadinessStore:
    """The latest check per model (endpoint and name), next to the saved model setup (mode 0600)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_setup_path().with_name(FILE_NAME)

    @staticmethod
    def key(base_url: str, model: str) -> str:
        return f"{normalize_base_url(base_url)} {model}"

    def all(self) -> dict[str, dict[str, Any]]:
        try:
            payload = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return payload if isinstance(payload, dict) else {}

    def get(self, base_url: str, model: str) -> dict[str, Any] | None:
        found = self.all().get(self.key(base_url, model))
        return found if isinstance(found, dict) else None

    def save(self, report: ReadinessReport) -> None:
        reports = self.all()
        reports[self.key(report.base_url, report.model)] = report.public()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(self.path.name + ".partial")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(reports, handle, indent=2)
        os.replace(partial, self.path)
