"""Remote kernels: the notebook tools on a Jupyter server whose kernels live in a ``jupyter kernelgateway``.

The server is configured as a user would (``GatewayClient.url``), so its kernel and session managers are the
gateway ones; run_cell must find and start kernels through them, not assume local ZMQ kernels.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import nbformat
import pytest
from jupyter_process import JupyterProcess, free_port, run_turn_over_ws
from scripted_model import ScriptedModel, text, tool_calls


@pytest.fixture
def kernel_gateway() -> Iterator[tuple[str, str]]:
    """A real kernel gateway on loopback: (url, token)."""
    port, token = free_port(), secrets.token_hex(16)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kernel_gateway",
            "--KernelGatewayApp.ip=127.0.0.1",
            f"--KernelGatewayApp.port={port}",
            f"--KernelGatewayApp.auth_token={token}",
            # Listing kernels is off by default; the test checks where the cell ran.
            "--JupyterWebsocketPersonality.list_kernels=True",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/api", headers={"Authorization": f"token {token}"}, timeout=1).is_success:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the kernel gateway did not start")
            time.sleep(0.1)
        yield url, token
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.mark.asyncio
async def test_run_cell_runs_on_a_kernel_of_the_gateway(kernel_gateway: tuple[str, str]) -> None:
    gateway_url, gateway_token = kernel_gateway
    code = "print(6*7)"
    script = [tool_calls(("run_cell", json.dumps({"path": "nb.ipynb", "code": code}))), text("done")]
    with ScriptedModel(script) as model:
        server = JupyterProcess(
            model_url=model.base_url,
            extra={"allow_rules": ["run_cell"]},
            server_config={"GatewayClient": {"url": gateway_url, "auth_token": gateway_token}},
        )
        nbformat.write(nbformat.v4.new_notebook(), server.root / "nb.ipynb")
        server.start()
        try:
            async with httpx.AsyncClient(timeout=60) as http:
                ws = await server.connect(await server.create_session(http))
                events = await run_turn_over_ws(ws, "compute 6*7 in nb.ipynb")
                ws.close()
                remote = (
                    await http.get(
                        f"{gateway_url}/api/kernels", headers={"Authorization": f"token {gateway_token}"}
                    )
                ).json()
                sessions = (await http.get(f"{server.base}/api/sessions", headers=server.headers)).json()
            done = [e for e in events if e["type"] == "tool.status" and e["status"] == "done"]
            assert done, [e for e in events if e["type"] == "tool.status"]
            assert "42" in done[0]["content"]
            # The kernel the cell ran on is the gateway's, and it is the notebook's session kernel.
            assert len(remote) == 1
            assert [s["kernel"]["id"] for s in sessions if s["path"] == "nb.ipynb"] == [remote[0]["id"]]
            await asyncio.sleep(0.2)
            cell = nbformat.read(server.root / "nb.ipynb", as_version=4).cells[0]
            assert cell.source == code
            assert cell.outputs[0].text == "42\n"
        finally:
            server.stop()
