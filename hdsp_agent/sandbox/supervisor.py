"""The supervisor of one sandboxed command, run as a script: ``python -I -S supervisor.py SPEC_JSON``.

Standard library only (it is started for every command, outside the hdsp_agent package). It

1. sets the resource limits (RLIMIT_FSIZE, RLIMIT_CPU) every process below it inherits;
2. becomes a child subreaper, so a process that detaches (``setsid -f``, a double fork) is re-parented to it
   rather than to init;
3. starts the command: ``bwrap …`` as is (when the spec has an overlay, in a mount namespace of its own
   where the project root is an overlay whose writes land in a scratch dir: ``overlay.py``), or — for the
   Landlock layer — a child that restricts itself and then execs ``bash -c``;
   With the administrator's network allowlist, it also serves the allowlist proxy (``network_proxy.py``)
   for as long as the command runs;
4. watches the number of processes below it and stops them all when there are more than ``max_processes``
   (RLIMIT_NPROC does not bind uid 0, and a cgroup is not always ours to create);
5. when the command exits (or the server sends SIGTERM), stops every process still below it, then exits with
   the command's status.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys
import time

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_POLL_SECONDS = 0.05
# A full count walks all of /proc (milliseconds); between counts, the system-wide task total from
# /proc/loadavg bounds how much the command can have grown, so a full count is needed only when that bound
# could pass the limit, or once a second (other processes may have exited while the command's grew).
_FULL_COUNT_SECONDS = 1.0
_TERM_GRACE_SECONDS = 0.5


def _descendants(root_pid: int) -> list[int]:
    """Every process below ``root_pid`` (from /proc's parent links), nearest first."""
    return [pid for pid, _name in _descendants_named(root_pid)]


def _descendants_named(root_pid: int) -> list[tuple[int, bytes]]:
    """(pid, command name) of every process below ``root_pid``."""
    children: dict[int, list[tuple[int, bytes]]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                text = stat.read()
        except OSError:
            continue
        name = text[text.find(b"(") + 1 : text.rfind(b")")]
        fields = text[text.rfind(b")") + 2 :].split()
        if len(fields) > 1 and fields[0] not in (b"Z", b"X"):
            children.setdefault(int(fields[1]), []).append((int(entry), name))
    found: list[tuple[int, bytes]] = []
    frontier = [root_pid]
    while frontier:
        pid = frontier.pop()
        for child in children.get(pid, ()):
            found.append(child)
            frontier.append(child[0])
    return found


def _system_tasks() -> int:
    """Every process and thread on the machine (the "T" of /proc/loadavg's "R/T"): one cheap read."""
    try:
        with open("/proc/loadavg", "rb") as loadavg:
            return int(loadavg.read().split()[3].split(b"/")[1])
    except (OSError, IndexError, ValueError):
        return 1 << 30  # unknown: always count in full


class _Watchdog:
    """Whether the command has more than ``limit`` processes, counting in full only when it might."""

    def __init__(self, me: int, limit: int) -> None:
        self.me = me
        self.limit = limit
        self.count = 0
        self.total = _system_tasks()
        self.counted_at = 0.0

    def over_limit(self) -> bool:
        total = _system_tasks()
        now = time.monotonic()
        if self.count + (total - self.total) <= self.limit and now - self.counted_at < _FULL_COUNT_SECONDS:
            return False
        self.count, self.total, self.counted_at = len(_descendants(self.me)), total, now
        return self.count > self.limit


def _stop_all(me: int) -> int:
    """SIGSTOP then SIGKILL everything below ``me`` until nothing is left (a fork flood cannot outrun it:
    stopped processes do not fork). Returns how many of the command's processes were found (bubblewrap's own
    processes, still winding down, are not counted)."""
    seen: set[int] = set()
    for _round in range(50):
        named = _descendants_named(me)
        if not named:
            break
        pids = [pid for pid, _name in named]
        seen.update(pid for pid, name in named if name != b"bwrap")
        for signum in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                try:
                    os.kill(pid, signum)
                except OSError:
                    pass
        _reap()
        time.sleep(0.01)
    _reap()
    return len(seen)


def _reap() -> dict[int, int]:
    statuses: dict[int, int] = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return statuses
        if pid == 0:
            return statuses
        statuses[pid] = status


def _killed_by(signum: int) -> int:
    """The wait status of a process killed by ``signum``."""
    return int(signum)


def _exit_code(status: int) -> int:
    """A shell's exit code for a wait status: the code, or 128 + the signal."""
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    return 128 + os.WTERMSIG(status)


def _start(spec: dict) -> int:
    landlock_spec = spec.get("landlock")
    pid = os.fork()
    if pid:
        return pid
    try:
        # Python ignores SIGPIPE and SIGXFSZ; an ignored signal stays ignored across exec, and the command
        # must die of them as it would in a shell (``yes | head``, the file size limit).
        for signum in (signal.SIGTERM, signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGCHLD])  # the mask survives exec
        if spec.get("overlay") is not None:
            _mount_overlay(spec["overlay"])
        if landlock_spec is not None:
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I left it out
            import landlock  # beside this script

            rules = [(path, int(rights)) for path, rights in landlock_spec["rules"]]
            landlock.drop_capabilities()
            landlock.restrict_self(rules, deny_tcp=landlock_spec["deny_tcp"])
        os.chdir(spec["cwd"])
        os.execvpe(spec["argv"][0], spec["argv"], dict(os.environ))
    except BaseException as error:  # noqa: BLE001 - the child must never return into the supervisor
        os.write(2, f"hdsp-agent sandbox: could not start the command: {error}\n".encode())
    os._exit(126)


def _mount_overlay(overlay_spec: dict) -> None:
    """The project root becomes an overlay whose writes land in the scratch upper dir (``overlay.py``), for
    this process and the bubblewrap it execs. When that fails the command does not run: the server, told by
    the ``failed`` file, probes again and uses its fallback (comparing the tree before and after)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I left it out
    import overlay  # beside this script

    try:
        overlay.mount_overlay(overlay_spec["root"], overlay_spec["upper"], overlay_spec["work"])
    except OSError as error:
        with open(overlay_spec["failed"], "w") as failed:
            failed.write(str(error))
        os.write(
            2,
            f"hdsp-agent sandbox: the overlay could not be set up ({error}); "
            "the command did not run\n".encode(),
        )
        os._exit(125)


def main() -> int:
    spec = json.loads(sys.argv[1])
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the server gone: so are we (and, below, all)
    limits = spec["limits"]
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["max_file_bytes"], limits["max_file_bytes"]))
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_seconds"], limits["cpu_seconds"] + 5))
    terminating: list[float] = []
    signal.signal(signal.SIGTERM, lambda _signum, _frame: terminating.append(time.monotonic()))
    me = os.getpid()
    # SIGCHLD blocked and waited for: the loop wakes the moment a child exits, not at the next tick.
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGCHLD])
    proxy = spec.get("proxy")
    if proxy is not None:  # the network allowlist: the proxy lives as long as the command
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I left it out
        import network_proxy  # beside this script

        network_proxy.serve(proxy["socket"], proxy["allow"])
    main_pid = _start(spec)
    watchdog = _Watchdog(me, limits["max_processes"])
    main_status: int | None = None
    note = ""
    while main_status is None:
        statuses = _reap()
        if main_pid in statuses:
            main_status = statuses[main_pid]
            break
        if terminating and time.monotonic() - terminating[0] > _TERM_GRACE_SECONDS:
            _stop_all(me)
            main_status = _killed_by(signal.SIGTERM)
            break
        if watchdog.over_limit():
            _stop_all(me)
            note = (
                f"[sandbox: the command started more than {limits['max_processes']} processes at once, "
                "the bound the administrator set (sandbox_max_processes); all of them were stopped]"
            )
            main_status = _killed_by(signal.SIGKILL)
            break
        signal.sigtimedwait([signal.SIGCHLD], _POLL_SECONDS)
    left = _stop_all(me)
    if left and not note:
        note = f"[sandbox: {left} process(es) the command left running were stopped]"
    if note:
        os.write(2, (note + "\n").encode())
    return _exit_code(main_status)


if __name__ == "__main__":
    sys.exit(main())
