"""The PostgreSQL back end of Study against a real server (tests/conftest.py), and the durability
and concurrency guarantees both back ends share (parametrised over SQLite and PostgreSQL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import warmbo as wb
from warmbo.storage import StorageError, Study, study_exists

WORKER = Path(__file__).parent / "helpers" / "worker.py"
SPACE = wb.Space.box([(-5.0, 10.0), (0.0, 15.0)])


@pytest.fixture(params=["sqlite", "postgresql"])
def storage(request, tmp_path):
    """A storage URL of a new study on each back end."""
    if request.param == "sqlite":
        return str(tmp_path / "study.db")
    return request.getfixturevalue("postgres_url")


def branin(p) -> float:
    return float(wb.problems.branin()(np.array([p["x0"], p["x1"]])))


def test_kill_between_tells_loses_nothing(storage):
    wb.Optimizer(SPACE, storage=storage, seed=0, n_initial=6)
    proc = subprocess.Popen(
        [sys.executable, str(WORKER), storage, "1000", "0.05"], stdout=subprocess.PIPE, text=True
    )
    told = []
    for line in proc.stdout:
        told.append(int(line.split()[1]))
        if len(told) == 8:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    complete = {t.id for t in Study(storage).trials(("complete",))}
    assert set(told) <= complete  # every trial reported as told is in the store
    opt = wb.Optimizer(SPACE, storage=storage, seed=0, n_initial=6)
    opt.run(branin, budget=len(complete) + 3, progress=False)
    assert opt.study.count("complete") == len(complete) + 3


def test_four_processes_share_one_study(storage):
    wb.Optimizer(SPACE, storage=storage, seed=0, n_initial=6)  # create it before the race
    procs = [
        subprocess.Popen([sys.executable, str(WORKER), storage, "25"], stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    for proc in procs:
        proc.communicate(timeout=600)
        assert proc.returncode == 0
    trials = Study(storage).trials()
    assert len(trials) == 100 and all(t.is_complete for t in trials)
    assert len({t.id for t in trials}) == 100  # distinct ids
    assert len({(t.params["x0"], t.params["x1"]) for t in trials}) == 100  # distinct points
    assert len({t.worker for t in trials}) == 4


def test_another_space_or_direction_is_refused_and_nothing_is_lost(storage):
    opt = wb.Optimizer(SPACE, storage=storage, seed=0)
    opt.tell(opt.ask(), 1.0)
    with pytest.raises(StorageError, match="different space.*x1"):
        wb.Optimizer(wb.Space.box([(-5.0, 10.0), (0.0, 20.0)]), storage=storage)
    with pytest.raises(StorageError, match="minimize"):
        wb.Optimizer(SPACE, storage=storage, maximize=True)
    assert len(wb.Optimizer(SPACE, storage=storage).history) == 1
    assert study_exists(storage)


def test_read_only_opening_refuses_writes(storage):
    opt = wb.Optimizer(SPACE, storage=storage, seed=0)
    opt.tell(opt.ask(), 2.0)
    reader = Study(storage, readonly=True)
    assert len(reader) == 1 and reader.readonly
    with pytest.raises(StorageError, match="read-only"):
        reader.add_trial({"x0": 0.0, "x1": 0.0})
    assert len(Study(storage)) == 1


def test_studies_in_one_database_are_independent(postgres_server):
    a, b = postgres_server.url("alpha"), postgres_server.url("beta")
    opt_a = wb.Optimizer(SPACE, storage=a, seed=0)
    opt_b = wb.Optimizer(wb.Space.box([(0.0, 1.0)]), storage=b, seed=0)
    opt_a.run(branin, budget=4, progress=False)
    opt_b.tell(opt_b.ask(), 0.5)
    assert len(Study(a)) == 4 and len(Study(b)) == 1
    assert Study(b).space != Study(a).space
    assert Study(a).version() != (0, 0)
    missing = postgres_server.url("gamma")
    assert not study_exists(missing)
    with pytest.raises(StorageError, match="no study 'gamma'"):
        Study(missing)


def test_bad_postgres_urls_and_servers_are_clear_errors(postgres_server, tmp_path):
    with pytest.raises(StorageError, match="name the database"):
        Study("postgresql://user@localhost")
    with pytest.raises(StorageError, match="one non-empty study=NAME"):
        Study("postgresql://user@/db?study=")
    nowhere = f"postgresql://postgres@/warmbo?host={tmp_path}&study=x"  # no server on that socket
    with pytest.raises(StorageError, match="cannot connect to postgresql://"):
        Study(nowhere, space=SPACE)


def test_cli_optimize_and_status_on_postgres(postgres_server, tmp_path):
    from typer.testing import CliRunner

    from warmbo.cli import app

    (tmp_path / "space.json").write_text('{"params": [{"type": "float", "name": "x", "low": -2, "high": 2}]}')
    (tmp_path / "objmod.py").write_text("def f(p):\n    return (p['x'] - 0.5) ** 2\n")
    url = postgres_server.url("cli")
    runner = CliRunner()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        args = [
            "optimize",
            "objmod:f",
            "--space",
            "space.json",
            "--storage",
            url,
            "--budget",
            "6",
            "--seed",
            "0",
        ]
        done = runner.invoke(app, args)
        assert done.exit_code == 0, done.output
        again = runner.invoke(app, ["optimize", "objmod:f", "--storage", url, "--budget", "8"])
        assert again.exit_code == 0, again.output  # resumed: the space comes from the server
        status = runner.invoke(app, ["status", "--storage", url])
        assert status.exit_code == 0 and "8 complete" in status.output
    finally:
        os.chdir(cwd)
