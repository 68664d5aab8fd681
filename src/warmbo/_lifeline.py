"""A watchdog that stops the commands of ``--cmd`` when this process dies without stopping them.

Each command runs in a process group of its own (:class:`~warmbo.objective.CommandObjective`), so
that a timeout, Ctrl-C or SIGTERM kills everything it started; a process killed by SIGKILL (``kill
-9``, the kernel's out-of-memory killer, a cluster's scheduler at its time limit) runs no handler,
and its commands ran on, orphaned, holding their GPUs and writing their files. Linux's
``PR_SET_PDEATHSIG`` would reach the command's first process only (not what a shell or a launcher
starts under it), and only through a ``preexec_fn``, which Python documents as unsafe in a program
with threads (the runs evaluate in threads).

So the first command started spawns one small watchdog process (``python -I``: isolated, so no file
of the working directory is imported; its own session: a Ctrl-C at the terminal does not reach it)
that reads this process's list of running commands from a pipe: ``+<pgid>`` when a command starts,
``-<pgid>`` when it ended (counted: a pid reused by another command before the first one's ``-``
arrived stays watched). Only this process holds the pipe's writing end (pipes are not inherited by
the commands, and a child forked without exec closes its copy, ``os.register_at_fork``), so the
watchdog reads end-of-file exactly when this process is gone, however it died; it then sends
SIGTERM to every group still listed, SIGKILL after a grace period, and exits. After a normal exit
the list is empty and it exits at once. Where the watchdog cannot start or dies, the commands run
unwatched, as before, and a warning says so once; watching never fails an evaluation.

Written by hand: a pipe and a loop; no library offers it. POSIX only (elsewhere nothing is watched).
"""

from __future__ import annotations

import os
import sys
import threading

from ._warnings import warn

__all__ = ["watch", "release"]

#: seconds between SIGTERM and SIGKILL of the groups left when this process died
GRACE = 2.0

# the watchdog: counts "+pgid" / "-pgid" lines until end-of-file, then stops the groups still listed
_WATCHDOG = f"""
import os, signal, sys, time
groups = {{}}
for line in sys.stdin:
    try:
        group, step = int(line[1:]), (1 if line[0] == "+" else -1)
    except (ValueError, IndexError):
        continue
    groups[group] = groups.get(group, 0) + step
    if groups[group] <= 0:
        del groups[group]
left = set(groups)
for sig in (signal.SIGTERM, signal.SIGKILL):
    alive = set()
    for group in left:
        try:
            os.killpg(group, sig)
            alive.add(group)
        except (ProcessLookupError, PermissionError):
            pass
    left = alive
    if not left:
        break
    if sig == signal.SIGTERM:
        time.sleep({GRACE})
"""

_LOCK = threading.Lock()
#: (the watchdog's pid, the pipe's writing end) once started; (0, -1) when it could not start or
#: died (the commands then run unwatched, as before)
_STATE: list[tuple[int, int]] = []


def _start() -> tuple[int, int]:
    """Spawn the watchdog (``os.posix_spawn``: no ``Popen`` object left to warn at exit that it still
    runs), its standard input the pipe's reading end, in a session of its own; ``(0, -1)`` when it
    cannot be (no ``posix_spawn`` or no ``setsid`` for it on this platform, no interpreter path)."""
    read, write = os.pipe()  # (both ends close on exec: the commands never hold the writing end)
    try:
        pid = os.posix_spawn(
            sys.executable,
            [sys.executable, "-I", "-c", _WATCHDOG],
            os.environ,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, read, 0),
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
            ],
            setsid=True,
        )
    except Exception as exc:  # noqa: BLE001 - NotImplementedError, AttributeError, TypeError, OSError
        os.close(write)
        _say_unwatched(f"the watchdog could not start ({type(exc).__name__}: {exc})")
        return 0, -1
    finally:
        os.close(read)
    return pid, write


def _say_unwatched(why: str) -> None:
    warn(
        f"{why}: commands still running if this process is killed by SIGKILL (kill -9, the "
        "out-of-memory killer) will not be stopped; stop them by hand then (said once)",
        UserWarning,
    )


def _after_fork_in_child() -> None:
    """A child forked without exec (multiprocessing's ``fork``) closes its copy of the writing end,
    which kept the watchdog from seeing this process die, and starts afresh (a lock held by another
    thread at the fork would never be released in the child)."""
    global _LOCK
    _LOCK = threading.Lock()
    if _STATE and _STATE[0][1] >= 0:
        try:
            os.close(_STATE[0][1])
        except OSError:
            pass
    _STATE.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _send(line: str) -> None:
    if os.name != "posix":
        return
    try:
        with _LOCK:
            if not _STATE:
                _STATE.append(_start())
            pid, write = _STATE[0]
            if write < 0:
                return
            try:
                os.write(write, (line + "\n").encode())  # (one short line: a single atomic write)
            except OSError:  # the watchdog is gone: run unwatched, said once
                os.close(write)
                _STATE[0] = (0, -1)
                try:
                    os.waitpid(pid, os.WNOHANG)  # (reap it: no zombie until this process exits)
                except OSError:
                    pass
                _say_unwatched("the watchdog process ended")
    except Exception:  # noqa: BLE001 - watching must never fail an evaluation
        return


def watch(pgid: int) -> None:
    """Have the process group ``pgid`` stopped if this process dies while it runs."""
    _send(f"+{int(pgid)}")


def release(pgid: int) -> None:
    """The group ``pgid`` ended (or was stopped): no longer watched."""
    _send(f"-{int(pgid)}")
