"""One headless agent turn against a model endpoint, with Jupyter's managers for the notebook tools.

Run in a subprocess by ``figures_lean.py``, with ``PYTHONPATH`` pointing at either this checkout or the code
as it was before issue 17 (``git archive``), so both are measured through the same script. Uses only APIs both
have.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from hdsp_agent.agent.conversations import ConversationManager
from hdsp_agent.agent.llm import ModelSettings
from hdsp_agent.agent.models import ModelCatalog
from hdsp_agent.agent.runtime import AgentRuntime
from hdsp_agent.agent.store import SessionStore
from hdsp_agent.cli.approvers import approver_for
from hdsp_agent.cli.run_command import _DelegatingBroker
from hdsp_agent.config import load_cli_config
from hdsp_agent.permissions.policy import build_policy
from hdsp_agent.tools.base import ToolContext
from hdsp_agent.tools.defaults import default_registry
from hdsp_agent.tools.jupyter import close_notebook_tools
from hdsp_agent.tools.jupyter.headless import headless_jupyter


async def main(args: argparse.Namespace) -> None:
    root = Path(args.root).resolve()
    config = load_cli_config()
    approver = approver_for("all")
    settings = ModelSettings(model="m", base_url=args.base_url, max_retries=0, context_window=args.window)
    async with headless_jupyter(root) as jupyter:
        runtime = AgentRuntime(
            registry=default_registry(config),
            policy=build_policy(config, root),
            models=ModelCatalog([settings]),
            context_factory=lambda **overrides: ToolContext(
                root_dir=root,
                kernel_manager=jupyter.kernel_manager,
                session_manager=jupyter.session_manager,
                contents_manager=jupyter.contents_manager,
                **overrides,
            ),
            max_steps=args.max_steps,
            broker_factory=lambda emit: _DelegatingBroker(approver),
        )
        with tempfile.TemporaryDirectory() as scratch:
            manager = ConversationManager(SessionStore(Path(scratch) / "s.sqlite3"), runtime)
            session = manager.create()
            context = {"active_document": {"path": args.notebook}} if args.notebook else {}
            session.send(args.prompt, context)
            await session.wait()
            await manager.shutdown()
        await close_notebook_tools(runtime.registry)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--prompt", required=True)
    parser.add_argument("--window", type=int, required=True)
    parser.add_argument("--notebook")
    parser.add_argument("--max-steps", type=int, default=30)
    asyncio.run(main(parser.parse_args()))
