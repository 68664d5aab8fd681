"""Points queued to be evaluated first (``Optimizer.enqueue``, ``warmbo enqueue``): their order, the
design after them, durability, workers that race for them, failed asks, duplicates and bad input,
on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import pytest
from typer.testing import CliRunner

import warmbo as wb
from warmbo.cli import app
from warmbo.data import DataError, read_points
from warmbo.enqueued import QUEUE_PREFIX
from warmbo.parameters import SpaceError
from warmbo.storage import Study

SPACE = wb.Space([wb.Float("x", 0.0, 1.0), wb.Float("z", 0.0, 1.0)])
KNOWN = [{"x": 0.5, "z": 0.25}, {"x": 0.1, "z": 0.9}]


@pytest.fixture(params=["sqlite", "postgresql"])
def storage(request, tmp_path):
    """A storage URL of a new study on each back end."""
    if request.param == "sqlite":
        return str(tmp_path / "study.db")
    return request.getfixturevalue("postgres_url")


def f(p) -> float:
    return (p["x"] - 0.3) ** 2 + p["z"]


def test_queued_points_come_first_in_order_then_the_design_goes_on_where_they_left_it(storage):
    opt = wb.Optimizer(SPACE, storage=storage, seed=0, n_initial=5)
    assert opt.enqueue(KNOWN) == KNOWN and opt.queued() == KNOWN
    cold = wb.Optimizer(SPACE, seed=0, n_initial=5)  # the same design, no queue
    expected = [dict(s) for s in cold.ask(5)]
    asked = opt.ask(5)
    assert [dict(s) for s in asked[:2]] == KNOWN
    # the queued points count towards the design: its points 3-5 follow, as in the cold study
    assert [dict(s) for s in asked[2:]] == expected[2:]
    assert opt.queued() == []
    for s in asked:
        opt.tell(s, f(s))
    opt.tell(opt.ask(), 0.0)  # the model's ask: the taken entries, their trials told, are gone
    assert Study(storage).meta_items(QUEUE_PREFIX) == {}


def test_the_queue_survives_the_process_and_workers_racing_for_it_take_each_point_once(storage):
    wb.Optimizer(SPACE, storage=storage, seed=0).enqueue([{"x": i / 10, "z": 0.5} for i in range(6)])
    assert wb.Optimizer.load(storage).queued()[0] == {"x": 0.0, "z": 0.5}  # another process's view
    code = "import sys, warmbo as wb\nopt = wb.Optimizer.load(sys.argv[1])\nprint(dict(opt.ask()))\n"
    procs = [
        subprocess.Popen([sys.executable, "-c", code, storage], stdout=subprocess.PIPE, text=True)
        for _ in range(6)
    ]
    for proc in procs:
        proc.communicate(timeout=300)
        assert proc.returncode == 0
    taken = sorted(t.params["x"] for t in Study(storage).trials())
    assert taken == [i / 10 for i in range(6)]  # six asks, six queued points, none twice
    assert wb.Optimizer.load(storage).queued() == []


def test_a_batch_ask_that_fails_leaves_its_queued_point_waiting(tmp_path, monkeypatch):
    path = str(tmp_path / "s.db")
    opt = wb.Optimizer(SPACE, storage=path, seed=0)
    opt.enqueue(KNOWN[0])

    def broken(*args, **kwargs):
        raise RuntimeError("the design broke")

    monkeypatch.setattr(opt, "_next_point", broken)
    with pytest.raises(RuntimeError, match="the design broke"):
        opt.ask(2)  # the queued point first, then the failure: all or nothing
    assert len(Study(path)) == 0 and opt.queued() == [KNOWN[0]]
    monkeypatch.undo()
    assert dict(opt.ask()) == KNOWN[0]


def test_run_evaluates_the_queued_points_first(tmp_path):
    opt = wb.Optimizer(SPACE, storage=str(tmp_path / "s.db"), seed=0)
    opt.enqueue(KNOWN)
    opt.run(f, budget=4, progress=False)
    assert [t.params for t in opt.history][:2] == KNOWN and opt.study.count("complete") == 4


def test_a_point_already_in_the_study_or_the_queue_is_not_queued_twice(tmp_path):
    opt = wb.Optimizer(SPACE, storage=str(tmp_path / "s.db"), seed=0)
    opt.tell(KNOWN[0], 1.0)
    with pytest.warns(UserWarning, match=r'not queued.*\{"x": 0.5, .*trial 1, complete'):  # (JSON)
        assert opt.enqueue(KNOWN) == [KNOWN[1]]
    with pytest.warns(UserWarning, match=r'\{"x": 0.123457, "z": 0.5\} \(queued already'):
        wb.Optimizer(SPACE).enqueue([{"x": 0.1234567891, "z": 0.5}] * 2)
    with pytest.warns(UserWarning, match="queued already"):
        assert opt.enqueue([KNOWN[1]]) == []
    with pytest.warns(UserWarning, match="queued already"):  # twice in one call
        assert opt.enqueue([{"x": 0.7, "z": 0.7}, {"x": 0.7, "z": 0.7}]) == [{"x": 0.7, "z": 0.7}]
    # a waiting point told meanwhile as an experiment of its own is dropped, not suggested again
    opt.tell(KNOWN[1], 2.0)
    assert opt.queued() == [{"x": 0.7, "z": 0.7}]  # (not listed: the ask drops it)
    first, second = opt.ask(2)
    assert dict(first) == {"x": 0.7, "z": 0.7}
    assert dict(second) not in (KNOWN[0], KNOWN[1], {"x": 0.7, "z": 0.7}) and opt.queued() == []


def test_bad_points_are_refused_naming_them_and_nothing_is_queued(tmp_path):
    opt = wb.Optimizer(SPACE, storage=str(tmp_path / "s.db"), seed=0)
    with pytest.raises(SpaceError, match=r"enqueue's point 2 of 2: .*'x'.*nothing was queued"):
        opt.enqueue([KNOWN[0], {"x": 2.0, "z": 0.1}])
    with pytest.raises(SpaceError, match=r"the point of enqueue: .*unknown parameter name\(s\) \['y'\]"):
        opt.enqueue({"x": 0.5, "y": 0.1})  # (a partial point with a name the space does not have)
    with pytest.raises(SpaceError, match=r"unknown parameter name\(s\) \['y'\]; space has \['x', 'z'\]"):
        opt.enqueue({"y": 0.1})  # (no name of the space at all: not a partial point)
    with pytest.raises(SpaceError, match="x"):
        opt.enqueue({"x": 2.0})
    with pytest.raises(SpaceError, match="nan|finite"):
        opt.enqueue({"x": float("nan"), "z": 0.5})
    with pytest.raises(ValueError, match="empty list"):
        opt.enqueue([])
    with pytest.raises(SpaceError, match="it names no parameter: give a value for one at least"):
        opt.enqueue({})  # (it said "missing parameter(s) ['x', 'z']", though partial points are fine)
    with pytest.raises(TypeError, match="enqueue's point 1 of 1 is a list"):
        opt.enqueue([[0.5, 0.5]])
    with pytest.raises(TypeError, match="got str"):
        opt.enqueue("x=0.5")
    assert opt.queued() == [] and Study(opt.study.url).meta_items(QUEUE_PREFIX) == {}


def test_clear_queue_removes_the_waiting_points_only(tmp_path):
    opt = wb.Optimizer(SPACE, storage=str(tmp_path / "s.db"), seed=0)
    opt.enqueue(KNOWN)
    taken = opt.ask()
    assert opt.clear_queue() == 1 and opt.queued() == []
    assert dict(taken) == KNOWN[0] and opt.study.trial(taken.trial_id).state == "pending"
    opt.tell(taken, 1.0)
    assert dict(opt.ask()) != KNOWN[1]


def test_a_multitask_study_takes_queued_points_too(tmp_path):
    opt = wb.MultiTaskOptimizer(SPACE, task_names=["a", "b"], storage=str(tmp_path / "m.db"), seed=0)
    opt.enqueue(KNOWN[1])
    assert dict(opt.ask()) == KNOWN[1]


def test_a_one_row_source_says_how_to_evaluate_its_configuration_first():
    with pytest.warns(wb.optimizer.UninformativeSourceWarning, match=r"has one evaluation.*enqueue"):
        wb.Optimizer(SPACE, prior=([KNOWN[0]], [1.0]), seed=0)


# ------------------------------------------------------------------ files of configurations
def test_read_points_reads_csv_and_json_and_names_what_is_wrong(tmp_path):
    csv = tmp_path / "c.csv"
    csv.write_text("z,x,y\n0.25,0.5,3.1\n\n0.9, 0.1 ,\n")  # column order, extra column, blank line
    assert read_points(csv, SPACE) == KNOWN
    js = tmp_path / "c.json"
    js.write_text(json.dumps(KNOWN))
    assert read_points(js, SPACE) == KNOWN
    js.write_text(json.dumps(KNOWN[0]))
    assert read_points(js, SPACE) == [KNOWN[0]]
    cases = {
        "x,z\n0.5,abc\n": r"row 1 \(line 2\), column 'z': .*not a number",
        "x,z\n0.5,1.5\n": r"row 1 \(line 2\), column 'z'",
        "x\n0.5\n": r"missing column\(s\) 'z'",
        "x;z\n0.5;0.5\n": "in it: give --delimiter ';'",  # (enqueue's option; it said --prior-delimiter)
        "x,z\n0.5\n": "1 cells under a header of 2",
        "x,z\n": "a header and no configuration",
        "\n\n": "empty file",
    }
    for text, message in cases.items():
        csv.write_text(text)
        with pytest.raises(DataError, match=message):
            read_points(csv, SPACE)
    for text, message in {"[1, 2]": "list of objects", "[]": "no configuration", "{": "not JSON"}.items():
        js.write_text(text)
        with pytest.raises(DataError, match=message):
            read_points(js, SPACE)
    js.write_text(json.dumps([KNOWN[0], {"x": 0.5, "Z": 0.1}]))
    with pytest.raises(DataError, match=r"configuration 2: no value for 'z' \(it has 'Z'\)"):
        read_points(js, SPACE)
    js.write_text(json.dumps([{**KNOWN[0], "y": 3.0, "trial": 7}]))  # other keys, as other columns
    assert read_points(js, SPACE) == [KNOWN[0]]
    with pytest.raises(DataError, match="does not exist"):
        read_points(tmp_path / "none.csv", SPACE)
    # a spreadsheet's Latin-1 or UTF-16 file: before, the codec's words alone, naming no file
    for encoding in ("latin-1", "utf-16"):
        csv.write_bytes("x,z\n0.5,0.25 caf\u00e9\n".encode(encoding))
        with pytest.raises(DataError, match=r"c\.csv: not a UTF-8 text file .*CSV UTF-8"):
            read_points(csv, SPACE)
    js.write_bytes('{"x": 0.5, "z": "caf\u00e9"}'.encode("latin-1"))
    with pytest.raises(DataError, match=r"c\.json: not a UTF-8 text file"):
        read_points(js, SPACE)


# ------------------------------------------------------------------ the command line
def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_cli_enqueue_creates_lists_queues_files_and_clears(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "space.json").write_text(
        json.dumps(
            [
                {"name": "x", "type": "float", "low": 0.0, "high": 1.0},
                {"name": "z", "type": "float", "low": 0.0, "high": 1.0},
            ]
        )
    )
    done = invoke("enqueue", "s.db", "--space", "space.json", "--params", json.dumps(KNOWN[0]))
    assert done.exit_code == 0, done.output
    assert "created study s.db" in done.output and "queued 1 configuration" in done.output
    assert "the next suggestion is this one" in done.output
    (tmp_path / "more.csv").write_text("x,z,y\n0.1,0.9,4\n0.5,0.25,1\n")
    done = invoke("enqueue", "s.db", "--file", "more.csv")
    assert done.exit_code == 0, done.output
    assert "queued 1 configuration" in done.output and "queued already" in done.output
    assert "the next 2 suggestions are these" in done.output
    shown = invoke("status", "s.db")
    assert "2 queued configurations wait" in shown.output
    asked = invoke("suggest", "s.db", "-n", 2, "--json")
    assert asked.exit_code == 0, asked.output
    assert [json.loads(line)["params"] for line in asked.output.splitlines()] == KNOWN
    assert "the queue is empty" in invoke("enqueue", "s.db").output
    invoke("enqueue", "s.db", "--params", '{"x": 0.7, "z": 0.7}')
    cleared = invoke("enqueue", "s.db", "--clear")
    assert "removed 1 configuration" in cleared.output and wb.Optimizer.load("s.db").queued() == []
    # bad input: a clear error, nothing queued, the study's trials untouched
    for args, message in [
        (("--params", '{"x": 2, "z": 0.1}'), "--params"),
        (("--params", "{x: 1}"), "JSON"),
        (("--file", "none.csv"), "does not exist"),
        (("--clear", "--params", json.dumps(KNOWN[0])), "--clear empties the queue"),
        (("--seed", 5), "seed"),
    ]:
        bad = invoke("enqueue", "s.db", *args)
        assert bad.exit_code != 0 and message in bad.output, (args, bad.output)
    assert wb.Optimizer.load("s.db").queued() == [] and len(Study("s.db")) == 2


def test_cli_enqueue_on_no_study_says_how_to_create_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        done = invoke("enqueue", "none.db", "--params", json.dumps(KNOWN[0]))
    assert done.exit_code != 0 and "no study" in done.output and not (tmp_path / "none.db").exists()
    assert "warmbo enqueue --storage none.db --space SPACE.json" in done.output  # (it said `suggest`)
    # (review) a bad configuration given with --space created the study before it was refused
    (tmp_path / "space.json").write_text(
        json.dumps([{"name": "x", "type": "float", "low": 0.0, "high": 1.0}])
    )
    done = invoke("enqueue", "new.db", "--space", "space.json", "--params", '{"x": 5}')
    assert done.exit_code != 0 and "--params" in done.output and "created" not in done.output
    assert not (tmp_path / "new.db").exists()


def test_a_point_within_the_duplicate_tolerance_of_a_trial_is_not_queued_or_taken(tmp_path):
    # (review) enqueueing the best trial as `status` prints it (6 digits) queued it and evaluated it
    # again, while everywhere else points within 1e-6 of the range are the same point
    space = wb.Space([wb.Float("lr", 1e-4, 1.0, log=True), wb.Float("wd", 0.0, 1.0)])
    opt = wb.Optimizer(space, storage=str(tmp_path / "s.db"), seed=0)
    best = {"lr": 0.02525467992761879, "wd": 0.9313660049811006}
    opt.tell(best, 1.0)
    printed = {"lr": 0.0252547, "wd": 0.931366}
    with pytest.warns(UserWarning, match=r"not queued.*trial 1, complete, within 1e-06"):
        assert opt.enqueue(printed) == []
    with pytest.warns(UserWarning, match="queued already"):
        assert opt.enqueue([{"lr": 0.5, "wd": 0.5}, {"lr": 0.5, "wd": 0.5 + 1e-9}]) == [
            {"lr": 0.5, "wd": 0.5}
        ]
    opt.tell({"lr": 0.5, "wd": 0.5 + 1e-9}, 2.0)  # told meanwhile, a hair away: the queued point is dropped
    assert opt.queued() == [] and dict(opt.ask()) != {"lr": 0.5, "wd": 0.5}


def test_asks_open_no_write_transaction_for_the_queue_while_its_taken_point_is_pending(tmp_path, monkeypatch):
    # (review) while a taken point's trial waited for its result, every ask of every worker locked
    # the study and read every trial again (36 ms at 3000 trials)
    opt = wb.Optimizer(SPACE, storage=str(tmp_path / "s.db"), seed=0)
    opt.enqueue(KNOWN[0])
    taken = opt.ask()
    calls = []
    monkeypatch.setattr(
        opt, "_queue_state", lambda trials, real=opt._queue_state: calls.append(1) or real(trials)
    )
    transactions = []
    real_transaction = opt.study.transaction

    def counted():
        transactions.append(1)
        return real_transaction()

    monkeypatch.setattr(opt.study, "transaction", counted)
    queued = opt._take_queued(lambda params: pytest.fail("nothing waits"))
    assert queued is None and calls and transactions == []
    monkeypatch.undo()
    opt.tell(taken, 1.0)
    opt.ask()  # its entry is done with: deleted on the way
    assert Study(opt.study.url).meta_items(QUEUE_PREFIX) == {}


def test_a_failed_configuration_can_be_queued_again_and_enqueue_failed_queues_them_all(tmp_path, monkeypatch):
    # (session 35's list) a failed point was refused as "already a trial": a crash that may not
    # recur (a full disk) had no way back into the study
    monkeypatch.chdir(tmp_path)
    opt = wb.Optimizer(SPACE, storage="s.db", seed=0)
    crashed = opt.ask()
    opt.tell_failed(crashed, "disk full")
    done = opt.ask()
    opt.tell(done, f(done))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "not queued" warning for the failed point
        assert opt.enqueue(dict(crashed)) == [dict(crashed)]
    assert opt.queued() == [dict(crashed)]  # (not dropped as "a trial already")
    again = opt.ask()
    assert dict(again) == dict(crashed) and again.trial_id != crashed.trial_id
    opt.tell(again, f(again))
    with pytest.warns(UserWarning, match="complete"):  # now a complete trial: not again
        assert opt.enqueue(dict(crashed)) == []
    # the shell: --failed queues every failed trial's configuration, oldest first
    for _ in range(2):
        p = opt.ask()
        opt.tell_failed(p, "preempted")
    failed = [t.params for t in Study("s.db").trials() if t.state == "failed"]
    assert len(failed) == 3  # the first crash and the two preempted ones
    queued = invoke("enqueue", "s.db", "--failed")
    assert queued.exit_code == 0, queued.output
    said = " ".join(queued.output.split())
    # the first crash's point is a complete trial now: noted and left out
    assert "queued 2 configurations" in said and "complete" in said
    assert wb.Optimizer.load("s.db").queued() == failed[1:]
    assert invoke("enqueue", "s.db", "--clear", "--failed").exit_code != 0
    fresh = wb.Optimizer(SPACE, storage="t.db", seed=0)
    fresh.tell(fresh.ask(), 1.0)
    none = invoke("enqueue", "t.db", "--failed")
    assert none.exit_code == 0 and "no failed trial to try again" in none.output


def test_a_partial_point_is_completed_by_the_ask_that_takes_it_with_its_values_exact(storage):
    space = wb.Space(
        [
            wb.Float("lr", 1e-4, 1e-1, log=True),
            wb.Int("batch", 16, 256),
            wb.Categorical("opt", ["adam", "sgd"]),
        ]
    )
    opt = wb.Optimizer(space, storage=storage, seed=0, n_initial=4)
    whole = {"lr": 1e-3, "batch": 32, "opt": "adam"}
    queued = opt.enqueue([{"lr": 0.01, "opt": "sgd"}, whole, {"batch": 64}, {"batch": 64}])
    assert queued == [{"lr": 0.01, "opt": "sgd"}, whole, {"batch": 64}, {"batch": 64}]  # (partial: twice)
    assert opt.queued() == queued
    asked = opt.ask(5)
    # exact: decoding the log scale's encoding of 0.01 gives 0.009999999999999995
    assert (asked[0]["lr"], asked[0]["opt"]) == (0.01, "sgd")
    assert dict(asked[1]) == whole
    assert asked[2]["batch"] == 64 and asked[3]["batch"] == 64 and dict(asked[2]) != dict(asked[3])
    assert opt.queued() == []
    # the design's points with the values set: the fifth ask is the design's, as the queue counts
    assert all(space.validate(dict(s)) == dict(s) for s in asked)
    for s in asked:
        opt.tell(s, float(s["lr"]) + s["batch"] / 1000)
    opt.enqueue({"opt": "adam"})
    after = opt.ask()  # the model's point on the slice opt = adam
    assert after["opt"] == "adam" and opt.queued() == []
    assert Study(storage).meta_items(QUEUE_PREFIX) != {}  # (taken, pending: kept until told)


def test_a_partial_entry_another_worker_takes_during_an_ask_is_not_taken_twice(tmp_path):
    path = str(tmp_path / "race.db")
    opt = wb.Optimizer(SPACE, storage=path, seed=0, n_initial=3)
    opt.enqueue([{"x": 0.25}, {"z": 0.75}])
    rival = wb.Optimizer.load(path, worker="rival")
    original = opt._next_point
    raced = []

    def racing(trials, index, *rest):
        x = original(trials, index, *rest)
        if not raced:  # the rival takes the first entry while this ask chooses its other value
            raced.append(rival.ask())
        return x

    opt._next_point = racing
    mine = opt.ask()
    assert raced[0]["x"] == 0.25 and mine["z"] == 0.75  # the rival's entry, then the queue's next
    assert [t.worker for t in Study(path).trials()] == ["rival", opt.worker]
    assert opt.queued() == []


def test_a_failed_batch_leaves_a_partial_entry_waiting(tmp_path, monkeypatch):
    path = str(tmp_path / "s.db")
    opt = wb.Optimizer(SPACE, storage=path, seed=0)
    opt.enqueue({"x": 0.5})
    calls = []
    original = opt._next_point

    def second_breaks(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("the design broke")
        return original(*args, **kwargs)

    monkeypatch.setattr(opt, "_next_point", second_breaks)
    with pytest.raises(RuntimeError, match="the design broke"):
        opt.ask(2)  # the partial entry's point first, then the failure: all or nothing
    assert len(Study(path)) == 0 and opt.queued() == [{"x": 0.5}]
    monkeypatch.undo()
    assert opt.ask()["x"] == 0.5 and opt.queued() == []


def test_cli_enqueue_takes_a_partial_configuration_and_shows_what_the_ask_chooses(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "space.json").write_text(json.dumps(SPACE.to_dict()))
    runner = CliRunner()
    result = runner.invoke(
        app,
        ["enqueue", "--storage", "s.db", "--space", "space.json", "--params", '{"x": 0.4}'],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "(chosen)" in result.output and "chosen by that suggestion" in result.output
    result = runner.invoke(app, ["suggest", "--storage", "s.db", "--json"])
    assert json.loads(result.output.strip().splitlines()[-1])["params"]["x"] == 0.4
    result = runner.invoke(app, ["enqueue", "--storage", "s.db", "--params", '{"X": 0.4}'])
    assert result.exit_code == 1 and "did you mean x?" in result.output


def test_a_partial_entry_whose_values_have_no_free_point_leaves_the_queue_with_a_warning(tmp_path):
    # a review: it raised SpaceExhaustedError at every later ask and run, the next queued point and
    # the rest of the space free
    space = wb.Space([wb.Categorical("c", ["a", "b"]), wb.Int("k", 0, 1)])
    opt = wb.Optimizer(space, storage=str(tmp_path / "s.db"), seed=0)
    opt.tell({"c": "a", "k": 0}, 1.0)
    opt.tell({"c": "a", "k": 1}, 2.0)
    opt.enqueue([{"c": "a"}, {"c": "b", "k": 0}])
    with pytest.warns(UserWarning, match="with c='a' was removed from the queue: every point"):
        assert dict(opt.ask()) == {"c": "b", "k": 0}
    assert opt.queued() == []
    opt.enqueue({"c": "a"})
    with pytest.warns(UserWarning, match="removed from the queue"):
        opt.run(lambda p: float(p["k"]), budget=4, progress=False)
    assert opt.study.count("complete") == 4
