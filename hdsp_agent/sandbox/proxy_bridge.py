"""Inside the sandbox: ``python -I -S proxy_bridge.py SOCKET PORT COMMAND...``.

Standard library only (it runs in the sandbox, outside the hdsp_agent package). The sandbox has its own
network namespace with nothing but loopback; this listens on ``127.0.0.1:PORT`` there, hands every connection
to the allowlist proxy's Unix socket (``network_proxy.py``, outside), runs COMMAND, and exits with its status.
Programs find the port through ``HTTP_PROXY``/``HTTPS_PROXY``, which the sandbox's environment sets.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading


def _pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            target.sendall(chunk)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            target.shutdown(socket.SHUT_WR)


def _forward(client: socket.socket, socket_path: str) -> None:
    with client, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as upstream:
        try:
            upstream.connect(socket_path)
        except OSError:
            return
        other = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
        other.start()
        _pipe(client, upstream)
        other.join()


def main() -> int:
    socket_path, port, command = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)

    def accept() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=_forward, args=(client, socket_path), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    pid = os.fork()
    if pid == 0:
        try:
            for signum in (signal.SIGPIPE, signal.SIGXFSZ):
                signal.signal(signum, signal.SIG_DFL)  # as in a shell (Python ignores them)
            listener.close()
            os.execvp(command[0], command)
        finally:
            os._exit(126)
    _, status = os.waitpid(pid, 0)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main())
