"""A watchdog that stops the commands of ``--cmd`` when this process dies without stopping them.

Each command runs in a process group of its own (:class:`~warmbo.objective.CommandObjective`), so
that a timeout, Ctrl-C or SIGTERM kills everything it started; a process killed by SIGKILL (``kill
-9``, the kernel's out-of-memory killer, a cluster's scheduler at its time limit) runs no handler,
and its commands ran on, orphaned, holding their GPUs and writing their files. Linux's
``PR_SET_PDEATHSIG`` would reach the command's first process only (not what a shell or a launcher
starts under it), and only through a ``preexec_fn``, which Python documents as unsafe in a program
with threads (the runs evaluate in threads).

So the first command started spawns one small watchdog process (its own session: a Ctrl-C at the
terminal does not reach it) that reads this process's list of running commands from a pipe: ``+<pgid>``
when a command starts, ``-<pgid>`` when it ended. Only this process holds the pipe's writing end
(pipes are not inherited by the commands), so the watchdog reads end-of-file exactly when this
process is gone, however it died; it then sends SIGTERM to every group still listed, SIGKILL after
a grace period, and exits. After a normal exit the list is empty and it exits at once.

Written by hand: a pipe and a loop; no library offers it. POSIX only (elsewhere nothing is watched).
"""

from __future__ import annotations

import os
import sys
import threading

__all__ = ["watch", "release"]

#: seconds between SIGTERM and SIGKILL of the groups left when this process died
GRACE = 2.0

# the watchdog: reads "+pgid" / "-pgid" lines until end-of-file, then stops the groups still listed
_WATCHDOG = f"""
import os, signal, sys, time
groups = set()
for line in sys.stdin:
    try:
        (groups.add if line[0] == "+" else groups.discard)(int(line[1:]))
    except (ValueError, IndexError):
        pass
for sig in (signal.SIGTERM, signal.SIGKILL):
    alive = set()
    for group in groups:
        try:
            os.killpg(group, sig)
            alive.add(group)
        except (ProcessLookupError, PermissionError):
            pass
    groups = alive
    if not groups:
        break
    if sig == signal.SIGTERM:
        time.sleep({GRACE})
"""

_LOCK = threading.Lock()
#: (pid of this process, the watchdog's pid, the pipe's writing end) once started; a pid of 0 and an
#: end of -1 when it could not start (the commands then run unwatched, as before)
_STATE: list[tuple[int, int, int]] = []


def _start() -> tuple[int, int, int]:
    """Spawn the watchdog (``os.posix_spawn``: no ``Popen`` object left to warn at exit that it still
    runs), its standard input the pipe's reading end, in a session of its own."""
    read, write = os.pipe()  # (both ends close on exec: the commands never hold the writing end)
    try:
        pid = os.posix_spawn(
            sys.executable,
            [sys.executable, "-c", _WATCHDOG],
            os.environ,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, read, 0),
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
            ],
            setsid=True,
        )
    except OSError:
        os.close(write)
        pid, write = 0, -1
    finally:
        os.close(read)
    return os.getpid(), pid, write


def _send(line: str) -> None:
    if os.name != "posix":
        return
    with _LOCK:
        if not _STATE or _STATE[0][0] != os.getpid():  # (a forked child starts a watchdog of its own)
            _STATE[:] = [_start()]
        owner, pid, write = _STATE[0]
        if write < 0:
            return
        try:
            os.write(write, (line + "\n").encode())  # (one short line: a single atomic write)
        except OSError:  # the watchdog is gone: run unwatched
            os.close(write)
            _STATE[:] = [(owner, 0, -1)]


def watch(pgid: int) -> None:
    """Have the process group ``pgid`` stopped if this process dies while it runs."""
    _send(f"+{int(pgid)}")


def release(pgid: int) -> None:
    """The group ``pgid`` ended (or was stopped): no longer watched."""
    _send(f"-{int(pgid)}")
