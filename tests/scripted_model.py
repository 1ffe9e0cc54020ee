"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1: the only stand-in in our tests.

It speaks the real wire format — SSE chunks with ``choices[].delta`` text and ``tool_calls`` fragments,
``index`` on every choice and call, ``finish_reason`` on the last chunk, ``data: [DONE]`` — so the real
``openai`` client, our loop and the executor run end to end. Each test scripts the replies (text, tool calls
split into deltas, parallel calls, HTTP errors, 429s, dropped connections, slow streams) and can read back
every request it received.

With ``max_prompt_tokens`` it behaves like a small local model: a request whose prompt (counted with
o200k_base) is longer is refused with HTTP 400 and llama.cpp's error, and ``GET /props`` reports the window as
llama.cpp does.

Runs in its own thread so any event loop (pytest-asyncio's, pytest-jupyter's) can talk to it. Also runnable as
``python tests/scripted_model.py --port N --script script.json [--max-prompt-tokens 4096]`` for the browser
tests.
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from o200k import prompt_tokens


@dataclass
class Reply:
    """One scripted answer to one request."""

    chunks: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    body: dict[str, Any] | None = None  # for error statuses
    headers: dict[str, str] = field(default_factory=dict)
    drop_after: int | None = None  # close the connection after this many chunks, without [DONE]
    delay: float = 0.0  # seconds between chunks
    hang: float = 0.0  # seconds to wait before answering at all
    buffered: bool = False  # every chunk in one write, as a buffering gateway hands a stream over
    # After this many chunks, wait for ``POST /release`` (at most a minute): a turn that stays busy exactly as
    # long as a browser test needs, however slow the machine.
    hold_after: int | None = None


def _chunk(
    delta: dict[str, Any], finish_reason: str | None = None, model: str = "scripted"
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def text(content: str, *, pieces: int = 4, reasoning: str | None = None, delay: float = 0.0) -> Reply:
    """A plain answer streamed in ``pieces`` deltas (reasoning first, if given)."""
    chunks = [_chunk({"role": "assistant", "content": ""})]
    if reasoning:
        chunks.append(_chunk({"reasoning_content": reasoning}))
    for part in _split(content, pieces):
        chunks.append(_chunk({"content": part}))
    chunks.append(_chunk({}, "stop"))
    return Reply(chunks, delay=delay)


def tool_calls(
    *calls: tuple[str, str],
    pieces: int = 3,
    content: str = "",
    finish_reason: str | None = "tool_calls",
    repeat_name: bool = False,
    omit_index: bool = False,
    call_ids: Iterable[str] | None = None,
) -> Reply:
    """Tool calls ``(name, arguments_json)``, each's arguments split into ``pieces`` deltas.

    ``repeat_name`` repeats the name (and id) in every chunk, as llama.cpp's server does; ``omit_index`` drops
    the
    ``index`` of each call, as some gateways do.
    """
    ids = list(call_ids) if call_ids is not None else [f"call_{i}" for i in range(len(calls))]
    chunks = [_chunk({"role": "assistant", "content": content or None})]
    for position, (name, arguments) in enumerate(calls):
        for piece_number, part in enumerate(_split(arguments, pieces) or [""]):
            call: dict[str, Any] = {"function": {"arguments": part}}
            if not omit_index:
                call["index"] = position
            if piece_number == 0 or repeat_name:
                call.update({"id": ids[position], "type": "function"})
                call["function"]["name"] = name
            chunks.append(_chunk({"tool_calls": [call]}))
    chunks.append(_chunk({}, finish_reason))
    return Reply(chunks)


def error(status: int, message: str = "scripted error", *, retry_after: float | None = None) -> Reply:
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    return Reply(
        status=status,
        body={"error": {"message": message, "type": "scripted", "code": status}},
        headers=headers,
    )


def _split(content: str, pieces: int) -> list[str]:
    if not content:
        return []
    size = max(1, -(-len(content) // max(1, pieces)))
    return [content[i : i + size] for i in range(0, len(content), size)]


ReplyFactory = Callable[[dict[str, Any]], Reply]


class ScriptedModel:
    """Start with ``with ScriptedModel([...]) as model:``; point clients at ``model.base_url``."""

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        factory: ReplyFactory | None = None,
        port: int = 0,
        max_prompt_tokens: int | None = None,
        summary_reply: Reply | None = None,
        tool_calls_supported: bool | None = None,
        report_usage: bool = False,
        completions: bool = False,
    ) -> None:
        self._replies = list(replies)
        self._factory = factory
        self._lock = threading.Lock()
        # A small model's window: longer prompts are refused (HTTP 400), never truncated.
        self.max_prompt_tokens = max_prompt_tokens
        # The answer to the agent's compaction requests (no tools, the summarizer's system prompt), given
        # without taking a reply from the script: a browser test cannot know when the agent will compact.
        self.summary_reply = summary_reply
        # What ``/props`` says of the chat template's tool calls (llama.cpp's ``chat_template_caps``); None:
        # nothing, as servers other than llama.cpp.
        self.tool_calls_supported = tool_calls_supported
        # Answer ``stream_options.include_usage`` with a usage chunk (o200k prompt size, one token a delta).
        self.report_usage = report_usage
        # Answer the legacy ``/v1/completions`` (with ``suffix``: fill-in-the-middle) from the same script;
        # False: 404, as a chat-only server.
        self.completions = completions
        # The prompt size (o200k tokens) of every request, refused ones included, in arrival order.
        self.prompt_sizes: list[int] = []
        self.refused: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        self.released = threading.Event()  # set by ``POST /release``: held replies go on
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def add(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def load_script(
        self, replies: Iterable[Reply], max_prompt_tokens: int | None = None, completions: bool = False
    ) -> None:
        """Replace the replies still queued, set the window and whether ``/v1/completions`` answers, forget
        the requests seen (``POST /script``)."""
        with self._lock:
            self._replies = list(replies)
            self.max_prompt_tokens = max_prompt_tokens
            self.released.clear()
            self.completions = completions
            self.requests.clear()
            self.request_headers.clear()
            self.prompt_sizes.clear()
            self.refused.clear()

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._replies)

    def start(self) -> ScriptedModel:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next_reply(self, request: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(request)
            self.request_headers.append(headers)
            if self.summary_reply is not None and _is_summary_request(request):
                return self.summary_reply
            if self._replies:
                return self._replies.pop(0)
        if self._factory is not None:
            return self._factory(request)
        return error(500, "the scripted model has no reply left for this request")

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # Small SSE writes must go out at once, not wait for the peer's delayed ACK (Nagle).
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/requests":  # what clients sent, for browser tests to inspect
                    with model._lock:
                        self._json(
                            200,
                            {
                                "requests": list(model.requests),
                                "pending": len(model._replies),
                                "prompt_sizes": list(model.prompt_sizes),
                                "refused": len(model.refused),
                            },
                        )
                    return
                props_known = model.max_prompt_tokens or model.tool_calls_supported is not None
                if self.path.rstrip("/") == "/props" and props_known:  # llama.cpp's server
                    props: dict[str, Any] = {"total_slots": 1}
                    if model.max_prompt_tokens:
                        props["default_generation_settings"] = {"n_ctx": model.max_prompt_tokens}
                    if model.tool_calls_supported is not None:
                        props["chat_template_caps"] = {"supports_tool_calls": model.tool_calls_supported}
                    self._json(200, props)
                    return
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") == "/script":  # browser tests load their own replies
                    model.load_script(
                        [reply_from_json(spec) for spec in request.get("replies", [])],
                        request.get("max_prompt_tokens"),
                        bool(request.get("completions")),
                    )
                    self._json(200, {"pending": model.pending})
                    return
                if self.path.rstrip("/") == "/release":  # a held reply (hold_after) goes on
                    model.released.set()
                    self._json(200, {})
                    return
                if self.path.rstrip("/").endswith("/v1/completions") and model.completions:
                    reply = self._answerable_reply(request)
                    if reply is None:
                        return
                    content = _collapse(reply.chunks)["choices"][0]["message"]["content"] or ""
                    self._json(200, {"object": "text_completion", "choices": [{"index": 0, "text": content}]})
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    # Other servers' endpoints (Ollama's /api/show, ...): this is not one of them.
                    self._json(404, {"error": {"message": f"not found: {self.path}"}})
                    return
                if model.max_prompt_tokens and "messages" in request:
                    size = prompt_tokens(request)
                    with model._lock:
                        model.prompt_sizes.append(size)
                    if size > model.max_prompt_tokens:
                        with model._lock:
                            model.refused.append(request)
                        self._json(400, _context_exceeded(size, model.max_prompt_tokens))
                        return
                reply = self._answerable_reply(request)
                if reply is None:
                    return
                if not request.get("stream"):
                    self._json(200, _collapse(reply.chunks))
                    return
                usage_wanted = bool((request.get("stream_options") or {}).get("include_usage"))
                self._stream(reply, prompt_tokens(request) if model.report_usage and usage_wanted else None)

            def _answerable_reply(self, request: dict[str, Any]) -> Reply | None:
                """The next reply, after its hang; None when it was an error status, already answered."""
                reply = model._next_reply(request, {k.lower(): v for k, v in self.headers.items()})
                if reply.hang:
                    time.sleep(reply.hang)
                if reply.status != 200:
                    self._json(reply.status, reply.body or {}, reply.headers)
                    return None
                return reply

            def _stream(self, reply: Reply, usage_prompt_tokens: int | None = None) -> None:
                # Chunked transfer encoding, as real servers stream: a dropped connection is then a broken
                # body the client notices, not a clean end.
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                chunks = list(reply.chunks)
                if usage_prompt_tokens is not None:
                    completion = sum(1 for c in chunks if c.get("choices") and c["choices"][0].get("delta"))
                    usage = {
                        "prompt_tokens": usage_prompt_tokens,
                        "completion_tokens": completion,
                        "total_tokens": usage_prompt_tokens + completion,
                    }
                    chunks.append(
                        {
                            "id": "chatcmpl-scripted",
                            "object": "chat.completion.chunk",
                            "choices": [],
                            "usage": usage,
                        }
                    )
                if reply.buffered:
                    body = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
                    self._write_chunk(body.encode())
                    self._write_chunk(b"")
                    return
                try:
                    for number, chunk in enumerate(chunks):
                        if reply.drop_after is not None and number >= reply.drop_after:
                            self.close_connection = True
                            self.connection.shutdown(socket.SHUT_RDWR)
                            return
                        # ``{"_raw": "..."}``: bytes a broken server sends, written as they are.
                        data = chunk["_raw"] if "_raw" in chunk else json.dumps(chunk)
                        self._write_chunk(f"data: {data}\n\n".encode())
                        if reply.delay:
                            time.sleep(reply.delay)
                        if reply.hold_after is not None and number + 1 == reply.hold_after:
                            model.released.wait(timeout=60)
                    self._write_chunk(b"data: [DONE]\n\n")
                    self._write_chunk(b"")
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client went away (a canceled turn)

            def _write_chunk(self, payload: bytes) -> None:
                self.wfile.write(f"{len(payload):X}\r\n".encode() + payload + b"\r\n")
                self.wfile.flush()

            def _json(
                self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

        return Handler


SUMMARY_SYSTEM_START = "You compact a coding agent's conversation"


def _is_summary_request(request: dict[str, Any]) -> bool:
    messages = request.get("messages") or [{}]
    return not request.get("tools") and str(messages[0].get("content", "")).startswith(SUMMARY_SYSTEM_START)


def _context_exceeded(size: int, limit: int) -> dict[str, Any]:
    """llama.cpp's answer to a prompt longer than its context (``exceed_context_size_error``)."""
    return {
        "error": {
            "code": 400,
            "message": f"the request exceeds the available context size ({size} > {limit} tokens), "
            "try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": size,
            "n_ctx": limit,
        }
    }


def _collapse(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The non-streaming form of a streamed reply."""
    content = ""
    calls: dict[int, dict[str, Any]] = {}
    finish = "stop"
    for chunk in chunks:
        choice = chunk["choices"][0]
        delta = choice.get("delta", {})
        content += delta.get("content") or ""
        for position, call in enumerate(delta.get("tool_calls") or []):
            index = call.get("index", position)
            entry = calls.setdefault(
                index, {"id": call.get("id"), "type": "function", "function": {"name": "", "arguments": ""}}
            )
            entry["function"]["name"] = call.get("function", {}).get("name") or entry["function"]["name"]
            entry["function"]["arguments"] += call.get("function", {}).get("arguments") or ""
        finish = choice.get("finish_reason") or finish
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1,
        "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def reply_from_json(spec: dict[str, Any]) -> Reply:
    """A reply from a JSON script entry: {"text": "...", "reasoning"?, "pieces"?, "delay"?, "hold_after"?} |
    {"tool_calls": [[name, args], ...], "pieces"?, "delay"?} | {"error": 500}."""
    if "text" in spec:
        reply = text(
            spec["text"],
            pieces=spec.get("pieces", 4),
            reasoning=spec.get("reasoning"),
            delay=spec.get("delay", 0.0),
        )
        reply.hold_after = spec.get("hold_after")
        return reply
    if "tool_calls" in spec:
        reply = tool_calls(*[(name, args) for name, args in spec["tool_calls"]], pieces=spec.get("pieces", 3))
        reply.delay = spec.get("delay", 0.0)
        return reply
    return error(int(spec.get("error", 500)), spec.get("message", "scripted error"))


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve a scripted OpenAI-compatible model on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="JSON file: a list of reply specs, served in order")
    parser.add_argument(
        "--max-prompt-tokens", type=int, help="refuse longer prompts (HTTP 400), as llama.cpp"
    )
    args = parser.parse_args()
    replies = [reply_from_json(spec) for spec in json.load(open(args.script))] if args.script else []
    fallback = text("(the scripted model has nothing more to say)")
    summary = text("Done so far: see the notebook. Files and cells touched: the open notebook. Open: none.")
    model = ScriptedModel(
        replies,
        factory=lambda request: fallback,
        port=args.port,
        max_prompt_tokens=args.max_prompt_tokens,
        summary_reply=summary,
    )
    print(f"scripted model on {model.base_url}", flush=True)
    model.start()._thread.join()


if __name__ == "__main__":
    main()
