"""The watchdog of ``--cmd`` commands (warmbo._lifeline): a `warmbo optimize` killed by SIGKILL (the
out-of-memory killer) no longer leaves its command, and what the command started, running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process groups and SIGKILL are POSIX")


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped by its new parent, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def wait_until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


CHILD = textwrap.dedent(
    """
    import os, subprocess, sys, time
    grandchild = subprocess.Popen(["sleep", "300"])  # what a launcher or a shell script starts
    with open("pids.tmp", "w") as f:
        f.write(f"{os.getpid()} {grandchild.pid}")
    os.replace("pids.tmp", "pids")
    time.sleep(300)
    print(0.5)
    """
)


def test_a_command_and_what_it_started_stop_when_warmbo_is_killed_by_sigkill(tmp_path):
    (tmp_path / "space.json").write_text(json.dumps([{"name": "x", "type": "float", "low": 0, "high": 1}]))
    (tmp_path / "child.py").write_text(CHILD)
    warmbo = subprocess.Popen(
        [sys.executable, "-m", "warmbo", "optimize", "--cmd", f"{sys.executable} child.py {{x}}",
         "--space", "space.json", "--storage", "s.db", "--budget", "3"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    pids_file = tmp_path / "pids"
    pids: list[int] = []
    try:
        assert wait_until(pids_file.exists, 60), "the command never started"
        pids = [int(p) for p in pids_file.read_text().split()]
        assert all(alive(p) for p in pids)
        warmbo.send_signal(signal.SIGKILL)  # no handler runs: before, both ran on for 300 s
        warmbo.wait(10)
        assert wait_until(lambda: not any(alive(p) for p in pids), 15), "the command outlived warmbo"
    finally:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if warmbo.poll() is None:
            warmbo.kill()


def test_the_watchdog_ends_with_a_process_that_ends_normally(tmp_path):
    code = textwrap.dedent(
        """
        from warmbo import _lifeline
        from warmbo.objective import CommandObjective
        import sys
        value = CommandObjective(f"{sys.executable} -c 'print(0.25)'", ("x",))({"x": 1.0})
        print(value, _lifeline._STATE[0][1], flush=True)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    value, watchdog = done.stdout.split()
    assert float(value) == 0.25
    assert wait_until(lambda: not alive(int(watchdog)), 10), "the watchdog outlived its process"
