"""What `warmbo reproduce` leaves in its folder and how it stops its workers: a rerun with --force
and other parts, the numbers of its report, and the end of an interrupted process pool."""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
import time
from multiprocessing.connection import wait

from typer.testing import CliRunner

from warmbo.cli import app
from warmbo.experiments._runner import close_pool, process_pool, running
from warmbo.report import settings_text


def test_the_report_shows_numbers_for_people(tmp_path):
    # before: "argmax [0.1499999999999999, 0.1499999999999999]", the grid's floats as Python prints them
    out = tmp_path / "o"
    done = CliRunner().invoke(
        app, ["reproduce", "envelope", "--quick", "--part", "functions", "--out", str(out)]
    )
    assert done.exit_code == 0, done.output
    report = (out / "report.html").read_text()
    assert re.search(r"argmax \(-?\d+\.\d\d, -?\d+\.\d\d\)", report), re.findall(r"argmax [^;]*", report)
    assert not re.search(r"\d\.\d*(9999999|0000000)\d", report.split("data:image")[0])
    # the settings line of every reproduction's report, floats included
    assert (
        settings_text({"a": 0.1 + 0.2, "b": [0.15000000000000002, 2], "c": "x"})
        == "a = 0.3; b = 0.15, 2; c = x"
    )


def test_force_with_other_parts_removes_the_earlier_runs_figures(tmp_path):
    # before: the functions part's PNGs stayed beside the new results.json and report.html of a
    # --force rerun of the tabular part, which do not show them
    runner, out = CliRunner(), tmp_path / "o"
    args = ["reproduce", "envelope", "--quick", "--out", str(out)]
    first = runner.invoke(app, [*args, "--part", "functions"])
    assert first.exit_code == 0, first.output
    functions = {"functions_related.png", "functions_mildly_related.png"}
    assert functions <= {p.name for p in out.glob("*.png")}
    (out / "notes.png").write_bytes(b"mine")  # the user's, in the folder: not one of its figures
    again = runner.invoke(app, [*args, "--part", "functions", "--force"])
    assert again.exit_code == 0, again.output
    assert functions <= {p.name for p in out.glob("*.png")}  # the same part again: rewritten, kept
    other = runner.invoke(app, [*args, "--part", "tabular", "--force"])
    assert other.exit_code == 0, other.output
    left = {p.name for p in out.glob("*.png")}
    assert not functions & left and "tabular_regret.png" in left
    assert "removed the earlier run's figures of parts not rerun" in " ".join(other.output.split())
    assert (out / "notes.png").read_bytes() == b"mine"  # not a figure of the earlier run: kept


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


def _ended(processes) -> bool:
    """Whether every process has ended, read from its sentinel (see warmbo...._runner.running)."""
    return len(wait([p.sentinel for p in processes], timeout=0)) == len(processes)


def test_an_interrupted_pool_ends_its_workers_with_public_means():
    # before: close_pool found the workers in the pool's private _processes; where that is not what
    # it was (here emptied, as another Python may name or keep it), the workers ran on. Then it took
    # every child of the process started since the pool was made, so Ctrl-C also ended a child that
    # other code started meanwhile (here `other`); now the processes the pool's own context made.
    # Ended is read from the sentinels: is_alive() said "alive" of a worker the executor's thread had
    # just reaped (exit code -15), which failed this test about 1 time in 15.
    before = set(multiprocessing.active_children())
    pool = process_pool(2)
    futures = [pool.submit(_sleep, 60) for _ in range(4)]
    other = multiprocessing.get_context("spawn").Process(target=_sleep, args=(60,))
    other.start()
    workers = [p for p in multiprocessing.active_children() if p not in before and p is not other]
    try:
        listed = set(pool.worker_processes())
        deadline = time.monotonic() + 60
        while not all(f.running() for f in futures[:2]):
            assert time.monotonic() < deadline, "the runs were not handed to the workers"
            time.sleep(0.05)
        pool._processes = {}
        close_pool(pool, interrupted=True)
        assert _ended(workers) and pool.worker_processes() == []
        assert not _ended([other]) and other.exitcode is None, "close_pool ended a process not the pool's"
        assert len(workers) == 2 and listed == set(workers)
    finally:
        for p in running([*workers, other]):  # (not a process id already freed)
            p.kill()
            p.join(timeout=5)


def test_a_worker_reaped_by_another_thread_counts_as_ended():
    # before: close_pool asked Process.is_alive(), which reads "running" from a process another
    # thread has reaped (the executor's thread joins its workers once one ends): a worker ended by
    # SIGTERM still counted as alive after close_pool, which then sent SIGKILL to its freed process id
    process = multiprocessing.get_context("spawn").Process(target=_sleep, args=(60,))
    process.start()
    try:
        assert running([process]) == [process]
        os.kill(process.pid, signal.SIGTERM)
        os.waitpid(process.pid, 0)  # as the executor's thread does, behind this Process object
        assert running([process]) == []
    finally:
        for p in running([process]):
            p.kill()
