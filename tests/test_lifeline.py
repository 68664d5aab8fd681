"""The watchdog of ``--cmd`` commands (warmbo._lifeline): a `warmbo optimize` killed by SIGKILL (the
out-of-memory killer) no longer leaves its command, and what the command started, running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest
from helpers.processes import alive, wait_until

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process groups and SIGKILL are POSIX")


def kill_left(pids, proc) -> None:
    """A test's clean-up: SIGKILL to ``pids`` still there, and to ``proc`` if it runs."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if proc.poll() is None:
        proc.kill()


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
        kill_left(pids, warmbo)


def test_the_watchdog_ends_with_a_process_that_ends_normally(tmp_path):
    code = textwrap.dedent(
        """
        from warmbo import _lifeline
        from warmbo.objective import CommandObjective
        import sys
        value = CommandObjective(f"{sys.executable} -c 'print(0.25)'", ("x",))({"x": 1.0})
        print(value, _lifeline._STATE[0][0], flush=True)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    value, watchdog = done.stdout.split()
    assert float(value) == 0.25
    assert wait_until(lambda: not alive(int(watchdog)), 10), "the watchdog outlived its process"


def test_a_watchdog_that_cannot_start_leaves_evaluations_working_with_one_warning(tmp_path, monkeypatch):
    # (review) posix_spawn without setsid support raised NotImplementedError out of the evaluation,
    # after the command had started: every trial failed and every command was left running
    from warmbo import _lifeline
    from warmbo.objective import CommandObjective

    def unsupported(*args, **kwargs):
        raise NotImplementedError("posix_spawn: setsid is not supported on this platform")

    monkeypatch.setattr(_lifeline, "_STATE", [])
    monkeypatch.setattr(_lifeline.os, "posix_spawn", unsupported)
    objective = CommandObjective(f"{sys.executable} -c 'print(0.25)'", ("x",))
    with pytest.warns(UserWarning, match="watchdog could not start .*NotImplementedError"):
        assert objective({"x": 1.0}) == 0.25
    assert objective({"x": 1.0}) == 0.25  # (said once, and still working)


def test_the_watchdog_ignores_the_working_directorys_files_and_counts_reused_groups(tmp_path):
    (tmp_path / "signal.py").write_text("open('imported', 'w').write('yes')\n")  # a user's module
    code = textwrap.dedent(
        """
        import os, subprocess, sys, time
        from warmbo import _lifeline
        a = subprocess.Popen(["sleep", "300"], start_new_session=True)
        _lifeline.watch(a.pid)
        _lifeline.watch(a.pid)    # the same id twice (a pid reused before the first release came)
        _lifeline.release(a.pid)  # one release: still watched
        print(a.pid, _lifeline._STATE[0][0], flush=True)
        time.sleep(300)
        """
    )
    # (this process isolated too: it imports the signal module itself, the watchdog is the question)
    proc = subprocess.Popen(
        [sys.executable, "-I", "-c", code], cwd=tmp_path, stdout=subprocess.PIPE, text=True
    )
    command = 0
    try:
        command, watchdog = (int(v) for v in proc.stdout.readline().split())
        assert alive(command) and alive(watchdog)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert wait_until(lambda: not alive(command), 15), "a group watched twice, released once, was dropped"
        assert not (tmp_path / "imported").exists()  # the watchdog ran isolated (python -I)
    finally:
        kill_left([command] if command else [], proc)


def test_a_forked_child_does_not_keep_the_watchdog_from_seeing_its_parent_die(tmp_path):
    code = textwrap.dedent(
        """
        import os, subprocess, sys, time
        from warmbo import _lifeline
        a = subprocess.Popen(["sleep", "300"], start_new_session=True)
        _lifeline.watch(a.pid)
        if os.fork() == 0:  # a child forked without exec (multiprocessing's fork) that outlives us
            time.sleep(60)
            os._exit(0)
        print(a.pid, flush=True)
        time.sleep(300)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    command = 0
    try:
        command = int(proc.stdout.readline())
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert wait_until(lambda: not alive(command), 15), "the forked child held the pipe open"
    finally:
        kill_left([command] if command else [], proc)
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the forked child
        except ProcessLookupError:
            pass
