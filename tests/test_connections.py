"""A study's SQLite connections: one per thread, closed when the thread ends, by ``close()`` in the
thread that made it, and when the study is dropped; never closed under another thread that reads
(the review of session 39: closing another thread's connection segfaulted the interpreter); and a
child forked while another thread holds the study's write lock can still read the study.

Open connections are counted as the process's file descriptors on the study's files
(``/proc/self/fd``: Linux, where CI runs)."""

from __future__ import annotations

import gc
import os
import threading
import warnings
import weakref
from pathlib import Path

import pytest
from helpers.forked import fork_while_writing

import warmbo as wb
from warmbo.storage import Study

SPACE = wb.Space.box([(0.0, 1.0)])

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts /proc/self/fd")


def _open_files(path: Path) -> int:
    """File descriptors of this process on the study file and its -wal and -shm files."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        count += target.startswith(str(path))
    return count


def _in_thread(work) -> None:
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()


def test_a_threads_connection_is_closed_when_the_thread_ends(tmp_path):
    path = tmp_path / "s.db"
    study = Study(str(path), space=SPACE)
    study.close()
    assert _open_files(path) == 0
    _in_thread(lambda: study.add_trial({"x0": 0.5}, "complete", value=1.0))
    # (no later connection, no collection needed: the thread's slot is freed as it ends)
    assert _open_files(path) == 0
    assert len(study.trials()) == 1
    assert _open_files(path) > 0  # (this thread's, made by the read: the count sees connections)


def test_a_run_with_worker_threads_leaves_only_the_callers_connection(tmp_path):
    path = tmp_path / "s.db"
    opt = wb.Optimizer(SPACE, storage=str(path), seed=0)
    opt.tell(opt.ask(), 0.3)
    own = _open_files(path)
    opt.run(lambda p: (p["x0"] - 0.3) ** 2, budget=5, n_workers=2, progress=False)
    assert len(opt.study.trials()) == 5
    assert _open_files(path) == own  # (the pool's and the heartbeat thread's are closed)


def test_with_optimizer_closes_the_connection_and_a_later_call_connects_again(tmp_path):
    path = tmp_path / "s.db"
    with wb.Optimizer(SPACE, storage=str(path), seed=0) as opt:
        opt.tell(opt.ask(), 1.0)
        assert _open_files(path) > 0
    assert _open_files(path) == 0
    opt.tell(opt.ask(), 2.0)
    assert [t.value for t in opt.study.trials()] == [1.0, 2.0]


def test_a_dropped_study_closes_every_threads_connection(tmp_path):
    path = tmp_path / "s.db"
    study = Study(str(path), space=SPACE)
    study.add_trial({"x0": 0.5}, "complete", value=1.0)
    held, release = threading.Event(), threading.Event()

    def reader(ref):  # a thread that is alive, with its connection, when the study is dropped
        assert len(ref().trials()) == 1
        held.set()
        release.wait(30)

    thread = threading.Thread(target=reader, args=(weakref.ref(study),))
    thread.start()
    held.wait(30)
    assert _open_files(path) > 0
    del study
    gc.collect()
    release.set()
    thread.join()
    assert _open_files(path) == 0


def test_closing_in_one_thread_leaves_another_threads_reads_alone(tmp_path):
    path = tmp_path / "s.db"
    study = Study(str(path), space=SPACE)
    study.add_trial({"x0": 0.5}, "complete", value=1.0)
    stop, failures, reads = threading.Event(), [], [0]

    def reader():
        while not stop.is_set():
            try:
                assert len(study.trials()) >= 1
                reads[0] += 1
            except Exception as exc:  # noqa: BLE001 - what the test is about
                failures.append(repr(exc))
                return

    thread = threading.Thread(target=reader)
    thread.start()
    for _ in range(200):
        study.close()
        study.add_trial({"x0": 0.25}, "complete", value=2.0)
    stop.set()
    thread.join()
    assert failures == []
    assert reads[0] > 0
    assert len(study.trials()) == 201


def test_a_child_forked_while_another_thread_writes_can_read(tmp_path):
    # (with the study's lock taken in every new connection, session 39's registry, the child waited
    # for ever: the thread holding the lock does not exist there. It cannot write: SQLite's own
    # in-process lock state, copied by the fork, says the parent's writer holds the write lock; a
    # PostgreSQL child can, test_storage_postgres.py)
    study = Study(str(tmp_path / "s.db"), space=SPACE)
    study.add_trial({"x0": 0.5}, "complete", value=1.0)
    status = fork_while_writing(study, lambda: [t.value for t in study.trials()] == [1.0], patience=20)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status


def test_a_mistyped_study_path_is_said_with_the_study_of_the_nearest_name(tmp_path, monkeypatch):
    # a user test: wb.Optimizer(space, storage="persit.db") started an empty study without a word
    from warmbo.storage import NewStudyWarning, StorageError

    monkeypatch.chdir(tmp_path)
    wb.Optimizer(SPACE, storage="persist.db").tell({"x0": 0.5}, 1.0)
    with pytest.warns(NewStudyWarning, match=r"creating a new study 'persit.db'; did you mean 'persist.db'"):
        wb.Optimizer(SPACE, storage="persit.db")
    with pytest.raises(StorageError, match=r"no study at .*persst.db'?: did you mean 'persist.db'\?"):
        Study("persst.db")
    with warnings.catch_warnings():
        warnings.simplefilter("error", NewStudyWarning)
        wb.Optimizer(SPACE, storage="another.db")  # (no close name: no warning)
    assert not Path("persst.db").exists()
    # numbered studies are a series, not a slip (a review: run2.db beside run1.db warned)
    wb.Optimizer(SPACE, storage="run1.db").study.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error", NewStudyWarning)
        wb.Optimizer(SPACE, storage="run2.db")
        wb.Optimizer(SPACE, storage="another-2.db")  # (beside another.db: a series too)
    # but case and separators are not numbers: before, the series folded both, so neither warned
    wb.Optimizer(SPACE, storage="lr-sweep.db").study.close()
    for slip in ("Lr-Sweep.db", "lr_sweep.db", "Run1.db"):
        meant = "run1.db" if slip[-4].isdigit() else "lr-sweep.db"
        with pytest.warns(NewStudyWarning, match=rf"creating a new study '{slip}'; did you mean '{meant}'"):
            wb.Optimizer(SPACE, storage=slip).study.close()
        Path(slip).unlink()  # (or the next slip's nearest name is this one)
    # a user test was warned at distinct short names one letter apart and at a script of the same stem:
    # only an SQLite file is a study to mean, and a one-letter slip counts in names of 4 or more
    for name in ("t1.db", "pk.db", "src.db", "c1.db"):
        wb.Optimizer(SPACE, storage=name).study.close()
    Path("experiment.py").write_text("import warmbo\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", NewStudyWarning)
        for name in ("experiment.db", "pp.db", "srcmax.db", "cv.db", "c2.db"):
            wb.Optimizer(SPACE, storage=name).study.close()
    for slip, meant in (
        ("persist.bd", "persist.db"),
        ("perxist.db", "persist.db"),
        ("pesrist.db", "persist.db"),
    ):
        with pytest.warns(NewStudyWarning, match=rf"did you mean '{meant}'") as said:
            wb.Optimizer(SPACE, storage=slip).study.close()
        assert said[0].filename == __file__  # (the user's line)
        Path(slip).unlink()


@pytest.mark.parametrize("how", ["moved", "deleted"])
def test_a_study_file_moved_or_deleted_while_open_is_not_created_again_nor_written(tmp_path, how):
    # a user test moved (or removed) the study during a run: the heartbeat thread's next connection
    # created an empty file at the old path, the run said its trials were stored, and rerunning the
    # command started a new study in that empty file
    path = tmp_path / "study.db"
    opt = wb.Optimizer(SPACE, storage=str(path), seed=0)
    opt.tell(opt.ask(), 1.0)
    for suffix in ("", "-wal", "-shm"):
        if (tmp_path / f"study.db{suffix}").exists():
            if how == "moved":
                (tmp_path / f"study.db{suffix}").rename(tmp_path / f"moved.db{suffix}")
            else:
                (tmp_path / f"study.db{suffix}").unlink()
    said = {}

    def other_thread():
        try:
            opt.study.heartbeat([1])
        except wb.storage.StorageError as exc:
            said["thread"] = str(exc)

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    assert not path.exists()  # (not created again, empty)
    assert "was deleted or moved while this process had it open" in said["thread"]
    with pytest.raises(wb.storage.StorageError, match="nothing more is written to it"):
        opt.tell(opt.ask(), 2.0)
    assert not path.exists()
    if how == "moved":
        assert [t.value for t in wb.Study(str(tmp_path / "moved.db")).trials()] == [1.0]


def test_a_study_file_replaced_by_another_is_not_written(tmp_path):
    path = tmp_path / "study.db"
    opt = wb.Optimizer(SPACE, storage=str(path), seed=0)
    opt.tell(opt.ask(), 1.0)
    other = wb.Optimizer(SPACE, storage=str(tmp_path / "other.db"), seed=1)
    other.tell(other.ask(), 5.0)
    other.study.close()
    os.replace(tmp_path / "other.db", path)
    with pytest.raises(wb.storage.StorageError, match="was replaced by another file"):
        opt.tell({"x0": 0.5}, 3.0)  # (refused before its transaction: nothing is written anywhere)


def test_a_full_disk_is_named_when_sqlite_cannot_open_a_study(tmp_path, monkeypatch):
    # on a full disk even `warmbo status` failed with "cannot read study ... disk I/O error", which read
    # as damage (a user test, tmpfs filled); SQLite's own words are kept after warmbo's
    import shutil
    import sqlite3

    study = Study(str(tmp_path / "s.db"), SPACE)
    said = str(study._open_error(sqlite3.OperationalError("disk I/O error")))
    assert said.startswith("cannot read study") and "disk holding it" not in said  # (a disk with room)
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage._replace(free=0))
    said = str(study._open_error(sqlite3.OperationalError("disk I/O error")))
    assert "the disk holding it is full (0 bytes free)" in said and "SQLite says: disk I/O error" in said
    said = str(study._write_error(sqlite3.OperationalError("database or disk is full")))
    assert said.startswith("cannot write study") and "the disk holding it is full" in said


def test_a_relative_study_path_survives_a_change_of_working_folder(tmp_path, monkeypatch):
    # an objective that changes the working folder (os.chdir into a run folder) made every later write
    # fail as "deleted or moved" (a review of the check above), and a new thread's connection would
    # have opened rel.db in the new folder
    monkeypatch.chdir(tmp_path)
    opt = wb.Optimizer(SPACE, storage="rel.db", seed=0)
    opt.tell(opt.ask(), 1.0)
    (tmp_path / "run1").mkdir()
    monkeypatch.chdir(tmp_path / "run1")
    opt.tell(opt.ask(), 2.0)
    beat = threading.Thread(target=lambda: opt.study.heartbeat([1]))
    beat.start()
    beat.join()
    assert not (tmp_path / "run1" / "rel.db").exists()
    assert [t.value for t in wb.Study(str(tmp_path / "rel.db")).trials()] == [1.0, 2.0]
