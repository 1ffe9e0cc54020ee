"""``POST complete``: one inline completion for JupyterLab's inline completer (``src/inlineCompletion.ts``).

Behind Jupyter auth and XSRF like every route here. The model request runs as a task the handler cancels
when the browser goes away (the completer aborts a stale request as soon as the user types on), so a
keystroke pause costs the model at most one request that anyone still waits for. Counted in the day's tokens
and the audit log like ``/v1`` (door ``"complete"``).
"""

from __future__ import annotations

import asyncio

import httpx
import tornado.web

from ..agent.inline_completion import Completion, CompletionContext, SensitiveDocument
from ..agent.models import ModelNotConfigured
from ..agent.quotas import QuotaExceeded, UsageMeter
from .errors import RestError
from .rest_models import InlineCompletionReply, InlineCompletionRequest
from .routes import _AgentHandler, route

DOOR = "complete"


class InlineCompletionHandler(_AgentHandler):
    _task: asyncio.Task[Completion] | None = None

    @tornado.web.authenticated
    async def post(self) -> None:
        body = self.body(InlineCompletionRequest)
        context = CompletionContext(
            prefix=body.prefix,
            suffix=body.suffix,
            language=body.language,
            path=body.path,
            cells_above=tuple(body.cells_above),
            variables=tuple(body.variables),
        )
        completer = self.agent.inline_completer
        runtime = self.agent.runtime
        try:
            settings = completer.settings()
        except ModelNotConfigured as error:
            raise RestError("completion_unavailable", error) from None
        meter = UsageMeter(runtime.quotas, settings.label, audit=runtime.audit, door=DOOR)
        try:
            meter.check()
        except QuotaExceeded as refused:
            raise RestError("completion_unavailable", refused.message) from None
        self._task = asyncio.ensure_future(completer.complete(context))
        try:
            completion = await self._task
        except asyncio.CancelledError:
            return  # the browser left: nobody to answer
        except SensitiveDocument:
            self.reply(InlineCompletionReply, {"text": "", "skipped": "sensitive"})
            return
        except httpx.HTTPError as error:
            raise RestError("completion_failed", error) from None
        finally:
            self._task = None
        if completion.mode:
            meter.record(
                [{"content": context.prefix + context.suffix}], [], {"answer": completion.text}, None
            )
        self.reply(
            InlineCompletionReply,
            {"text": completion.text, "mode": completion.mode, "model": completion.model},
        )

    def on_connection_close(self) -> None:
        # The model request is dropped with the browser's: its connection to the endpoint closes.
        if self._task is not None:
            self._task.cancel()
        super().on_connection_close()


def build_completion_handlers() -> list[tuple[str, type[tornado.web.RequestHandler]]]:
    return [(route("complete"), InlineCompletionHandler)]
