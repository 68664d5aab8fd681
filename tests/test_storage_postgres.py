"""The PostgreSQL back end of Study against a real server (tests/conftest.py), and the durability
and concurrency guarantees both back ends share (parametrised over SQLite and PostgreSQL)."""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from helpers.forked import fork_while_writing
from helpers.killed import tell_then_kill

import warmbo as wb
from warmbo.optimizer import UnansweredAskWarning
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
    told = tell_then_kill(storage)
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
    wider = wb.Space.box([(-5.0, 10.0), (0.0, 20.0)])
    with pytest.raises(StorageError, match="different space.*x1") as refused:
        wb.Optimizer(wider, storage=storage)
    # its advice works as written (it named a PostgreSQL study 'db?study=NAME', no prior can read)
    if storage.startswith("postgresql"):  # (named by its name and database, not 'warmbo?study=s...')
        assert str(refused.value).startswith(f"study {storage.split('study=')[1]!r} in postgresql://")
    advice = re.search(r"prior=\[('[^']+')\], transfer='none'", str(refused.value))
    assert advice is not None, refused.value
    moved = wb.Optimizer(wider, prior=[ast.literal_eval(advice.group(1))], transfer="none", seed=0)
    assert [t.value for t in moved.history] == [1.0]
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
    # (a read opens with ?mode=ro, which the message showed though nobody typed it: PostgreSQL user test)
    with pytest.raises(StorageError, match=r"'postgresql://user@/\?host=/s&study=run1': name the database"):
        Study("postgresql://user@/?host=/s&study=run1&mode=ro")
    with pytest.raises(StorageError, match="one non-empty study=NAME"):
        Study("postgresql://user@/db?study=")
    nowhere = f"postgresql://postgres@/warmbo?host={tmp_path}&study=x"  # no server on that socket
    with pytest.raises(StorageError, match="cannot connect to postgresql://"):
        Study(nowhere, space=SPACE)


def test_cli_optimize_and_status_on_postgres(postgres_server, tmp_path):
    from typer.testing import CliRunner

    from warmbo.cli import app

    (tmp_path / "space.json").write_text('{"params": [{"type": "float", "name": "x", "low": -2, "high": 2}]}')
    (tmp_path / "pgobjective.py").write_text("def f(p):\n    return (p['x'] - 0.5) ** 2\n")
    url = postgres_server.url("cli")
    runner = CliRunner()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        args = [
            "optimize",
            "pgobjective:f",
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
        again = runner.invoke(app, ["optimize", "pgobjective:f", "--storage", url, "--budget", "8"])
        assert again.exit_code == 0, again.output  # resumed: the space comes from the server
        status = runner.invoke(app, ["status", "--storage", url])
        assert status.exit_code == 0 and "8 complete" in status.output
    finally:
        os.chdir(cwd)


# ---------------------------------------------------------------------------------------------- heartbeats
def test_a_silent_workers_trial_is_requeued_to_the_next_asker(storage):
    a = wb.Optimizer(SPACE, storage=storage, seed=0, worker="machine-a", heartbeat_grace=0.3)
    a.tell(a.ask(), 1.0)
    lost = a.ask()  # machine-a dies while evaluating this one
    b = wb.Optimizer(SPACE, storage=storage, seed=0, worker="machine-b", heartbeat_grace=0.3)
    fresh = b.ask()
    assert fresh.trial_id != lost.trial_id  # within the grace period: not reclaimed
    time.sleep(0.45)
    with pytest.warns(UnansweredAskWarning, match="still pending"):  # (`fresh` is left pending)
        taken = b.ask()
    assert taken.trial_id == lost.trial_id and dict(taken) == dict(lost)  # same trial, same point
    trial = Study(storage).trial(lost.trial_id)
    assert trial.state == "pending" and trial.worker == "machine-b"
    record = json.loads(Study(storage).get_meta(f"reclaimed:{lost.trial_id}"))
    assert record["from"] == "machine-a" and record["to"] == "machine-b" and record["silent_s"] >= 0.3
    b.tell(taken, 3.0)
    assert Study(storage).trial(lost.trial_id).value == 3.0


def test_reclaim_fail_marks_the_trial_failed(storage):
    a = wb.Optimizer(SPACE, storage=storage, seed=0, worker="machine-a")
    lost = a.ask()
    time.sleep(0.3)
    b = wb.Optimizer(SPACE, storage=storage, seed=0, worker="machine-b", heartbeat_grace=0.2, reclaim="fail")
    other = b.ask()
    assert other.trial_id != lost.trial_id
    failed = Study(storage).trial(lost.trial_id)
    assert failed.state == "failed" and "machine-a silent for" in failed.error


def test_heartbeats_keep_a_long_evaluation_alive(storage):
    a = wb.Optimizer(SPACE, storage=storage, seed=0, worker="machine-a", heartbeat_grace=0.4)
    busy = a.ask()
    b = wb.Optimizer(SPACE, storage=storage, seed=0, worker="machine-b", heartbeat_grace=0.4)
    for _ in range(4):  # 0.8 s in all, twice the grace: the beats keep it machine-a's
        time.sleep(0.2)
        assert a.heartbeat() == 1
    assert b.ask().trial_id != busy.trial_id
    assert Study(storage).trial(busy.trial_id).worker == "machine-a"


def test_run_sends_heartbeats_while_it_evaluates(storage):
    import threading

    a = wb.Optimizer(SPACE, storage=storage, seed=0, worker="machine-a", heartbeat_grace=0.3)

    def slow(p):
        time.sleep(1.0)  # over three grace periods
        return branin(p)

    runner = threading.Thread(target=a.run, args=(slow, 1), kwargs={"progress": False})
    runner.start()
    time.sleep(0.7)
    b = wb.Optimizer(SPACE, storage=storage, seed=0, worker="machine-b", heartbeat_grace=0.3)
    stolen = b.ask()
    runner.join(timeout=30)
    trials = Study(storage).trials()
    first = trials[0]
    assert first.worker == "machine-a" and first.state == "complete"  # not reclaimed: it was alive
    assert stolen.trial_id != first.id


def test_a_killed_workers_trial_is_reclaimed_after_the_grace(storage):
    """A real worker process killed (SIGKILL) in the middle of an evaluation: its pending trial is
    picked up by the next ask once the grace period has passed, and the study completes."""
    code = (
        "import sys, time, warmbo as wb\n"
        "space = wb.Space.box([(-5.0, 10.0), (0.0, 15.0)])\n"
        "opt = wb.Optimizer(space, storage=sys.argv[1], seed=0, worker='doomed', heartbeat_grace=1.0)\n"
        "opt.run(lambda p: time.sleep(60) or 0.0, budget=1, progress=False)\n"
    )
    wb.Optimizer(SPACE, storage=storage, seed=0)
    proc = subprocess.Popen([sys.executable, "-c", code, storage])
    deadline = time.time() + 60
    while time.time() < deadline and not Study(storage).count("pending"):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    killed_at = time.time()
    proc.wait(timeout=30)
    (pending,) = Study(storage).trials(("pending",))
    survivor = wb.Optimizer(SPACE, storage=storage, seed=0, worker="survivor", heartbeat_grace=1.0)
    while True:
        suggestion = survivor.ask()
        if suggestion.trial_id == pending.id:
            break
        survivor.tell(suggestion, branin(suggestion))  # new points meanwhile, while the grace runs
        time.sleep(0.1)
    waited = time.time() - killed_at
    assert dict(suggestion) == pending.params and waited < 1.0 + 2.0  # grace + slack for the loop
    survivor.tell(suggestion, branin(suggestion))
    assert Study(storage).count("pending") == 0


def test_a_worker_restarted_under_its_name_reclaims_its_dead_trial_but_not_its_own_live_one(storage):
    # before (a user test): the reclaim skipped every trial of its own worker name as "alive", so a
    # worker restarted as worker="machine-a" after kill -9 left its dead trial pending for good
    dead = wb.Optimizer(SPACE, storage=storage, seed=0, worker="machine-a", heartbeat_grace=0.3)
    dead.tell(dead.ask(), 1.0)
    lost = dead.ask()  # the process dies here; the same machine starts the worker again
    restarted = wb.Optimizer(SPACE, storage=storage, seed=0, worker="machine-a", heartbeat_grace=0.3)
    time.sleep(0.45)
    taken = restarted.ask()
    assert taken.trial_id == lost.trial_id and dict(taken) == dict(lost)
    record = json.loads(Study(storage).get_meta(f"reclaimed:{lost.trial_id}"))
    assert record["from"] == record["to"] == "machine-a"
    # a trial this optimizer gave out itself is its own evaluation, however long it is silent
    time.sleep(0.45)
    with pytest.warns(UnansweredAskWarning, match="still pending"):
        other = restarted.ask()
    assert other.trial_id != taken.trial_id and Study(storage).trial(taken.trial_id).state == "pending"


def test_the_same_result_told_again_is_kept_and_a_taken_over_trials_other_result_says_why(storage):
    # a worker retrying its tell after a dropped connection whose COMMIT had reached the store got a
    # StorageError; and a slow worker whose trial another had taken over was told only "already
    # complete" (two user tests)
    slow = wb.Optimizer(SPACE, storage=storage, seed=0, worker="machine-a", heartbeat_grace=0.3)
    done = slow.ask()
    first = slow.tell(done, 2.0)
    again = slow.tell(done, 2.0)
    assert again.id == first.id and again.value == 2.0 and again.completed == first.completed
    assert Study(storage).count("complete") == 1
    lost = slow.ask()  # evaluated for longer than the grace, with no heartbeat
    time.sleep(0.45)
    fast = wb.Optimizer(SPACE, storage=storage, seed=0, worker="machine-b", heartbeat_grace=0.3)
    taken = fast.ask()
    assert taken.trial_id == lost.trial_id
    fast.tell(taken, 1.0)
    with pytest.raises(StorageError, match=r"already complete \(value 1.0\); worker machine-b took it over "
                       r"after machine-a had sent no heartbeat for \d+ s \(heartbeat_grace\)"):  # fmt: skip
        slow.tell(lost, 1.5)
    assert slow.tell(lost, 1.0).value == 1.0  # (the same value: nothing to refuse)


def test_no_connection_is_left_open_to_warn_at_collection(postgres_url):
    # a user test: Optimizer.run (its heartbeat thread's connection) and a dropped Study left psycopg
    # connections open, each warning "ResourceWarning: ... was deleted while still open"
    import gc

    # garbage of earlier tests in this process first: run with -W always::ResourceWarning, earlier
    # tests of this file (test_studies_in_one_database_are_independent, the connect-timeout and
    # dropped-connection ones) leave connections that warn when collected, and once in CI, under
    # load, one was collected inside the block below. This test is about its own connections
    gc.collect()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opt = wb.Optimizer(SPACE, storage=postgres_url, seed=0)
        opt.run(branin, budget=3, progress=False, n_workers=2)
        opt.tell(opt.ask(), 1.0)
        del opt
        study = Study(postgres_url)
        assert len(study.trials()) == 4
        del study
        with wb.Optimizer(SPACE, storage=postgres_url, seed=0) as opt:
            opt.tell(opt.ask(), 2.0)
        opt.tell(opt.ask(), 3.0)  # (closed: a later call connects again)
        opt.close()
        gc.collect()
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert not leaks, leaks
    assert len(Study(postgres_url).trials()) == 6


def _settled(count, expected: int) -> int:
    """``count()`` once it equals ``expected``, or after 10 s: the server drops a closed session from
    pg_stat_activity a moment after the client closes it (CI once read one still there)."""
    for _ in range(100):
        if (now := count()) == expected:
            return now
        time.sleep(0.1)
    return count()


def test_a_runs_worker_threads_close_their_connections_as_they_end(postgres_url):
    # (each thread's connection is closed by the thread's end, not by a later garbage collection:
    # session 39's registry kept them open until the next connection or the study's collection)
    import gc

    import psycopg

    from warmbo.storage_postgres import split_url

    def server_connections(admin) -> int:
        query = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
        return admin.execute(query).fetchone()[0]

    with psycopg.connect(split_url(postgres_url)[0], autocommit=True) as admin:
        opt = wb.Optimizer(SPACE, storage=postgres_url, seed=0)
        opt.tell(opt.ask(), 1.0)
        gc.collect()
        before = server_connections(admin)
        gc_was = gc.isenabled()
        gc.disable()  # (nothing is collected on the way: the threads' ends must close them)
        try:
            opt.run(branin, budget=5, progress=False, n_workers=3)
            after = _settled(lambda: server_connections(admin), before)
        finally:
            if gc_was:
                gc.enable()
        assert len(opt.study.trials()) == 5
        assert after == before
        opt.close()
        assert _settled(lambda: server_connections(admin), before - 1) == before - 1


def test_a_child_forked_while_another_thread_writes_can_write_and_the_parent_goes_on(postgres_url):
    # (session 39's connection registry took the study's lock in every new connection: a child
    # forked while another thread held it, inside a write transaction, waited for ever)
    study = Study(postgres_url, space=SPACE)
    study.add_trial({"x0": 0.5, "x1": 1.0}, "complete", value=1.0)

    def child() -> bool:
        study.add_trial({"x0": 0.25, "x1": 2.0}, "complete", value=2.0)
        return len(study.trials()) == 2

    status = fork_while_writing(study, child)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    study.add_trial({"x0": 0.75, "x1": 3.0}, "complete", value=3.0)  # (the parent's session lives)
    assert sorted(t.value for t in study.trials()) == [1.0, 2.0, 3.0]


def test_status_shows_live_workers_and_reclaimed_trials(storage):
    from typer.testing import CliRunner

    from warmbo.cli import app

    a = wb.Optimizer(SPACE, storage=storage, seed=0, worker="machine-a")
    a.ask()
    time.sleep(0.3)
    b = wb.Optimizer(SPACE, storage=storage, seed=0, worker="machine-b", heartbeat_grace=0.2)
    b.ask()  # takes machine-a's trial over
    c = wb.Optimizer(SPACE, storage=storage, seed=0, worker="machine-c")
    c.ask()
    out = CliRunner().invoke(app, ["status", "--storage", storage]).output
    # machine-b's trial has a heartbeat (taken over by a worker that beats): a run's; machine-c's a
    # suggestion waiting for its result
    assert re.search(r"run machine-b: 1 pending \(trial \d+\), last heartbeat", out), out
    assert "machine-c: 1 suggestion waiting for a result" in out
    assert "reclaimed from silent workers: 1 trial(s); machine-a -> machine-b (retry" in out


def test_a_transfer_study_reopens_with_its_sources_on_either_back_end(storage):
    # The sources, the warm design and the source fits live in the study's metadata: a second
    # process (here, a second object) on another machine needs only the URL. Opening a study reads
    # only the metadata its check needs (not the ~1 MB of sources), so a worker that only tells
    # does not pay for them; the optimizer reads them.
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(-5, 10, 60), rng.uniform(0, 15, 60)])
    y = np.array([branin({"x0": a, "x1": b}) for a, b in X])
    data = wb.TaskData.from_numpy(X, y, SPACE, task=np.repeat(["a", "b", "c"], 20))
    first = wb.Optimizer(SPACE, storage=storage, prior=data, seed=0)
    for _ in range(4):
        p = first.ask()
        first.tell(p, branin(p))
    first.study.close()
    again = wb.Optimizer.load(storage)
    assert again.prior == data and again.transfer == "auto"
    np.testing.assert_array_equal(again.warm_design().points, first.warm_design().points)
    assert len(json.loads(again.study.get_meta("transfer_source_fits"))["fits"]) == 3  # one per source
    p = again.ask()
    again.tell(p, branin(p))
    assert again.study.count("complete") == 5
    assert len(again.study.get_meta("transfer_source_rows")) > 1000


def test_meta_items_filters_by_prefix_in_the_database(storage):
    study = Study(storage, SPACE, {"direction": "minimize"})
    for key in ("prior:a", "prior:b", "prio", "100%:x", "1000:x", "é:1", "e:1", "reclaimed:3"):
        study.set_meta(key, key.upper())
    assert study.meta_items("prior:") == {"prior:a": "PRIOR:A", "prior:b": "PRIOR:B"}
    assert study.meta_items("100%") == {"100%:x": "100%:X"}  # no LIKE wildcards
    assert study.meta_items("é") == {"é:1": "É:1"}
    assert set(study.meta_items("")) >= {"prior:a", "prio", "reclaimed:3", "space", "settings"}
    study.close()


def _create_after(barrier, path) -> None:
    barrier.wait()
    try:
        Study(path, SPACE, {"direction": "minimize"}).close()
    except StorageError:
        os._exit(1)
    os._exit(0)


def test_eight_processes_creating_one_new_study_at_the_same_moment_all_succeed(tmp_path):
    # Switching a new file to write-ahead logging needs it to itself, and when two processes try at
    # once SQLite answers "database is locked" to one of them at once, without its busy timeout: 12
    # of 320 such openings failed (40 rounds of 8 forked processes released by one barrier) before
    # the switch was retried, 0 after. 30 rounds here: with that failure rate (3.75%) all 240 would
    # succeed by chance with probability ~1e-4.
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    failed = 0
    for r in range(30):
        path = str(tmp_path / f"new{r}.db")
        barrier = ctx.Barrier(8)
        procs = [ctx.Process(target=_create_after, args=(barrier, path)) for _ in range(8)]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(timeout=120)
        failed += sum(proc.exitcode != 0 for proc in procs)
    assert failed == 0


def test_runs_sharing_a_study_on_either_back_end_stop_at_the_budget(storage):
    """last_beats(beating_only=True) on both back ends: a second run leaves a place to the first's
    beating trial and none to a waiting suggestion."""
    first = wb.Optimizer(SPACE, storage=storage, seed=0, worker="first")
    first.run(lambda p: p["x0"] ** 2, budget=3, progress=False)
    waiting = first.ask()
    with pytest.warns(UnansweredAskWarning, match="still pending"):  # (`waiting` is meant to wait)
        beating = first.ask()
    first.study.heartbeat([beating.trial_id])
    assert set(first.study.last_beats()) == {waiting.trial_id, beating.trial_id}
    assert set(first.study.last_beats(beating_only=True)) == {beating.trial_id}
    second = wb.Optimizer(SPACE, storage=storage, seed=1, worker="second")
    with warnings.catch_warnings():
        warnings.simplefilter("error", wb.optimizer.BudgetHeldWarning)  # another worker's: how runs end
        warnings.simplefilter("ignore", wb.optimizer.HeldElsewhereWarning)  # (said: test_optimizer's subject)
        second.run(lambda p: p["x0"] ** 2, budget=5, progress=False)
    assert second.study.count("complete") == 4  # 3 + 1: the fifth place is the beating trial's


def test_amend_corrects_a_complete_trial_in_one_transaction_and_keeps_the_old_result(storage):
    study = Study(storage, SPACE, {"direction": "minimize"})
    done = study.add_trial({"x0": 1.0, "x1": 2.0}, "complete", value=55.2)
    pending = study.add_trial({"x0": 2.0, "x1": 2.0})
    with pytest.raises(StorageError, match="already complete .* amend"):
        study.complete(done.id, 52.5)
    assert study.amend(done.id, 52.5, note="typo").value == 52.5
    failed = study.amend(done.id, failed=True, note="contaminated")
    assert failed.is_failed and failed.value is None and "52.5" in failed.error
    record = json.loads(Study(storage).get_meta(f"amended:{done.id}"))
    assert [(r["value"], r["note"]) for r in record] == [(55.2, "typo"), (52.5, "contaminated")]
    with pytest.raises(StorageError, match="pending, not complete"):
        study.amend(pending.id, 1.0)
    # one transaction: a failure while recording the old result leaves the value as it was
    again = study.add_trial({"x0": 3.0, "x1": 2.0}, "complete", value=1.0)

    def broken(key, value):
        raise RuntimeError("disk full")

    study.set_meta = broken
    with pytest.raises(RuntimeError, match="disk full"):
        study.amend(again.id, 2.0)
    assert Study(storage).trial(again.id).value == 1.0


def test_withdraw_takes_a_trial_out_in_one_transaction_and_keeps_what_it_held(storage):
    """A result recorded twice, marked failed as the tool once advised, was fantasised by the model
    at the worst value on top of its real twin and counted as failed: withdrawn, nothing reads it,
    and its record (with why and who) stays in the study."""
    study = Study(storage, SPACE, {"direction": "minimize"})
    kept = study.add_trial({"x0": 1.0, "x1": 2.0}, "complete", value=5.5)
    twice = study.add_trial({"x0": 1.0, "x1": 2.0}, "complete", value=5.5)
    pending = study.add_trial({"x0": 3.0, "x1": 2.0})
    assert study.withdraw(twice.id, note="recorded twice", by="ana") == twice
    assert study.withdraw(pending.id) == pending
    assert [t.id for t in Study(storage).trials()] == [kept.id]
    assert len(Study(storage)) == 1 and Study(storage).count("failed") == 0
    records = Study(storage).withdrawn()
    assert set(records) == {twice.id, pending.id}
    assert records[twice.id]["params"] == twice.params and records[twice.id]["value"] == 5.5
    assert (records[twice.id]["note"], records[twice.id]["by"]) == ("recorded twice", "ana")
    assert records[pending.id]["state"] == "pending" and records[pending.id]["note"] is None
    # a result reported later for it is refused in words, and its id is never reused
    with pytest.raises(StorageError, match=rf"trial {twice.id} .*was withdrawn by ana \(recorded twice\)"):
        study.complete(twice.id, 1.0)
    assert study.add_trial({"x0": 4.0, "x1": 2.0}).id > pending.id
    with pytest.raises(StorageError, match=rf"no trial with id {10 * pending.id + 99}"):
        study.withdraw(10 * pending.id + 99)
    # one transaction: a failure while keeping the record leaves the trial where it was
    again = study.add_trial({"x0": 5.0, "x1": 2.0}, "complete", value=1.0)

    def broken(key, value):
        raise RuntimeError("disk full")

    study.set_meta = broken
    with pytest.raises(RuntimeError, match="disk full"):
        study.withdraw(again.id)
    assert Study(storage).trial(again.id).value == 1.0 and again.id not in Study(storage).withdrawn()


def test_a_value_after_a_failure_keeps_the_failure_and_amend_keeps_task_vectors(storage):
    """A failed trial completed later lost its failure (complete cleared the error, against the
    module's 'never overwritten silently'): it is kept in amended:<id> now. Amending a multi-task
    trial with a value alone dropped its task vector: refused, as a vector for a one-value trial."""
    study = Study(storage, SPACE, {"direction": "minimize"})
    trial = study.add_trial({"x0": 1.0, "x1": 2.0})
    study.fail(trial.id, "amended to failed: contaminated sample")
    assert study.complete(trial.id, 46.0).value == 46.0
    (record,) = json.loads(Study(storage).get_meta(f"amended:{trial.id}"))
    assert record["state"] == "failed" and record["error"] == "amended to failed: contaminated sample"
    vector = study.add_trial({"x0": 2.0, "x1": 2.0}, "complete", value=0.4, values=[0.5, 3.0])
    with pytest.raises(ValueError, match="multi-task trial: amend it with its task values"):
        study.amend(vector.id, 0.5)
    assert study.trial(vector.id).values == (0.5, 3.0)
    assert study.amend(vector.id, 0.3, values=[0.4, 3.0]).values == (0.4, 3.0)
    with pytest.raises(ValueError, match="one value, not task values"):
        study.amend(trial.id, 1.0, values=[1.0, 2.0])


def test_a_multitask_study_refuses_a_complete_trial_without_its_task_values(storage):
    """Before, Study.complete(id, value) on a multi-task study's trial (one amended to failed has no
    vector left) stored a complete trial with no task values, which no multi-task model can read."""
    study = Study(storage, SPACE, {"direction": "minimize"})
    study.set_meta("multitask", json.dumps({"n_tasks": 2, "task_names": ["a", "b"]}))
    trial = study.add_trial({"x0": 1.0, "x1": 2.0}, "complete", value=0.4, values=[0.5, 3.0])
    study.amend(trial.id, failed=True, note="bad sensor")
    with pytest.raises(ValueError, match="multi-task study: complete it with its task values"):
        study.complete(trial.id, 1.5)
    with pytest.raises(ValueError, match="the study has 2 tasks, got 3"):
        study.complete(trial.id, 1.5, values=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="a new trial belongs to a multi-task study"):
        study.add_trial({"x0": 2.0, "x1": 2.0}, "complete", value=1.5)
    assert Study(storage).trial(trial.id).is_failed and len(Study(storage)) == 1  # nothing changed
    assert study.complete(trial.id, 1.5, values=[1.0, 2.5]).values == (1.0, 2.5)


def _rows(trials) -> list[tuple]:
    """Every field of the trials (Trial equality leaves ``error`` out)."""
    return [
        (t.id, t.params, t.state, t.value, t.created, t.completed, t.worker, t.error, t.values)
        for t in trials
    ]


def test_a_snapshot_keeps_unchanged_trials_and_rereads_what_another_connection_changed(storage):
    study = Study(storage, SPACE)
    other = Study(storage)  # another connection, as another process has
    pending = study.add_trial({"x0": 0.0, "x1": 1.0})
    done = study.add_trial({"x0": 1.0, "x1": 2.0}, "complete", value=3.0)
    first = study.snapshot()
    assert _rows(first) == _rows(study.trials())
    again = study.snapshot()
    assert again[0] is first[0] and again[1] is first[1]  # unchanged rows: the same objects
    # the snapshot's parameters are the study's own dict, never one a caller was given
    assert study.shares(first[0]) and not study.shares(study.trials()[0])
    study.trials()[0].params["x0"] = 5.0
    assert study.snapshot()[0].params == {"x0": 0.0, "x1": 1.0}
    changes = (
        (pending.id, lambda: other.complete(pending.id, 2.0)),
        (done.id, lambda: other.amend(done.id, value=-1.0)),
        (pending.id, lambda: other.amend(pending.id, failed=True, note="contaminated")),
        (pending.id, lambda: other.complete(pending.id, 7.0)),
        (None, lambda: other.add_trial({"x0": 2.0, "x1": 3.0}, "failed", error="crashed")),
        (done.id, lambda: other.delete_trials([done.id])),
    )
    for changed, change in changes:
        before = {t.id: t for t in study.snapshot()}
        change()
        after = study.snapshot()
        assert _rows(after) == _rows(study.trials())  # each change seen at once
        for trial in after:  # and only the changed trial read again
            assert (trial is before.get(trial.id)) == (trial.id in before and trial.id != changed)
    assert [t.state for t in study.snapshot()] == ["complete", "failed"]


def test_an_optimizer_asks_on_what_another_optimizer_changed_meanwhile(storage):
    """An ask reuses the trials and encodings it read before when their rows have not changed: a value
    told, amended or failed by another optimizer on the study between two asks is in the next ask's
    model, and a deleted trial is not."""
    from warmbo.optimizer import _basis

    first = wb.Optimizer(SPACE, storage=storage, seed=0, n_initial=3)
    for _ in range(5):
        s = first.ask()
        first.tell(s, branin(s))
    second = wb.Optimizer.load(storage)

    def asked_on_the_stored_trials():
        with warnings.catch_warnings():  # (said at the second call only: once per optimizer)
            warnings.simplefilter("ignore", UnansweredAskWarning)
            first.ask()  # (left pending)
        stored = first.study.trials()
        assert first._model_basis == _basis(stored)  # the model of this ask: the values stored now
        snapshot = first.study.snapshot()
        assert _rows(snapshot) == _rows(stored)
        np.testing.assert_array_equal(
            first._encode_trials(snapshot), SPACE.encode([t.params for t in stored])
        )

    asked_on_the_stored_trials()
    complete = second.study.trials(("complete",))
    changes = (
        lambda: second.amend(complete[0].id, value=-100.0),
        lambda: second.amend(complete[1].id, failed=True, note="contaminated"),
        lambda: second.tell(second.study.trials(("pending",))[0].id, -50.0),
        lambda: second.tell_failed(second.study.trials(("pending",))[0].id, "crashed"),
        lambda: second.tell({"x0": 9.0, "x1": 1.0}, -60.0),
        lambda: second.study.delete_trials([complete[2].id]),
        lambda: first.amend(complete[3].id, value=-70.0),  # and its own change, through its own study
    )
    for change in changes:
        change()
        asked_on_the_stored_trials()


@pytest.mark.parametrize("where", ["sqlite", "memory", "postgresql"])
def test_a_snapshot_kept_between_writes_is_what_a_fresh_read_gives(where, tmp_path, request, monkeypatch):
    """SQLite keeps the last snapshot while nothing is written and patches its own committed writes
    in; any other write (another connection's, a statement of the caller's, a rolled-back transaction)
    makes the next snapshot read every row. Each snapshot equals a fresh read."""
    storage = {"sqlite": str(tmp_path / "kept.db"), "memory": None}.get(where)
    if where == "postgresql":
        storage = request.getfixturevalue("postgres_url")
    study = Study(storage, SPACE)
    reads = []
    all_rows = type(study)._all_rows
    monkeypatch.setattr(type(study), "_all_rows", lambda self: reads.append(1) or all_rows(self))
    keeps = where != "postgresql"

    def snapshot_reads() -> int:
        reads.clear()
        snapshot = study.snapshot()
        assert _rows(snapshot) == _rows(study.trials())
        return len(reads)

    a = study.add_trial({"x0": 0.0, "x1": 1.0})
    snapshot_reads()
    assert snapshot_reads() == (0 if keeps else 1)  # nothing written: the kept snapshot
    b = study.add_trial({"x0": 1.0, "x1": 1.0}, worker="w1")
    own = (
        lambda: study.add_trial({"x0": 2.0, "x1": 1.0}),
        lambda: study.complete(a.id, 1.5),
        lambda: study.amend(a.id, value=2.5, note="typo"),
        lambda: study.amend(a.id, failed=True),
        lambda: study.complete(a.id, 3.5),
        lambda: study.heartbeat([b.id]),
        lambda: study.reassign(b.id, "w2"),
        lambda: study.fail(b.id, "crashed"),
        lambda: study.set_meta("note", "x"),
        lambda: study.delete_meta("note"),
        lambda: study.delete_trials([b.id]),
    )
    for write in own:  # this thread's own writes: patched in, no row read again
        write()
        assert snapshot_reads() == (0 if keeps else 1)
    # a statement of the caller's inside the study's transaction: not counted, so every row is read
    with study.transaction() as conn:
        table, mark = ("trials", "?") if keeps else ("warmbo_trials", "%s")
        conn.execute(f"UPDATE {table} SET value = 9.0 WHERE id = {mark}", (a.id,))
    assert snapshot_reads() == 1 and study.snapshot()[0].value == 9.0
    # a rolled-back transaction leaves the snapshot as it was
    with pytest.raises(RuntimeError), study.transaction():
        study.add_trial({"x0": 3.0, "x1": 1.0})
        study.amend(a.id, 4.0)
        raise RuntimeError
    snapshot_reads()
    assert [t.value for t in study.snapshot()] == [9.0, None]
    if storage is not None:  # another connection's write
        Study(storage).complete(study.snapshot()[1].id, 7.0)
        assert snapshot_reads() == 1 and study.snapshot()[1].value == 7.0
    snapshot_reads()


def test_a_thread_of_an_in_memory_study_never_keeps_rows_another_thread_rolled_back():
    # one connection for every thread, which sees another thread's open transaction: a snapshot
    # waits for it (the lock every write transaction holds), so it never reads rows rolled back later
    study = Study(None, SPACE)
    study.add_trial({"x0": 0.0, "x1": 1.0})
    inserted, read = threading.Event(), threading.Event()

    def rolled_back():
        with pytest.raises(RuntimeError), study.transaction():
            study.add_trial({"x0": 1.0, "x1": 1.0})
            inserted.set()
            read.wait(0.5)  # (the snapshot below cannot read before this transaction ends)
            raise RuntimeError

    thread = threading.Thread(target=rolled_back)
    thread.start()
    inserted.wait(10)
    assert len(study.snapshot()) == 1  # not the other thread's uncommitted row
    read.set()
    thread.join()
    assert _rows(study.snapshot()) == _rows(study.trials()) and len(study.snapshot()) == 1
    other = threading.Thread(target=lambda: study.add_trial({"x0": 2.0, "x1": 1.0}))
    other.start()
    other.join()
    assert _rows(study.snapshot()) == _rows(study.trials()) and len(study.snapshot()) == 2


def test_a_snapshot_survives_another_thread_deleting_trials_while_it_reads(tmp_path, monkeypatch):
    """Before, snapshot() rebuilt its trial cache from the shared dict after its loop over the rows,
    and another thread's delete (patched into that thread's own snapshot) had popped an id from it
    meanwhile: KeyError (a review, with the reader paused inside its loop)."""
    study = Study(str(tmp_path / "s.db"), wb.Space([wb.Float("x", 0, 1)]))
    for i, value in enumerate([1.0, 2.0, 0.0]):
        study.add_trial({"x": i / 10}, "complete", value=value)
    paused, go_on = threading.Event(), threading.Event()
    real = Study._trial

    def pausing(self, row, copy=True):
        out = real(self, row, copy)
        if threading.current_thread().name == "reader" and row[0] == 3:
            paused.set()
            go_on.wait(10)
        return out

    monkeypatch.setattr(Study, "_trial", pausing)
    errors, seen = [], []

    def reader():
        try:
            seen.append(study.snapshot())
        except Exception as exc:  # noqa: BLE001 - the test reports it
            errors.append(exc)

    study.snapshot()  # this thread keeps a snapshot, as an asking worker does
    thread = threading.Thread(target=reader, name="reader")
    thread.start()
    assert paused.wait(10)
    study.add_trial({"x": 0.5})
    study.add_trial({"x": 0.6})
    study.delete_trials([1])
    go_on.set()
    thread.join(10)
    assert errors == [] and [t.id for t in seen[0]] == [1, 2, 3]  # what it read, before the delete
    assert _rows(study.snapshot()) == _rows(study.trials()) and [t.id for t in study.snapshot()] == [
        2,
        3,
        4,
        5,
    ]


def test_an_in_memory_snapshot_never_keeps_another_threads_uncommitted_rows():
    """An in-memory study shares one connection between threads, which sees another thread's open
    transaction. Before, a snapshot read while that thread had completed a trial it then undid (ROLLBACK
    TO a savepoint) was kept: no count changed afterwards, and asks fitted the model to a value that
    was never stored (a review). Reads now wait for the transaction (the reader gets committed rows)."""
    opt = wb.Optimizer(wb.Space([wb.Float("x", 0, 1)]), n_initial=2, output_transform="none", seed=0)
    study = opt.study
    for x in (0.1, 0.3, 0.5):
        study.add_trial({"x": x}, "complete", value=x)
    pending = study.add_trial({"x": 0.7})
    written, done = threading.Event(), threading.Event()

    def writer():
        with study.transaction() as conn:
            conn.execute("SAVEPOINT s")
            study.complete(pending.id, -1e6)
            written.set()
            done.wait(0.5)  # (the reader below cannot read before this transaction ends)
            conn.execute("ROLLBACK TO s")
            conn.execute("RELEASE s")

    thread = threading.Thread(target=writer)
    thread.start()
    assert written.wait(10)
    read = study.snapshot()
    done.set()
    thread.join(10)
    assert [(t.state, t.value) for t in read] == [
        ("complete", 0.1),
        ("complete", 0.3),
        ("complete", 0.5),
        ("pending", None),
    ]
    assert _rows(study.snapshot()) == _rows(study.trials())
    opt.ask()
    # (minimised: the model sees -y, stored standardised: equal to rounding)
    np.testing.assert_allclose(sorted(-opt.model_.y_train_), [0.1, 0.3, 0.5], rtol=1e-12)


def test_an_interrupt_just_after_begin_rolls_the_transaction_back(storage, monkeypatch):
    """Before, a Ctrl-C landing between BEGIN and the transaction's try left the connection inside a
    transaction holding the write lock: the next write failed with "cannot start a transaction within
    a transaction" (a review: 391 of 5932 timed interrupts)."""
    study = Study(storage, SPACE, {"direction": "minimize"})
    study.add_trial({"x0": 1.0, "x1": 2.0}, "complete", value=1.0)
    real = type(study)._begin

    def interrupted(self, conn):
        real(self, conn)
        raise KeyboardInterrupt

    monkeypatch.setattr(type(study), "_begin", interrupted)
    with pytest.raises(KeyboardInterrupt):
        study.add_trial({"x0": 2.0, "x1": 2.0}, "complete", value=2.0)
    monkeypatch.undo()
    assert study.add_trial({"x0": 3.0, "x1": 2.0}, "complete", value=3.0).value == 3.0
    assert [t.value for t in Study(storage).trials()] == [1.0, 3.0]


def test_an_interrupt_just_before_commit_rolls_the_transaction_back(storage):
    """Before (a review), an interrupt between the end of a transaction's body and its COMMIT left the
    connection in the transaction, holding the write lock (SQLite: the next write failed with
    "cannot start a transaction within a transaction")."""
    study = Study(storage, SPACE, {"direction": "minimize"})
    trial = study.add_trial({"x0": 1.0, "x1": 2.0})

    class Trap(threading.local):  # raises at the line just before COMMIT, once
        armed = True

        def __setattr__(self, name, value):
            if name == "snapshot" and value is None and getattr(self, "depth", 0) == 1 and Trap.armed:
                Trap.armed = False
                raise KeyboardInterrupt
            super().__setattr__(name, value)

    study._local = Trap()
    with pytest.raises(KeyboardInterrupt):
        study.complete(trial.id, 1.0)
    assert Study(storage).trial(trial.id).is_pending  # rolled back, not committed later
    assert study.complete(trial.id, 2.0).value == 2.0  # and the connection can write again


def test_a_run_survives_the_server_dropping_its_connections(postgres_url):
    # before: a run of hours died when the server dropped its connections (a restart, a failover, an
    # administrator's pg_terminate_backend, an idle timeout) with psycopg's "the connection is
    # closed" or "terminating connection due to administrator command"; now a read or a BEGIN on a
    # dropped connection reconnects and is sent again (nothing else can have reached the server)
    import psycopg

    from warmbo.storage_postgres import split_url

    opt = wb.Optimizer(SPACE, storage=postgres_url, seed=0, n_initial=4)
    admin = psycopg.connect(split_url(postgres_url)[0], autocommit=True)
    dropped = []

    def objective(params):
        if len(opt.history) in (2, 5):  # drop every connection of this run, the heartbeats' too
            pids = [opt.study._connect().info.backend_pid]
            rows = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid = ANY(%s)",
                (pids,),
            ).fetchall()
            dropped.append(rows)
        return branin(params)

    best = opt.run(objective, budget=8, progress=False)
    admin.close()
    assert dropped == [[(True,)], [(True,)]]
    trials = Study(postgres_url).trials()
    assert [t.state for t in trials] == ["complete"] * 8
    assert best.value == min(t.value for t in trials)


def test_a_write_waiting_for_the_study_lock_survives_the_server_dropping_its_connection(postgres_url):
    # before: a write waiting for the study's lock (another worker's transaction held it) when the
    # server dropped its connection (a restart, pg_terminate_backend) failed with psycopg's
    # "terminating connection due to administrator command"; nothing of it had been written, so the
    # transaction is now begun again on a new connection and the write goes through
    import psycopg

    from warmbo.storage_postgres import _lock_key, split_url

    study = Study(postgres_url, space=SPACE)
    study.add_trial({"x0": 0.0, "x1": 1.0}, state="complete", value=1.0)
    holder = psycopg.connect(split_url(postgres_url)[0], autocommit=True)
    holder.execute("BEGIN")
    holder.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(study.name),))
    outcome = []

    def write():
        try:
            outcome.append(study.add_trial({"x0": 2.0, "x1": 3.0}, state="complete", value=2.0).id)
        except Exception as exc:  # (the outcome the test reports)
            outcome.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    admin = psycopg.connect(split_url(postgres_url)[0], autocommit=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the writer thread's backend waits for the advisory lock
        waiting = admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> %s",
            (holder.info.backend_pid,),
        ).fetchall()
        if waiting:
            (pid,) = waiting[0]
            break
        time.sleep(0.05)
    else:
        pytest.fail("the write never waited for the study's lock")
    assert admin.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone() == (True,)
    time.sleep(0.3)  # (the writer finds its connection dropped and reconnects, then waits again)
    holder.execute("COMMIT")
    writer.join(timeout=60)
    holder.close()
    admin.close()
    assert not writer.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], int), outcome
    assert [(t.params["x0"], t.value) for t in Study(postgres_url).trials()] == [(0.0, 1.0), (2.0, 2.0)]


def test_a_password_in_a_prior_studys_url_is_never_shown_or_stored(postgres_server, tmp_path, monkeypatch):
    # before: two PostgreSQL prior studies in one database (one file stem, the database's) were labelled
    # by their whole URLs, password included, in the target study's stored sources, its status and its
    # HTML report; a single one was labelled by the database's name, not the study's
    from typer.testing import CliRunner

    from warmbo.cli import app
    from warmbo.storage import redacted

    assert (
        redacted("postgresql://bob:hunter2@db.example/hpo?study=a")
        == "postgresql://bob:***@db.example/hpo?study=a"
    )
    assert (
        redacted("postgresql://bob@h/db?study=a&password=hunter2")
        == "postgresql://bob@h/db?study=a&password=***"
    )
    assert redacted("runs/study.db") == "runs/study.db"
    monkeypatch.chdir(tmp_path)
    urls = []
    for name, shift in (("earlier", 0.0), ("older", 0.1)):
        url = postgres_server.url(name) + "&password=hunter2"  # (the test server trusts the socket)
        opt = wb.Optimizer(SPACE, storage=url, seed=0)
        for x in np.linspace(-5.0, 10.0, 6):
            opt.tell({"x0": float(x), "x1": 2.0}, float((x - 3.0 - shift) ** 2))
        opt.study.close()  # (an open connection's ResourceWarning would land in a later test)
        urls.append(url)
    (tmp_path / "space.json").write_text(json.dumps(SPACE.to_dict()))
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "suggest",
            "--space",
            "space.json",
            "--storage",
            "target.db",
            "--prior",
            urls[0],
            "--prior",
            urls[1],
        ],
    )
    assert result.exit_code == 0, result.output
    status = runner.invoke(app, ["status", "target.db"])
    report = runner.invoke(app, ["report", "target.db", "--out", "rep"])
    assert status.exit_code == 0 and report.exit_code == 0, (status.output, report.output)
    for text in (result.output, status.output, (tmp_path / "rep" / "report.html").read_text()):
        assert "hunter2" not in text
    # the stored source labels (kept compressed in the study): by study name
    assert set(wb.Optimizer.load("target.db").prior.task) == {"earlier", "older"}
    opt = wb.Optimizer(SPACE, storage="python.db", prior=urls, seed=0)  # the Python form of the list
    opt.ask()
    labels = set(wb.Optimizer.load("python.db").prior.task)
    assert len(labels) == 2 and not any("hunter2" in label for label in labels), labels


def test_a_password_in_the_studys_own_url_is_never_shown(postgres_server, tmp_path, monkeypatch):
    # before: the study's own URL was printed whole by the CLI ('created study ...', the 'report
    # results with: warmbo observe --storage ...' hint, 'N prior rows in ...', 'removed ... from ...',
    # 'imported ... from <prior URL>', the already-complete hint), by Optimizer's repr and by a
    # malformed URL's error; and the advised command lines left the URL unquoted, so its '&study='
    # ended the command in a shell
    from typer.testing import CliRunner

    from warmbo.cli import app
    from warmbo.storage_postgres import split_url

    monkeypatch.chdir(tmp_path)
    url = postgres_server.url() + "&password=hunter2"  # (the test server trusts the socket)
    other = postgres_server.url() + "&password=hunter2"
    opt = wb.Optimizer(SPACE, storage=other, seed=0)
    opt.tell({"x0": 1.0, "x1": 2.0}, 3.0)
    opt.study.close()
    (tmp_path / "space.json").write_text(json.dumps(SPACE.to_dict()))
    runner = CliRunner()
    outputs = []

    def run(*args):
        result = runner.invoke(app, list(args))
        outputs.append(result.output)
        assert "hunter2" not in result.output, (args, result.output)

    run("suggest", url, "--space", "space.json", "--seed", "0", "--prior", other, "--transfer", "none")
    opt = wb.Optimizer.load(url)
    pending = next(t.id for t in opt.history if t.is_pending)
    opt.study.close()
    run("observe", url, "--trial", str(pending), "--value", "1.5")
    run("observe", url, "--trial", str(pending), "--value", "2.5")  # another value: refused, a hint
    run("prior", "list", url)
    run("prior", "remove", "-s", url, "--all")
    joined = ["".join(output.split()) for output in outputs]  # (the console wraps long lines)
    assert "warmboobserve--storage'postgresql://" in joined[0], outputs[0]
    assert "password=***'--trialID" in joined[0], outputs[0]
    assert "warmboobserve--storage'postgresql://" in joined[2], outputs[2]  # (one shell word)
    assert "password=***'--params" in joined[2], outputs[2]
    opt = wb.Optimizer.load(url)
    assert "hunter2" not in repr(opt) and "hunter2" not in repr(opt.study)
    opt.study.close()
    with pytest.raises(StorageError) as caught:
        split_url("postgresql://bob:hunter2@h/?study=a")
    assert "hunter2" not in str(caught.value)


def test_a_cli_command_run_in_process_closes_the_connections_it_opened(postgres_server, tmp_path):
    # before: a command never closed its study; after an error (observe of a second value) the study
    # sat in the traceback's reference cycle, and the collector could finalise psycopg's connection
    # before the study's closer: "deleted while still open", and a backend held until then
    import gc

    import psycopg
    from typer.testing import CliRunner

    from warmbo.cli import app
    from warmbo.storage_postgres import split_url

    url = postgres_server.url("in-process")
    opt = wb.Optimizer(SPACE, storage=url, seed=0)
    trial = opt.ask().trial_id
    opt.study.close()
    del opt
    gc.collect()
    with psycopg.connect(split_url(url)[0], autocommit=True) as admin:

        def backends() -> int:
            """The connections to the study's database, this one left out. A closed connection's
            backend leaves pg_stat_activity a moment after the client's close (it was listed still,
            under load), so it waits up to 10 s for a count that falls; an open one never goes."""
            query = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            deadline = time.monotonic() + 10.0
            while True:
                count = admin.execute(query + " AND pid <> pg_backend_pid()").fetchone()[0]
                if count <= before or time.monotonic() > deadline:
                    return count
                time.sleep(0.05)

        before = 0  # (the earlier tests' connections, closed, may still be leaving)
        before = backends()
        runner = CliRunner()
        results = []
        for args in (["--value", "1.5"], ["--value", "2.5"]):  # the second is refused: a trial has one
            results.append(runner.invoke(app, ["observe", url, "--trial", str(trial), *args]))
            assert backends() == before, results[-1].output  # (results kept: no collection frees them)
        assert results[0].exit_code == 0 and results[1].exit_code == 1, [r.output for r in results]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.clear()
            gc.collect()
        assert not [w for w in caught if issubclass(w.category, ResourceWarning)], caught


def test_redacted_keeps_a_url_as_written_but_its_secrets():
    # before: a URL with no host (a local socket, postgresql:///db?host=/run/sock) lost its '//' and
    # read postgresql:/db (so an advised command line named no PostgreSQL study), the other query
    # parameters were re-encoded (host=%2Frun%2Fsock), and sslpassword= (the client key's
    # passphrase) was shown
    from warmbo.storage import redacted

    assert (
        redacted("postgresql:///hpo?host=/run/sock&password=p%26w&study=a")
        == "postgresql:///hpo?host=/run/sock&password=***&study=a"
    )
    assert redacted("postgresql:///hpo?host=/run/sock&study=a") == "postgresql:///hpo?host=/run/sock&study=a"
    assert (
        redacted("postgresql://bob@h/db?sslpassword=k3y&study=a")
        == "postgresql://bob@h/db?sslpassword=***&study=a"
    )
    assert (
        redacted("postgres://bob:p%40ss@h1:5432,h2/db?study=a") == "postgres://bob:***@h1:5432,h2/db?study=a"
    )
    assert redacted("postgresql://:pw@h/db?study=a") == "postgresql://:***@h/db?study=a"


def test_a_refused_prior_study_url_is_shown_without_its_password(postgres_server, tmp_path, monkeypatch):
    # before: a PostgreSQL prior given twice, or with --task, was refused with its whole URL,
    # password included ("--prior postgresql://...&password=hunter2 is given twice")
    from typer.testing import CliRunner

    from warmbo.cli import app

    monkeypatch.chdir(tmp_path)
    url = postgres_server.url("source") + "&password=hunter2"
    opt = wb.Optimizer(SPACE, storage=url, seed=0)
    opt.tell({"x0": 1.0, "x1": 2.0}, 3.0)
    opt.study.close()
    (tmp_path / "space.json").write_text(json.dumps(SPACE.to_dict()))
    runner = CliRunner()
    base = ["suggest", "--space", "space.json", "--storage", "target.db"]
    twice = runner.invoke(app, [*base, "--prior", url, "--prior", url])
    task = runner.invoke(app, [*base, "--prior", url, "--task", "t"])
    for result, said in ((twice, "is given twice"), (task, "--task splits a CSV file")):
        assert result.exit_code == 1 and said in result.output, result.output
        assert "hunter2" not in result.output and "password=***" in result.output, result.output


# ---------------------------------------------------------------------- a lab sharing one study (walkthrough)
def test_a_mistyped_study_name_names_the_studies_the_database_holds(postgres_server, tmp_path, monkeypatch):
    # before: study=enzym for enzyme said "no study 'enzym' ...: create one with a search space", and
    # `suggest --space` with the typo created a second study without a word: the lab's results went
    # on in two studies
    from typer.testing import CliRunner

    from warmbo.cli import app

    monkeypatch.chdir(tmp_path)
    wb.Optimizer(SPACE, storage=postgres_server.url("enzyme-walk"), seed=0).ask()
    with pytest.raises(StorageError) as caught:
        Study(postgres_server.url("enzyme-wakl"))
    said = str(caught.value)
    assert said.startswith("no study 'enzyme-wakl' in postgresql://"), said
    assert "did you mean study=enzyme-walk? (the database holds the studies enzyme-walk" in said, said
    assert not study_exists(postgres_server.url("enzyme-wakl"))
    (tmp_path / "space.json").write_text(json.dumps(SPACE.to_dict()))
    runner = CliRunner()
    status = runner.invoke(app, ["status", postgres_server.url("Enzyme-walk")])
    assert status.exit_code == 1 and "did you mean study=enzyme-walk?" in status.output, status.output
    created = runner.invoke(app, ["suggest", postgres_server.url("enzyme-wal"), "--space", "space.json"])
    assert created.exit_code == 0, created.output
    said = " ".join(created.output.split())
    assert "note: the database also holds the study enzyme-walk; this command created the new study " in said
    assert "give study=enzyme-walk in the URL" in said, said
    # two neighbouring letters swapped, or a letter's case: refused, as the same slip of an SQLite
    # path is (a user test: `warmbo optimize --space ... study=ta1` beside at1 ran a second study)
    for slip in ("enzmye-walk", "Enzyme-Walk"):
        for command in (["suggest"], ["optimize", "--cmd", "echo 1", "--budget", "1"]):
            refused = runner.invoke(
                app, [*command, "--storage", postgres_server.url(slip), "--space", "space.json"]
            )
            assert refused.exit_code == 1, refused.output
            said = " ".join(refused.output.split())
            assert (
                f"no study '{slip}' in that database, and 'enzyme-walk' is one: did you mean "
                "study=enzyme-walk?" in said
            )
            assert "add --create" in said and not study_exists(postgres_server.url(slip))
    # names of a series are not slips (a review: run.v2 beside run.v1, run12 beside run21 were refused)
    from warmbo.cli import _a_name_slip

    for typed, existing in (
        ("run.v2", "run.v1"),
        ("run12", "run21"),
        ("exp.2", "exp.1"),
        ("lr.1e-3", "lr.1e-4"),
    ):
        assert not _a_name_slip(typed, existing)
    assert _a_name_slip("ta1", "at1") and _a_name_slip("Lab", "lab") and not _a_name_slip("lab", "lab")
    made = runner.invoke(
        app, ["suggest", "--storage", postgres_server.url("enzmye-walk"), "--space", "space.json", "--create"]
    )
    assert made.exit_code == 0 and study_exists(postgres_server.url("enzmye-walk")), made.output
    far = runner.invoke(app, ["suggest", postgres_server.url("ph-screen-walk"), "--space", "space.json"])
    assert far.exit_code == 0 and "note:" not in far.output, far.output
    assert "NewStudyWarning" not in created.output and "did you mean" not in created.output  # (said once)
    # in Python, the new study warns as a new SQLite file beside one of a close name does (a user
    # test: Optimizer(storage=...study=lr-sweeep) with study=lr-sweeep at hand said nothing)
    from warmbo.storage import NewStudyWarning

    with pytest.warns(
        NewStudyWarning, match=r"created a new study 'enzyme-wlak'.*did you mean study=enzyme-walk"
    ):
        wb.Optimizer(SPACE, storage=postgres_server.url("enzyme-wlak"), seed=0).close()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NewStudyWarning)
        wb.Optimizer(SPACE, storage=postgres_server.url("enzyme-wlak"), seed=0).close()  # (it exists now)
        wb.Optimizer(SPACE, storage=postgres_server.url("kinetics-walk"), seed=0).close()  # (no close name)
        wb.Optimizer(SPACE, storage=postgres_server.url("kinetics-walk-2"), seed=0).close()  # (a series)
    # case and separators are not a series (before, folded away: Kinetics-Walk said nothing)
    for slip in ("Kinetics-Walk", "kinetics_walk"):
        with pytest.warns(
            NewStudyWarning, match=rf"created a new study '{slip}'.*did you mean study=kinetics-walk"
        ):
            wb.Optimizer(SPACE, storage=postgres_server.url(slip), seed=0).close()


def test_a_url_with_the_printed_stars_for_a_password_says_what_they_are(postgres_server, tmp_path):
    # before: the advised `warmbo observe --storage 'postgresql://lab:***@host/db?study=...'`, pasted
    # as printed, failed with the server's "password authentication failed for user", which did not
    # say that the stars stand for the password
    base = postgres_server.url("stars")
    wb.Optimizer(SPACE, storage=base, seed=0).ask()
    user = postgres_server.user
    for url in (
        base.replace(f"postgresql://{user}@", f"postgresql://{user}:***@"),
        base + "&password=***",
    ):
        with pytest.raises(
            StorageError, match=r"is \*\*\*, the stand-in warmbo prints in place of a password"
        ):
            Study(url)
    Study(base + "&password=real").close()  # (the test server trusts its socket: any other password)


def test_a_command_opening_the_study_while_the_server_restarts_waits_for_it(postgres_url, monkeypatch):
    # before: a command that opened the study (again) while the server restarted failed at once with
    # "cannot connect ...: FATAL: the database system is shutting down" (a walkthrough: `warmbo
    # suggest` during `pg_ctl restart`), though a dropped connection waits for the server
    import psycopg

    import warmbo.storage_postgres as backend

    wb.Optimizer(SPACE, storage=postgres_url, seed=0).ask()  # (this process has reached the server)
    real = psycopg.connect
    answers = ["FATAL:  the database system is shutting down", "Connection refused", "FATAL:  the "
               "database system is starting up"]  # fmt: skip

    def restarting(*args, **kwargs):
        if answers:
            raise psycopg.OperationalError(f"connection failed: {answers.pop(0)}")
        return real(*args, **kwargs)

    monkeypatch.setattr(psycopg, "connect", restarting)
    assert len(Study(postgres_url)) == 1 and not answers
    # a server never reached (a wrong port, a server that is down) is said at once, with what to check
    monkeypatch.setattr(backend, "_REACHED", set())
    answers.append("connection to server on socket failed: Connection refused")
    started = time.monotonic()
    with pytest.raises(StorageError, match=r"Connection refused; is the server running, and are the host"):
        Study(postgres_url)
    assert time.monotonic() - started < 5
    answers.append("FATAL:  the database system is starting up")  # but a restarting one is waited for
    assert len(Study(postgres_url)) == 1 and not answers


def test_libpqs_own_message_does_not_show_the_password():
    # review: libpq quotes the URL's text in some errors, so a password with a '%' not followed by two
    # hex digits was printed ('invalid percent-encoded token: "se%zzcret"'); no server is reached
    from warmbo.storage import StorageError
    from warmbo.storage_postgres import PostgresStudy

    for url in (
        "postgresql://u:se%zzcret@127.0.0.1:1/db?study=a",
        "postgresql://u@127.0.0.1:1/db?study=a&password=se%zzcret",
    ):
        with pytest.raises(StorageError) as caught:
            PostgresStudy(url)
        assert "zzcret" not in str(caught.value), str(caught.value)
    assert 'token: "***"' in str(caught_first(PostgresStudy)), "libpq's quoted token is shown as ***"


def caught_first(make) -> Exception:
    from warmbo.storage import StorageError

    try:
        make("postgresql://u:se%zzcret@127.0.0.1:1/db?study=a")
    except StorageError as exc:
        return exc
    raise AssertionError("no StorageError")


def test_a_trial_of_another_study_says_which_study_it_is_in(postgres_server):
    # before: `observe --trial 33` with the wrong study= said "no trial with id 33 in study 'enzyme'"
    # alone, though trial ids are unique in the database and 33 was a trial of study 'enzym2'
    from typer.testing import CliRunner

    from warmbo.cli import app

    here, there = postgres_server.url("plate-a-walk"), postgres_server.url("plate-b-walk")
    wb.Optimizer(SPACE, storage=here, seed=0).ask()
    theirs = wb.Optimizer(SPACE, storage=there, seed=0).ask().trial_id
    done = CliRunner().invoke(app, ["observe", here, "--trial", str(theirs), "--value", "1.5"])
    assert done.exit_code == 1, done.output
    said = " ".join(done.output.split())
    assert (
        f"no trial with id {theirs} in study 'plate-a-walk' in postgresql://" in said
        and "(it is a trial of study 'plate-b-walk': give study=plate-b-walk in the URL)" in said
    )
    assert Study(there).trial(theirs).is_pending
    with pytest.raises(StorageError, match=r"in study 'plate-a-walk' in postgresql://\S+/\w+$"):
        Study(here).trial(10**9)


def test_a_connection_the_server_will_always_refuse_is_said_at_once(postgres_server, monkeypatch):
    # before: once this process had reached the server, a connection refused for good (a role no longer
    # allowed to log in, a password changed meanwhile) was retried for RECONNECT_PATIENCE (60 s) as if
    # the server were restarting, then reported
    import types

    import psycopg

    import warmbo.storage_postgres as backend

    admin = postgres_server.url("refusal-admin")
    with psycopg.connect(admin.split("&study=")[0], autocommit=True) as c:
        c.execute("CREATE ROLE walker LOGIN SUPERUSER")
    url = admin.replace(f"postgresql://{postgres_server.user}@", "postgresql://walker@")
    wb.Optimizer(SPACE, storage=url, seed=0).ask()  # (this process has reached the server as walker)
    with psycopg.connect(admin.split("&study=")[0], autocommit=True) as c:
        c.execute("ALTER ROLE walker NOLOGIN")

    def no_wait(seconds):  # the reconnect loop's pause between attempts: none for a refusal
        raise AssertionError(f"waited {seconds} s to connect again")

    monkeypatch.setattr(
        backend, "time", types.SimpleNamespace(monotonic=time.monotonic, time=time.time, sleep=no_wait)
    )
    with pytest.raises(StorageError, match=r'role "walker" is not permitted to log in'):
        Study(url)


def test_connections_give_up_after_a_connect_timeout_unless_the_url_sets_one(postgres_url):
    # before: no connect_timeout, so a host that drops packets (a firewall) hung the command for the
    # operating system's TCP timeout (minutes)
    from warmbo.storage_postgres import CONNECT_TIMEOUT

    Study(postgres_url, space=SPACE).close()
    for url, said in ((postgres_url, CONNECT_TIMEOUT), (postgres_url + "&connect_timeout=3", 3)):
        with Study(url)._open_connection() as conn:  # (a raw connection: closed here, not collected)
            assert f"connect_timeout={said}" in conn.info.dsn.split()


class _Drops:
    """Drops a study's connection (``pg_terminate_backend`` through a second connection, waiting until
    the backend is gone) at one moment of an ask's insert transaction, at the chosen occurrences:
    ``admit`` (run's budget check, the first read inside the transaction), ``insert`` (the INSERT of
    the pending trial), ``commit-lost`` (just before the COMMIT: it never reaches the server) and
    ``commit-stored`` (just after the COMMIT reached the server, before the client reads its answer:
    the trial is stored, the client sees the connection lost). The COMMIT is that of a transaction
    that ran a statement starting with ``of`` (an ask's INSERT unless told)."""

    def __init__(
        self, study, monkeypatch, moment: str, when=lambda n: True, of: str = "INSERT INTO warmbo_trials"
    ):
        import psycopg

        from warmbo import storage_postgres
        from warmbo.storage_postgres import split_url

        self.admin = psycopg.connect(split_url(study.url)[0], autocommit=True)
        self.moment, self.when, self.seen, self.dropped = moment, when, 0, 0
        self.inserted = False  # (this transaction ran a statement starting with `of`: an ask's INSERT)
        real = storage_postgres._Connection.execute
        drops = self

        def execute(conn, query, params=None):
            if conn._study is not study or not study._in_transaction(conn._conn):
                return real(conn, query, params)
            if query.startswith(of):
                drops.inserted = True
            trigger = {
                "admit": query.startswith("SELECT COUNT(*)"),
                "insert": query.startswith("INSERT INTO warmbo_trials"),
            }.get(drops.moment.split("-")[0], query == "COMMIT" and drops.inserted)
            if query in ("COMMIT", "ROLLBACK"):
                drops.inserted = False
            if not trigger:
                return real(conn, query, params)
            drops.seen += 1
            if not drops.when(drops.seen):
                return real(conn, query, params)
            if drops.moment == "commit-stored":
                real(conn, query, params)  # the COMMIT reaches the server and is done
                drops.terminate(conn)
                # psycopg's own error for the dropped connection (on the psycopg connection itself:
                # the study's would send this read again on a new one)
                return conn._conn.execute("SELECT 1")
            drops.terminate(conn)
            return real(conn, query, params)

        monkeypatch.setattr(storage_postgres._Connection, "execute", execute)

    def terminate(self, conn) -> None:
        pid = conn._conn.info.backend_pid
        assert self.admin.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,)).fetchone() == (True,)
        self.dropped += 1


@pytest.mark.parametrize("moment", ["admit", "insert", "commit-lost", "commit-stored"])
def test_a_run_goes_on_when_the_server_drops_the_connection_of_an_asks_insert(
    postgres_url, monkeypatch, moment
):
    # before: a run stopped with psycopg's "consuming input failed: server closed the connection
    # unexpectedly" (a drop during the insert transaction of an ask) or AdminShutdown (at its
    # COMMIT), and a drop after the COMMIT reached the server left the trial pending for good. Now
    # the ask is made again on a new connection, and a trial the lost COMMIT did store is this ask's
    opt = wb.Optimizer(SPACE, storage=postgres_url, seed=0, n_initial=3)
    drops = _Drops(opt.study, monkeypatch, moment, when=lambda n: n in (2, 3, 5))
    opt.run(branin, budget=6, progress=False)
    drops.admin.close()
    assert drops.dropped == 3
    trials = Study(postgres_url).trials()
    assert [t.state for t in trials] == ["complete"] * 6
    assert len({tuple(t.params.values()) for t in trials}) == 6


@pytest.mark.parametrize("moment", ["insert", "commit-lost"])
def test_a_run_whose_asks_always_lose_the_connection_stops_with_a_storage_error(
    postgres_url, monkeypatch, moment
):
    opt = wb.Optimizer(SPACE, storage=postgres_url, seed=0, n_initial=3)
    drops = _Drops(opt.study, monkeypatch, moment, when=lambda n: n > 2)
    with pytest.raises(StorageError) as caught:
        opt.run(branin, budget=6, progress=False)
    drops.admin.close()
    message = str(caught.value)
    assert type(caught.value).__module__.startswith("warmbo")
    assert "connection" in message and "no trial of this ask was stored" in message, message
    assert "run" in message and "again" in message, message
    trials = Study(postgres_url).trials()
    assert [t.state for t in trials] == ["complete"] * 2  # (nothing pending)


def test_a_batch_ask_whose_commit_was_stored_before_the_drop_keeps_that_trial(postgres_url, monkeypatch):
    opt = wb.Optimizer(SPACE, storage=postgres_url, seed=0, n_initial=4)
    drops = _Drops(opt.study, monkeypatch, "commit-stored", when=lambda n: n == 2)
    batch = opt.ask(3)
    drops.admin.close()
    assert drops.dropped == 1
    pending = Study(postgres_url).trials()
    assert [t.state for t in pending] == ["pending"] * 3
    assert [s.trial_id for s in batch] == [t.id for t in pending]
    assert [dict(s) for s in batch] == [t.params for t in pending]
    assert len({tuple(t.params.values()) for t in pending}) == 3


def test_the_store_says_a_transaction_cut_by_a_dropped_connection_in_warmbos_words(postgres_url, monkeypatch):
    from warmbo.storage import ConnectionLostError

    study = Study(postgres_url, SPACE, {"direction": "minimize"})
    drops = _Drops(study, monkeypatch, "insert")
    with pytest.raises(ConnectionLostError, match="nothing of it was stored") as caught:
        study.add_trial({"x0": 1.0, "x1": 2.0}, "complete", value=1.0)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    monkeypatch.undo()
    drops.admin.close()
    assert study.add_trial({"x0": 2.0, "x1": 2.0}, "complete", value=2.0).value == 2.0  # (reconnected)
    assert [t.value for t in Study(postgres_url).trials()] == [2.0]


def test_a_value_whose_commit_reached_the_server_before_the_drop_is_kept_quietly(postgres_url, monkeypatch):
    # a run's record of a value whose COMMIT was stored just before the server dropped the connection:
    # the value is the study's, the run goes on without a warning that another worker recorded it
    opt = wb.Optimizer(SPACE, storage=postgres_url, seed=0, n_initial=3)
    drops = _Drops(
        opt.study, monkeypatch, "commit-stored", when=lambda n: n == 2, of="UPDATE warmbo_trials SET state"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.run(branin, budget=4, progress=False)
    drops.admin.close()
    assert drops.dropped == 1
    trials = Study(postgres_url).trials()
    assert [t.state for t in trials] == ["complete"] * 4
    assert [t.value for t in trials] == [branin(t.params) for t in trials]


def test_a_trial_taken_over_by_a_commit_stored_before_the_drop_is_the_asks(postgres_url, monkeypatch):
    lost = wb.Optimizer(SPACE, storage=postgres_url, seed=0, worker="machine-a", heartbeat_grace=0.5).ask()
    time.sleep(0.7)
    survivor = wb.Optimizer(SPACE, storage=postgres_url, seed=0, worker="machine-b", heartbeat_grace=0.5)
    drops = _Drops(survivor.study, monkeypatch, "commit-stored", of="UPDATE warmbo_trials SET worker")
    again = survivor.ask()
    drops.admin.close()
    assert drops.dropped == 1
    assert again.trial_id == lost.trial_id and dict(again) == dict(lost)
    assert [(t.id, t.state, t.worker) for t in Study(postgres_url).trials()] == [
        (lost.trial_id, "pending", "machine-b")
    ]


class _ServerDrops:
    """A trigger on the server that drops the writing connection (``pg_terminate_backend`` of its own
    backend) the first ``times`` times a row of ``table`` matching ``condition`` is written for the
    study at ``url``: the server's own drop in the middle of that write (a restart, a failover)."""

    def __init__(self, url: str, table: str, condition: str, times: int = 1):
        import psycopg

        from warmbo.storage_postgres import split_url

        conninfo, self.study = split_url(url)
        self.admin = psycopg.connect(conninfo, autocommit=True)
        self.name = f"drop_{self.study}"
        self.admin.execute(f"CREATE SEQUENCE {self.name}")
        self.admin.execute(
            f"CREATE FUNCTION {self.name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"IF NEW.study = '{self.study}' AND ({condition}) AND nextval('{self.name}') <= {int(times)} "
            "THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF; RETURN NEW; END $$"
        )
        self.admin.execute(
            f"CREATE TRIGGER {self.name} BEFORE INSERT OR UPDATE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {self.name}()"
        )

    def fired(self) -> tuple[int, bool]:
        """The number of matching writes so far (the first ``times`` were dropped), and whether any was."""
        return self.admin.execute(f"SELECT last_value, is_called FROM {self.name}").fetchone()

    def close(self, table: str) -> None:
        self.admin.execute(f"DROP TRIGGER {self.name} ON {table}")
        self.admin.execute(f"DROP FUNCTION {self.name}()")
        self.admin.execute(f"DROP SEQUENCE {self.name}")
        self.admin.close()


def test_an_ask_goes_on_when_the_server_drops_the_connection_of_its_fits_record(postgres_url):
    # a user test: one pg_terminate_backend during the write of the warm start (the hyperparameters an
    # ask keeps for the next optimizer) stopped the worker with ConnectionLostError, where a drop in
    # the ask's insert is survived; the ask now makes those writes again on a new connection
    opt = wb.Optimizer(SPACE, storage=postgres_url, seed=0, n_initial=3)
    drops = _ServerDrops(postgres_url, "warmbo_meta", "NEW.key = 'warm_start'", times=2)
    try:
        opt.run(branin, budget=7, progress=False)
        assert drops.fired()[0] >= 3  # (two drops, then the writes went through)
    finally:
        drops.close("warmbo_meta")
    trials = Study(postgres_url).trials()
    assert [t.state for t in trials] == ["complete"] * 7
    assert json.loads(Study(postgres_url).get_meta("warm_start"))["theta"]


def test_tell_goes_on_when_the_server_drops_the_connection_of_its_write(postgres_url):
    # a user test: docs/scale.md's team ask/tell worker died at `opt.tell(s, v)` on one drop, its value
    # lost; a value told is now written again on a new connection (a trial's value told twice is the
    # same trial), and a new trial's too when its COMMIT did not get through
    opt = wb.Optimizer(SPACE, storage=postgres_url, seed=0)
    s = opt.ask()
    drops = _ServerDrops(postgres_url, "warmbo_trials", "NEW.state = 'complete'", times=2)
    try:
        told = opt.tell(s, 3.0)
        new = opt.tell({"x0": 1.0, "x1": 2.0}, 4.0)  # (the third write: through at once)
        assert drops.fired()[0] == 4  # (two drops, the value told again, the new trial)
    finally:
        drops.close("warmbo_trials")
    assert (told.id, told.value) == (s.trial_id, 3.0)
    assert [(t.id, t.state, t.value) for t in Study(postgres_url).trials()] == [
        (s.trial_id, "complete", 3.0),
        (new.id, "complete", 4.0),
    ]


def test_a_server_that_stays_down_is_waited_for_once_not_at_every_step(postgres_url, monkeypatch):
    # a user test: with the server down, a run gave up after ~200 s where its message said 60: its
    # value's write, its check of the trial and its record that the run stopped each waited the full
    # patience. Once a reconnection has waited in vain, the next ones within that time try once
    import psycopg

    import warmbo.storage_postgres as backend
    from warmbo.storage_postgres import split_url

    study = Study(postgres_url, SPACE, {"direction": "minimize"})
    study.add_trial({"x0": 1.0, "x1": 2.0}, "complete", value=1.0)
    monkeypatch.setattr(backend, "RECONNECT_PATIENCE", 1.5)
    real = psycopg.connect

    attempts = []  # (the connection attempts: the wait's, not the clock's, is what is tested)

    def down(*args, **kwargs):
        attempts.append(True)
        raise psycopg.OperationalError("connection failed: Connection refused")

    with psycopg.connect(split_url(postgres_url)[0], autocommit=True) as admin:
        pid = study._connect()._conn.info.backend_pid
        monkeypatch.setattr(psycopg, "connect", down)
        assert admin.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,)).fetchone() == (True,)
    with pytest.raises(StorageError, match="could not connect again within 2 s"):
        study.trials()
    assert len(attempts) >= 3  # (tried again and again for the patience: 0.1 s, then twice as long)
    for step in (study.trials, lambda: study.get_meta("warm_start")):
        attempts.clear()
        with pytest.raises(
            StorageError, match=r"could not connect again \(the server could not be reached for"
        ):
            step()
        assert len(attempts) == 1  # (once: no second wait)
    monkeypatch.setattr(psycopg, "connect", real)  # the server is back: read, and waited for again after
    assert [t.value for t in study.trials()] == [1.0]
    assert study._unreachable_since is None
    study.close()


def test_a_study_name_in_the_url_is_written_back_encoded_and_the_other_parameters_reach_libpq(
    postgres_server,
):
    # a user test: hints printed "give study=a b in the URL" for the study 'a b', and an empty study=
    # was quoted with a mode=ro never typed; a review: the other parameters were re-encoded
    # (options=-c%20search_path%3Dlab reached libpq as -c+search_path=lab). '+' in study= is a space,
    # as it always was (a study made through study=a+b is 'a b', and that URL still opens it)
    from psycopg.conninfo import conninfo_to_dict

    from warmbo.storage_postgres import split_url, study_parameter

    base = postgres_server.url("x").rsplit("study=", 1)[0]
    assert split_url(base + "study=a+b")[1] == "a b"
    assert split_url(base + "study=a%20b")[1] == "a b"
    assert split_url(base + "study=caf%C3%A9")[1] == "café"
    assert study_parameter("a b") == "study=a%20b" and study_parameter("lr-sweep_2.x") == "study=lr-sweep_2.x"
    for name in ("a+b & c", "a b", "x=y"):
        assert split_url(base + study_parameter(name))[1] == name  # (round trip)
    conninfo, _ = split_url(base + "study=s&options=-c%20search_path%3Dlab&application_name=a%20b&mode=ro")
    said = conninfo_to_dict(conninfo)
    assert (
        said["options"] == "-c search_path=lab" and said["application_name"] == "a b" and "mode" not in said
    )
    spaced = wb.Optimizer(SPACE, storage=base + "study=a+b", seed=0)
    spaced.tell({"x0": 1.0, "x1": 1.0}, 1.0)
    spaced.close()
    assert len(Study(base + study_parameter("a b"))) == 1
    with pytest.raises(StorageError, match=r"no study 'a-b' .*did you mean study=a%20b\?"):
        Study(base + "study=a-b")
    with pytest.raises(StorageError) as caught:
        Study(base + "study=")
    assert "mode=ro" not in str(caught.value) and "give one non-empty study=NAME" in str(caught.value)


def test_a_dict_told_whose_commit_got_through_before_the_drop_is_one_trial(postgres_url, monkeypatch):
    # a review: tell(dict) resolved the dict again after a drop at the COMMIT that had stored the
    # value; the trial was then complete, the dict matched no pending trial, and a second trial was
    # stored. The trial the first attempt resolved is told again instead
    opt = wb.Optimizer(SPACE, storage=postgres_url, seed=0)
    s = opt.ask()
    drops = _Drops(
        opt.study, monkeypatch, "commit-stored", when=lambda n: n == 1, of="UPDATE warmbo_trials SET state"
    )
    told = opt.tell(dict(s), 1.5)
    drops.admin.close()
    assert drops.dropped == 1
    assert told.id == s.trial_id
    assert [(t.id, t.state, t.value) for t in Study(postgres_url).trials()] == [(s.trial_id, "complete", 1.5)]


def test_report_of_a_study_named_like_a_path_writes_inside_the_current_folder(
    postgres_server, tmp_path, monkeypatch
):
    # (PostgreSQL user test) the default folder was the study's name + "-report": a study named
    # ../escape wrote ../escape-report outside the folder, one named /tmp/x an absolute path
    from typer.testing import CliRunner

    from warmbo.cli import app

    inside = tmp_path / "here"
    inside.mkdir()
    monkeypatch.chdir(inside)
    for name, folder in (("../escape", "_escape-report"), ("team/lr", "team_lr-report")):
        url = postgres_server.url(name)
        opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), storage=url, seed=0)
        for v in (0.1, 0.5, 0.9):
            opt.tell({"x": v}, (v - 0.4) ** 2)
        opt.study.close()
        result = CliRunner().invoke(app, ["report", "--storage", url])
        assert result.exit_code == 0, result.output
        assert (inside / folder / "report.html").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["here"]  # (nothing written beside it)
