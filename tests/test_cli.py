"""The command line: optimize (module:function and --cmd), suggest/observe/status, report, errors."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from helpers.old_study import FIRST_SCHEMA
from helpers.processes import alive, wait_until
from typer.testing import CliRunner

import warmbo as wb
from warmbo.cli import app
from warmbo.data import TaskData
from warmbo.objective import CommandObjective, ObjectiveError, parse_values

runner = CliRunner()

SPACE = {
    "params": [
        {"type": "float", "name": "x", "low": -2.0, "high": 2.0},
        {"type": "categorical", "name": "mode", "choices": ["a", "; touch pwned"]},
    ]
}
SCRIPT = """
import sys
x, mode = float(sys.argv[1]), sys.argv[2]
if x > 1.9:
    sys.exit(3)
print("epoch 10 loss follows")
print((x - 0.5) ** 2 + (0 if mode == "a" else 1))
"""


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "space.json").write_text(json.dumps(SPACE))
    (tmp_path / "train.py").write_text(SCRIPT)
    (tmp_path / "objmod.py").write_text("def f(p):\n    return (p['x'] - 0.5) ** 2 + (p['mode'] != 'a')\n")
    return tmp_path


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def study_rows(path):
    return [(t.id, t.state, t.value) for t in wb.Study(str(path)).trials()]


def test_optimize_with_a_command_is_not_a_shell(workdir):
    cmd = f"{sys.executable} train.py {{x}} {{mode}}"
    result = invoke(
        "optimize", "--cmd", cmd, "--space", "space.json", "--budget", 10, "--storage", "s.db", "--seed", 0
    )
    assert result.exit_code == 0, result.output
    assert not (workdir / "pwned").exists()
    trials = wb.Study("s.db").trials()
    assert len(trials) == 10
    # the categorical value reached the script as one literal argument
    assert any(t.params["mode"] == "; touch pwned" and t.is_complete for t in trials)
    assert "best" in result.output
    best = min(t.value for t in trials if t.is_complete)
    assert best < 0.1


def test_command_failures_mark_trials_failed_and_the_run_continues(workdir):
    script = workdir / "flaky.py"
    script.write_text(
        "import sys\nx = float(sys.argv[1])\nprint('no number here' if x < 0 else x * x, end='')\n"
    )
    cmd = f"{sys.executable} flaky.py {{x}}"
    result = invoke(
        "optimize", "--cmd", cmd, "--space", "space.json", "--budget", 6, "--storage", "f.db", "--seed", 1
    )
    assert result.exit_code == 0, result.output
    trials = wb.Study("f.db").trials()
    assert len(trials) == 6 and {t.state for t in trials} == {"failed", "complete"}
    assert all(t.is_failed == (t.params["x"] < 0) for t in trials)
    assert "must be a single number" in trials[0].error  # (output that never parses: test above)


def test_optimize_exits_1_when_no_evaluation_has_succeeded(workdir):
    """A study whose every trial failed (values varied enough not to stop the run early) ends with
    exit 1 and a line saying so: it exited 0, which a script or CI job read as success (a user test);
    one success in the study is exit 0 again."""
    (workdir / "outp.py").write_text(
        "import sys\nx = float(sys.argv[1])\n"
        "print(x if x > 0.9 else ['inf', 'nan', '-inf', ''][int(x * 10) % 4])\n"
    )
    (workdir / "unit.json").write_text(
        json.dumps({"params": [{"type": "float", "name": "x", "low": 0, "high": 1}]})
    )
    args = (
        "optimize",
        "--cmd",
        f"{sys.executable} outp.py {{x}}",
        "--space",
        "unit.json",
        "--storage",
        "o.db",
    )
    result = invoke(*args, "--budget", 4, "--seed", 3)
    assert [t.state for t in wb.Study("o.db").trials()] == ["failed"] * 4
    assert result.exit_code == 1, result.output
    assert "no evaluation has succeeded: the study's 4 trial(s) all failed" in result.output
    invoke("enqueue", "o.db", "--params", '{"x": 0.95}')
    again = invoke(*args, "--budget", 5)
    assert again.exit_code == 0, again.output


def test_optimize_module_function_and_resume(workdir):
    first = invoke(
        "optimize", "objmod:f", "--space", "space.json", "--budget", 5, "--storage", "m.db", "--seed", 0
    )
    assert first.exit_code == 0, first.output
    again = invoke("optimize", "objmod:f", "--budget", 8, "--storage", "m.db")  # space read from the study
    assert again.exit_code == 0, again.output
    assert len(wb.Study("m.db").trials()) == 8


def test_optunas_n_trials_and_direction_are_said_in_warmbos_words(workdir):
    # a user test: Typer offered --max-trials for --n-trials, which ran 20 trials on a 3-trial model
    # without a word, and --directions (multi-task only) for --direction
    base = ("optimize", "objmod:f", "--space", "space.json", "--storage", "m.db", "--seed", 0)
    fresh = invoke(*base, "--n-trials", 3)
    assert fresh.exit_code == 1 and "has no --n-trials: give --budget" in fresh.output, fresh.output
    assert "here --budget 3" in fresh.output and not Path("m.db").exists()
    assert invoke(*base, "--budget", 4).exit_code == 0
    more = invoke(*base, "--n-trials", 3)
    assert "holds 4 finished trials: --budget 7 runs 3 more" in more.output, more.output
    up = invoke(*base, "--direction", "maximize")
    assert up.exit_code == 1 and "give --maximize" in up.output, up.output
    down = invoke(*base, "--direction", "minimize")
    assert down.exit_code == 1 and "minimising is the default" in down.output
    assert len(wb.Study("m.db").trials()) == 4  # (nothing ran for the refused commands)
    lab = invoke("suggest", "--storage", "lab.db", "--space", "space.json", "--direction", "maximize")
    said = " ".join(lab.output.split())
    assert lab.exit_code == 1 and "warmbo suggest has no --direction: give --maximize" in said, said
    assert not Path("lab.db").exists()
    with pytest.warns(wb.optimizer.SmallModelWarning, match="max_trials=3 lets the model see at most 3"):
        wb.Optimizer(wb.Space.box([(0.0, 1.0)]), max_trials=3)


def test_suggest_observe_status_report(workdir):
    invoke("optimize", "objmod:f", "--space", "space.json", "--budget", 4, "--storage", "h.db", "--seed", 0)
    result = invoke("suggest", "--storage", "h.db", "-n", 2, "--json")
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.output.strip().splitlines()]
    assert [line["trial"] for line in lines] == [5, 6]
    ok = invoke("observe", "--storage", "h.db", "--trial", 5, "--value", "0.25")
    assert ok.exit_code == 0 and "0.25" in ok.output
    failed = invoke("observe", "--storage", "h.db", "--trial", 6, "--failed")
    assert failed.exit_code == 0
    status = invoke("status", "--storage", "h.db")
    assert status.exit_code == 0 and "5 complete, 0 pending, 1 failed" in status.output
    report = invoke("report", "h.db", "--out", "rep")
    assert report.exit_code == 0, report.output
    html = (workdir / "rep" / "report.html").read_text()
    assert html.count("data:image/png;base64,") >= 2 and 'src="http' not in html


def test_ctrl_c_during_report_says_nothing_was_written(workdir, monkeypatch):
    # a chemist user test: Ctrl-C during `warmbo report` left a half-written folder without a word
    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 2)
    invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", "1")

    def stopped(self, out, title=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(wb.Optimizer, "report", stopped)
    done = invoke("report", "--storage", "lab.db")
    assert done.exit_code == 130, done.output
    assert "stopped by Ctrl-C: no report written (lab-report is not created)" in done.output
    assert not Path("lab-report").exists()


def test_ctrl_c_that_no_command_catches_says_so(workdir, monkeypatch):
    # a chemist user test: Ctrl-C about a second into `observe` printed the stored line, then nothing,
    # with status 130
    import warmbo.cli as cli

    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 1)

    def stopped(opt):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_print_best", stopped)
    done = invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", "2")
    assert done.exit_code == 130, done.output
    assert "trial 1: value 2 stored" in done.output
    assert "stopped by Ctrl-C: what is printed above was done and stored; nothing after it" in done.output
    assert wb.Study("lab.db").trial(1).value == 2.0


def test_report_says_what_to_do_with_a_results_folder_a_json_file_or_an_out_file(workdir):
    # the output of `warmbo reproduce NAME --quick`: a folder with report.html and results.json
    from warmbo.report import write_experiment_report

    write_experiment_report(workdir / "repro", "quick run", [("Setting", "text", [])])
    (workdir / "repro" / "results.json").write_text("{}")
    (workdir / "empty-folder").mkdir()
    invoke("optimize", "objmod:f", "--space", "space.json", "--budget", 3, "--storage", "h.db", "--seed", 0)
    (workdir / "notes.txt").write_text("a file")
    for args, message in [
        (["repro"], "'repro' is a folder, not a study: give the study's file (e.g. study.db) or URL; it "
         "holds 'repro/report.html', a report already written"),
        (["empty-folder"], "'empty-folder' is a folder, not a study"),
        (["repro/results.json"], "is a JSON file, not a study"),
        (["h.db", "--out", "notes.txt"], "--out 'notes.txt' is a file: give a folder"),
        # the operating system's refusal in words, not Python's "[Errno 20] Not a directory: ..."
        (["h.db", "--out", "notes.txt/rep"], "cannot write the report into 'notes.txt/rep': not a directory"),
    ]:  # fmt: skip
        result = invoke("report", *args)
        assert result.exit_code == 1
        assert message in " ".join(result.output.split()), result.output
        assert "Traceback" not in result.output and "create one" not in result.output
        assert "Errno" not in result.output
    assert (workdir / "notes.txt").read_text() == "a file"


@pytest.mark.parametrize(
    "args, message",
    [
        (["observe", "--storage", "h.db", "--trial", 99, "--value", "1"], "no trial with id 99"),
        (["observe", "--storage", "h.db", "--trial", 5, "--value", "abc"], "must be a number"),
        (["observe", "--storage", "h.db", "--trial", 5, "--value", "nan"], "'nan'; report a failed"),
        (["observe", "--storage", "h.db", "--trial", 5], "either --value"),
        (["observe", "--storage", "h.db", "--trial", 1, "--value", "2"], "already complete"),
        (["status", "--storage", "missing.db"], "no study"),
        (["optimize", "objmod:f", "--budget", 3, "--storage", "new.db"], "--space is required"),
        (["optimize", "nomodule:f", "--space", "space.json", "--storage", "h.db"], "cannot import"),
        (["optimize", "--space", "space.json", "--storage", "h.db"], "exactly one objective"),
        (
            ["optimize", "--cmd", "python {lr}", "--space", "space.json", "--storage", "h.db"],
            "--cmd uses {lr}, which name(s) no parameter",
        ),
    ],
)
def test_errors_are_one_line_and_leave_the_study_intact(workdir, args, message):
    invoke("optimize", "objmod:f", "--space", "space.json", "--budget", 4, "--storage", "h.db", "--seed", 0)
    invoke("suggest", "--storage", "h.db")
    before = study_rows("h.db")
    result = invoke(*args)
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output
    assert len([line for line in result.output.strip().splitlines() if line.strip()]) <= 2
    assert study_rows("h.db") == before


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "is empty"),
        ("{not json", "invalid JSON at line 1"),
        ('{"params": 3}', "list of parameters"),
        ('[{"type": "float", "name": "x", "low": 2, "high": 1}]', "x"),
        ('[{"type": "spline", "name": "x"}]', "spline"),
        # other tools' words (a user test wrote "Float"): the type it looks like
        ('[{"type": "Float", "name": "x", "low": 0, "high": 1}]', 'got "Float" (did you mean "float"?)'),
        ('[{"type": "integer", "name": "x", "low": 0, "high": 9}]', '(did you mean "int"?)'),
        # before: json kept the last of two equal keys, so this space was silently [0, 5]
        (
            '[{"type": "float", "name": "x", "low": 0, "high": 1, "high": 5}]',
            "key 'high' appears twice in one object (1 and 5)",
        ),
    ],
)
def test_malformed_space_files(workdir, content, message):
    (workdir / "bad.json").write_text(content)
    result = invoke("optimize", "objmod:f", "--space", "bad.json", "--budget", 2, "--storage", "b.db")
    assert result.exit_code == 1 and message in result.output
    assert not Path("b.db").exists()


@pytest.mark.parametrize(
    "csv, message",
    [
        ("", "empty"),
        ("x,mode,y\n", "no data rows"),
        ("x,mode,y\n0.1,a,abc\n", "row 1"),
        # one row outside the ranges is left out with a warning (test below); every row: an error
        (
            "x,mode,y\n9.0,a,1.0\n8.0,a,2.0\n",
            "every row of the prior lies outside this study's space (prior.csv, row 1",
        ),
        ("x,y\n0.1,1.0\n", "mode"),
    ],
)
def test_bad_prior_files_leave_the_study_intact(workdir, csv, message):
    invoke("optimize", "objmod:f", "--space", "space.json", "--budget", 3, "--storage", "p.db", "--seed", 0)
    before = study_rows("p.db")
    (workdir / "prior.csv").write_text(csv)
    result = invoke("optimize", "objmod:f", "--budget", 5, "--storage", "p.db", "--prior", "prior.csv")
    assert result.exit_code == 1 and message in result.output and "prior.csv" in result.output
    assert study_rows("p.db") == before


def test_prior_rows_outside_the_space_are_left_out_with_a_warning_as_a_studys_are(workdir):
    # a user test: a CSV export of a wider study was refused whole for one row outside the ranges,
    # while the study file itself was read with those trials left out and a warning
    (workdir / "prior.csv").write_text("x,mode,y\n0.1,a,1.0\n9.0,a,2.0\n0.3,a,0.5\n")
    result = invoke("suggest", "--space", "space.json", "--storage", "w.db", "--prior", "prior.csv")
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "1 row(s) of the prior lie outside this study's space and are left out (prior.csv, row 2" in said
    assert "from 2 source evaluations" in said
    # a malformed value after a row outside: the malformed one is the error (a review: it was
    # reported as "every row lies outside", naming the row outside)
    (workdir / "bad.csv").write_text("x,mode,y\n9.0,a,1.0\n0.3,a,2.0\n0.3,a,abc\n")
    result = invoke("suggest", "--space", "space.json", "--storage", "b.db", "--prior", "bad.csv")
    said = " ".join(result.output.split())
    assert result.exit_code == 1 and "row 3 (line 4), column 'y'" in said and "every row" not in said, said


def test_prior_is_imported_once(workdir):
    (workdir / "prior.csv").write_text("x,mode,y\n0.4,a,0.01\n-1.0,a,2.25\n")
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "q.db", "--prior", "prior.csv")
    args += ("--transfer", "none")  # told as trials of this study (the default is transfer auto)
    assert invoke(*args, "--budget", 4).exit_code == 0
    assert invoke(*args, "--budget", 5).exit_code == 0
    workers = [t.worker for t in wb.Study("q.db").trials()]
    assert workers.count("prior") == 2 and len(workers) == 7  # the budget counts the study's own: 5


def test_debug_shows_the_traceback(workdir):
    result = runner.invoke(app, ["--debug", "status", "--storage", "missing.db"])
    assert result.exit_code != 0 and result.exception is not None


def test_optimize_with_an_envelope_over_prior_source_trials(workdir):
    (workdir / "source.csv").write_text(
        "x,mode,y\n0.4,a,0.02\n-1.0,a,2.3\n1.5,a,1.1\n0.0,a,0.3\n1.0,a,0.28\n"
    )
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "env.db", "--seed", 0)
    result = invoke(*args, "--budget", 6, "--prior", "source.csv", "--method", "envelope")
    assert result.exit_code == 0, result.output
    assert "transferring from 5 source evaluations" in result.output
    trials = wb.Study("env.db").trials()
    assert len(trials) == 6 and all(t.worker != "prior" for t in trials)  # the source is not told as trials
    # (a study that stores its sources uses them with --method: test_a_resumed_study_uses_its_stored_...)
    missing = invoke(*args[:4], "--storage", "env2.db", "--budget", 6, "--method", "envelope")
    assert missing.exit_code == 1 and "--prior" in missing.output
    unknown = invoke(*args, "--budget", 6, "--prior", "source.csv", "--method", "spline")
    assert unknown.exit_code == 1 and "unknown --method 'spline'" in unknown.output


def test_several_prior_files_are_source_tasks_of_transfer_auto(workdir):
    # two finished tuning runs of related objectives, in the user's units (minimised), as two files
    (workdir / "run1.csv").write_text("x,mode,y\n0.5,a,0.0\n-1.0,a,2.25\n1.5,a,1.0\n2.0,a,2.3\n")
    (workdir / "run2.csv").write_text("x,mode,y\n0.6,a,0.1\n-2.0,a,6.8\n0.0,a,0.4\n")
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "auto.db", "--seed", 0)
    result = invoke(*args, "--budget", 5, "--prior", "run1.csv", "--prior", "run2.csv")
    assert result.exit_code == 0, result.output
    assert "transferring from 7 source evaluations" in result.output and "with auto" in result.output
    said = " ".join(result.output.split())
    # the probe is named as `warmbo suggest` names it (a user test: optimize did not say it)
    assert (
        "warm design: the first 3 points come from the sources; by evaluation 7 a cold design point "
        "tests them (earlier if they lose their weight first)" in said
    ), said
    trials = wb.Study("auto.db").trials()
    assert len(trials) == 5 and all(t.worker != "prior" for t in trials)
    assert trials[0].params["x"] == pytest.approx(0.5)  # the sources' best configuration, first
    status = invoke("status", "--storage", "auto.db")
    assert status.exit_code == 0 and "transfer auto: 2 source task(s), 7 rows" in status.output
    assert "task run1" in status.output and "weights after" in status.output
    page = invoke("report", "auto.db", "--out", "auto-report")
    assert page.exit_code == 0, page.output
    html = (workdir / "auto-report" / "report.html").read_text()
    assert "<h2>Transfer: auto</h2>" in html and "task run2" in html and "Warm design (3 points" in html
    # the weights are the last ask's (trial 5's, on 4 trials), not of the 5 trials the page shows
    assert "As the study's last ask weighed them, on 4 of this study's complete trials" in html
    # the slices are the transfer model's, which need not pass through the observations: said so
    assert "need not pass through this study" in html
    both = invoke(*args, "--budget", 6, "--prior", "run1.csv", "--transfer", "rgpe", "--method", "envelope")
    assert both.exit_code == 1 and "not both" in both.output


def test_suggest_and_a_resumed_optimize_transfer_from_the_stored_sources(workdir):
    # Before, `warmbo suggest` and `warmbo optimize` without --prior reopened a transfer study cold.
    (workdir / "run1.csv").write_text("x,mode,y\n0.5,a,0.0\n-1.0,a,2.25\n1.5,a,1.0\n2.0,a,2.3\n")
    (workdir / "run2.csv").write_text("x,mode,y\n0.6,a,0.1\n-2.0,a,6.8\n0.0,a,0.4\n")
    source_x = [0.5, -1.0, 1.5, 2.0, 0.6, -2.0, 0.0]
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "r.db", "--seed", 0)
    assert invoke(*args, "--budget", 1, "--prior", "run1.csv", "--prior", "run2.csv").exit_code == 0
    asked = invoke("suggest", "--storage", "r.db", "--json")
    assert asked.exit_code == 0, asked.output
    point = json.loads(asked.output.splitlines()[0])["params"]
    assert point["x"] == pytest.approx(0.6)  # the warm design's second point: run2's best
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        observed = invoke("observe", "--storage", "r.db", "--trial", 2, "--value", 0.3)
    assert observed.exit_code == 0
    assert not [w for w in caught if "stored sources" in str(w.message)]  # a tell needs no sources
    resumed = invoke("optimize", "objmod:f", "--storage", "r.db", "--budget", 3)
    assert resumed.exit_code == 0, resumed.output
    assert "resuming with the study's 7 stored source evaluations (transfer auto)" in resumed.output
    trials = wb.Study("r.db").trials()
    # the third warm design point: a source configuration too
    assert len(trials) == 3 and min(abs(trials[2].params["x"] - x) for x in source_x) < 1e-9
    # damaged stored sources: status still shows the trials, with a note; suggest names the way out
    study = wb.Study("r.db")
    study.set_meta("transfer_source_rows", "damaged")
    study.close()
    status = invoke("status", "--storage", "r.db")
    assert (
        status.exit_code == 0
        and "unreadable" in status.output
        and "without its transfer sources" in status.output
    )
    failed = invoke("suggest", "--storage", "r.db")
    assert failed.exit_code == 1 and "--transfer none" in failed.output
    assert len(wb.Study("r.db").trials()) == 3
    plain = invoke("suggest", "--storage", "r.db", "--transfer", "none")  # the way out it names
    assert plain.exit_code == 0, plain.output
    assert invoke("prior", "remove", "r.db", "--all").exit_code == 0  # needs no sources either
    # sources given to a study made without them (its stored scale is the plain GP's)
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "c.db", "--seed", 0)
    assert invoke(*args, "--budget", 2).exit_code == 0
    late = invoke("optimize", "objmod:f", "--storage", "c.db", "--budget", 3, "--prior", "run1.csv")
    assert late.exit_code == 0, late.output


def test_demo_refuses_an_out_that_is_a_file_before_running(tmp_path):
    """Before: the whole demo ran, then mkdir failed with '[Errno 17] File exists' (reproduce
    refuses it before its run; demo shares the output folder rules, and reruns into a folder)."""
    taken = tmp_path / "taken"
    taken.write_text("mine")
    done = CliRunner().invoke(app, ["demo", "--quick", "--panel", "branin", "--out", str(taken)])
    assert done.exit_code == 1
    assert "is a file" in done.output and "runs done" not in done.output
    assert taken.read_text() == "mine"


def test_demo_quick_writes_the_table_plots_and_report(tmp_path):
    result = invoke("demo", "--quick", "--out", tmp_path / "demo")
    assert result.exit_code == 0, result.output
    for panel in ("branin", "hartmann6", "envelope", "tuned prior", "multi-task", "meta-kel"):
        assert panel in result.output
    data = json.loads((tmp_path / "demo" / "results.json").read_text())
    assert len(data["summary"]) == 14  # 2 problems x 3 methods + 4 warm-start panels x 2 methods
    # the output is not a terminal: one plain line per finished problem and method, in run order
    # (the time since the start once it differs from the line's own: the first line gives it once)
    done = re.findall(
        r"^(.+): (.+) - 2/2 runs done in ([\d.]+) s(?:, ([\d.]+) s elapsed)?$", result.output, re.M
    )
    assert [(p, m) for p, m, _, _ in done] == [(row["problem"], row["method"]) for row in data["summary"]]
    elapsed = [float(since or own) for _, _, own, since in done]
    assert elapsed == sorted(elapsed)
    assert re.search(r"^demo - 28/28 runs done in", result.output, re.M)
    # and the plain table, uncut, which is also the README block's table (table.md)
    from warmbo.experiments.demo import plain_table, readme_block

    assert plain_table(data) in result.output
    assert (tmp_path / "demo" / "table.md").read_text() == readme_block(data)
    assert "over 2 runs per method (seeds 0, 1; `warmbo demo --quick`" in readme_block(data)
    assert (tmp_path / "demo" / "regret.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "data:image/png;base64," in (tmp_path / "demo" / "report.html").read_text()


# ------------------------------------------------------------------ --cmd: placeholders and output contract
DOTTED_SPACE = {
    "params": [
        {"type": "float", "name": "learning-rate", "low": 0.001, "high": 0.1},
        {"type": "float", "name": "opt.momentum", "low": 0.0, "high": 0.9},
    ]
}


def test_cmd_substitutes_parameter_names_with_dashes_and_dots(workdir):
    (workdir / "dotted.json").write_text(json.dumps(DOTTED_SPACE))
    (workdir / "add.py").write_text("import sys\nprint(float(sys.argv[1]) + 10 * float(sys.argv[2]))\n")
    cmd = f"{sys.executable} add.py {{learning-rate}} {{opt.momentum}}"
    args = ("optimize", "--cmd", cmd, "--space", "dotted.json", "--budget", 4, "--seed", 0)
    result = invoke(*args, "--storage", "d.db")
    assert result.exit_code == 0, result.output
    trials = wb.Study("d.db").trials()
    assert len(trials) == 4 and all(t.is_complete for t in trials), [t.error for t in trials]
    for t in trials:
        assert t.value == pytest.approx(t.params["learning-rate"] + 10 * t.params["opt.momentum"], rel=1e-9)
    # the issue's example: the name is substituted, so echo prints two numbers and nothing is stored
    echo = invoke("optimize", "--cmd", "echo {learning-rate} 0.5", "--space", "dotted.json", "--budget", 2,
                  "--storage", "e.db")  # fmt: skip
    assert echo.exit_code == 1 and "no evaluation has succeeded" in echo.output, echo.output  # (all failed)
    failed = wb.Study("e.db").trials()
    assert all(t.is_failed and "must be a single number" in t.error for t in failed)
    assert all(f"'{t.params['learning-rate']} 0.5'" in t.error for t in failed)
    # warmbo's own words, stored as said (not ObjectiveError("...")'s repr, which doubles backslashes)
    regex = invoke("optimize", "--cmd", "echo {learning-rate}", "--value-regex", r"loss=(\S+)", "--space",
                   "dotted.json", "--budget", 1, "--storage", "r.db")  # fmt: skip
    assert regex.exit_code == 1, regex.output  # (its one trial failed)
    assert wb.Study("r.db").trial(1).error == r"--value-regex 'loss=(\S+)' matched nothing in the output"


@pytest.mark.parametrize(
    "template, message",
    [
        ("echo {lr}", "--cmd uses {lr}, which name(s) no parameter"),
        ("echo {learning_rate} {opt-momentum}", "{learning_rate}, {opt-momentum}"),
        ("awk '{print $1}'", "{print $1}"),
    ],
)
def test_cmd_refuses_placeholders_that_name_no_parameter(template, message):
    names = ("learning-rate", "opt.momentum")
    with pytest.raises(ValueError, match="no parameter") as error:
        CommandObjective(template, names)
    assert message in str(error.value) and "learning-rate" in str(error.value)


@pytest.mark.parametrize(
    "template, message",
    [
        # a user test: "{act {layers}} x}" ran the command with '{act', '6}', 'x}' and stored the result
        ("python obj.py {act {layers}} x}", "argument '{act' has a brace that is not part of a placeholder"),
        ("python obj.py {act", "'{act'"),
        ("python obj.py {act}}", "'{act}}'"),
        ("python obj.py x}", "'x}'"),
        # unquoted, shlex splits it into "{learning" and "rate}": three evaluations spent, then a failure
        ("python obj.py {learning rate} {act}", "has a space in its name, so the command line splits it "
         "in two; quote it: '{learning rate}'"),
    ],
)  # fmt: skip
def test_cmd_refuses_a_brace_of_no_placeholder_before_anything_runs(template, message):
    with pytest.raises(ValueError, match="--cmd") as error:
        CommandObjective(template, ("act", "layers", "learning rate"))
    assert message in str(error.value)


def test_cmd_a_quoted_placeholder_may_have_a_space_in_its_name():
    objective = CommandObjective("python obj.py '{learning rate}' {act}", ("act", "learning rate"))
    assert objective.argv({"act": "relu", "learning rate": 0.1}) == ["python", "obj.py", "0.1", "relu"]


def test_a_command_killed_by_a_signal_is_said_so(tmp_path):
    """A command ended by a signal is reported by the signal's name, with its stderr's last line: it
    read 'command exited with status -9: starting sim' (Python's code, and a progress line)."""
    script = tmp_path / "sim.py"
    script.write_text(
        "import os, signal, sys\nprint('starting sim', flush=True)\n"
        "if sys.argv[1] == 'err': print('allocating 64 GB', file=sys.stderr, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    objective = CommandObjective(f"{sys.executable} {script} {{x}}", ("x",))
    with pytest.raises(ObjectiveError) as killed:
        objective({"x": "out"})
    assert str(killed.value).startswith("command was killed by SIGKILL (the operating system's out-of-memory")
    assert "starting sim" not in str(killed.value)
    with pytest.raises(ObjectiveError, match=r"killed by SIGKILL .*: allocating 64 GB$"):
        objective({"x": "err"})


def test_cmd_double_braces_are_literal():
    objective = CommandObjective("echo {{x}} {x} {{print}}", ("x",))
    assert objective.argv({"x": 0.5}) == ["echo", "{x}", "0.5", "{print}"]


@pytest.mark.parametrize(
    "stdout, tasks, expected",
    [
        ("0.25\n", (), 0.25),
        ("epoch 1 loss 3.0\nepoch 2 loss 1.0\n  -1.5e-3  \n\n", (), -1.5e-3),
        ('training...\n{"value": 0.25, "epoch": 10}\n', (), 0.25),
        ("0.9 3.1\n", ("acc", "lat"), [0.9, 3.1]),
        ("0.9, 3.1\n", ("acc", "lat"), [0.9, 3.1]),
        ('{"lat": 3.1, "acc": 0.9}', ("acc", "lat"), [0.9, 3.1]),
        ("0.7\n", ("acc",), [0.7]),
    ],
)
def test_output_contract_reads_the_last_line(stdout, tasks, expected):
    assert parse_values(stdout, tasks) == expected


@pytest.mark.parametrize(
    "stdout, tasks, message",
    [
        ("loss 1,234.5\n", (), "must be a single number, got 'loss 1,234.5'"),
        ("loss 0.25 (epoch 10)\n", (), "must be a single number"),
        ("1,234.5\n", (), "must be a single number"),
        ("0.25\ndone\n", (), "must be a single number, got 'done'"),
        ("", (), "printed nothing"),
        ("0.9\n", ("acc", "lat"), "must be 2 numbers (one per task: acc, lat)"),
        ("0.9 fast\n", ("acc", "lat"), "got '0.9 fast'"),
        ('{"loss": 0.25}', (), 'no key(s) ["value"]'),
        ('{"value": "0.25"}', (), "not a number"),
        ('{"acc": 0.9}', ("acc", "lat"), 'no key(s) ["lat"]'),
        ("{value: 1}", (), "not valid JSON"),
        # float() reads these as 15 and 42; --value and a CSV cell refuse them (a user test stored 15)
        ("1_5\n", (), "must be a single number, got '1_5'"),
        ("\u0664\u0662\n", (), "must be a single number"),
        ("0.5 1_0\n", ("acc", "lat"), "must be 2 numbers"),
    ],
)
def test_output_contract_refuses_anything_else(stdout, tasks, message):
    with pytest.raises(ObjectiveError) as error:
        parse_values(stdout, tasks)
    assert message in str(error.value)


def test_value_regex_takes_the_last_match_over_the_whole_output():
    import re

    out = "epoch 1 val_loss=0.5\nepoch 2 val_loss=0.25 (best)\nsaved checkpoint 10\n"
    assert parse_values(out, (), re.compile(r"val_loss=(\S+)")) == 0.25
    both = re.compile(r"acc=(\S+) lat=(\S+)")
    assert parse_values("acc=0.8 lat=4\nacc=0.9 lat=3\n", ("acc", "lat"), both) == [0.9, 3.0]
    with pytest.raises(ObjectiveError, match="matched nothing"):
        parse_values("loss 0.25\n", (), re.compile(r"val_loss=(\S+)"))
    with pytest.raises(ObjectiveError, match="'1,234.5' is not a number"):
        parse_values("loss 1,234.5\n", (), re.compile(r"loss ([\d,.]+)"))
    with pytest.raises(ValueError, match="has 1 capture group") as raised:
        CommandObjective("echo {x}", ("x",), tasks=("a", "b"), value_regex=r"v=(\S+)")
    assert "--value-regex 'v=(\\S+)' has" in str(raised.value)  # as typed in a shell (repr doubled \)
    with pytest.raises(ValueError, match="--value-regex '\\(' is not a regular expression"):
        CommandObjective("echo {x}", ("x",), value_regex="(")


def test_optimize_with_a_value_regex(workdir):
    (workdir / "log.py").write_text(
        "import sys\nx = float(sys.argv[1])\nprint(f'loss {(x - 0.5) ** 2} (epoch 10)')\nprint('done')\n"
    )
    cmd = f"{sys.executable} log.py {{x}}"
    args = ("optimize", "--cmd", cmd, "--space", "space.json", "--budget", 3, "--seed", 0)
    result = invoke(*args, "--storage", "r.db", "--value-regex", r"loss (\S+) \(epoch")
    assert result.exit_code == 0, result.output
    for t in wb.Study("r.db").trials():
        assert t.is_complete and t.value == pytest.approx((t.params["x"] - 0.5) ** 2)
    plain = invoke(*args, "--storage", "p.db")  # without the regex the output breaks the contract
    assert plain.exit_code == 1 and "all failed with" in plain.output and "got 'done'" in plain.output
    assert [t.state for t in wb.Study("p.db").trials()] == ["failed"] * 3
    module = invoke(
        "optimize", "objmod:f", "--space", "space.json", "--value-regex", "(x)", "--storage", "q.db"
    )
    assert module.exit_code == 1 and "apply to a --cmd objective" in module.output


def test_optimize_help_documents_the_output_contract():
    result = invoke("optimize", "--help")
    text = " ".join(result.output.replace("│", " ").split())  # rich wraps the help in a box
    assert "The last non-empty line it prints must be the value" in text and "--value-regex" in text


def test_help_shows_no_value_placeholder_for_flags():
    # typer labelled every flag "<bool>" ("--prior-add <bool>"), which a user test read as taking a value
    rows = [line for line in invoke("optimize", "--help").output.splitlines() if "--prior-add " in line]
    assert rows and "<bool>" not in rows[0]
    budget = [line for line in invoke("optimize", "--help").output.splitlines() if "--budget" in line]
    assert "<int" in budget[0]  # options that take a value keep their type


def test_the_space_format_in_the_help_is_a_space_file_the_command_reads(tmp_path):
    from warmbo.cli import SPACE_FORMAT, load_space

    example = SPACE_FORMAT[SPACE_FORMAT.index("{") : SPACE_FORMAT.rindex("}") + 1]
    (tmp_path / "space.json").write_text(example)
    assert load_space(tmp_path / "space.json").names == ("lr", "layers", "act")
    assert "e.g. {" in " ".join(invoke("suggest", "--help").output.replace("│", " ").split())


# ------------------------------------------------------------------ --cmd: timeouts
def test_timeout_kills_the_whole_process_group(tmp_path):
    marker = tmp_path / "marker"
    objective = CommandObjective(f'sh -c "(sleep 2; touch {marker}) & wait"', (), timeout=0.5)
    start = time.monotonic()
    with pytest.raises(ObjectiveError, match="timed out after 0.5 s"):
        objective({})
    assert time.monotonic() - start < 1.5  # not held until the grandchild closes its output
    time.sleep(2.5)
    assert not marker.exists()  # the grandchild was killed with its group


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf"])
def test_non_positive_timeouts_are_refused(workdir, value):
    cmd = f"{sys.executable} train.py {{x}} {{mode}}"
    result = invoke(
        "optimize", "--cmd", cmd, "--space", "space.json", "--timeout", value, "--storage", "t.db"
    )
    assert result.exit_code == 1
    assert f"--timeout must be a positive number of seconds, got {float(value)!r}" in result.output
    assert not Path("t.db").exists()


def test_max_time_stops_the_run_and_the_same_command_goes_on(workdir, monkeypatch):
    # --max-time is the whole run's (Optimizer.run's timeout), --timeout each command's. A fake clock
    # advanced by the objective (one second per evaluation) makes the count exact
    import warmbo.optimizer as wo

    now = [0.0]
    monkeypatch.setattr(wo, "_clock", lambda: now[0])
    monkeypatch.setattr(wo, "_test_now", now, raising=False)
    Path("slowmod.py").write_text(
        "import warmbo.optimizer as wo\n\n"
        "def f(p):\n    wo._test_now[0] += 1\n    return (p['x'] - 0.5) ** 2\n"
    )
    args = (
        "optimize",
        "slowmod:f",
        "--space",
        "space.json",
        "--budget",
        20,
        "--storage",
        "m.db",
        "--seed",
        0,
    )
    result = invoke(*args, "--max-time", 2.5)
    assert result.exit_code == 0, result.output
    assert "stopped by --max-time 2.5 s at 3 of 20 finished trials" in result.output
    assert [t.state for t in wb.Study("m.db").trials()] == ["complete"] * 3
    again = invoke(*args)
    assert again.exit_code == 0 and "max-time" not in again.output
    assert len(wb.Study("m.db").trials()) == 20


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf"])
def test_a_bad_max_time_is_refused_before_a_study_is_made(workdir, value):
    result = invoke("optimize", "objmod:f", "--space", "space.json", "--max-time", value, "--storage", "t.db")
    assert result.exit_code == 1
    assert f"--max-time must be a positive number of seconds, got {float(value)!r}" in result.output
    assert not Path("t.db").exists()


# ------------------------------------------------------------------ --tasks with one task
def test_a_single_task_works_with_a_command_and_a_function(workdir):
    cmd = f"{sys.executable} train.py {{x}} {{mode}}"
    args = ("optimize", "--space", "space.json", "--tasks", "loss", "--directions", "min", "--budget", 4)
    result = invoke(*args, "--cmd", cmd, "--storage", "one.db", "--seed", 0)
    assert result.exit_code == 0, result.output
    trials = wb.Study("one.db").trials()
    assert len(trials) == 4 and all(t.is_complete for t in trials), [t.error for t in trials]
    for t in trials:
        expected = (t.params["x"] - 0.5) ** 2 + (t.params["mode"] != "a")
        assert t.values == pytest.approx((expected,))
    function = invoke(*args, "objmod:f", "--storage", "fn.db", "--seed", 0)
    assert function.exit_code == 0, function.output
    assert all(t.is_complete and len(t.values) == 1 for t in wb.Study("fn.db").trials())


# ------------------------------------------------------------------ read-only studies
def _as_unprivileged(args: list[str]) -> list[str]:
    """Run args as an ordinary user: as root, chmod does not stop writes, so drop to nobody."""
    if os.geteuid() != 0:
        return args
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot make a file read-only")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *args]


@pytest.fixture
def shared_folder():
    """A folder an unprivileged user can reach (pytest's tmp_path is private to its owner)."""
    folder = Path(tempfile.mkdtemp(prefix="warmbo-ro-"))
    folder.chmod(0o777)
    yield folder
    for path in folder.rglob("*"):
        if path.is_dir():
            path.chmod(0o755)
    shutil.rmtree(folder)


@pytest.fixture
def read_only_mount(workdir):
    """``ro/`` in the work folder, a read-only bind mount of ``src/`` (root only: as root, chmod
    stops no write; a read-only file system does)."""
    source, target = workdir / "src", workdir / "ro"
    source.mkdir()
    target.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a read-only mount needs root")
    if subprocess.run(["mount", "--bind", str(source), str(target)], capture_output=True).returncode:
        pytest.skip("mount --bind is not permitted here")
    try:
        remount = ["mount", "-o", "remount,ro,bind", str(target)]
        if subprocess.run(remount, capture_output=True).returncode:
            pytest.skip("a read-only remount is not permitted here")
        yield source, target
    finally:
        subprocess.run(["umount", "--lazy", str(target)], capture_output=True)  # (open connections)


def test_a_finished_study_given_as_prior_is_only_read(workdir, read_only_mount):
    # before: a study given as --prior was opened for writing: an old study's schema was migrated
    # (the file changed), and a study in a folder the user cannot write was refused ("cannot be opened
    # for writing") although reading it is all a prior needs
    source, _ = read_only_mount
    _old_study_file(source / "old.db")
    before = (source / "old.db").read_bytes()
    for transfer, storage in (("none", "told.db"), ("auto", "warm.db")):
        result = invoke("optimize", "objmod:f", "--space", "space.json", "--budget", 3, "--storage", storage,
                        "--prior", "ro/old.db", "--transfer", transfer, "--seed", 0)  # fmt: skip
        assert result.exit_code == 0, result.output
    prior_rows = [t for t in wb.Study("told.db").trials() if t.worker == "prior"]
    assert [(t.params, t.value) for t in prior_rows] == [({"x": 0.25, "mode": "a"}, 0.0625)]
    assert (source / "old.db").read_bytes() == before and not (source / "old.db-wal").exists()


def test_writing_to_a_study_in_a_read_only_folder_says_so(workdir, read_only_mount):
    # before: a study closed cleanly gave "cannot open study 'ro/s.db' (SQLite says: unable to open
    # database file)" (SQLite cannot create its write-ahead log there), and one whose writer was killed
    # (its -wal and -shm files left beside it) opened, then failed at its first write with SQLite's
    # "attempt to write a readonly database", or "is locked by another process" when BEGIN failed
    source, _ = read_only_mount
    create = [sys.executable, "-m", "warmbo.cli", "optimize", "objmod:f", "--space", "space.json",
              "--budget", "3", "--storage", str(source / "clean.db")]  # fmt: skip
    assert subprocess.run(create, cwd=workdir, capture_output=True).returncode == 0
    assert not (source / "clean.db-wal").exists()
    made = invoke(
        "optimize", "objmod:f", "--space", "space.json", "--budget", 3, "--storage", source / "w.db"
    )
    assert made.exit_code == 0, made.output
    # a connection kept open, as a killed writer's is: -wal and -shm stay (the command's own are
    # closed when it ends, since session 39)
    import sqlite3

    kept = sqlite3.connect(source / "w.db")
    assert kept.execute("SELECT COUNT(*) FROM trials").fetchone() == (3,)
    assert (source / "w.db-wal").exists()
    for name in ("clean", "w"):
        for args in (
            ("optimize", "objmod:f", "--budget", 5, "--storage", f"ro/{name}.db"),
            ("suggest", "--storage", f"ro/{name}.db"),
            ("observe", "--storage", f"ro/{name}.db", "--trial", 1, "--value", 2.5, "--amend"),
        ):
            result = invoke(*args)
            assert result.exit_code == 1, result.output
            assert f"study 'ro/{name}.db' cannot be opened for writing" in result.output, result.output
            assert "read-only); warmbo status, export and report read it" in result.output
        status = invoke("status", "--storage", f"ro/{name}.db")
        assert status.exit_code == 0 and "3 complete, 0 pending, 0 failed" in status.output
    new = invoke("optimize", "objmod:f", "--space", "space.json", "--budget", 3, "--storage", "ro/new.db")
    assert new.exit_code == 1 and "cannot create study 'ro/new.db': folder" in new.output, new.output
    kept.close()


def _old_study_file(path: Path) -> None:
    """A study as the first warmbo versions wrote it: no ``vector`` (multi-task) and no ``heartbeat``
    column; one complete, one failed and one pending trial."""
    import sqlite3

    conn = sqlite3.connect(path)
    conn.executescript(FIRST_SCHEMA)
    settings = {"direction": "minimize", "n_initial": 4, "seed": 0}
    meta = [("schema_version", "1"), ("space", json.dumps(SPACE)), ("settings", json.dumps(settings)),
            ("created", "1700000000.0")]  # fmt: skip
    conn.executemany("INSERT INTO meta VALUES (?, ?)", meta)
    rows = [
        ({"x": 0.25, "mode": "a"}, "complete", 0.0625, 1700000001.0, 1700000002.0, "lab:1", None),
        ({"x": 1.95, "mode": "a"}, "failed", None, 1700000003.0, 1700000004.0, "lab:1", "exit 3"),
        ({"x": -1.0, "mode": "a"}, "pending", None, 1700000005.0, None, "lab:1", None),
    ]
    conn.executemany(
        "INSERT INTO trials (params, state, value, created, completed, worker, error) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(json.dumps(p), *rest) for p, *rest in rows],
    )
    conn.commit()
    conn.close()


def test_a_study_written_by_an_old_version_is_read_without_changing_it(workdir):
    # before: status and export open a study read-only and selected the vector column, which studies
    # written before multi-task support lack: "error: no such column: vector" (only a writing open
    # such as optimize added it); now the missing columns read as empty, and the file is untouched
    _old_study_file(workdir / "old.db")
    before = (workdir / "old.db").read_bytes()
    status = invoke("status", "--storage", "old.db")
    assert status.exit_code == 0, status.output
    assert "1 complete, 1 pending, 1 failed" in status.output
    assert "lab:1: 1 suggestion waiting for a result (trial 3)" in status.output  # (no user: kept)
    export = invoke("export", "--storage", "old.db", "--out", "old.csv")
    assert export.exit_code == 0, export.output
    lines = (workdir / "old.csv").read_text().splitlines()
    assert len(lines) == 4 and lines[1].startswith("1,complete,0.25,a,0.0625,")
    assert wb.Study("sqlite:///old.db?mode=ro").trial(3).state == "pending"
    assert (workdir / "old.db").read_bytes() == before
    assert not (workdir / "old.db-wal").exists()
    # a writing open still migrates it, and the run goes on from its trials
    resumed = invoke("optimize", "objmod:f", "--budget", 4, "--storage", "old.db")
    assert resumed.exit_code == 0, resumed.output
    assert [t.state for t in wb.Study("old.db").trials()][:3] == ["complete", "failed", "pending"]


@pytest.mark.parametrize(
    "damage",
    ["params = '{\"x\": 0.2'", "value = 'x7f'", "state = 'comp'"],
    ids=["cut-params", "text-value", "bad-state"],
)
def test_a_damaged_trial_row_is_a_clear_error_naming_it(workdir, damage):
    # before: a row a damaged file reads back half-written (a truncated copy read NULL params and
    # state) raised a TypeError or JSONDecodeError out of status, export and optimize, with a traceback
    import sqlite3

    invoke("optimize", "objmod:f", "--space", "space.json", "--budget", 3, "--storage", "d.db", "--seed", 0)
    with sqlite3.connect(workdir / "d.db") as conn:
        conn.execute("PRAGMA ignore_check_constraints = ON")  # (a damaged page is not checked either)
        conn.execute(f"UPDATE trials SET {damage} WHERE id = 2")
    conn.close()
    for args in (
        ("status", "--storage", "d.db"),
        ("export", "--storage", "d.db", "--out", "d.csv"),
        ("optimize", "objmod:f", "--budget", 5, "--storage", "d.db"),
    ):
        result = invoke(*args)
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
        assert "is damaged: trial 2 does not read as a trial" in result.output, result.output
        assert "integrity_check" in result.output
    assert len(wb.Study("sqlite:///d.db?mode=ro")._all_rows()) == 3  # nothing added


def test_a_damaged_page_found_by_a_write_is_a_clear_error_naming_the_study(workdir):
    # before: a page overwritten with garbage that reads do not reach (here the table of AUTOINCREMENT
    # counters) let status work, and optimize failed at its first insert with SQLite's bare
    # "database disk image is malformed", no study named
    import sqlite3

    invoke("optimize", "objmod:f", "--space", "space.json", "--budget", 3, "--storage", "p.db", "--seed", 0)
    with sqlite3.connect(workdir / "p.db") as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_sequence'").fetchone()
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with open(workdir / "p.db", "r+b") as raw:
        raw.seek((root - 1) * size)
        raw.write(bytes(range(256)) * (size // 256))
    status = invoke("status", "--storage", "p.db")
    assert status.exit_code == 0 and "3 complete" in status.output, status.output
    result = invoke("optimize", "objmod:f", "--budget", 5, "--storage", "p.db")
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    assert "study 'p.db' is damaged (SQLite says: database disk image is malformed)" in result.output
    assert "integrity_check" in result.output


def test_a_read_only_study_in_a_read_only_folder_can_be_inspected(workdir, shared_folder):
    invoke("optimize", "objmod:f", "--space", "space.json", "--budget", 4, "--storage", "h.db", "--seed", 0)
    invoke("suggest", "--storage", "h.db")
    import sqlite3

    with sqlite3.connect(workdir / "h.db") as conn:  # as when its last writer closed it: one file
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    archive = shared_folder / "archive"
    archive.mkdir()
    shutil.copy(workdir / "h.db", archive / "h.db")
    (archive / "h.db").chmod(0o444)
    archive.chmod(0o555)
    before = ((archive / "h.db").read_bytes(), (archive / "h.db").stat().st_mtime_ns)
    env = dict(os.environ, HOME=str(shared_folder), MPLCONFIGDIR=str(shared_folder / "mpl"))
    warmbo = [sys.executable, "-m", "warmbo.cli"]
    probe = subprocess.run(_as_unprivileged([sys.executable, "-c", "import warmbo.cli"]), env=env,
                           cwd=shared_folder, capture_output=True, text=True)  # fmt: skip
    if probe.returncode != 0:
        pytest.skip(f"the unprivileged user cannot import warmbo here: {probe.stderr[-200:]}")

    def run(*args):
        return subprocess.run(_as_unprivileged([*warmbo, *args]), env=env, cwd=shared_folder,
                              capture_output=True, text=True, timeout=300)  # fmt: skip

    status = run("status", "--storage", str(archive / "h.db"))
    assert status.returncode == 0, status.stderr
    assert "4 complete, 1 pending, 0 failed" in status.stdout
    report = run("report", str(archive / "h.db"), "--out", str(shared_folder / "rep"))
    assert report.returncode == 0, report.stderr
    assert (shared_folder / "rep" / "report.html").is_file()
    assert ((archive / "h.db").read_bytes(), (archive / "h.db").stat().st_mtime_ns) == before
    assert sorted(p.name for p in archive.iterdir()) == ["h.db"]
    # writing is refused with an accurate message, not "is not a warmbo study"
    suggest = run("suggest", "--storage", str(archive / "h.db"))
    assert suggest.returncode == 1 and "cannot be opened for writing" in suggest.stderr
    assert "not a warmbo study" not in suggest.stderr
    (archive / "h.db").chmod(0)  # unreadable
    unreadable = run("status", "--storage", str(archive / "h.db"))
    assert unreadable.returncode == 1 and "permission denied" in unreadable.stderr, unreadable.stderr


def test_a_study_opened_read_only_refuses_writes_and_changes_nothing(workdir):
    invoke("optimize", "objmod:f", "--space", "space.json", "--budget", 3, "--storage", "h.db", "--seed", 0)
    path = workdir / "h.db"
    before = path.read_bytes()
    for study in (wb.Study(str(path), readonly=True), wb.Study(f"sqlite:///{path}?mode=ro")):
        assert study.readonly and len(study.trials()) == 3
        with pytest.raises(wb.storage.StorageError, match="opened read-only; it cannot be written"):
            study.add_trial({"x": 0.0, "mode": "a"})
        with pytest.raises(wb.storage.StorageError, match="opened read-only"):
            study.fail(1, "no")
        study.close()
    reopened = wb.Optimizer.load(f"sqlite:///{path}?mode=ro")
    assert len(reopened.history) == 3 and reopened.best is not None
    with pytest.raises(wb.storage.StorageError, match="opened read-only"):
        reopened.ask()
    assert path.read_bytes() == before
    with pytest.raises(wb.storage.StorageError, match="no study at"):
        wb.Study(str(workdir / "missing.db"), readonly=True)
    assert not (workdir / "missing.db").exists()


def test_errors_for_files_that_are_not_studies_say_what_they_are(workdir):
    import sqlite3

    other = workdir / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    conn.close()
    before = other.read_bytes()
    result = invoke("status", "--storage", "other.db")
    said = "is an SQLite database of another program (tables: notes), not a warmbo study"
    assert result.exit_code == 1 and said in result.output
    assert other.read_bytes() == before
    # writing to it is refused the same way, before anything is written (before: warmbo's tables were
    # created beside the other program's)
    made = invoke("suggest", "--space", "space.json", "--storage", "other.db")
    assert made.exit_code == 1 and said in made.output and other.read_bytes() == before
    (workdir / "notes.db").write_text("plain text\n" * 50)
    text = invoke("status", "--storage", "notes.db")
    assert text.exit_code == 1 and "is not a warmbo study: it is not an SQLite database" in text.output


@pytest.mark.parametrize("last", ["0", "-2"])
def test_status_last_must_be_positive(workdir, last):
    invoke("optimize", "objmod:f", "--space", "space.json", "--budget", 2, "--storage", "h.db", "--seed", 0)
    result = invoke("status", "--storage", "h.db", "--last", last)
    assert (
        result.exit_code == 1 and f"--last must be a positive number of trials, got {last}" in result.output
    )


def test_status_refuses_last_with_all(workdir):
    # before: --all --last 3 showed 3 rows, the --all dropped without a word
    invoke("optimize", "objmod:f", "--space", "space.json", "--budget", 4, "--storage", "h.db", "--seed", 0)
    result = invoke("status", "h.db", "--all", "--last", 3)
    assert result.exit_code == 1 and "give --last 3 or --all, not both" in result.output, result.output
    assert invoke("status", "h.db", "--all").exit_code == 0


# ------------------------------------------------------------------ resuming: direction, pending trials
def test_a_resumed_study_keeps_its_stored_direction(workdir):
    args = ("optimize", "objmod:f", "--budget")
    assert (
        invoke(*args, 3, "--space", "space.json", "--storage", "max.db", "--maximize", "--seed", 0).exit_code
        == 0
    )
    again = invoke(*args, 5, "--storage", "max.db")  # no direction flag: the stored one
    assert again.exit_code == 0, again.output
    assert "(maximize)" in again.output and len(wb.Study("max.db").trials()) == 5
    conflict = invoke(*args, 6, "--storage", "max.db", "--minimize")
    assert conflict.exit_code == 1
    assert "was created to maximize the objective; --minimize conflicts" in conflict.output
    assert len(wb.Study("max.db").trials()) == 5
    assert invoke(*args, 6, "--storage", "max.db", "--maximize").exit_code == 0


def test_n_initial_sets_the_design_and_a_resumed_study_keeps_it(workdir):
    args = ("optimize", "objmod:f", "--budget")
    first = invoke(*args, 4, "--space", "space.json", "--storage", "n.db", "--seed", 0, "--n-initial", 6)
    assert first.exit_code == 0, first.output
    again = invoke(*args, 6, "--storage", "n.db")  # no flag: the stored 6, not the default 4
    assert again.exit_code == 0, again.output
    # another size on resume would hold for that run only (not stored): refused, the same one is fine
    other = invoke(*args, 7, "--storage", "n.db", "--n-initial", 3)
    assert other.exit_code == 1 and "keeps the design size it was created with (6)" in other.output
    assert invoke(*args, 6, "--storage", "n.db", "--n-initial", 6).exit_code == 0
    study = wb.Study("n.db")
    assert study.settings["n_initial"] == 6
    design = study.space.sample(6, seed=0)
    for trial, point in zip(study.trials(), design, strict=True):
        assert trial.params["mode"] == point["mode"]
        assert trial.params["x"] == pytest.approx(point["x"])
    # a multi-task study too: 5 Sobol points, kept when resumed (the default would be 4)
    (workdir / "twomod.py").write_text("def f(p):\n    return [p['x'], p['x'] ** 2]\n")
    mt = ("optimize", "twomod:f", "--budget")
    first = invoke(*mt, 3, "--space", "space.json", "--tasks", "a,b", "--storage", "mt.db", "--seed", 0,
                   "--n-initial", 5)  # fmt: skip
    assert first.exit_code == 0, first.output
    again = invoke(*mt, 5, "--storage", "mt.db")
    assert again.exit_code == 0, again.output
    other = invoke(*mt, 6, "--storage", "mt.db", "--n-initial", 2)
    assert other.exit_code == 1 and "keeps the design size it was created with (5)" in other.output
    study = wb.Study("mt.db")
    design = study.space.sample(5, seed=0)
    assert [t.params["mode"] for t in study.trials()] == [p["mode"] for p in design]
    assert [t.params["x"] for t in study.trials()] == pytest.approx([p["x"] for p in design])


def test_a_reopened_study_keeps_the_design_size_of_the_design_it_uses(workdir):
    # (review of f89f427) the size stored at creation is a cold design's or a warm one's: a study
    # that got its sources later reopens with the warm size its sources were used with, and a
    # transfer study reopened without its sources with the cold default, not the warm size
    (workdir / "run1.csv").write_text("x,mode,y\n0.5,a,0.0\n-1.0,a,2.25\n1.5,a,1.0\n2.0,a,2.3\n")
    (workdir / "run2.csv").write_text("x,mode,y\n0.6,a,0.1\n-2.0,a,6.8\n0.0,a,0.4\n")
    args = ("optimize", "objmod:f", "--space", "space.json", "--seed", 0, "--budget")
    assert invoke(*args, 2, "--storage", "late.db").exit_code == 0  # cold: 4 stored at creation
    late = invoke(*args, 3, "--storage", "late.db", "--prior", "run1.csv")  # warm design of 2
    assert late.exit_code == 0, late.output
    assert wb.Optimizer.load("late.db").n_initial == 2
    assert wb.Optimizer.load("late.db", transfer="none").n_initial == 4
    warm = invoke(*args, 1, "--storage", "warm.db", "--prior", "run1.csv", "--prior", "run2.csv")
    assert warm.exit_code == 0, warm.output
    assert wb.Optimizer.load("warm.db").n_initial == 3
    assert wb.Optimizer.load("warm.db", transfer="none").n_initial == 4
    # the CLI resumes a transfer study without its sources on the cold design: trial 1 is a Sobol
    # point (a warm size of 3 would make it the second warm design point, run2's best x = 0.6)
    plain = invoke("optimize", "objmod:f", "--storage", "warm.db", "--budget", 2, "--transfer", "none")
    assert plain.exit_code == 0, plain.output
    second = wb.Study("warm.db").trials()[1].params
    sobol = wb.Study("warm.db").space.sample(2, seed=0)[1]
    assert second["x"] == pytest.approx(sobol["x"]) and second["x"] != pytest.approx(0.6)


def test_a_resumed_multitask_study_keeps_its_tasks_and_directions(workdir):
    (workdir / "twomod.py").write_text("def f(p):\n    return [p['x'], p['x'] ** 2]\n")
    first = invoke("optimize", "twomod:f", "--space", "space.json", "--tasks", "acc,lat", "--directions",
                   "max,min", "--budget", 3, "--storage", "mt.db", "--seed", 0)  # fmt: skip
    assert first.exit_code == 0, first.output
    again = invoke("optimize", "twomod:f", "--budget", 5, "--storage", "mt.db")
    assert again.exit_code == 0, again.output
    assert all(t.is_complete and len(t.values) == 2 for t in wb.Study("mt.db").trials())
    assert len(wb.Study("mt.db").trials()) == 5
    flag = invoke("optimize", "twomod:f", "--budget", 6, "--storage", "mt.db", "--maximize")
    assert flag.exit_code == 1 and "give --directions per task" in flag.output


def test_transfer_options_on_a_multitask_study_are_refused_not_ignored(workdir):
    # before, --transfer, --method, --task and --prior-rename were accepted and silently ignored by a
    # multi-task optimize (and --transfer by suggest): the run went on without the transfer asked for
    (workdir / "twomod.py").write_text("def f(p):\n    return [p['x'], p['x'] ** 2]\n")
    new = ("optimize", "twomod:f", "--space", "space.json", "--tasks", "acc,lat", "--budget", 2)
    refused = invoke(*new, "--storage", "new.db", "--transfer", "rgpe")
    assert refused.exit_code == 1 and "--transfer rgpe is for single-objective studies" in refused.output
    assert not (workdir / "new.db").exists()
    first = invoke(*new, "--storage", "mt.db", "--seed", 0)
    assert first.exit_code == 0, first.output
    for extra in (("--method", "rgpe"), ("--task", "lab"), ("--prior-rename", "a=x")):
        again = invoke("optimize", "twomod:f", "--budget", 3, "--storage", "mt.db", *extra)
        assert again.exit_code == 1 and f"{extra[0]}" in again.output and "not multi-task" in again.output
    asked = invoke("suggest", "--storage", "mt.db", "--transfer", "rgpe")
    assert asked.exit_code == 1 and "--transfer rgpe applies to single-objective studies" in asked.output
    assert [t.state for t in wb.Study("mt.db").trials()] == ["complete", "complete"]  # nothing stored


def test_a_resumed_multitask_study_keeps_its_scalarization_and_budget(workdir):
    (workdir / "twomod.py").write_text("def f(p):\n    return [p['x'], p['x'] ** 2]\n")
    first = invoke("optimize", "twomod:f", "--space", "space.json", "--tasks", "acc,lat", "--directions",
                   "max,min", "--ref=-3,5", "--budget-eps", 0.5, "--budget", 3, "--storage", "mt.db",
                   "--seed", 0)  # fmt: skip
    assert first.exit_code == 0, first.output
    utilities = [t.value for t in wb.Study("mt.db").trials()]
    again = invoke("optimize", "twomod:f", "--budget", 5, "--storage", "mt.db")
    assert again.exit_code == 0, again.output
    resumed = wb.MultiTaskOptimizer.load("mt.db")
    assert resumed.scalarization == wb.Chebyshev(ref=(-3.0, -5.0))  # signed: lat is minimised
    assert resumed.budget_eps == 0.5 and "MT-BKB" in repr(resumed)
    # the first trials' utilities are those every later trial is ranked by
    assert [resumed.utility(t.values) for t in resumed.history[:3]] == pytest.approx(utilities)
    kind_only = invoke("optimize", "twomod:f", "--budget", 6, "--storage", "mt.db", "--scalarization",
                       "chebyshev")  # fmt: skip
    assert kind_only.exit_code == 0, kind_only.output
    for flags, named in [
        # in the options' words, as given (the study stores the ref signed: lat is minimised)
        (["--ref=-1,5"], "created with --scalarization chebyshev --ref -3,5, not --scalarization chebyshev "
         "--ref -1,5"),
        (["--scalarization", "linear"], "not --scalarization linear; leave --scalarization and --ref out"),
        (["--budget-eps", 0.3], "created with --budget-eps 0.5, not --budget-eps 0.3; leave --budget-eps"),
        (["--budget-eps", 1], "--budget-eps must be between 0 and 1 (exclusive), got 1"),
        (["--ref=0.5,nan"], "--ref must be finite numbers, got '0.5,nan'"),  # (it said "ref": hostile input)
        # (it said "created with directions=['maximize', 'minimize'], not [...]": multi-task user test)
        (["--tasks", "acc,lat", "--directions", "max,max"],
         "created with --directions max,min, not --directions max,max; leave --directions out"),
        (["--tasks", "acc,size"], "created with --tasks acc,lat, not --tasks acc,size; leave --tasks out"),
        (["--tasks", "acc,lat,mem"], "created with --tasks acc,lat, not --tasks acc,lat,mem; leave --tasks"),
    ]:  # fmt: skip
        refused = invoke("optimize", "twomod:f", "--budget", 7, "--storage", "mt.db", *flags)
        assert refused.exit_code == 1 and named in refused.output, refused.output
        assert "Chebyshev(" not in refused.output and "budget_eps" not in refused.output
        assert "maximize" not in refused.output
    assert len(wb.Study("mt.db").trials()) == 6
    suggested = invoke("suggest", "--storage", "mt.db", "--json")
    assert suggested.exit_code == 0, suggested.output


def test_suggest_n_that_runs_out_of_a_slice_says_so_in_the_commands_words(workdir):
    # it said "ask(3) found 2 point(s), then: ...", the Python call's words (fixed-values user test)
    (workdir / "sm.json").write_text(
        json.dumps({"params": [{"type": "float", "name": "t", "low": 100, "high": 105, "step": 5},
                               {"type": "categorical", "name": "machine", "choices": ["M1", "M2"]}]})
    )  # fmt: skip
    result = invoke("suggest", "--space", "sm.json", "-s", "sm.db", "-n", 3, "--fixed", '{"machine": "M1"}')
    said = " ".join(result.output.split())
    assert result.exit_code == 1 and "-n 3: found 2 point(s), then no more: every point" in said, said
    assert "ask(" not in said and wb.Study("sm.db").trials() == []


def test_suggest_fixed_says_that_queued_configurations_still_wait(workdir):
    # asks with --fixed leave the queue to the next ask without it, and said nothing of it: a user
    # test's boss's configurations waited unseen (fixed-values user test)
    (workdir / "sm.json").write_text(
        json.dumps({"params": [{"type": "float", "name": "t", "low": 100, "high": 130, "step": 5},
                               {"type": "categorical", "name": "machine", "choices": ["M1", "M2"]}]})
    )  # fmt: skip
    assert invoke("suggest", "--space", "sm.json", "-s", "q.db", "-n", 0).exit_code == 0
    assert invoke("enqueue", "q.db", "--params", '{"t": 105, "machine": "M2"}').exit_code == 0
    fixed = invoke("suggest", "q.db", "--fixed", '{"machine": "M1"}')
    said = " ".join(fixed.output.split())
    assert (
        fixed.exit_code == 0 and "1 queued configuration still waits: an ask with --fixed leaves" in said
    ), said
    plain = invoke("suggest", "q.db")
    assert plain.exit_code == 0 and "still wait" not in plain.output


def test_suggest_creates_a_multitask_study_for_a_lab(workdir):
    """A lab's multi-task campaign from the command line: `suggest --tasks` creates the study (it
    took `optimize --cmd true --budget 0`, a user test), later suggests go on with its settings, and
    the options on an existing study are checked as optimize checks them."""
    first = invoke("suggest", "--space", "space.json", "--storage", "plate.db", "--tasks", "yA,yB,imp",
                   "--directions", "max,max,min", "--ref", "20,20,15", "-n", 3, "--seed", 0)  # fmt: skip
    assert first.exit_code == 0, first.output
    assert "created multi-task study plate.db (tasks yA (max), yB (max), imp (min)" in first.output
    mt = wb.MultiTaskOptimizer.load("plate.db")
    assert mt.directions == ("maximize", "maximize", "minimize")
    assert mt.scalarization == wb.Chebyshev(ref=(20.0, 20.0, -15.0))  # (signed: imp is minimised)
    assert [t.state for t in mt.study.trials()] == ["pending"] * 3
    for value, said in [  # a bad item named by its task, as Python names it (a multi-task user test)
        ("70,nan,2", "--value must hold finite numbers, got task 'yB''s value 'nan' in '70,nan,2'"),
        ("70,60,2x", "--value must be a number, got task 'imp''s value '2x' in '70,60,2x'"),
        ("70,60", "--value must be 3 numbers (yA, yB, imp) separated by commas, got '70,60'"),
    ]:
        bad = invoke("observe", "--storage", "plate.db", "--trial", 1, "--value", value)
        assert bad.exit_code == 1 and said in " ".join(bad.output.split()), bad.output
    assert invoke("observe", "--storage", "plate.db", "--trial", 1, "--value", "50,40,3").exit_code == 0
    again = invoke("suggest", "plate.db", "--tasks", "yA,yB,imp", "-n", 1)
    assert again.exit_code == 0 and len(wb.Study("plate.db").trials()) == 4, again.output
    for flags, said in [
        (
            ["--directions", "max,max,max"],
            "created with --directions max,max,min, not --directions max,max,max",
        ),
        (["--tasks", "yA,yB,imp", "--prior", "old.csv"], "--prior is for single-objective studies"),
    ]:
        refused = invoke("suggest", "plate.db", *flags)
        assert refused.exit_code == 1 and said in refused.output, refused.output
    single = invoke("suggest", "--space", "space.json", "--storage", "one.db", "-n", 1)
    assert single.exit_code == 0
    refused = invoke("suggest", "one.db", "--tasks", "a,b")
    assert refused.exit_code == 1 and "one.db holds a single-objective one" in refused.output
    assert invoke("suggest", "--storage", "none.db", "--tasks", "a,b").exit_code == 1


def test_a_task_named_like_a_parameter_is_exported_as_value_name(workdir):
    """A multi-task study with a task named like a parameter (accepted when made) exported as a whole
    with the task's column value_<name>, as History.to_dataframe names it; export refused the study
    ("a task is named like a parameter": multi-task user test)."""
    (workdir / "twomod.py").write_text("def f(p):\n    return [p['x'], p['x'] ** 2]\n")
    made = invoke("optimize", "twomod:f", "--space", "space.json", "--tasks", "x,lat", "--budget", 2,
                  "--storage", "named.db", "--seed", 0)  # fmt: skip
    assert made.exit_code == 0, made.output
    out = invoke("export", "--storage", "named.db", "--out", "named.csv")
    assert out.exit_code == 0, out.output
    rows = list(csv.DictReader(open(workdir / "named.csv")))
    assert [float(r["value_x"]) for r in rows] == [float(r["x"]) for r in rows]
    assert [float(r["lat"]) for r in rows] == pytest.approx([float(r["x"]) ** 2 for r in rows])
    status = invoke("status", "--storage", "named.db")
    assert status.exit_code == 0 and "value_x" in status.output, status.output
    frame = wb.MultiTaskOptimizer.load("named.db").history.to_dataframe()
    assert {"value_x", "lat", "x"} <= set(frame.columns)
    # one rule for the three: a parameter named value_time beside a task time (two columns of one
    # name in status, export refused, one column lost from to_dataframe: a review)
    space = wb.Space([wb.Float("time", 0.0, 1.0), wb.Float("value_time", 0.0, 1.0)])
    mt = wb.MultiTaskOptimizer(space, task_names=["time", "cost"], seed=0, storage=str(workdir / "vt.db"))
    mt.tell({"time": 0.5, "value_time": 0.25}, [1.0, 2.0])
    frame = mt.history.to_dataframe()
    assert list(frame["warmbo_value_time"]) == [1.0] and list(frame["value_time"]) == [0.25]
    out = invoke("export", "--storage", "vt.db", "--out", "vt.csv")
    assert out.exit_code == 0, out.output
    [row] = list(csv.DictReader(open(workdir / "vt.csv")))
    assert (row["warmbo_value_time"], row["value_time"], row["time"]) == ("1.0", "0.25", "0.5")
    status = invoke("status", "--storage", "vt.db")
    assert status.exit_code == 0 and "warmbo_valu" in status.output, status.output  # (rich may cut it)


def test_retry_pending_evaluates_the_trials_of_a_killed_run(workdir):
    (workdir / "slow.py").write_text(
        "import os, sys, time\nopen('child.pid', 'w').write(str(os.getpid()))\ntime.sleep(60)\n"
    )
    cmd = f"{sys.executable} slow.py {{x}} {{mode}}"
    run = subprocess.Popen(
        [sys.executable, "-m", "warmbo.cli", "optimize", "--cmd", cmd, "--space", "space.json",
         "--budget", "3", "--storage", "k.db", "--seed", "0"],  # fmt: skip
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=workdir,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not (workdir / "child.pid").exists() or not (workdir / "child.pid").read_text():
        assert time.monotonic() < deadline and run.poll() is None
        time.sleep(0.1)
    run.kill()
    run.wait()
    os.kill(int((workdir / "child.pid").read_text()), 9)  # in its own session: not killed with warmbo
    orphans = [t.id for t in wb.Study("k.db").trials(("pending",))]
    assert len(orphans) == 1
    plain = invoke("optimize", "objmod:f", "--budget", 2, "--storage", "k.db")
    assert plain.exit_code == 0 and [t.id for t in wb.Study("k.db").trials(("pending",))] == orphans
    retried = invoke("optimize", "objmod:f", "--budget", 4, "--storage", "k.db", "--retry-pending")
    assert retried.exit_code == 0, retried.output
    trials = wb.Study("k.db").trials()
    assert len(trials) == 4 and all(t.is_complete for t in trials)
    orphan = wb.Study("k.db").trial(orphans[0])
    assert orphan.value == pytest.approx((orphan.params["x"] - 0.5) ** 2 + (orphan.params["mode"] != "a"))


def test_clean_pending_marks_pending_trials_failed(workdir):
    invoke("optimize", "objmod:f", "--space", "space.json", "--budget", 2, "--storage", "c.db", "--seed", 0)
    invoke("suggest", "--storage", "c.db", "-n", 2)
    young = invoke("clean-pending", "c.db", "--older-than", 3600)
    assert young.exit_code == 0 and "no pending trial cleared" in young.output
    assert "kept pending: trial 3 (worker " in young.output and "under --older-than 3600 s" in young.output
    assert wb.Study("c.db").count("pending") == 2
    for bad in ("-1", "nan"):
        refused = invoke("clean-pending", "c.db", "--older-than", bad)
        assert (
            refused.exit_code == 1
            and f"--older-than must be a non-negative number of seconds, got {float(bad)!r}" in refused.output
        )
    both = invoke("clean-pending", "c.db", "--older-than", 0, "--all")
    assert both.exit_code == 1 and "give --older-than SECONDS or --all, not both" in both.output
    result = invoke("clean-pending", "c.db", "--all")
    assert result.exit_code == 0 and "marked 2 pending trial(s) failed: 3, 4" in result.output
    trials = wb.Study("c.db").trials()
    assert [t.state for t in trials] == ["complete", "complete", "failed", "failed"]
    assert all("cleared by warmbo clean-pending" in t.error for t in trials[2:])
    status = invoke("status", "--storage", "c.db")
    assert "2 complete, 0 pending, 2 failed" in status.output


def test_clean_pending_without_options_spares_a_colleagues_suggestion(workdir):
    # before: `warmbo clean-pending study.db` failed every pending trial, the experiments colleagues
    # were running from their suggestions included; now only the trials of runs that are gone
    opt = wb.Optimizer(wb.Space.from_dict(SPACE), seed=0, storage="lab.db")
    killed = opt.ask()  # a run's trial whose heartbeat stopped two minutes ago: the run was killed
    opt.study.heartbeat([killed.trial_id], now=time.time() - 120)
    invoke("suggest", "--storage", "lab.db")  # a colleague's experiment in progress: no heartbeat
    result = invoke("clean-pending", "lab.db")
    said = " ".join(result.output.split())
    assert result.exit_code == 0 and f"marked 1 pending trial(s) failed: {killed.trial_id}" in said
    # whose and how old, for those failed too (the line gave their ids only)
    assert re.search(
        rf"failed: trial {killed.trial_id} \(worker \S+@\S+:\d+\): its run's heartbeat stopped 2 min", said
    ), said
    # its age: 0 s, or 1-2 s on a loaded machine
    assert re.search(
        r"kept pending: trial 2 \(worker \S+\): a suggestion waiting for a result, \d+ s old", said
    ), said
    assert "give --older-than SECONDS (those older than that) or --all" in said
    assert [t.state for t in wb.Study("lab.db").trials()] == ["failed", "pending"]


def test_optimize_with_a_budget_the_study_already_holds_says_so_in_the_commands_words(workdir):
    # before: `warmbo optimize --budget 3` on a study of 4 trials printed the table and nothing else
    invoke("optimize", "objmod:f", "--space", "space.json", "--budget", 4, "--storage", "b.db", "--seed", 0)
    result = invoke("optimize", "objmod:f", "--budget", 3, "--storage", "b.db")
    said = " ".join(result.output.split())
    assert (
        result.exit_code == 0
        and "already holds 4: nothing was evaluated. For 3 more, give --budget 7" in said
    )
    assert "budget=" not in said and wb.Study("b.db").count("complete") == 4


def test_a_prior_of_100000_rows_completes_with_progress_and_can_be_removed(workdir):
    # before: 5,000 rows hung the first ask (> 590 s), 100,000 rows died with a MemoryError traceback
    # after the rows were committed. Now every row is stored in one transaction, the model sees at
    # most max_prior of them, and `warmbo prior remove` takes an import out again.
    rng = np.random.default_rng(0)
    x = rng.uniform(-2.0, 2.0, 100_000)
    mode = rng.choice(["a", "; touch pwned"], 100_000)
    y = (x - 0.5) ** 2 + (mode != "a")
    lines = "".join(f"{a:.6f},{m},{v:.6f}\n" for a, m, v in zip(x, mode, y, strict=True))
    (workdir / "big.csv").write_text("x,mode,y\n" + lines)
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "big.db", "--seed", 0)
    result = invoke(*args, "--budget", 2, "--prior", "big.csv", "--transfer", "none")  # own evaluations
    assert result.exit_code == 0, result.output
    assert "read and validated 100000 rows" in result.output
    assert "imported 100000 prior evaluations" in result.output
    trials = wb.Study("big.db").trials()
    assert len(trials) == 100_002 and sum(t.worker == "prior" for t in trials) == 100_000
    assert [t.state for t in trials[-2:]] == ["complete", "complete"]

    listed = invoke("prior", "list", "big.db")
    assert listed.exit_code == 0 and "100000" in listed.output
    assert invoke("prior", "remove", "big.db").exit_code == 1  # neither --tag nor --all
    removed = invoke("prior", "remove", "big.db", "--all")
    assert removed.exit_code == 0 and "removed 100000 prior rows" in removed.output
    left = wb.Study("big.db").trials()
    assert len(left) == 2 and all(t.worker != "prior" for t in left)
    assert invoke("status", "--storage", "big.db").exit_code == 0


def test_prior_remove_by_tag_keeps_other_imports(workdir):
    (workdir / "p1.csv").write_text("x,mode,y\n0.4,a,0.01\n-1.0,a,2.25\n")
    (workdir / "p2.csv").write_text("x,mode,y\n1.0,a,0.25\n")
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "t.db", "--seed", 0)
    args += ("--transfer", "none")
    assert invoke(*args, "--budget", 1, "--prior", "p1.csv").exit_code == 0  # own evaluations
    assert invoke(*args, "--budget", 2, "--prior", "p2.csv").exit_code == 0
    opt = wb.Optimizer.load("t.db")
    tags = opt.priors()
    assert sorted(r["rows"] for r in tags.values()) == [1, 2]
    tag = next(t for t, r in tags.items() if r["rows"] == 2)
    result = invoke("prior", "remove", "t.db", "--tag", tag)
    assert result.exit_code == 0 and "removed 2 prior rows" in result.output
    workers = [t.worker for t in wb.Study("t.db").trials()]
    assert workers.count("prior") == 1 and len(workers) == 3
    unknown = invoke("prior", "remove", "t.db", "--tag", "nope")
    assert unknown.exit_code == 1 and "no prior import tagged 'nope'" in unknown.output


def test_a_prior_file_that_grew_or_was_corrected_adds_only_its_new_rows(workdir):
    """Re-importing a spreadsheet after adding a row imported every earlier row again (its tag is the
    file's hash). Rows an earlier version already stored (same parameters and value, counted) are
    skipped now; a corrected row is new and the old one stays, which the output says, and 'prior
    remove --file' takes every version's rows out so the file can be imported afresh."""
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "t.db", "--seed", 0)
    args += ("--transfer", "none", "--budget", 0, "--prior", "lab.csv")
    (workdir / "lab.csv").write_text("x,mode,y\n0.4,a,0.01\n-1.0,a,2.25\n-1.0,a,2.25\n")
    assert invoke(*args).exit_code == 0

    def prior_rows():
        return sorted((t.params["x"], t.value) for t in wb.Study("t.db").trials() if t.worker == "prior")

    assert prior_rows() == [(-1.0, 2.25), (-1.0, 2.25), (0.4, 0.01)]
    with (workdir / "lab.csv").open("a") as f:
        f.write("1.0,a,0.25\n-1.0,a,2.25\n")  # one new point, and a third replicate of an old one
    grown = invoke(*args)
    assert grown.exit_code == 0, grown.output
    assert "imported 2 prior evaluations" in grown.output and "skipped 3 row(s)" in grown.output
    assert prior_rows() == [(-1.0, 2.25), (-1.0, 2.25), (-1.0, 2.25), (0.4, 0.01), (1.0, 0.25)]
    (workdir / "lab.csv").write_text("x,mode,y\n0.4,a,0.02\n-1.0,a,2.25\n")  # corrected, rows dropped
    corrected = invoke(*args)
    assert corrected.exit_code == 0, corrected.output
    assert "imported 1 prior evaluations" in corrected.output
    assert " ".join(corrected.output.split()).count("4 row(s) imported from an earlier version") == 1
    assert len(prior_rows()) == 6
    removed = invoke("prior", "remove", "t.db", "--file", "lab.csv")
    assert removed.exit_code == 0 and "removed 6 prior rows" in removed.output
    assert invoke(*args).exit_code == 0
    assert prior_rows() == [(-1.0, 2.25), (0.4, 0.02)]
    listing = "".join(invoke("prior", "list", "t.db").output.split())  # the path may be folded
    assert str(workdir / "lab.csv").replace(" ", "") in listing.replace("│", "")
    assert invoke("prior", "remove", "t.db", "--file", "other.csv").exit_code == 1


def test_a_prior_study_that_grew_adds_only_its_new_trials_and_is_listed_and_removed_by_its_file(workdir):
    # a user test: importing a prior study again after it had grown stored its earlier trials a
    # second time (its imports kept no source), 'prior list' showed "-" and 'prior remove --file
    # src.db' found no import of it
    source = wb.Optimizer(
        wb.Space([wb.Float("x", -2.0, 2.0), wb.Categorical("mode", ["a", "; touch pwned"])]), storage="src.db"
    )
    for x in (0.1, 0.7):
        source.tell({"x": x, "mode": "a"}, x**2)
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "t.db", "--seed", 0)
    args += ("--transfer", "none", "--budget", 0)

    def prior_rows():
        return sorted(t.params["x"] for t in wb.Study("t.db").trials() if t.worker == "prior")

    assert invoke(*args, "--prior", "src.db").exit_code == 0
    source.tell({"x": 1.5, "mode": "a"}, 2.25)
    grown = invoke(*args, "--prior", "sqlite:///src.db")  # (the same study, another spelling)
    assert grown.exit_code == 0, grown.output
    assert "imported 1 prior evaluations" in grown.output and "skipped 2 row(s)" in grown.output
    assert prior_rows() == [0.1, 0.7, 1.5]
    listing = "".join(invoke("prior", "list", "t.db").output.split()).replace("│", "")
    assert listing.count(str(workdir / "src.db").replace(" ", "")) == 2
    removed = invoke("prior", "remove", "t.db", "--file", "./src.db")
    assert removed.exit_code == 0 and "removed 3 prior rows" in removed.output
    assert prior_rows() == []


def test_prior_csv_options_read_a_semicolon_file_with_its_own_value_column(workdir):
    (workdir / "eu.csv").write_text("x;mode;loss\n0.4;a;0.01\n1.0;a;0.25\n")
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "t.db", "--seed", 0)
    args += ("--transfer", "none", "--budget", 0, "--prior", "eu.csv")
    plain = invoke(*args)
    assert plain.exit_code == 1 and "--prior-delimiter ';'" in " ".join(plain.output.split())
    assert invoke(*args, "--prior-delimiter", ";;").exit_code == 1
    result = invoke(*args, "--prior-delimiter", ";", "--prior-y", "loss")
    assert result.exit_code == 0, result.output
    assert sorted(t.value for t in wb.Study("t.db").trials()) == [0.01, 0.25]


def test_several_prior_files_imported_as_trials_each_once(workdir):
    (workdir / "p1.csv").write_text("x,mode,y\n0.4,a,0.01\n-1.0,a,2.25\n")
    (workdir / "p2.csv").write_text("x,mode,y\n1.0,a,0.25\n")
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "two.db", "--seed", 0)
    args += ("--prior", "p1.csv", "--prior", "p2.csv", "--transfer", "none")
    first = invoke(*args, "--budget", 2)
    assert first.exit_code == 0, first.output
    assert "imported 2 prior evaluations from p1.csv" in first.output
    assert "imported 1 prior evaluations from p2.csv" in first.output
    again = invoke(*args, "--budget", 3)
    assert again.exit_code == 0 and "p1.csv already imported" in again.output
    workers = [t.worker for t in wb.Study("two.db").trials()]
    assert workers.count("prior") == 3 and len(workers) == 6
    assert len(wb.Optimizer.load("two.db").priors()) == 2  # one tag per file


def test_a_prior_split_into_tasks_cannot_be_imported_as_trials_and_creates_nothing(workdir):
    (workdir / "tasks.csv").write_text("x,mode,y,ds\n0.4,a,0.01,one\n-1.0,a,2.25,two\n")
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "t4.db", "--budget", 2)
    result = invoke(*args, "--prior", "tasks.csv", "--task", "ds", "--transfer", "none")
    assert result.exit_code == 1 and "splits them into 2 tasks" in result.output
    assert not (workdir / "t4.db").exists()
    alone = invoke(*args, "--task", "ds")
    assert alone.exit_code == 1 and "--task names the source column" in alone.output
    assert not (workdir / "t4.db").exists()


@pytest.mark.parametrize("form", ["{}", "sqlite:///{}"])
def test_a_finished_study_is_a_prior_source(workdir, form):
    old = wb.Optimizer(wb.Space.from_dict(SPACE), seed=3, storage="old.db")
    for x in (-1.5, 0.45, 1.2, -0.2):
        old.tell({"x": x, "mode": "a"}, (x - 0.5) ** 2)
    old.study.close()
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "new.db", "--seed", 0)
    result = invoke(*args, "--budget", 2, "--prior", form.format("old.db"))
    assert result.exit_code == 0, result.output
    assert "transferring from 4 source evaluations" in result.output
    assert wb.Study("new.db").trials()[0].params["x"] == pytest.approx(0.45)  # the source's best first
    both = invoke(*args, "--budget", 3, "--prior", "old.db", "--task", "ds")
    assert both.exit_code == 1 and "a study is one source task" in both.output


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_stops_the_run_and_kills_its_commands(workdir, workers):
    # before: SIGTERM (timeout, docker stop, a batch scheduler) ended warmbo and left the running
    # commands alive, re-parented to init, because they run in their own session
    (workdir / "slow.py").write_text(
        "import os, sys, time\n"
        "open(f'child-{os.getpid()}.pid', 'w').write(str(os.getpid()))\ntime.sleep(60)\n"
    )
    cmd = f"{sys.executable} slow.py {{x}} {{mode}}"
    children = lambda: len([p for p in workdir.glob("child-*.pid") if p.read_text()])  # noqa: E731
    run = _started_run(workdir, 3, "term.db", workers, lambda: children() >= workers, ("--cmd", cmd))
    run.send_signal(signal.SIGTERM)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 143 and "stopped by SIGTERM" in err and "--retry-pending" in err
    # one line, not wrapped at 80 columns on a pipe (before: three lines)
    stopped = next(line for line in err.splitlines() if line.startswith("stopped by SIGTERM"))
    # withdrawing takes them out; clean-pending would mark them failed (it was offered as "drop them")
    assert "--retry-pending" in stopped and "--trial ID --withdraw`" in stopped, err
    assert "clean-pending` would mark them failed" in stopped, err
    for pid_file in workdir.glob("child-*.pid"):
        pid = int(pid_file.read_text())
        # killed with its process group, not orphaned (a killed child may stay a zombie for a moment,
        # until init reaps it: seen once under load 4)
        assert wait_until(lambda pid=pid: not alive(pid), 10), pid
    assert wb.Study("term.db").count("pending") == workers  # nothing lost: resumable


def test_a_closed_terminal_stops_the_run_and_kills_its_commands(workdir):
    # before: SIGHUP (the terminal closed, an ssh connection lost) ended warmbo at once and left its
    # commands running, orphaned (they run in sessions of their own, which the hangup does not reach):
    # a training job went on with nobody to record it, beside the one a --retry-pending started
    (workdir / "slow.py").write_text(
        "import os, sys, time\n"
        "open(f'child-{os.getpid()}.pid', 'w').write(str(os.getpid()))\ntime.sleep(60)\n"
    )
    cmd = f"{sys.executable} slow.py {{x}} {{mode}}"
    children = lambda: len([p for p in workdir.glob("child-*.pid") if p.read_text()])  # noqa: E731
    # the run inherits SIGHUP's disposition from this process: a test session started under nohup
    # (or `nohup .ci/run &`) ignores it, and warmbo then rightly keeps running (the run is meant to
    # outlive the terminal); this test is about a terminal that closes, so the run starts with the default
    previous = signal.signal(signal.SIGHUP, signal.SIG_DFL)
    try:
        run = _started_run(workdir, 3, "hup.db", 2, lambda: children() >= 2, ("--cmd", cmd))
    finally:
        signal.signal(signal.SIGHUP, previous)
    run.send_signal(signal.SIGHUP)
    try:
        _, err = run.communicate(timeout=60)
        assert run.returncode == 129 and "stopped by SIGHUP" in " ".join(err.split()), err
        for pid_file in workdir.glob("child-*.pid"):
            pid = int(pid_file.read_text())  # killed with its process group, not orphaned
            assert wait_until(lambda pid=pid: not alive(pid), 10), pid
    finally:
        if run.poll() is None:  # (a failed check must not leave the run starting more commands)
            run.kill()
            run.wait()
        for pid_file in workdir.glob("child-*.pid"):
            try:
                os.killpg(int(pid_file.read_text()), signal.SIGKILL)  # (what the old code left)
            except ProcessLookupError:
                pass
    assert wb.Study("hup.db").count("pending") == 2  # resumable with --retry-pending


def test_a_command_that_prints_bytes_that_are_not_utf8_still_reports_its_value(workdir):
    (workdir / "binary.py").write_text(
        "import sys\nsys.stderr.buffer.write(b'\\xff\\xfe progress\\n')\n"
        "sys.stdout.buffer.write(b'\\xff log\\n')\n"
        "sys.stdout.flush()\nprint(float(sys.argv[1]) ** 2)\n"
    )
    result = CommandObjective(f"{sys.executable} binary.py {{x}}", ("x",))({"x": 0.5})
    assert result == pytest.approx(0.25)


def test_a_run_sends_heartbeats_and_clean_pending_spares_a_live_evaluation(workdir, monkeypatch):
    # before: heartbeats only with heartbeat_grace (never from the CLI), so `status` showed a live
    # evaluation's age since it was suggested and `clean-pending --older-than` failed it
    monkeypatch.setattr(wb.optimizer, "HEARTBEAT_INTERVAL", 0.1)
    seen = {}

    def slow(params):
        study = wb.Study("hb.db")
        (trial,) = study.trials(("pending",))
        # wait (no timing asserted) until the trial is 1.5 s old and a new beat has just arrived
        last, deadline = study.last_beats()[trial.id], time.monotonic() + 60
        while time.monotonic() < deadline:
            beat = study.last_beats()[trial.id]
            if beat != last and beat - trial.created > 1.5:
                break
            last = beat
            time.sleep(0.02)
        seen["beat after creation"] = beat - trial.created
        seen["cleaned"] = invoke("clean-pending", "hb.db", "--older-than", 1.0).output
        return 1.0

    opt = wb.Optimizer(wb.Space.from_dict(SPACE), seed=0, storage="hb.db")
    opt.run(slow, budget=1, progress=False)
    assert seen["beat after creation"] > 1.5  # beats kept coming while the trial was evaluated
    assert "no pending trial cleared" in seen["cleaned"]
    assert (
        "kept pending: trial 1 (worker " in seen["cleaned"]
        and "its run's last heartbeat was" in seen["cleaned"]
        and "it may still be evaluating it" in seen["cleaned"]
    )
    assert [t.state for t in opt.history] == ["complete"]
    invoke("suggest", "--storage", "hb.db")  # a suggestion sends no heartbeat: its age counts
    time.sleep(1.1)
    assert "marked 1 pending trial(s) failed" in invoke("clean-pending", "hb.db", "--older-than", 1.0).output


def test_a_run_whose_first_evaluations_all_fail_the_same_way_stops(workdir):
    # before: a typo in --cmd spent the whole budget, filling the study with failed trials, and exited 0
    args = ("optimize", "--space", "space.json", "--budget", 20, "--storage", "typo.db", "--seed", 0)
    result = invoke(*args, "--cmd", "no_such_command_here {x}")
    assert result.exit_code == 1 and "the first 3 evaluations of this run all failed with" in result.output
    assert "command not found: 'no_such_command_here'" in result.output
    assert [t.state for t in wb.Study("typo.db").trials()] == ["failed"] * 3
    # failures that differ, or a success among the first three, do not stop a run
    (workdir / "flaky.py").write_text(
        "def f(p):\n    if p['x'] < 1.0:\n        raise ValueError(p['x'])\n    return 1.0\n"
    )
    assert invoke("optimize", "flaky:f", *args[1:5], "--storage", "flaky.db").exit_code == 0
    assert len(wb.Study("flaky.db").trials()) == 20
    # a module objective's bug: its file and line, and how to withdraw the failed trials (a user test)
    (workdir / "buggy.py").write_text("def f(p):\n    d = {}\n    return d['missing']\n")
    result = invoke("optimize", "buggy:f", *args[1:5], "--storage", "buggy.db")
    said = " ".join(result.output.split())
    assert result.exit_code == 1 and f"(raised at {workdir / 'buggy.py'}:3, in f)" in said, said
    assert "--trial ID --withdraw, for trials 1, 2, 3" in said
    # output that never parses stops too, though it quotes a different output each time (a user test:
    # `print(f"loss {x}")` spent the whole budget on failures and exited 0)
    for i, (command, refusal) in enumerate(
        [
            ("echo loss {x}", "the last line of the output must be a single number"),
            ("""echo '{{"value": "{x}"}}'""", 'the JSON value of "value"'),
            ("echo {{value: {x}}}", "is not valid JSON"),
        ]
    ):
        result = invoke(*args[:5], "--seed", 0, "--storage", f"unread{i}.db", "--cmd", command)
        assert result.exit_code == 1 and "the first 3 evaluations of this run all failed" in result.output
        assert refusal in result.output, result.output
        assert [t.state for t in wb.Study(f"unread{i}.db").trials()] == ["failed"] * 3
    result = invoke(*args[:5], "--storage", "regex.db", "--cmd", "echo acc={x}", "--value-regex", "acc=(.*)")
    assert result.exit_code == 0 and len(wb.Study("regex.db").trials()) == 20  # (a value each time)


def test_a_command_output_refusal_is_one_error_whatever_the_output():
    from warmbo.objective import output_refusal_kind

    kinds = set()
    for out in ("loss 0.1", "loss 0.2"):
        with pytest.raises(ObjectiveError) as error:
            parse_values(out + "\n")
        kinds.add(output_refusal_kind(str(error.value)))
    assert kinds == {
        "the last line of the output must be a single number; print the value last, or use --value-regex"
    }
    for out in ("acc=x1", "acc=x2"):
        with pytest.raises(ObjectiveError) as error:
            parse_values(out, (), re.compile(r"acc=(\S+)"))
        kinds.add(output_refusal_kind(str(error.value)))
    assert len(kinds) == 2
    assert output_refusal_kind("ValueError: diverged at step 37") == "ValueError: diverged at step 37"


def test_status_shows_whole_values_when_piped_and_audit_names_its_scale(workdir):
    # before: a table wider than 80 columns (piped output) had every cell cut to "0.3…"
    params = [{"type": "float", "name": f"parameter_{i}", "low": 0.0, "high": 1.0} for i in range(8)]
    space = {"params": params}
    (workdir / "wide.json").write_text(json.dumps(space))
    (workdir / "widemod.py").write_text("def f(p):\n    return sum((v - 0.3) ** 2 for v in p.values())\n")
    args = ("optimize", "widemod:f", "--space", "wide.json", "--storage", "wide.db", "--seed", 0)
    assert invoke(*args, "--budget", 12).exit_code == 0
    shown = invoke("status", "--storage", "wide.db", "--last", 2).output  # CliRunner: not a terminal
    assert "…" not in shown
    last = wb.Study("wide.db").trials()[-1]
    assert f"{last.params['parameter_7']:.6g}" in shown and "parameter_7" in shown
    audited = invoke("audit", "--storage", "wide.db").output
    assert "mean width (Yeo-Johnson scale)" in audited  # the default GP's widths are not in your units


def test_a_multi_task_best_line_says_utility_and_shows_the_task_values(workdir):
    (workdir / "twotask.py").write_text("def f(p):\n    return [p['x'], (p['x'] - 0.5) ** 2]\n")
    args = ("optimize", "twotask:f", "--space", "space.json", "--tasks", "a,b", "--directions", "max,min")
    result = invoke(*args, "--budget", 5, "--storage", "mt2.db", "--seed", 0)
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("best utility"))  # the last line
    assert " (a=" in line and ", b=" in line and " at x=" in line


def test_a_pending_trial_left_under_the_same_worker_name_does_not_block_the_first_failures_stop(workdir):
    # a restarted container has the same host:pid: the killed run's pending trial is not this run's
    from warmbo.cli import _run

    old = wb.Optimizer(wb.Space.from_dict(SPACE), seed=0, storage="same.db", worker="host:1")
    old.ask()

    def broken(params):
        raise RuntimeError("no GPU")

    again = wb.Optimizer(wb.Space.from_dict(SPACE), seed=0, storage="same.db", worker="host:1")
    with pytest.raises(RuntimeError, match="the first 3 evaluations of this run all failed"):
        _run(again, broken, budget=8, workers=1)
    assert [t.state for t in again.history] == ["pending", "failed", "failed", "failed"]


def test_fast_failures_do_not_stop_a_parallel_run_whose_first_trial_succeeds_slowly(workdir):
    # the first three trials *started* decide, not the first three to finish (--workers > 1)
    (workdir / "oom.py").write_text(
        "import time\ndef f(p):\n    if p['x'] < 0.5:\n        raise RuntimeError('out of memory')\n"
        "    time.sleep(0.4)\n    return p['x']\n"
    )
    x = {"type": "float", "name": "x", "low": 0, "high": 1}
    (workdir / "x.json").write_text(json.dumps({"params": [x]}))
    args = ("optimize", "oom:f", "--space", "x.json", "--storage", "oom.db", "--seed", 0, "--workers", 4)
    result = invoke(*args, "--budget", 8)
    assert result.exit_code == 0, result.output
    trials = wb.Study("oom.db").trials()
    assert trials[0].is_complete and trials[1].is_failed and trials[2].is_failed  # (seed 0's design)
    assert len(trials) == 8


def test_a_run_with_no_point_left_to_evaluate_is_an_error(workdir):
    a = {"type": "int", "name": "a", "low": 0, "high": 1}
    (workdir / "two.json").write_text(json.dumps({"params": [a]}))
    (workdir / "broken.py").write_text("def f(p):\n    raise RuntimeError(p['a'])\n")  # errors differ
    result = invoke("optimize", "broken:f", "--space", "two.json", "--storage", "two.db", "--budget", 10)
    assert result.exit_code == 1 and "run stopped before its budget" in result.output
    assert [t.state for t in wb.Study("two.db").trials()] == ["failed", "failed"]


def test_reproduce_help_lists_every_part_and_which_runs_write_report_html():
    """The help is built from the registry, whose part lists are the experiment modules' PARTS: it
    listed multitask's parts without 'horizon' and promised a report.html that multitask never wrote."""
    from warmbo.experiments import envelope, multitask

    result = runner.invoke(app, ["reproduce", "--help"], env={"COLUMNS": "400", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.output).split())
    assert f"multitask: {', '.join(multitask.PARTS)};" in text and "horizon" in multitask.PARTS
    assert f"envelope: {', '.join(envelope.PARTS)} (comma-separated too)" in text
    assert "report.html (multitask: no report.html)" in text
    from warmbo.experiments.registry import REPRODUCTIONS

    for name, entry in REPRODUCTIONS.items():  # the flag agrees with what each module says it writes
        assert entry.report_html is ("report.html" in entry._module().__doc__), name


def test_suggest_with_a_space_creates_a_study_for_experiments_run_by_hand(workdir):
    # before: suggest took no --space and no command created a study; the error said "create it
    # with a space first" without saying how
    missing = invoke("suggest", "--storage", "lab.db", "-n", 2)
    assert missing.exit_code == 1 and not Path("lab.db").exists()
    assert str(workdir / "lab.db") in missing.output  # the absolute path it looked at
    assert "warmbo suggest --space space.json --storage" in missing.output
    first = invoke("suggest", "--storage", "lab.db", "-n", 2, "--space", "space.json", "--maximize")
    assert first.exit_code == 0, first.output
    args = ("--space", "space.json", "--seed", 7, "--n-initial", 3, "--maximize")
    new = invoke("suggest", "--storage", "new.db", "-n", 2, *args, "--json")
    assert new.exit_code == 0, new.output
    assert [json.loads(line)["trial"] for line in new.stdout.strip().splitlines()] == [1, 2]
    study = wb.Study("new.db")
    assert study.settings["direction"] == "maximize" and study.settings["seed"] == 7
    assert study.settings["n_initial"] == 3 and study.count("pending") == 2
    # the same command again goes on with the study; the creation options must agree with it
    again = invoke("suggest", "--storage", "new.db", *args, "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["trial"] == 3
    before = study_rows("new.db")
    (workdir / "other.json").write_text(json.dumps({"params": SPACE["params"][:1]}))
    for option, message in [
        # (named: a user test read "only in other space" as the space file's)
        (("--space", "other.json"), "the study's second: parameter 'mode' only in the study"),
        (("--minimize",), "--minimize conflicts"),
        (("--seed", 8), "keeps the seed it was created with (7)"),
        (("--n-initial", 5), "keeps the design size it was created with (3)"),
    ]:
        refused = invoke("suggest", "--storage", "new.db", *option)
        assert refused.exit_code == 1 and message in refused.output, refused.output
    assert study_rows("new.db") == before  # nothing asked, nothing lost
    # a new space: how to start a study of it from this one's trials (a user test was told only to
    # leave --space out or give another --storage)
    advice = " ".join(invoke("suggest", "--storage", "new.db", "--space", "other.json").output.split())
    assert (
        "start a new study from it: warmbo suggest --storage NEW.db --space SPACE.json --prior new.db"
        in advice
    )


def test_observe_params_records_an_experiment_the_tool_did_not_suggest(workdir):
    # before: observe needed --trial, so a hand-chosen experiment could not be recorded
    assert invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 2).exit_code == 0
    suggested = wb.Study("lab.db").trial(2).params
    new = invoke("observe", "--storage", "lab.db", "--params", '{"x": 0.5, "mode": "a"}', "--value", "1.5")
    said = " ".join(new.output.split())
    assert new.exit_code == 0 and "trial 3: value 1.5 stored (a new trial: no pending suggestion" in said
    assert "pending: trial(s) 1, 2" in said
    assert wb.Study("lab.db").trial(3).params == {"x": 0.5, "mode": "a"}
    # the nearest pending suggestion, which an experiment run at other settings likely replaced
    space = wb.Study("lab.db").space
    typed = space.encode([{"x": 0.5, "mode": "a"}])
    gaps = [np.max(np.abs(space.encode([wb.Study("lab.db").trial(i).params]) - typed)) for i in (1, 2)]
    nearest = 1 + int(np.argmin(gaps))  # (max-norm in the encoded cube, as the command measures)
    assert f"the nearest is trial {nearest} at" in said
    assert f"--trial {nearest} --withdraw --note 'run at other settings: trial 3'" in said  # (the new one)
    # the settings of a pending suggestion complete it
    same = invoke("observe", "--storage", "lab.db", "--params", json.dumps(suggested), "--value", "2")
    assert same.exit_code == 0 and "suggested at these settings as trial 2" in same.output
    failed = invoke("observe", "--storage", "lab.db", "--params", '{"x": -1, "mode": "a"}', "--failed")
    assert failed.exit_code == 0 and "trial 4 marked failed" in failed.output
    before = study_rows("lab.db")
    other = json.dumps({"x": 1.25, "mode": "a"})
    for args, message in [
        (("--trial", 1, "--params", other, "--value", "1"), "a trial's settings cannot be changed"),
        (("--params", '{"x": 0.5}', "--value", "1"), "--params: give a value for mode too"),
        (("--params", "{x: 0.5}", "--value", "1"), "must be a JSON object"),
        (("--params", '{"x": 9, "mode": "a"}', "--value", "1"), "outside"),
        # before: the last of the two x values was stored, with no word
        (("--params", '{"x": 0.1, "mode": "a", "x": 0.2}', "--value", "1"), "key 'x' appears twice"),
        (
            (
                "--value",
                "1",
            ),
            "--trial ID",
        ),
    ]:
        refused = invoke("observe", "--storage", "lab.db", *args)
        assert refused.exit_code == 1 and message in refused.output, refused.output
    assert study_rows("lab.db") == before


#: Python's words that a message to a person typing JSON must not hold
PYTHON_WORDS = re.compile(
    r"\['|of type|NoneType|\bNone\b|\bTrue\b|\bstr\b|\bbool\b|mapping|sequence|float64|< high"
)


@pytest.mark.parametrize(
    "params, message",
    [
        ('{"x": 0.5}', "give a value for mode too (every parameter: x, mode)"),
        (
            '{"X": 0.5, "mode": "a"}',
            "the study has no parameter X (did you mean x?); its parameters are x, mode",
        ),
        ('{"x": "0.5", "mode": "a"}', 'x must be a number, got "0.5" (written without quotes)'),
        ('{"x": null, "mode": "a"}', "x must be a number, got null"),
        ('{"x": true, "mode": "a"}', "x must be a number, got true"),
        ('{"x": [0.5], "mode": "a"}', "x must be a number, got [0.5]"),
        (
            '{"x": 1e999, "mode": "a"}',
            "x must be a finite number, got Infinity (a number beyond about 1.8e308",
        ),
        ('{"x": 9, "mode": "a"}', "x = 9 is outside its range, -2 to 2"),
        ('{"x": 0.5, "mode": "b"}', 'mode must be one of "a", "; touch pwned", got "b"'),
        ('{"x": 0.5, "mode": 3}', 'mode must be one of "a", "; touch pwned", got 3'),
    ],
)
def test_params_errors_are_in_the_words_typed(workdir, params, message):
    # before: --params: missing parameter(s) ['mode'] in point {'x': 0.5}; parameter 'x': expected a real
    # number, got '0.5' of type str; unknown category 'b'; choices are ('a', '; touch pwned')
    invoke("suggest", "--storage", "lab.db", "--space", "space.json")
    refused = invoke("observe", "--storage", "lab.db", "--params", params, "--value", 1)
    said = " ".join(refused.output.split())
    assert refused.exit_code == 1 and f"error: --params: {message}" in said, said
    assert not PYTHON_WORDS.search(said), said
    # an experiment outside the space: how to keep it (a study that reads this one's trials)
    keeps = "warmbo suggest --space WIDER.json --storage NEW.db --prior THIS.db --transfer none"
    assert (keeps in said) == ("outside its range" in message), said


def test_int_params_errors_are_in_the_words_typed(workdir):
    space = {"params": [{"type": "int", "name": "rpm", "low": 100, "high": 1000}]}
    Path("rpm.json").write_text(json.dumps(space))
    invoke("suggest", "--storage", "rpm.db", "--space", "rpm.json")
    for params, message in [
        ('{"rpm": 200.5}', "rpm must be a whole number, got 200.5"),
        ('{"rpm": "200"}', 'rpm must be a whole number, got "200" (written without quotes)'),
        ('{"rpm": 2000}', "rpm = 2000 is outside its range, 100 to 1000"),
    ]:
        refused = invoke("observe", "--storage", "rpm.db", "--params", params, "--value", 1)
        said = " ".join(refused.output.split())
        assert refused.exit_code == 1 and f"error: --params: {message}" in said, said
        assert not PYTHON_WORDS.search(said), said
    assert invoke("observe", "--storage", "rpm.db", "--params", '{"rpm": 200.0}', "--value", 1).exit_code == 0


@pytest.mark.parametrize(
    "space, message",
    [
        (
            [{"type": "float", "name": "a", "low": "0", "high": 1}],
            'parameter a: low must be a number, got "0" (written',
        ),
        (
            [{"type": "float", "name": "a", "low": 0, "high": None}],
            "parameter a: high must be a number, got null",
        ),
        (
            [{"type": "float", "name": "a", "low": 0, "high": 1, "log": "yes"}],
            'log must be true or false, got "yes"',
        ),
        (
            [{"type": "int", "name": "a", "low": 0.5, "high": 3}],
            "low of an int parameter must be a whole number, got 0.5",
        ),
        (
            [{"type": "floaty", "name": "a"}],
            'parameter a: "type" must be "float", "int" or "categorical", got "floaty"',
        ),
        (
            [{"name": "a", "low": 0, "high": 1}],
            'parameter a: "type" must be "float", "int" or "categorical", got none',
        ),
        (
            [{"type": ["float"], "name": "a"}],
            'parameter a: "type" must be "float", "int" or "categorical", got ["float"]',
        ),
        (
            [{"type": "float", "name": "a", "low": 0, "high": 1, "lo": 3}],
            "a float parameter has no key lo (did you",
        ),
        (
            [{"type": "float", "name": "a", "low": 0}],
            "parameter a: give high too (a float parameter needs name, low, high)",
        ),
        (
            [{"type": "float", "low": 0, "high": 1}],
            'parameter 1 needs a "name": a text such as "temp_C", got none',
        ),
        (
            [{"type": "float", "name": 3, "low": 0, "high": 1}],
            'parameter 1 needs a "name": a text such as "temp_C", got 3',
        ),
        (["a"], 'parameter 1 must be an object such as {"type": "float"'),
        ([], "no parameter in it: list at least one"),
        (
            [{"type": "categorical", "name": "a", "choices": "ab"}],
            'choices must be a list such as ["Pd", "Pt"], got "ab"',
        ),
        (
            [{"type": "categorical", "name": "a", "choices": ["x", None]}],
            "choice null is not a text, number, true or",
        ),
        (
            [{"type": "categorical", "name": "a", "choices": []}],
            "parameter a: choices must list at least one choice",
        ),
        ([{"type": "float", "name": "a", "low": 1, "high": 0}], "parameter a: low 1 must be below high 0"),
        (
            [{"type": "float", "name": "a", "low": 1, "high": 1}],
            'or make it {"type": "categorical", "name": "a", "choices": [1]}',
        ),
        (
            [{"type": "int", "name": "a", "low": 1, "high": 2}] * 2,
            "two parameters are named a: give each its own name",
        ),
        (
            {"params": [{"type": "float", "name": "a", "low": 0, "high": 1}], "extra": 1},
            'unknown key(s) extra; a space file holds "params" (and "candidate_points")',
        ),
        (
            {"params": [{"type": "float", "name": "a", "low": 0, "high": 1}], "candidate_points": [[1, 2]]},
            "candidate_points must be a list of points, each a list of 1 number(s) (one per parameter, in",
        ),
    ],
)
def test_space_file_errors_are_in_the_words_of_the_file(workdir, space, message):
    # before: parameter 'a': low must be a real number, got '0'; log must be a bool; missing key(s)
    # ['high'] for type 'float'; parameter None: ...; a Space needs at least one parameter, got an
    # empty sequence; choice None of type NoneType is not a str, ...; ... cannot be converted to float64
    Path("bad.json").write_text(json.dumps(space))
    refused = invoke("suggest", "--storage", "bad.db", "--space", "bad.json")
    said = " ".join(refused.output.split())
    assert refused.exit_code == 1 and said.startswith("error: space file 'bad.json': ") and message in said, (
        said
    )
    assert not PYTHON_WORDS.search(said), said
    assert not Path("bad.db").exists()


def test_observe_params_typed_as_printed_completes_the_pending_suggestion(workdir):
    # before: settings copied from what suggest/status printed (rounded to 6 digits) recorded a new
    # trial, and the suggestion stayed pending without a word
    study = wb.Study("lab.db", space=wb.Space.from_dict(SPACE))
    first = study.add_trial({"x": 0.123456789, "mode": "a"}).id
    second = study.add_trial({"x": 0.123457111, "mode": "a"}).id  # prints as 0.123457 too
    third = study.add_trial({"x": -1.23456789, "mode": "a"}).id
    shown = invoke("status", "--storage", "lab.db")
    assert "-1.23457" in shown.output and "0.123457" in shown.output, shown.output
    done = invoke(
        "observe", "--storage", "lab.db", "--params", '{"x": -1.23457, "mode": "a"}', "--value", "4"
    )
    said = " ".join(done.output.split())
    assert (
        done.exit_code == 0
        and f"trial {third}: value 4 stored (suggested as trial {third} at x=-1.23457" in said
    )
    assert wb.Study("lab.db").trial(third).params == {"x": -1.23456789, "mode": "a"}
    # two pending suggestions that print alike: refused, naming both and the --trial form
    before = study_rows("lab.db")
    both = invoke(
        "observe", "--storage", "lab.db", "--params", '{"x": 0.123457, "mode": "a"}', "--value", "4"
    )
    said = " ".join(both.output.split())
    assert both.exit_code == 1 and "match 2 pending suggestions to the digits shown" in said, said
    assert f"trial {first} at x=0.123457, mode=a; trial {second} at x=0.123457" in said
    assert f"warmbo observe --storage lab.db --trial {first} --value V" in said
    assert study_rows("lab.db") == before
    # more digits tell them apart; --trial with the settings as printed is taken too
    typed = '{"x": 0.1234568, "mode": "a"}'
    assert invoke("observe", "--storage", "lab.db", "--params", typed, "--failed").exit_code == 0
    assert wb.Study("lab.db").trial(first).is_failed
    again = invoke(
        "observe",
        "--storage",
        "lab.db",
        "--trial",
        second,
        "--params",
        '{"x": 0.123457, "mode": "a"}',
        "--value",
        5,
    )
    assert again.exit_code == 0 and wb.Study("lab.db").trial(second).value == 5.0, again.output
    # a setting chosen by hand, coarser than printed, is a new trial, as typed
    study.add_trial({"x": 0.5000123, "mode": "a"})
    hand = invoke("observe", "--storage", "lab.db", "--params", '{"x": 0.5, "mode": "a"}', "--value", "6")
    assert hand.exit_code == 0 and "(a new trial: no pending suggestion" in hand.output, hand.output
    assert wb.Study("lab.db").trial(5).params == {"x": 0.5, "mode": "a"}


def test_status_gives_the_models_estimate_beside_a_lucky_best_measurement(workdir):
    # before: status named only the best single measurement, 12.0 at x = 0.8, where the objective is
    # 6.4 (four repeats there read 6-7), and nothing said what the model, which pools every trial,
    # estimates there or where it puts the best setting (x = 0.5, objective 10)
    rng = np.random.default_rng(0)
    opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), maximize=True, storage="noisy.db", seed=0)
    f = lambda x: 10.0 - 40.0 * (x - 0.5) ** 2  # noqa: E731
    for x in np.linspace(0.0, 1.0, 21):
        opt.tell({"x": float(x)}, f(x) + 0.5 * rng.standard_normal())
    opt.tell({"x": 0.8}, 12.0)  # the lucky draw
    for _ in range(4):
        opt.tell({"x": 0.8}, f(0.8) + 0.5 * rng.standard_normal())
    out = invoke("status", "--storage", "noisy.db")
    assert out.exit_code == 0, out.output
    assert "best 12 at x=0.8" in out.output
    line = re.search(
        r"model's estimate there: (\S+) \(sd (\S+)\); highest estimate: (\S+) \(sd \S+\) at trial (\d+), "
        r"x=(\S+)\n",
        out.output,
    )
    assert line is not None, out.output
    there, sd, top, x_top = float(line[1]), float(line[2]), float(line[3]), float(line[5])
    assert 6.0 < there < 9.0 and 0.0 < sd < 2.0  # pooled with the repeats, far below the lucky 12
    assert abs(x_top - 0.5) <= 0.1 and 9.0 < top < 11.0
    assert wb.Study("noisy.db").trial(int(line[4])).params == {"x": x_top}


def test_a_second_value_for_a_trial_says_how_to_record_a_repeated_measurement(workdir):
    # before: the refusal named --amend only, so a noisy measurement repeated at the same settings
    # was recorded by overwriting the first one instead of as a trial of its own
    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 1)
    assert invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", "55.2").exit_code == 0
    again = invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", "52.5")
    assert again.exit_code == 1 and "repeated measurement" in again.output, again.output
    hint = re.search(r"--params '(\{.*?\})'", again.output)
    assert hint is not None, again.output
    replicate = invoke("observe", "--storage", "lab.db", "--params", hint.group(1), "--value", "52.5")
    assert replicate.exit_code == 0 and "a new trial" in replicate.output, replicate.output
    study = wb.Study("lab.db")
    assert [(t.id, t.value) for t in study.trials()] == [(1, 55.2), (2, 52.5)]
    assert study.trial(2).params == study.trial(1).params


def test_observe_amend_corrects_a_recorded_value_and_keeps_the_earlier_one(workdir):
    # before: a wrongly recorded value could never be fixed ("already complete")
    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 2)
    assert invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", "55.2").exit_code == 0
    # the same value reported again (two people): nothing changes, and it is not an error, as for
    # Optimizer.tell (a walk-through: the command failed with "already complete")
    twice = invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", "55.2")
    assert twice.exit_code == 0 and "trial 1 already holds value 55.2: nothing changed" in twice.output
    again = invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", "52.5")
    assert again.exit_code == 1 and "already complete (value 55.2)" in again.output
    assert "--amend" in again.output
    fixed = invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", "52.5", "--amend")
    assert fixed.exit_code == 0 and "was value 55.2" in fixed.output, fixed.output
    study = wb.Study("lab.db")
    assert study.trial(1).value == 52.5
    args = ("observe", "--storage", "lab.db", "--trial", 1, "--failed", "--amend", "--note", "contaminated")
    assert invoke(*args).exit_code == 0
    trial = study.trial(1)
    assert trial.is_failed and "52.5" in trial.error and "contaminated" in trial.error
    record = json.loads(study.get_meta("amended:1"))
    assert [r["value"] for r in record] == [55.2, 52.5] and record[1]["note"] == "contaminated"
    pending = invoke("observe", "--storage", "lab.db", "--trial", 2, "--value", "1", "--amend")
    assert pending.exit_code == 1 and "pending, not complete" in pending.output
    assert study.trial(2).is_pending


@pytest.mark.parametrize(
    "value, message",
    [
        ("4_2", "without underscores"),
        ("52,1", "use a decimal point"),
        ("\u0664\u0662", "digits 0-9"),  # Arabic-Indic 42, which float() reads
        ("0x2A", "digits 0-9"),
        ("infinity", "report a failed experiment with --failed"),
    ],
)
def test_observe_takes_plain_numerals_only(workdir, value, message):
    # before: float() read '4_2' and '٤٢' as 42 and stored it
    invoke("suggest", "--storage", "lab.db", "--space", "space.json")
    result = invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", value)
    assert result.exit_code == 1 and message in result.output, result.output
    assert wb.Study("lab.db").trial(1).is_pending


def test_export_writes_every_trial_and_its_complete_rows_import_as_prior_data(workdir, monkeypatch):
    monkeypatch.setenv("WARMBO_USER", "ana")  # (who corrected a value is kept with it)
    # before: there was no way to take a study's trials to a spreadsheet
    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 3, "--seed", 0)
    invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", "0.5")
    invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", "0.25", "--amend", "--note", "misread")
    invoke("observe", "--storage", "lab.db", "--trial", 2, "--failed")
    result = invoke("export", "--storage", "lab.db", "--out", "trials.csv")
    assert result.exit_code == 0 and "wrote 3 trials" in result.output, result.output
    import csv

    rows = list(csv.DictReader(open("trials.csv", encoding="utf-8")))
    header = [
        "trial",
        "state",
        "x",
        "mode",
        "y",
        "worker",
        "created",
        "completed",
        "error",
        "amended",
        "note",
    ]
    assert list(rows[0]) == header
    assert rows[0]["amended"] == "amended, was value 0.5 (misread; by ana)" and rows[1]["amended"] == ""
    stored = wb.Study("lab.db").trials()
    assert [(r["trial"], r["state"]) for r in rows] == [("1", "complete"), ("2", "failed"), ("3", "pending")]
    assert float(rows[0]["x"]) == stored[0].params["x"] and rows[0]["y"] == "0.25"
    assert rows[1]["y"] == "" and rows[1]["error"] == "reported failed" and rows[2]["completed"] == ""
    assert rows[0]["created"].startswith(time.strftime("%Y-"))
    again = invoke("export", "--storage", "lab.db", "--out", "trials.csv")
    assert again.exit_code == 1 and "--force" in again.output  # an existing file is not replaced
    done = invoke("export", "--storage", "lab.db", "--out", "trials.csv", "--complete", "--force")
    assert done.exit_code == 0 and "wrote 1 trial to" in done.output  # (before: "wrote 1 trials")
    # the complete rows are prior data for a new study, read back exactly
    args = ("--space", "space.json", "--storage", "new.db", "--prior", "trials.csv", "--transfer", "none")
    assert invoke("optimize", "objmod:f", *args, "--budget", 0).exit_code == 0
    imported = wb.Study("new.db").trials()
    assert [(t.params, t.value) for t in imported] == [(stored[0].params, 0.25)]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_suggest_stopped_by_sigterm_or_sighup_stores_no_suggestion(workdir, sig):
    # before: the signal ended the process at once, and the points ask(n) had stored so far stayed
    # pending, shown to nobody
    opt = wb.Optimizer(
        wb.Space.box([(0.0, 1.0), (0.0, 1.0)]), storage=str(workdir / "big.db"), seed=0, n_initial=4
    )
    opt.run(lambda p: (p["x0"] - 0.3) ** 2 + p["x1"], budget=8, progress=False)
    run = subprocess.Popen(
        [sys.executable, "-m", "warmbo.cli", "suggest", "--storage", "big.db", "-n", "100000"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=workdir, text=True,
    )  # fmt: skip
    study = wb.Study(str(workdir / "big.db"), readonly=True)
    deadline = time.monotonic() + 120
    while study.count("pending") == 0:  # the ask is under way: it has stored a point
        assert time.monotonic() < deadline and run.poll() is None
        time.sleep(0.02)
    run.send_signal(sig)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 128 + sig, err
    assert f"stopped by {signal.Signals(sig).name}: no suggestion was stored" in err
    assert study.count("pending") == 0 and study.count("complete") == 8


def test_suggest_stops_on_a_signal_whose_exception_python_dropped(workdir, monkeypatch):
    """A signal landing in a callback inside a C extension (scipy loading Sobol direction numbers):
    Python prints "Exception ignored" and drops the handler's exception, the ask finished, and the
    command printed and stored every point with SIGTERM ignored from then on (a reviewer saw it twice
    in 70 kills). The handler's record now decides: the stored points are removed and the exit is
    143, and the signal handlers are restored."""
    assert invoke("suggest", "--space", "space.json", "--storage", "lab.db").exit_code == 0
    real_ask = wb.Optimizer.ask

    def ask_that_swallows(self, n=None):
        out = real_ask(self, n)
        try:
            os.kill(os.getpid(), signal.SIGTERM)  # the handler runs here and raises ...
            time.sleep(1.0)
        except KeyboardInterrupt:
            pass  # ... and the exception is lost, as in a C callback
        return out

    monkeypatch.setattr(wb.Optimizer, "ask", ask_that_swallows)
    before = signal.getsignal(signal.SIGTERM)
    result = invoke("suggest", "--storage", "lab.db", "-n", 3)
    assert result.exit_code == 143, result.output
    assert "stopped by SIGTERM: no suggestion was stored" in result.output
    assert wb.Study("lab.db").count("pending") == 1  # the first suggest's point only
    assert signal.getsignal(signal.SIGTERM) == before


def test_a_study_with_a_python_model_gets_a_command_line_note_not_python_advice(workdir):
    from warmbo.kernels import RBF

    opt = wb.Optimizer(wb.Space.box([(0.0, 1.0)]), model=wb.GP(RBF(0.2), noise=1e-4), storage="py.db", seed=0)
    opt.tell({"x0": 0.5}, 1.0)
    result = invoke("status", "--storage", "py.db")
    text = " ".join(result.output.split())
    assert result.exit_code == 0 and "cannot rebuild (model= (stored as GP(kernel=RBF" in text
    assert "this command uses warmbo's defaults" in text and "pass model= to load()" not in text


def test_suggest_with_a_space_creates_the_study_in_an_empty_file(workdir):
    # before: a file made with `touch` counted as an existing study, and the error for it said to run
    # the very command that had just failed
    (workdir / "lab.db").touch()
    failed = invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", 3)
    assert failed.exit_code == 1 and "no study" in failed.output
    assert (workdir / "lab.db").stat().st_size > 0  # a database header, and no tables: still no study
    result = invoke("suggest", "--space", "space.json", "--storage", "lab.db")
    assert result.exit_code == 0, result.output
    assert wb.Study("lab.db").count("pending") == 1


def test_export_renames_a_fixed_column_a_parameter_already_has(workdir):
    """A space with a parameter named y (common for (x, y) problems) or state could not be exported at
    all; the fixed columns give way now, and the output names the values column for --prior-y."""
    space = {"params": [{"type": "float", "name": n, "low": 0.0, "high": 1.0} for n in ("x", "y", "state")]}
    (workdir / "xy.json").write_text(json.dumps(space))
    assert invoke("suggest", "--space", "xy.json", "--storage", "xy.db").exit_code == 0
    assert invoke("observe", "--storage", "xy.db", "--trial", 1, "--value", "0.5").exit_code == 0
    result = invoke("export", "--storage", "xy.db", "--out", "xy.csv", "--complete")
    assert result.exit_code == 0, result.output
    assert "--prior-y value" in result.output
    header = (workdir / "xy.csv").read_text().splitlines()[0].split(",")
    assert header[:6] == ["trial", "warmbo_state", "x", "y", "state", "value"]
    args = ("optimize", "--cmd", "false", "--space", "xy.json", "--storage", "back.db", "--budget", 0)
    back = invoke(*args, "--prior", "xy.csv", "--prior-y", "value", "--transfer", "none")
    assert back.exit_code == 0, back.output
    assert [t.value for t in wb.Study("back.db").trials()] == [0.5]
    unwritable = invoke("export", "--storage", "xy.db", "--out", "missing-folder/xy.csv")
    assert unwritable.exit_code == 1 and "cannot write missing-folder/xy.csv" in unwritable.output


def test_status_of_a_large_study_is_quick_and_says_what_it_left_out(workdir, monkeypatch):
    """status printed every trial and fitted the model for its audit line at any size (a walkthrough:
    5009 lines and 60 s at 5000 trials, over 2 minutes and 6 GB at 20000). Above STATUS_ROWS trials it
    lists the last 50 and says so; above STATUS_AUDIT_MAX complete trials it names warmbo audit
    instead of fitting."""
    from warmbo import cli

    opt = wb.Optimizer(wb.Space.box([(0.0, 1.0)] * 2), storage="big.db", seed=0)
    rng = np.random.default_rng(0)
    with opt.study.transaction():
        for x in rng.random((cli.STATUS_AUDIT_MAX["single"] + 1, 2)):
            opt.tell({"x0": float(x[0]), "x1": float(x[1])}, float(x.sum()))
    fitted = []
    real_fit = wb.Optimizer.fit_model
    monkeypatch.setattr(
        wb.Optimizer, "fit_model", lambda self, *a, **k: fitted.append(1) or real_fit(self, *a, **k)
    )
    result = invoke("status", "--storage", "big.db")
    text = " ".join(result.output.split())
    assert result.exit_code == 0 and fitted == []
    assert "(the last 50 of 1001 trials; --last N or --all shows more)" in text
    assert "warmbo audit --storage big.db runs it" in text
    rows = [line for line in result.output.splitlines() if line.startswith("│")]
    assert len(rows) == 50
    every = invoke("status", "--storage", "big.db", "--all")
    assert len([line for line in every.output.splitlines() if line.startswith("│")]) == 1001


def test_status_audits_a_multitask_study_in_closed_form_up_to_the_single_task_limit(workdir, monkeypatch):
    """A multi-task study's audit refitted the model per held-out trial, so status stopped auditing
    above 300 complete trials; in closed form it fits once and goes as far as a single-task study.
    A model without the closed form (task_similarity="uniform") keeps the lower limit."""
    from warmbo import cli

    space = wb.Space.box([(0.0, 1.0)] * 2)
    n = cli.STATUS_AUDIT_MAX["multi-task refit"] + 1
    assert cli.STATUS_AUDIT_MAX["multi-task"] == cli.STATUS_AUDIT_MAX["single"] > n
    rng = np.random.default_rng(0)
    X = rng.random((n, 2))
    Y = np.c_[np.sin(4 * X[:, 0]), 100 * X.sum(axis=1)] + 0.1 * rng.standard_normal((n, 2))
    for name, similarity in (("mt.db", "estimate"), ("uniform.db", "uniform")):
        opt = wb.MultiTaskOptimizer(space, n_tasks=2, storage=name, seed=0, task_similarity=similarity)
        opt.add_prior((X, Y))
    fitted = []
    real_fit = wb.MultiTaskOptimizer.fit_model
    monkeypatch.setattr(
        wb.MultiTaskOptimizer,
        "fit_model",
        lambda self, *a, **k: fitted.append(1) or real_fit(self, *a, **k),
    )
    text = " ".join(invoke("status", "--storage", "mt.db").output.split())
    assert "f0: 95% intervals cover" in text and f"(n = {n})" in text and fitted == [1]
    text = " ".join(invoke("status", "--storage", "uniform.db").output.split())
    assert "audit: not run by status" in text and "warmbo audit --storage uniform.db runs it" in text


def test_max_trials_on_the_command_line(workdir):
    assert (
        invoke("suggest", "--space", "space.json", "--storage", "lab.db", "--max-trials", 50).exit_code == 0
    )
    assert invoke("suggest", "--storage", "lab.db", "--max-trials", 1).exit_code == 2  # at least 2
    args = ("optimize", "--cmd", "false", "--space", "space.json", "--storage", "mt.db", "--budget", 0)
    refused = invoke(*args, "--tasks", "a,b", "--max-trials", 50)
    assert refused.exit_code == 1 and "--max-trials is for single-objective studies" in refused.output


def test_a_run_that_leaves_places_to_other_workers_says_so(workdir):
    """Runs sharing a study leave budget places to other workers' live evaluations; a killed worker's
    trial beats fresh for 30 s, and the run ended one short with exit 0 and nothing said (a review)."""
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "t.db", "--seed", 0)
    assert invoke(*args, "--budget", 3).exit_code == 0
    elsewhere = wb.Optimizer.load("t.db")
    elsewhere.worker = "gone"
    pending = elsewhere.ask()
    elsewhere.study.heartbeat([pending.trial_id])
    result = invoke(*args, "--budget", 4)
    text = " ".join(result.output.split())
    assert result.exit_code == 0 and "stopped at 3 of 4 finished trials: 1 evaluation(s) in flight" in text
    assert "--retry-pending" in text
    quiet = invoke(*args, "--budget", 3)
    assert "stopped at" not in quiet.output


def test_status_notes_why_a_trial_failed_and_what_an_amended_one_held(workdir, monkeypatch):
    monkeypatch.setenv("WARMBO_USER", "ana")  # (who corrected a value is kept with it)
    # before: --note was refused with --failed, and status showed neither the reason of a failure
    # nor that a value had been corrected (the earlier value was only in the study's meta table)
    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 3)
    plain = invoke("status", "--storage", "lab.db")
    assert plain.exit_code == 0 and "note" not in plain.output  # no empty column
    assert invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", "55.2").exit_code == 0
    assert invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", "52.5", "--amend").exit_code == 0
    failed = invoke("observe", "--storage", "lab.db", "--trial", 2, "--failed", "--note", "pump stopped")
    assert failed.exit_code == 0 and "trial 2 marked failed: pump stopped" in failed.output
    assert wb.Study("lab.db").trial(2).error == "pump stopped"
    assert invoke("observe", "--storage", "lab.db", "--trial", 3, "--value", "4").exit_code == 0
    args = ("observe", "--storage", "lab.db", "--trial", 3, "--failed", "--amend", "--note", "contaminated")
    assert invoke(*args).exit_code == 0
    status = invoke("status", "--storage", "lab.db")
    assert status.exit_code == 0
    rows = {line.split("│")[1].strip(): line for line in status.output.splitlines() if line.count("│") > 3}
    assert "amended, was value 55.2" in rows["1"]
    assert "pump stopped" in rows["2"]
    assert "amended, was value 4 (contaminated; by ana)" in rows["3"]
    # a note with a value (a session 38 user test: "--note goes with --failed", so a lab's remark on a
    # result had nowhere to go): kept with the trial, in the same transaction as the value
    noted = invoke(
        "observe",
        "--storage",
        "lab.db",
        "--params",
        '{"x": 1, "mode": "a"}',
        "--value",
        "1",
        "--note",
        "by hand",
    )
    assert noted.exit_code == 0 and "(note kept)" in noted.output, noted.output
    new = wb.Study("lab.db").trials()[-1]
    assert new.value == 1.0 and wb.Study("lab.db").notes() == {new.id: "by hand"}
    wb.Study("lab.db").set_note(new.id, "re-weighed")  # (a second note adds to the first)
    shown = invoke("status", "lab.db").output.splitlines()
    rows = {line.split("│")[1].strip(): line for line in shown if line.count("│") > 3}
    assert "by hand; re-weighed" in rows[str(new.id)]
    empty = invoke("observe", "lab.db", "--params", '{"x": 2, "mode": "a"}', "--value", "1", "--note", " ")
    assert empty.exit_code == 1 and "--note is empty" in empty.output
    assert len(wb.Study("lab.db").trials()) == 4  # (nothing stored for the refused one)
    with pytest.raises(wb.storage.TrialNotFoundError):
        wb.Study("lab.db").set_note(99, "no such trial")


def _started_run(workdir, budget: int, storage: str, workers: int, started, objective=("slowmod:f",)):
    """``warmbo optimize OBJECTIVE`` in a process of its own, once ``started()`` says its evaluations
    are under way (stderr piped, for the run's messages)."""
    command = ["optimize", *objective, "--space", "space.json", "--budget", str(budget)]
    command += ["--storage", storage, "--seed", "0", "--workers", str(workers)]
    run = subprocess.Popen(
        [sys.executable, "-m", "warmbo.cli", *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=workdir,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not started():
        assert time.monotonic() < deadline and run.poll() is None
        time.sleep(0.05)
    return run


def test_ctrl_c_stores_the_values_of_python_evaluations_and_says_so(workdir):
    # before: `optimize module:function --workers 2` said the running command(s) were killed, but a
    # Python function cannot be: it ran to the end and its value was dropped, its trial left pending
    (workdir / "slowmod.py").write_text(
        "import os, time\n"
        "def f(p):\n"
        "    open(f'started-{p[\"x\"]}', 'w').close()\n"
        "    time.sleep(1.0)\n"
        "    open(f'returned-{p[\"x\"]}', 'w').close()\n"
        "    return p['x'] ** 2\n"
    )
    run = _started_run(workdir, 6, "int.db", 2, lambda: len(list(workdir.glob("started-*"))) >= 2)
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=60)
    err = " ".join(err.split())  # (rich wraps at 80 columns)
    assert run.returncode == 130, err
    assert "waiting for the 2 evaluation(s) still running" in err
    assert "the values of evaluations that finished are stored; no trial left pending" in err
    assert "killed" not in err
    study = wb.Study("int.db")
    assert (
        study.count("pending") == 0 and study.count("complete") == len(list(workdir.glob("returned-*"))) == 2
    )


def test_sigterm_stops_a_python_function_at_once_with_one_worker(workdir):
    # docs/cli.md said a module:function objective cannot be killed, so the run waits for it: true of
    # --workers above 1 (threads); with --workers 1 the function runs in the main thread and the
    # signal stops it at once, its trial left pending (as the docs now say)
    (workdir / "slowmod.py").write_text(
        "import time\n"
        "def f(p):\n"
        "    open('started', 'w').close()\n"
        "    time.sleep(60)\n"
        "    return p['x'] ** 2\n"
    )
    run = _started_run(workdir, 3, "one.db", 1, (workdir / "started").exists)
    start = time.monotonic()
    run.send_signal(signal.SIGTERM)
    _, err = run.communicate(timeout=50)
    err = " ".join(err.split())
    assert run.returncode == 143 and time.monotonic() - start < 30, err
    assert "trial(s) 1 left pending" in err and "waiting" not in err
    assert wb.Study("one.db").count("pending") == 1


def test_notes_are_shown_as_written_not_read_as_markup(workdir):
    # before (a review): "[/data/run1]" in a note crashed observe after storing it, and status ever after
    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 2)
    note = "pump log in [/data/run1], [bold]5 bar[/bold]"
    failed = invoke("observe", "--storage", "lab.db", "--trial", 1, "--failed", "--note", note)
    assert failed.exit_code == 0 and note in failed.output, failed.output
    status = invoke("status", "--storage", "lab.db")
    assert status.exit_code == 0 and "[/data/run1]" in status.output and "[bold]" in status.output


def test_errors_and_choices_with_brackets_are_printed_as_written(workdir):
    # before: rich read "[/x]" in an objective's error as a closing tag and the run crashed in the
    # failure report; a categorical choice "[b]" vanished from the best line
    (workdir / "bracketmod.py").write_text(
        "def f(p):\n    if p['x'] < 0:\n        raise KeyError('[/x] missing')\n    return p['x'] ** 2\n"
    )
    (workdir / "brackets.json").write_text(
        json.dumps(
            {
                "params": [
                    {"type": "float", "name": "x", "low": -1, "high": 1},
                    {"type": "categorical", "name": "c", "choices": ["[b]", "[/a]"]},
                ]
            }
        )  # fmt: skip
    )
    args = ("optimize", "bracketmod:f", "--space", "brackets.json", "--budget", 6, "--storage", "b.db")
    result = invoke(*args, "--seed", 3)
    assert result.exit_code == 0, result.output
    assert "[/x] missing" in result.output and ("c=[b]" in result.output or "c=[/a]" in result.output)


def test_a_warning_is_one_line_naming_no_python_file(workdir, monkeypatch):
    # before: the CLI printed Python's format, pointing into typer: "…/typer/main.py:1445:
    # LargeStudyWarning: the model is an exact GP … \n  return callback(**use_params)"
    monkeypatch.setattr(wb.optimizer, "LARGE_STUDY", 4)
    opt = wb.Optimizer(wb.Space.from_dict(SPACE), storage="big.db", seed=0)
    for i in range(6):
        opt.tell({"x": -1.5 + 0.5 * i, "mode": "a"}, float(i))
    result = invoke("suggest", "--storage", "big.db", "--json")
    assert result.exit_code == 0, result.output
    assert "warning: the model is an exact GP on all 6 of the study's trials" in result.stderr
    assert "LargeStudyWarning" not in result.stderr and ".py:" not in result.stderr
    assert json.loads(result.stdout)["trial"] == 7  # stdout holds only the suggestion


def test_export_to_stdout_and_into_a_closed_pipe(workdir):
    # before: --out - wrote a file named "-", and a reader that stopped early (| head) got a
    # traceback-free but wrong "error: [Errno 32] Broken pipe"
    study = wb.Optimizer(wb.Space.from_dict(SPACE), storage="p.db", seed=0).study
    for i in range(700):  # about 90 kB of CSV: more than a pipe's buffer
        study.add_trial({"x": -2.0 + i / 200, "mode": "a"}, "complete", float(i) / 7)
    result = invoke("export", "--storage", "p.db", "--out", "-")
    assert result.exit_code == 0, result.output
    assert not Path("-").exists()
    assert result.stderr.startswith("wrote 700 trials to stdout")  # the message is not in the CSV
    rows = result.stdout.splitlines()
    assert rows[0].startswith("trial,state,x,mode,y,") and len(rows) == 701
    assert rows[3].split(",")[:5] == ["3", "complete", repr(-2.0 + 2 / 200), "a", repr(2 / 7)]
    plain = invoke("export", "p.db")  # (no --out: stdout, as Optuna users expect; before: an error)
    assert plain.exit_code == 0 and plain.stdout == result.stdout
    run = subprocess.Popen(
        [sys.executable, "-m", "warmbo.cli", "export", "--storage", "p.db", "--out", "-"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=workdir,
    )  # fmt: skip
    assert run.stdout.readline().startswith(b"trial,state,")
    run.stdout.close()  # as `| head -n 1` does
    assert run.wait(timeout=120) == 1
    assert run.stderr.read() == b""  # no "Broken pipe" error, no "Exception ignored" at exit


def test_every_printed_path_and_message_is_shown_as_written(workdir):
    # before: rich read every printed string as markup: "[old]" in a path vanished (imported ...
    # from runs.csv) and `reproduce envelope` advised "pip install 'warmbo'" for 'warmbo[hpobench]'
    (workdir / "runs[old].csv").write_text("x,mode,y\n0.4,a,0.01\n-1.0,a,2.25\n")
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "q.db", "--transfer", "none")
    first = invoke(*args, "--prior", "runs[old].csv", "--budget", 3)
    assert first.exit_code == 0, first.output
    assert "imported 2 prior evaluations from runs[old].csv" in first.output
    again = invoke(*args, "--prior", "runs[old].csv", "--budget", 4)
    assert "runs[old].csv already imported" in again.output
    transfer = invoke(*args[:-2], "--prior", "runs[old].csv", "--budget", 3, "--storage", "t.db")
    assert "source evaluations in runs[old].csv" in transfer.output
    reproduced = invoke("reproduce", "metakel", "--quick", "--out", "rep[1]")
    assert reproduced.exit_code == 0, reproduced.output
    assert "rep[1]/report.html" in reproduced.output.replace("\n", "")


def test_tables_tell_apart_the_values_of_a_narrow_range_far_from_zero(workdir):
    # before: every value was printed to 6 significant digits, so a scientist told to run at
    # freq_Hz = 2.4e+09 three times could not know which setting each experiment was
    space = {"params": [{"type": "float", "name": "freq_Hz", "low": 2.4e9, "high": 2.4e9 + 1000}]}
    (workdir / "narrow.json").write_text(json.dumps(space))
    result = invoke("suggest", "--space", "narrow.json", "--storage", "n.db", "--seed", 0, "-n", 3)
    assert result.exit_code == 0, result.output
    stored = [t.params["freq_Hz"] for t in wb.Study("n.db").trials()]
    shown = [float(word) for word in re.findall(r"24000\d{5}\.\d+", result.output)]
    assert len(shown) == 3 and len(set(shown)) == 3
    assert all(abs(a - b) < 0.01 for a, b in zip(shown, stored, strict=True))
    ok = invoke("observe", "--storage", "n.db", "--trial", 1, "--value", "2")
    assert f"freq_Hz={stored[0]:.12g}" in ok.output  # the best line
    status = invoke("status", "--storage", "n.db")
    assert all(f"{v:.12g}" in status.output for v in stored)


def test_optimize_stops_on_a_signal_whose_exception_python_dropped(workdir):
    # before: a SIGTERM whose exception Python dropped (raised inside a callback in a C extension:
    # "Exception ignored in ...") let the run go on to its budget and exit 0 (a walkthrough saw it
    # once under load); the handler's record now stops it after the trial being evaluated
    (workdir / "swallow.py").write_text(
        "import os, signal, time\n"
        "def f(p):\n"
        "    if not os.path.exists('sent'):\n"
        "        open('sent', 'w').close()\n"
        "        try:\n"
        "            os.kill(os.getpid(), signal.SIGTERM)  # the handler runs here and raises ...\n"
        "            time.sleep(1.0)\n"
        "        except KeyboardInterrupt:\n"
        "            pass  # ... and the exception is lost, as in a C callback\n"
        "    return (p['x'] - 0.5) ** 2\n"
    )
    before = signal.getsignal(signal.SIGTERM)
    args = ("optimize", "swallow:f", "--space", "space.json", "--budget", 6, "--storage", "sw.db")
    result = invoke(*args, "--seed", 0)
    assert result.exit_code == 143, result.output
    assert "stopped by SIGTERM" in result.output
    assert wb.Study("sw.db").count("complete") == 1  # the evaluation that swallowed it, stored; no more
    assert signal.getsignal(signal.SIGTERM) == before


def _pty_output(master: int) -> str:
    import select

    chunks = []
    while select.select([master], [], [], 0.2)[0]:
        chunks.append(os.read(master, 65536))
    return b"".join(chunks).decode()


@pytest.mark.parametrize("stderr_to", ["the terminal", "a file"])
def test_a_warning_during_a_live_progress_bar_goes_where_stderr_goes(tmp_path, monkeypatch, stderr_to):
    # before (found by the reviews): the errors console wrote past rich's stderr proxy onto the bar's
    # own line (a stale bar before every warning); and the first fix sent the line through the proxy,
    # to stdout, even with stderr redirected to a file (`2> err.log` got nothing)
    from rich.console import Console
    from rich.live import Live

    from warmbo.cli import _show_warning

    master, slave = os.openpty()
    terminal = os.fdopen(slave, "w", buffering=1)
    log = open(tmp_path / "err.log", "w", buffering=1)  # noqa: SIM115 - closed below
    monkeypatch.setattr(sys, "stdout", terminal)
    monkeypatch.setattr(sys, "stderr", terminal if stderr_to == "the terminal" else log)
    bar = Console(file=terminal, force_terminal=True, width=80)
    with Live("bar", console=bar, redirect_stderr=True, auto_refresh=False):
        _show_warning(UserWarning("a [bold]user[/bold] string [/x]"), UserWarning, "f.py", 1)
    raw = _pty_output(master)
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)
    log.close()
    terminal.close()
    os.close(master)
    logged = (tmp_path / "err.log").read_text()
    if stderr_to == "the terminal":  # above the bar: the bar's line is cleared (ESC [2K) before it
        assert re.search(r"\x1b\[2K(?:\x1b\[[0-9;]*m)*warning: ", raw), repr(raw)
        assert "warning: a [bold]user[/bold] string [/x]" in shown and logged == ""
    else:
        assert "warning: a [bold]user[/bold] string [/x]" in logged and "warning" not in shown


def test_a_postgresql_driver_error_is_one_line_not_a_traceback(workdir, monkeypatch):
    # before (found by the review): a connection terminated while a worker waited for the study's
    # lock (a server restart) ended the command with psycopg's AdminShutdown as a rich traceback
    import psycopg

    def terminated(*args, **kwargs):
        raise psycopg.errors.AdminShutdown("terminating connection due to administrator command")

    assert invoke("suggest", "--space", "space.json", "--storage", "lab.db").exit_code == 0
    monkeypatch.setattr(wb.cli, "load_optimizer", terminated)
    result = invoke("status", "--storage", "lab.db")
    assert result.exit_code == 1
    assert (
        "error: the PostgreSQL server: terminating connection due to administrator command" in result.output
    )
    assert "(run the command again)" in result.output and "Traceback" not in result.output

    def refused(*args, **kwargs):  # a permanent problem: rerunning will not help, and one line only
        raise psycopg.errors.InsufficientPrivilege("permission denied for table t\nHINT:  ask the owner")

    monkeypatch.setattr(wb.cli, "load_optimizer", refused)
    result = invoke("status", "--storage", "lab.db")
    assert (
        result.exit_code == 1
        and "error: the PostgreSQL server: permission denied for table t" in result.output
    )
    assert "again" not in result.output and "HINT" not in result.output
    # another driver's error (psycopg2, say, from the user's own objective module) is not warmbo's
    # store failing: it is not called the PostgreSQL server's (before: the handler imported
    # psycopg for it, a ModuleNotFoundError where the [postgres] extra is not installed)
    other = type("OperationalError", (Exception,), {"__module__": "psycopg2.errors"})

    def theirs(*args, **kwargs):
        raise other("could not connect to db.lab")

    monkeypatch.setattr(wb.cli, "load_optimizer", theirs)
    result = invoke("status", "--storage", "lab.db")
    assert isinstance(result.exception, other) and "PostgreSQL server" not in result.output


def test_prior_files_of_one_name_in_two_folders_are_two_source_tasks(workdir):
    # a folder of runs, each in its own folder with the same file name: labelled by file name alone,
    # both were one source task of 7 rows, a run on another scale mixed into the first run's model
    for folder, rows in (
        ("oct", "0.5,a,0.0\n-1.0,a,2.25\n1.5,a,1.0\n2.0,a,2.3\n"),
        ("nov", "0.6,a,100\n-2.0,a,680\n0.0,a,40\n"),
    ):
        (workdir / folder).mkdir()
        (workdir / folder / "trials.csv").write_text("x,mode,y\n" + rows)
    args = (
        "optimize",
        "objmod:f",
        "--space",
        "space.json",
        "--storage",
        "two.db",
        "--seed",
        0,
        "--budget",
        4,
    )
    result = invoke(*args, "--prior", "oct/trials.csv", "--prior", "nov/trials.csv")
    assert result.exit_code == 0, result.output
    status = " ".join(invoke("status", "--storage", "two.db").output.split())  # (wrapped at 80 columns)
    assert "transfer auto: 2 source task(s), 7 rows" in status
    assert "task oct/trials.csv" in status and "task nov/trials.csv" in status


@pytest.mark.parametrize("second", ["run.csv", "./run.csv", "old.db", "sqlite:///old.db"])
def test_a_prior_given_twice_is_refused(workdir, second):
    # before: one source task holding every row twice
    (workdir / "run.csv").write_text("x,mode,y\n0.5,a,0.0\n-1.0,a,2.25\n1.5,a,1.0\n")
    old = wb.Optimizer(wb.Space.from_dict(SPACE), seed=3, storage="old.db")
    old.tell({"x": 0.4, "mode": "a"}, 0.01)
    old.study.close()
    first = "old.db" if second.endswith("old.db") else "run.csv"
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "twice.db", "--budget", 3)
    result = invoke(*args, "--prior", first, "--prior", second)
    assert result.exit_code == 1, result.output
    assert f"--prior {second} is given twice" in result.output and "give it once" in result.output
    assert not (workdir / "twice.db").exists()


def test_a_study_is_not_its_own_prior(workdir):
    # before: its trials were read again as a source task, each observation counted twice
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "self.db", "--seed", 0)
    assert invoke(*args, "--budget", 4).exit_code == 0
    result = invoke(*args, "--budget", 6, "--prior", "sqlite:///self.db")
    assert result.exit_code == 1 and "is this study itself" in result.output
    assert len(wb.Study("self.db").trials()) == 4


def test_a_resumed_study_uses_its_stored_sources_with_another_transfer_method(workdir):
    # before: "--transfer rgpe transfers from source data: give them with --prior", although the
    # study stores its sources and `warmbo suggest --transfer` and Optimizer.load(url, transfer=) use them
    (workdir / "run1.csv").write_text("x,mode,y\n0.5,a,0.0\n-1.0,a,2.25\n1.5,a,1.0\n2.0,a,2.3\n")
    args = ("optimize", "objmod:f", "--storage", "re.db")
    first = invoke(*args, "--space", "space.json", "--seed", 0, "--budget", 3, "--prior", "run1.csv")
    assert first.exit_code == 0, first.output
    again = invoke(*args, "--budget", 5, "--transfer", "rgpe")
    assert again.exit_code == 0, again.output
    assert "resuming with the study's 4 stored source evaluations (transfer rgpe)" in again.output
    assert "transfer rgpe: 1 source task(s), 4 rows" in invoke("status", "--storage", "re.db").output
    assert len(wb.Study("re.db").trials()) == 5


def test_resuming_with_other_prior_files_says_they_replace_the_stored_sources(workdir):
    # before: the study's stored sources were replaced without a word, as if --prior added sources
    (workdir / "run1.csv").write_text("x,mode,y\n0.5,a,0.0\n-1.0,a,2.25\n1.5,a,1.0\n2.0,a,2.3\n")
    (workdir / "run2.csv").write_text("x,mode,y\n0.6,a,0.1\n-2.0,a,6.8\n0.0,a,0.4\n")
    args = ("optimize", "objmod:f", "--storage", "rep.db")
    assert (
        invoke(*args, "--space", "space.json", "--seed", 0, "--budget", 3, "--prior", "run1.csv").exit_code
        == 0
    )
    other = invoke(*args, "--budget", 4, "--prior", "run2.csv", "--prior-replace")
    assert other.exit_code == 0, other.output
    said = " ".join(other.output.split())
    assert (
        "replacing the study's stored sources (4 evaluations of 1 source task(s): run1; transfer auto)"
        in said
    )
    assert "transfer auto: 1 source task(s), 3 rows" in invoke("status", "--storage", "rep.db").output
    same = invoke(*args, "--budget", 5, "--prior", "run2.csv")
    assert same.exit_code == 0 and "replacing" not in same.output


def test_other_prior_files_on_a_study_with_stored_sources_say_add_or_replace(workdir):
    # before: --prior on a study with stored sources replaced them, said after the fact, and a
    # colleague who meant to add a file lost the others
    (workdir / "run1.csv").write_text("x,mode,y\n0.5,a,0.0\n-1.0,a,2.25\n1.5,a,1.0\n")
    (workdir / "run2.csv").write_text("x,mode,y\n0.6,a,0.1\n-2.0,a,6.8\n0.0,a,0.4\n")
    args = ("suggest", "--storage", "lab.db")
    assert invoke(*args, "--space", "space.json", "--seed", 0, "--prior", "run1.csv").exit_code == 0

    def stored():
        study = wb.Study("lab.db")
        return study_rows("lab.db"), study.get_meta("transfer_source_rows")

    before = stored()
    refused = invoke(*args, "--prior", "run2.csv")
    said = " ".join(refused.output.split())
    assert refused.exit_code == 1, said
    assert (
        "lab.db already transfers from stored sources (3 evaluations of 1 source task(s): run1; transfer "
        "auto). Give --prior-add to add run2.csv to them, or --prior-replace to use run2.csv instead "
        "(nothing was changed)" in said
    )
    assert stored() == before
    for flags, message in [
        (
            ("--prior", "run2.csv", "--prior-add", "--prior-replace"),
            "give --prior-add or --prior-replace, not both",
        ),
        (("--prior-add",), "--prior-add says what --prior files do to a study's stored sources: give them"),
        (("--prior", "run2.csv", "--prior-replace", "--transfer", "none"), "--prior-replace is for transfer"),
    ]:
        out = invoke(*args, *flags)
        assert out.exit_code == 1 and message in " ".join(out.output.split()), out.output
    assert stored() == before
    # the same file again (a command run twice) is taken without a word
    same = invoke(*args, "--prior", "run1.csv")
    assert same.exit_code == 0 and "stored sources" not in same.output, same.output
    added = invoke(*args, "--prior", "run2.csv", "--prior-add")
    said = " ".join(added.output.split())
    assert (
        added.exit_code == 0 and "adding 1 source task(s) of run2.csv to the study's stored sources" in said
    )
    assert "transfer auto: 2 source task(s), 6 rows" in invoke("status", "--storage", "lab.db").output
    twice = invoke(*args, "--prior", "run2.csv", "--prior-add")
    said = " ".join(twice.output.split())
    assert twice.exit_code == 0 and "run2.csv: already among the study's stored sources" in said, said
    assert "transfer auto: 2 source task(s), 6 rows" in invoke("status", "--storage", "lab.db").output
    # a part of a stored source (2 of run1's 3 rows) is not added as a second source of the same
    # evaluations (a user test: 29 of 30 stored rows became a source of their own)
    (workdir / "part.csv").write_text("x,mode,y\n0.5,a,0.0\n1.5,a,1.0\n")
    part = invoke(*args, "--prior", "part.csv", "--prior-add")
    said = " ".join(part.output.split())
    assert part.exit_code == 0 and "part.csv: already among the study's stored sources" in said, said
    assert "transfer auto: 2 source task(s), 6 rows" in invoke("status", "--storage", "lab.db").output
    replaced = invoke(*args, "--prior", "run2.csv", "--prior-replace")
    said = " ".join(replaced.output.split())
    assert (
        replaced.exit_code == 0 and "replacing the study's stored sources (6 evaluations of 2 source" in said
    )
    assert "replaced them" not in said and "replaced them" not in " ".join(added.output.split())  # (Python's)
    assert "transfer auto: 1 source task(s), 3 rows" in invoke("status", "--storage", "lab.db").output


def test_sources_given_after_the_design_do_not_come_back_as_suggestions(workdir):
    # before: after --prior replaced a study's sources (or added to them), the next suggestions were
    # the new file's own rows (its warm design), though the study's design was over: rows already
    # given as prior suggested as if the study were new
    (workdir / "run1.csv").write_text("x,mode,y\n0.5,a,0.0\n-1.0,a,2.25\n1.5,a,1.0\n")
    (workdir / "run2.csv").write_text("x,mode,y\n0.6,a,0.1\n-2.0,a,6.8\n0.0,a,0.4\n")
    args = ("suggest", "--storage", "lab.db", "--json")
    made = invoke(*args, "--space", "space.json", "--seed", 0, "--prior", "run1.csv", "-n", 2)
    assert made.exit_code == 0, made.output
    assert invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", 0.3).exit_code == 0
    for flag, prior in (("--prior-replace", "run2.csv"), ("--prior-add", "run1.csv")):
        out = invoke(*args, "--prior", prior, flag, "-n", 2)
        assert out.exit_code == 0, out.output
    rows = {(x, m) for x, m in ((0.6, "a"), (-2.0, "a"), (0.0, "a"), (0.5, "a"), (-1.0, "a"), (1.5, "a"))}
    later = [(round(t.params["x"], 9), t.params["mode"]) for t in wb.Study("lab.db").trials()[2:]]
    assert len(later) == 4 and not rows & set(later), later


def test_one_prior_file_under_two_names_is_refused(workdir):
    # before: a hard link (or Run.csv and run.csv on macOS's case-insensitive file system) has
    # another real path, so one file given twice was read as two source tasks of the same rows
    (workdir / "run.csv").write_text("x,mode,y\n0.5,a,0.0\n-1.0,a,2.25\n")
    os.link(workdir / "run.csv", workdir / "copy.csv")
    old = wb.Optimizer(wb.Space.from_dict(SPACE), seed=3, storage="old.db")
    old.tell({"x": 0.4, "mode": "a"}, 0.01)
    old.study.close()
    os.link(workdir / "old.db", workdir / "same.db")
    args = ("suggest", "--space", "space.json", "--storage", "new.db", "--prior")
    files = invoke(*args, "run.csv", "--prior", "copy.csv")
    assert files.exit_code == 1 and "--prior copy.csv is given twice (also as run.csv)" in files.output
    studies = invoke(*args, "old.db", "--prior", "same.db")
    assert studies.exit_code == 1 and "--prior same.db is given twice (also as old.db)" in studies.output
    assert not (workdir / "new.db").exists()


def test_prior_rename_without_prior_is_refused(workdir):
    # before: ignored without a word (a user renaming the stored sources' parameter saw nothing)
    args = ("--storage", "nr.db", "--space", "space.json", "--prior-rename", "pos=x")
    for command in (("suggest",), ("optimize", "objmod:f", "--budget", 1)):
        result = invoke(*command, *args)
        assert result.exit_code == 1 and "give them with --prior" in result.output, result.output
    assert not (workdir / "nr.db").exists()


def test_the_same_prior_studies_on_a_study_labelled_by_an_older_version_do_not_replace_its_sources(
    workdir,
):
    # before: a study made before sources were named by path stores 'A:A.db' where --prior A.db now
    # reads 'A', so giving the same studies again said it replaced the sources by these very rows
    space = wb.Space.from_dict(SPACE)
    rows = {}
    for name, xs in (("A", (0.4, -1.0, 1.5)), ("B", (0.7, 1.9))):
        old = wb.Optimizer(space, seed=3, storage=f"{name}.db")
        for x in xs:
            old.tell({"x": x, "mode": "a"}, (x - 0.5) ** 2)
        old.study.close()
        rows[name] = [({"x": x, "mode": "a"}, (x - 0.5) ** 2) for x in xs]
    both = rows["A"] + rows["B"]
    labels = ["A:A.db"] * 3 + ["B:B.db"] * 2  # the labels warmbo 687aca8 stored
    stored = TaskData([p for p, _ in both], [v for _, v in both], labels, space, source="A.db, B.db")
    made = wb.Optimizer(space, prior=stored, seed=0, storage="lab.db")
    made.tell(made.ask(), 1.0)
    made.study.close()
    args = ("optimize", "objmod:f", "--storage", "lab.db", "--prior", "A.db")
    same = invoke(*args, "--prior", "B.db", "--budget", 2)
    assert same.exit_code == 0, same.output
    assert "replacing" not in same.output
    fewer = invoke(*args, "--budget", 3, "--prior-replace")  # other sources still say so
    assert fewer.exit_code == 0 and "replacing the study's stored sources" in " ".join(fewer.output.split())


def test_an_exported_failed_trial_in_a_prior_is_left_out_with_a_warning(workdir):
    # first: "column 'y': empty value" and nothing on why a row of warmbo's own export has none; then
    # refused with a hint to export the complete trials only; a failed trial is no observation, so its
    # row is left out and said (as an Optuna export's FAIL rows are)
    old = wb.Optimizer(wb.Space.from_dict(SPACE), seed=3, storage="old.db")
    old.tell({"x": 0.4, "mode": "a"}, 0.01)
    old.tell_failed({"x": 1.9, "mode": "a"})
    old.study.close()
    assert invoke("export", "--storage", "old.db", "--out", "all.csv").exit_code == 0
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "new.db", "--budget", 2)
    result = invoke(*args, "--prior", "all.csv", "--transfer", "none")
    said = " ".join(result.output.split())
    assert result.exit_code == 0, said
    assert "all.csv: left out 1 row(s) without a value whose 'state' is not complete (failed 1)" in said
    assert wb.Optimizer.load("new.db")._prior_rows() == 1


def test_python_dash_m_warmbo_runs_the_command(workdir):
    # before: "No module named warmbo.__main__", so `python -m warmbo` (a venv whose scripts are not
    # on the PATH, a checkout run with PYTHONPATH=src) did not work
    src = str(Path(wb.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-m", "warmbo", "status", "--storage", "none.db"], env=env,
                          capture_output=True, text=True, cwd=workdir)  # fmt: skip
    assert done.returncode == 1 and "error:" in done.stderr + done.stdout, done.stderr
    assert "No module named" not in done.stderr


def test_suggest_and_optimize_say_a_cold_design_when_every_source_is_left_out(workdir):
    # a source whose values are all equal is left out; the creation line promised "a warm design
    # from 3 source evaluations" while the suggestions were the cold design's
    (workdir / "flat.csv").write_text("x,mode,y\n0.6,a,1\n-2.0,a,1\n0.0,a,1\n")
    made = invoke(
        "suggest", "--storage", "lab.db", "--space", "space.json", "--seed", 0, "--prior", "flat.csv"
    )
    assert made.exit_code == 0, made.output
    said = " ".join(made.output.split())
    assert "every value is 1" in said and "the first 4 suggestions are a design, then" in said
    assert "a warm design from" not in said
    (workdir / "one.csv").write_text("x,mode,y\n0.6,a,1.5\n")  # (before: "(1 rows): every value is")
    single = invoke("suggest", "--storage", "one.db", "--space", "space.json", "--prior", "one.csv")
    said = " ".join(single.output.split())
    assert (
        single.exit_code == 0 and "transfer source 'one.csv' has one evaluation (1.5), so it cannot" in said
    ), said
    ran = invoke("optimize", "objmod:f", "--space", "space.json", "--budget", 2, "--storage", "run.db",
                 "--prior", "flat.csv")  # fmt: skip
    assert ran.exit_code == 0, ran.output
    said = " ".join(ran.output.split())
    assert "starting as a study without them" in said and "transferring from" not in said


def test_suggest_starts_a_lab_study_warm_from_earlier_studies(workdir):
    # before: suggest had no --prior, and its advice, `warmbo optimize --prior`, needs an objective a
    # lab does not have: a study run by hand could not start warm
    old = wb.Optimizer(wb.Space.from_dict(SPACE), seed=3, storage="old.db", maximize=True)
    for x in (-1.5, 0.45, 1.2, -0.2):
        old.tell({"x": x, "mode": "a"}, -((x - 0.5) ** 2))  # stored as maximised, read as minimised
    old.study.close()
    (workdir / "run.csv").write_text("x,mode,y\n0.6,a,0.1\n-2.0,a,6.8\n0.0,a,0.4\n")
    args = ("suggest", "--storage", "lab.db", "--json")
    given = ("--space", "space.json", "--seed", 0, "--prior", "old.db", "--prior", "run.csv", "-n", 2)
    # a study that maximised and a table (read in the new study's direction): the direction is asked for
    unsaid = invoke(*args, *given)
    said = " ".join(unsaid.output.split())
    assert unsaid.exit_code == 1 and "old.db was created to maximize, and run.csv is read in" in said, said
    made = invoke(*args, *given, "--minimize")
    assert made.exit_code == 0, made.output
    said = " ".join(made.output.split())
    assert "a warm design from 7 source evaluations in old.db, run.csv (transfer auto)" in said
    # two sources: a design of 3, then 3 model asks, then the probe (Optimizer._probe_due)
    assert "then the model chooses (by suggestion 7, a cold design point tests the sources)" in said
    first = json.loads(next(line for line in made.output.splitlines() if line.startswith("{")))
    # a source's best configuration first (old.db read the wrong way round would offer x = -1.5)
    assert round(first["params"]["x"], 6) in (0.45, 0.6)
    # before a model ask (the warm design's), status showed nothing of the transfer
    status = " ".join(invoke("status", "--storage", "lab.db").output.split())
    assert "transfer auto: 2 source task(s), 7 rows" in status
    # more suggestions than the design at once: they continue the design until results are in (a
    # user test: -n 5 gave five source rows under "the first 2 suggestions are a warm design")
    batch = invoke(*args, "--space", "space.json", "--prior", "run.csv", "-n", 5, "--storage", "batch.db")
    said = " ".join(batch.output.split())
    assert batch.exit_code == 0 and (
        "the first 2 suggestions are a warm design from 3 source evaluations in run.csv (transfer auto), and "
        "suggestions asked before two results are in continue the design; then the model chooses" in said
    ), said
    assert "the model weighs the sources from its first ask after the warm design" in status
    again = invoke(*args, "--prior", "run.csv", "--transfer", "rgpe", "--prior-replace")  # on the study
    assert again.exit_code == 0, again.output
    said = " ".join(again.output.split())
    assert (
        "replacing the study's stored sources (7 evaluations of 2 source task(s): old, run; transfer auto)"
        in said
    )
    assert "transfer rgpe: 1 source task(s), 3 rows" in invoke("status", "--storage", "lab.db").output
    cold = invoke("suggest", "--storage", "cold.db", "--space", "space.json", "--transfer", "rgpe")
    assert cold.exit_code == 1 and "give them with --prior" in cold.output


def test_suggest_and_enqueue_show_every_value_of_a_wide_space(tmp_path, monkeypatch):
    # 30 parameters printed blank headers and cells cut to "1.…" at 80 columns (a user test): a table
    # wider than the terminal turns to a row per parameter
    monkeypatch.chdir(tmp_path)
    params = [{"type": "float", "name": f"param_{i:02d}", "low": 0, "high": 1} for i in range(30)]
    Path("wide.json").write_text(json.dumps({"params": params}))
    shown = invoke("suggest", "--space", "wide.json", "-s", "w.db", "-n", 2, "--seed", 0)
    assert shown.exit_code == 0 and "…" not in shown.output, shown.output
    suggested = [t.params for t in wb.Study("w.db").trials()]
    for i in range(30):
        row = next(line for line in shown.output.splitlines() if f"param_{i:02d}" in line)
        assert all(wb.Study("w.db").space.params[i].text(p[f"param_{i:02d}"]) in row for p in suggested)
    assert "trial 1" in shown.output and "trial 2" in shown.output
    point = json.dumps({f"param_{i:02d}": 0.5 for i in range(30)})
    queued = invoke("enqueue", "-s", "w.db", "--params", point)
    assert queued.exit_code == 0 and "…" not in queued.output and "param_29" in queued.output


def test_status_of_values_near_the_float_limit_prints_no_numpy_warning(tmp_path):
    # a user test stored 1e308 and -1e308 (valid floats): status printed numpy's "overflow encountered
    # in multiply" and "invalid value encountered in subtract", which say nothing of the study (its
    # trials, rounded)
    space = wb.Space([wb.Float("x", -5.0, 5.0), wb.Float("y", -5.0, 5.0)])
    opt = wb.Optimizer(space, storage=str(tmp_path / "big.db"), seed=0)  # (its default transform)
    told = [(3.506, 4.314, 1e308), (-0.484, -3.331, -1e308), (-2.071, -4.483, 0.0), (0.437, -2.924, 0.5)]
    told += [(-0.406, -4.899, 3.0), (-0.871, -3.198, 0.5), (-0.336, -3.215, 5.0), (-0.539, -2.988, 0.0)]
    told += [
        (-1.035, -3.391, 1e-320),
        (-0.772, -3.309, 4.854),
        (-0.508, -3.425, 4.307),
        (0.014, -3.368, 2.845),
    ]
    told += [(-0.493, -3.305, 3.932), (2.837, -4.269, 8.525), (-5.0, -3.115, 37.24), (5.0, -3.384, 17.92)]
    for x, y, value in [*told, (-5.0, -3.807, 39.27)]:
        opt.tell({"x": x, "y": y}, value)
    shown = subprocess.run(  # (its own process: numpy says each warning once per process)
        [sys.executable, "-m", "warmbo", "status", str(tmp_path / "big.db")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0 and "best -1e+308" in shown.stdout, shown.stdout + shown.stderr
    assert "overflow" not in shown.stderr and "invalid value" not in shown.stderr, shown.stderr


def test_an_empty_study_file_is_said_to_be_empty_and_left_as_it_is(workdir):
    # a study truncated to 0 bytes (a full disk, a `> lab.db` slip) was restarted from trial 1
    # without a word by the documented "rerun to resume" command, `suggest lab.db` pointed at another
    # file and `status` called it "an SQLite database but not a warmbo study" (a user test)
    Path("lab.db").write_bytes(b"")
    os.utime("lab.db", (0, 0))  # (old: a file being created, young and empty, is no truncated study)
    for command in (("status", "lab.db"), ("suggest", "lab.db"), ("export", "lab.db", "--out", "x.csv")):
        said = " ".join(invoke(*command).output.split())
        assert "lab.db' is an empty file (0 bytes), with no study in it" in said, said
        assert "restore it from a backup" in said and Path("lab.db").stat().st_size == 0
    with pytest.raises(wb.storage.StorageError, match=r"is an empty file \(0 bytes\)"):
        wb.Study("lab.db", readonly=True)
    created = invoke("suggest", "--space", "space.json", "--storage", "lab.db")
    said = " ".join(created.output.split())
    assert created.exit_code == 0 and "creating a new study in 'lab.db', an empty file (0 bytes)" in said
    assert len(wb.Study("lab.db").trials()) == 1
    Path("touched.db").write_bytes(b"")  # (`touch` first, then create: still allowed, with the warning)
    os.utime("touched.db", (0, 0))
    Path("young.db").write_bytes(b"")  # (another process creating it this moment: no alarm)
    with warnings.catch_warnings():
        warnings.simplefilter("error", wb.storage.NewStudyWarning)
        wb.Optimizer(wb.Space.from_dict(SPACE), storage="young.db")
    with pytest.warns(wb.storage.NewStudyWarning, match="an empty file"):
        wb.Optimizer(wb.Space.from_dict(SPACE), storage="touched.db")


def test_a_new_study_minimising_an_accuracy_by_default_says_so(workdir):
    # a module of its own: objmod is imported (and cached) by the tests before this one
    Path("accmod.py").write_text(Path("objmod.py").read_text() + "val_accuracy = f\nvalaccuracy = f\n")
    hint = "the new study minimises (the default) and the objective names 'accuracy'"
    first = invoke("optimize", "accmod:val_accuracy", "--space", "space.json", "-n", 2, "-s", "a.db")
    assert first.exit_code == 0 and hint in first.output and "--maximize" in first.output
    resumed = invoke("optimize", "accmod:val_accuracy", "-n", 3, "-s", "a.db")  # its direction was chosen
    said = invoke(
        "optimize", "accmod:val_accuracy", "--space", "space.json", "-n", 2, "-s", "b.db", "--minimize"
    )
    plain = invoke("optimize", "objmod:f", "--space", "space.json", "-n", 2, "-s", "c.db")
    glued = invoke("optimize", "accmod:valaccuracy", "--space", "space.json", "-n", 2, "-s", "d.db")
    regex = invoke(
        "optimize",
        "--cmd",
        f"{sys.executable} train.py {{x}} {{mode}}",
        "--value-regex",
        "val_acc=(\\S+)",
        "--space",
        "space.json",
        "-n",
        1,
        "-s",
        "e.db",
    )
    assert "minimises (the default)" in regex.output and "'acc'" in regex.output
    for result in (resumed, said, plain, glued):
        assert result.exit_code == 0 and "minimises (the default)" not in result.output


def test_exporting_a_maximised_study_says_how_to_use_it_as_a_prior_of_a_minimised_one(workdir):
    # before: nothing said that the CSV's values are maximised, and a minimised study given it as
    # --prior reads the worst configurations as the best
    old = wb.Optimizer(wb.Space.from_dict(SPACE), seed=3, storage="acc.db", maximize=True)
    old.tell({"x": 0.4, "mode": "a"}, 0.9)
    old.study.close()
    done = invoke("export", "--storage", "acc.db", "--out", "acc.csv", "--complete")
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert "the values were maximised" in said and "--prior acc.db" in said
    assert "give --maximize when you create a study from it" in said  # (lab user test)
    wb.Optimizer(wb.Space.from_dict(SPACE), seed=3, storage="loss.db").study.close()
    quiet = invoke("export", "--storage", "loss.db", "--out", "loss.csv")
    assert quiet.exit_code == 0 and "maximised" not in quiet.output
    whole = invoke("export", "--storage", "acc.db", "--out", "all.csv")  # (every trial: not a prior's form)
    assert whole.exit_code == 0 and "maximised" not in whole.output, whole.output


def test_resuming_with_the_same_prior_files_in_another_order_replaces_nothing(workdir):
    (workdir / "run1.csv").write_text("x,mode,y\n0.5,a,0.0\n-1.0,a,2.25\n1.5,a,1.0\n2.0,a,2.3\n")
    (workdir / "run2.csv").write_text("x,mode,y\n0.6,a,0.1\n-2.0,a,6.8\n0.0,a,0.4\n")
    args = ("optimize", "objmod:f", "--storage", "ord.db")
    made = invoke(
        *args,
        "--space",
        "space.json",
        "--seed",
        0,
        "--budget",
        3,
        "--prior",
        "run1.csv",
        "--prior",
        "run2.csv",
    )
    assert made.exit_code == 0, made.output
    same = invoke(*args, "--budget", 4, "--prior", "run2.csv", "--prior", "run1.csv")
    assert same.exit_code == 0 and "replacing" not in same.output
    fewer = invoke(*args, "--budget", 5, "--prior", "run2.csv", "--prior-replace")
    assert "replacing the study's stored sources (7 evaluations of 2 source task(s)" in " ".join(
        fewer.output.split()
    )


def test_a_folder_of_prior_files_is_named_in_one_short_line(workdir):
    # before: every file name, twice ("reading ..." and "transferring from ..."): a screenful each
    # for `--prior runs/*.csv`
    files = []
    for i in range(7):
        files += ["--prior", f"run{i}.csv"]
        (workdir / f"run{i}.csv").write_text(f"x,mode,y\n{0.1 * i},a,{i}\n-1.0,a,{2 + i}\n")
    result = invoke(
        "optimize", "objmod:f", "--space", "space.json", "--storage", "many.db", "--budget", 1, *files
    )
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "reading run0.csv, run1.csv, run2.csv and 4 more ..." in said
    assert (
        "transferring from 14 source evaluations in run0.csv, run1.csv, run2.csv and 4 more with auto" in said
    )
    assert "run6.csv" not in said


def test_prior_rename_reads_a_parameter_renamed_since(workdir):
    # before: a study or CSV file whose parameter has since been renamed (x was "pos") could not be a
    # source at all: "has other parameters than this study", with no way to map the name
    old_space = {"params": [{**SPACE["params"][0], "name": "pos"}, SPACE["params"][1]]}
    old = wb.Optimizer(wb.Space.from_dict(old_space), seed=3, storage="old.db")
    for pos in (-1.5, 0.45, 1.2):
        old.tell({"pos": pos, "mode": "a"}, (pos - 0.5) ** 2)
    old.study.close()
    (workdir / "old.csv").write_text("pos,mode,y\n0.6,a,0.01\n-2.0,a,6.3\n")
    (workdir / "new.csv").write_text("x,mode,y\n0.3,a,0.04\n1.9,a,2.0\n")  # already under the new name
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "new.db", "--budget", 1)
    priors = ("--prior", "old.db", "--prior", "old.csv", "--prior", "new.csv")
    refused = invoke(*args, *priors)
    assert refused.exit_code == 1 and "--prior-rename OLD=NEW" in " ".join(refused.output.split())
    result = invoke(*args, *priors, "--prior-rename", "pos=x")
    assert result.exit_code == 0, result.output
    assert "transferring from 7 source evaluations" in result.output
    bad = invoke(*args, *priors, "--prior-rename", "pos=where")
    assert bad.exit_code == 1 and "'where' is not a parameter of this study (x, mode)" in bad.output


def test_prior_rename_swaps_and_shifts_csv_columns_and_refuses_renaming_onto_a_kept_parameter(workdir):
    # before: a swap (x=y y=x) of a CSV that has both columns was silently ignored (rows read
    # unswapped), a shift (a=b b=c) was refused ("column 'b' is used for more than one parameter"),
    # and a rename onto a parameter a prior study keeps (z=y, the study having y and z) read z's
    # values as y and dropped y's without a word
    space = {"params": [{"type": "float", "name": n, "low": 0.0, "high": 1.0} for n in ("x", "y")]}
    (workdir / "xy.json").write_text(json.dumps(space))
    (workdir / "swap.csv").write_text("x,y,val\n0.1,0.2,1\n0.3,0.4,2\n")
    args = ("suggest", "--space", "xy.json", "--seed", 0, "--prior-y", "val")
    swapped = invoke(*args, "--storage", "swap.db", "--prior", "swap.csv", "--prior-rename", "x=y",
                     "--prior-rename", "y=x")  # fmt: skip
    assert swapped.exit_code == 0, swapped.output
    assert wb.Optimizer.load("swap.db").prior.params[0] == {"x": 0.2, "y": 0.1}
    (workdir / "shift.csv").write_text("w,x,val\n0.1,0.2,1\n0.3,0.4,2\n")
    shifted = invoke(*args, "--storage", "shift.db", "--prior", "shift.csv", "--prior-rename", "w=x",
                     "--prior-rename", "x=y")  # fmt: skip
    assert shifted.exit_code == 0, shifted.output
    assert wb.Optimizer.load("shift.db").prior.params[0] == {"x": 0.1, "y": 0.2}
    (workdir / "kept.csv").write_text("x,y,z,val\n0.1,0.2,0.9,1\n")  # has y: keeps it (docs/cli.md)
    kept = invoke(*args, "--storage", "kept.db", "--prior", "kept.csv", "--prior-rename", "z=y")
    assert kept.exit_code == 0, kept.output
    assert wb.Optimizer.load("kept.db").prior.params[0] == {"x": 0.1, "y": 0.2}
    old_space = wb.Space([wb.Float(n, 0.0, 1.0) for n in ("x", "y", "z")])
    old = wb.Optimizer(old_space, seed=0, storage="old3.db")
    old.tell({"x": 0.1, "y": 0.2, "z": 0.9}, 1.0)
    old.study.close()
    onto = invoke(*args, "--storage", "onto.db", "--prior", "old3.db", "--prior-rename", "z=y")
    assert onto.exit_code == 1
    assert "'y' and 'z' would both be read as 'y'" in " ".join(onto.output.split())
    assert not (workdir / "onto.db").exists()


def test_suggest_imports_prior_files_as_trials_with_transfer_none(workdir):
    # as optimize does: one import per file, once; with the files joined into one it was refused
    # ("prior data with several tasks needs a transfer model") after the study had been created
    (workdir / "run1.csv").write_text("x,mode,y\n0.5,a,0.0\n-1.0,a,2.25\n")
    (workdir / "run2.csv").write_text("x,mode,y\n0.6,a,0.1\n")
    args = ("suggest", "--storage", "imp.db", "--json", "--transfer", "none", "--prior", "run1.csv")
    made = invoke(*args, "--space", "space.json", "--prior", "run2.csv")
    assert made.exit_code == 0, made.output
    assert "imported 2 prior evaluations from run1.csv" in made.output
    assert sum(t.worker == "prior" for t in wb.Study("imp.db").trials()) == 3
    again = invoke(*args)
    assert again.exit_code == 0 and "run1.csv already imported" in again.output
    (workdir / "two.csv").write_text("x,mode,y,ds\n0.5,a,0.0,d1\n-1.0,a,2.25,d2\n")
    split = invoke("suggest", "--storage", "split.db", "--space", "space.json", "--transfer", "none",
                   "--prior", "two.csv", "--task", "ds")  # fmt: skip
    assert split.exit_code == 1 and "splits them into 2 tasks" in split.output
    assert not (workdir / "split.db").exists()  # refused before the study was created


def test_status_gives_no_model_estimate_before_five_results(workdir):
    # a chemist user test: after two results status said "model's estimate there: 54.2764 (sd
    # 0.286)", a precision no two measurements give
    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 5)
    for trial in range(1, 6):
        invoke("observe", "--storage", "lab.db", "--trial", trial, "--value", str(trial * 1.5 % 4))
        said = invoke("status", "--storage", "lab.db").output
        assert ("model's estimate there" in said) == (trial >= 5), (trial, said)


def test_status_audits_a_transfer_studys_own_gp(workdir):
    # a chemist user test: "95% intervals of the transfer ensemble cover 0%" on a warm study that
    # went well; status now audits the GP its estimate line reads, and points to `warmbo audit`
    (workdir / "run1.csv").write_text("x,mode,y\n0.5,a,0.0\n-1.0,a,2.25\n1.5,a,1.0\n2.0,a,2.3\n")
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "est.db", "--seed", 0)
    assert invoke(*args, "--budget", 10, "--prior", "run1.csv", "--transfer", "rgpe").exit_code == 0
    status = " ".join(invoke("status", "--storage", "est.db").output.split())
    assert "95% intervals of this study's own GP cover" in status, status
    assert "`warmbo audit` audits the transfer model that chooses the suggestions" in status


def test_status_estimates_a_transfer_study_in_the_values_units(workdir):
    # before: "model's estimate there: -0.34" for a loss measured at 0.04 (auto's mean, a weighted
    # sum of standardised GPs), then a caveat that a chemist still read as "94 % is reachable" beside
    # a best yield of 83.3: now the study's own GP, predict(target_only=True), and a note saying so
    (workdir / "run1.csv").write_text("x,mode,y\n0.5,a,0.0\n-1.0,a,2.25\n1.5,a,1.0\n2.0,a,2.3\n")
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "est.db", "--seed", 0)
    assert invoke(*args, "--budget", 5, "--prior", "run1.csv").exit_code == 0
    status = " ".join(invoke("status", "--storage", "est.db").output.split())
    assert "model's estimate there:" in status and "this study's own GP, in your units" in status
    opt = wb.Optimizer.load("est.db")
    best = opt.best
    shown = re.search(r"model's estimate there: (\S+) \(sd (\S+)\)", status)
    estimate, digits = float(shown[1]), len(shown[2].partition(".")[2])  # (to the sd's digits)
    assert estimate == pytest.approx(
        float(opt.predict(best.params, target_only=True).mean[0]), abs=10.0**-digits
    )
    from warmbo.cli import _with_sd

    assert [_with_sd(*ms) for ms in [(61.8589, 2.15), (0.012345, 0.00031), (1234.5, 86.0), (5.0, 0.0)]] == [
        "61.9 (sd 2.1)", "0.01235 (sd 0.00031)", "1234 (sd 86)", "5 (sd 0)"
    ]  # fmt: skip
    with pytest.warns(UserWarning, match="ensemble"):
        ensemble = float(opt.predict(best.params).mean[0])
    assert abs(estimate - best.value) < abs(ensemble - best.value)
    assert invoke(*args[:4], "--storage", "plain.db", "--seed", 0, "--budget", 4).exit_code == 0
    assert "own GP" not in invoke("status", "--storage", "plain.db").output


def test_every_command_on_a_study_takes_it_as_its_argument_or_with_storage(tmp_path, monkeypatch):
    # before: status, suggest, observe, export and audit took only --storage ("Missing option
    # '--storage'" for `warmbo status study.db`), and report, clean-pending and prior list/remove took
    # only the argument ("No such option: -s" for `warmbo report -s study.db`)
    monkeypatch.chdir(tmp_path)
    opt = wb.Optimizer(wb.Space.box([(0.0, 1.0), (0.0, 1.0)]), storage="study.db", seed=0)
    for _ in range(4):
        p = opt.ask()
        opt.tell(p, (p["x0"] - 0.3) ** 2 + p["x1"])
    del opt
    forms = (["study.db"], ["-s", "study.db"], ["--storage", "sqlite:///study.db"])
    for i, form in enumerate(forms):
        for command in (
            ["status"],
            ["export", "--out", "t.csv", "--force"],
            ["audit"],
            ["suggest"],  # trial 5 + i, pending
            ["observe", "--trial", str(5 + i), "--value", "0.5"],
            ["report", "--out", f"report{i}"],
            ["clean-pending", "--older-than", "1000"],
            ["prior", "list"],
        ):
            result = runner.invoke(app, [*command, *form])
            assert result.exit_code == 0, (command, form, result.output)
    assert [t.state for t in wb.Optimizer.load("study.db").history] == ["complete"] * 7
    result = runner.invoke(app, ["status", "study.db", "--storage", "other.db"])
    assert result.exit_code == 1 and "two studies given" in result.output
    result = runner.invoke(app, ["status", "study.db", "-s", "study.db"])  # the same one twice is fine
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["status"])
    assert result.exit_code == 1 and "which study?" in result.output


def test_report_of_a_large_study_says_it_fits_on_every_trial_not_how_to_ask(tmp_path, monkeypatch):
    # before: `warmbo report` on a study above LARGE_STUDY trials printed the optimizer's warning that
    # every ask refits the GP, with advice to pass --max-trials, an option report does not have
    import warmbo.optimizer as optimizer_module

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(optimizer_module, "LARGE_STUDY", 10)  # (the threshold, not the fit, is scaled)
    opt = wb.Optimizer(wb.Space.box([(0.0, 1.0)]), storage="big.db", seed=0)
    rng = np.random.default_rng(0)
    for x in rng.uniform(size=14):
        opt.tell({"x0": float(x)}, float(np.sin(6 * x)))
    result = runner.invoke(app, ["report", "big.db", "--out", "rep"])
    assert result.exit_code == 0, result.output
    assert "fitting the model on all 14 trials" in result.output
    assert "max-trials" not in result.output and "every ask" not in result.output
    assert (tmp_path / "rep" / "report.html").exists()
    result = runner.invoke(app, ["audit", "big.db"])  # (the audit command fits on them all too)
    assert result.exit_code == 0, result.output
    assert "fitting the model on all 14 trials for the audit" in result.output
    assert "max-trials" not in result.output and "every ask" not in result.output


def test_one_study_given_both_ways_in_two_spellings_is_one_study(tmp_path, monkeypatch):
    # before: `warmbo status study.db --storage sqlite:///study.db` (or ./study.db) was refused as
    # "two studies given", and the refusal of two PostgreSQL studies printed their passwords
    monkeypatch.chdir(tmp_path)
    opt = wb.Optimizer(wb.Space.box([(0.0, 1.0)]), storage="study.db", seed=0)
    opt.tell({"x0": 0.5}, 1.0)
    del opt
    for other in ("sqlite:///study.db", "./study.db", str(tmp_path / "study.db")):
        result = runner.invoke(app, ["status", "study.db", "--storage", other])
        assert result.exit_code == 0, (other, result.output)
    result = runner.invoke(app, ["status", "study.db", "-s", "sqlite:///other.db"])
    assert result.exit_code == 1 and "two studies given" in result.output
    a = "postgresql://me:s3cret@localhost:1/db?study=a"
    result = runner.invoke(app, ["status", a, "-s", a.replace("study=a", "study=b")])
    assert result.exit_code == 1 and "two studies given" in result.output
    assert "s3cret" not in result.output and "me:***@localhost" in result.output


def test_one_postgresql_study_in_two_spellings_is_one_study():
    # before: postgres:// and postgresql://, or the same parameters in another order, named two
    # studies: `warmbo status URL -s URL2` was refused as "two studies given", and --prior could
    # take one source twice (or the study itself as its own source)
    from warmbo.storage import study_identity

    a = "postgresql://me@localhost:1/db?study=a&sslmode=disable"
    for same in (
        "postgres://me@localhost:1/db?sslmode=disable&study=a",
        "postgresql://me@localhost:1/db?study=a&sslmode=disable&mode=ro",
    ):
        assert study_identity(same) == study_identity(a), same
        result = runner.invoke(app, ["status", a, "-s", same])
        assert result.exit_code == 1 and "two studies given" not in result.output, result.output
    assert study_identity(a.replace("study=a", "study=b")) != study_identity(a)
    assert study_identity(a.replace("&sslmode=disable", "")) != study_identity(a)


def test_the_storage_options_help_names_a_postgresql_url():
    # before: --storage's help named only study.db and sqlite:///study.db, though every command on a
    # study takes a PostgreSQL URL too
    for command in (["status"], ["suggest"], ["prior", "list"], ["report"]):
        result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "300"})
        assert result.exit_code == 0 and "postgresql://user@host/db?study=NAME" in result.output, command


def test_new_prior_files_keep_a_resumed_studys_stored_transfer_method(workdir):
    # before: `warmbo suggest --prior new.csv` (and `warmbo optimize --prior`, Optimizer.load(url,
    # prior=...)) on a study that transfers with rgpe switched it to auto without a word
    (workdir / "run1.csv").write_text("x,mode,y\n0.5,a,0.0\n-1.0,a,2.25\n1.5,a,1.0\n2.0,a,2.3\n")
    (workdir / "run2.csv").write_text("x,mode,y\n0.6,a,0.1\n-2.0,a,6.8\n0.0,a,0.4\n")

    def stored(path):
        return json.loads(wb.Study(path).get_meta("transfer_sources"))

    made = invoke("suggest", "--storage", "s.db", "--space", "space.json", "--prior", "run1.csv",
                  "--transfer", "rgpe", "--json")  # fmt: skip
    assert made.exit_code == 0, made.output
    again = invoke("suggest", "--storage", "s.db", "--prior", "run2.csv", "--prior-replace", "--json")
    assert again.exit_code == 0, again.output
    assert stored("s.db")["transfer"] == "rgpe"
    assert "used with the study's stored method, rgpe" in " ".join(again.output.split())
    assert wb.Optimizer.load("s.db", prior="run1.csv").transfer == "rgpe"  # Python: the same
    other = invoke("suggest", "--storage", "s.db", "--transfer", "auto", "--json")
    assert other.exit_code == 0, other.output
    assert "--transfer auto replaces the study's stored method (rgpe)" in " ".join(other.output.split())
    assert stored("s.db")["transfer"] == "auto"
    # optimize: new files keep envelope, with envelope's stored cap
    args = ("optimize", "objmod:f", "--storage", "o.db", "--seed", 0)
    assert invoke(*args, "--space", "space.json", "--budget", 1, "--prior", "run1.csv",
                  "--transfer", "envelope").exit_code == 0  # fmt: skip
    resumed = invoke(*args, "--budget", 2, "--prior", "run2.csv", "--prior-replace")
    assert resumed.exit_code == 0, resumed.output
    assert "with envelope" in resumed.output and "stored method, envelope" in " ".join(resumed.output.split())
    assert stored("o.db")["transfer"] == "envelope" and stored("o.db")["max_prior"] == 256


def test_max_prior_caps_the_prior_rows_the_model_sees_and_is_stored_with_the_sources(workdir):
    # before: the cap was Python-only (Optimizer(max_prior=...)), and the PriorSubsetWarning told a
    # command-line user that "the command line keeps the default"
    (workdir / "run1.csv").write_text("x,mode,y\n0.5,a,0.0\n-1.0,a,2.25\n1.5,a,1.0\n2.0,a,2.3\n")

    def stored(path):
        return json.loads(wb.Study(path).get_meta("transfer_sources"))["max_prior"]

    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "c.db", "--seed", 0)
    capped = invoke(*args, "--budget", 3, "--prior", "run1.csv", "--transfer", "rgpe", "--max-prior", 2)
    assert capped.exit_code == 0, capped.output
    said = " ".join(capped.output.split())
    assert "uses 2 of the 4 prior rows" in said and "--max-prior N on the command line" in said
    assert stored("c.db") == 2
    resumed = invoke("suggest", "c.db", "--json")  # a resumed study keeps its cap
    assert resumed.exit_code == 0 and "uses 2 of the 4 prior rows" in " ".join(resumed.output.split())
    raised = invoke("suggest", "c.db", "--json", "--max-prior", 3)
    assert raised.exit_code == 0, raised.output
    said = " ".join(raised.output.split())
    assert "--max-prior 3 replaces the study's stored cap on prior rows (2)" in said
    assert "uses 3 of the 4 prior rows" in said and stored("c.db") == 3
    made = invoke("suggest", "--storage", "s.db", "--space", "space.json", "--prior", "run1.csv",
                  "--max-prior", 1, "--json")  # fmt: skip
    assert made.exit_code == 0, made.output
    assert stored("s.db") == 1 and wb.Optimizer.load("s.db").max_prior == 1
    zero = invoke("suggest", "s.db", "--max-prior", 0)
    assert zero.exit_code != 0 and "--max-prior" in zero.output
    multi = invoke("optimize", "objmod:f", "--space", "space.json", "--storage", "m.db", "--budget", 1,
                   "--tasks", "a,b", "--max-prior", 5)  # fmt: skip
    assert multi.exit_code == 1 and "--max-prior is for single-objective studies" in multi.output


def test_transfer_options_on_a_study_without_sources_name_the_shell_option(workdir):
    # before: `suggest --transfer rgpe` on a cold study said "give them with prior=" (Python's
    # words), and `--max-prior` was taken and did nothing
    assert invoke("optimize", "objmod:f", "--space", "space.json", "--storage", "cold.db", "--budget", 2,
                  "--seed", 0).exit_code == 0  # fmt: skip
    before = [(t.id, t.state) for t in wb.Study("cold.db").trials()]
    for option in (("--transfer", "rgpe"), ("--max-prior", 5)):
        out = invoke("suggest", "cold.db", *option)
        said = " ".join(out.output.split())
        assert out.exit_code == 1 and ("cold.db stores none" in said or "cold.db holds none" in said), said
        assert "with --prior" in said and "prior=" not in said
    assert [(t.id, t.state) for t in wb.Study("cold.db").trials()] == before  # nothing suggested
    # a study whose prior rows were imported as trials (--transfer none) takes --max-prior
    (workdir / "run1.csv").write_text("x,mode,y\n0.5,a,0.0\n-1.0,a,2.25\n1.5,a,1.0\n2.0,a,2.3\n")
    made = invoke("suggest", "--storage", "told.db", "--space", "space.json", "--prior", "run1.csv",
                  "--transfer", "none", "--json")  # fmt: skip
    assert made.exit_code == 0, made.output
    assert invoke("suggest", "told.db", "--max-prior", 2, "--json").exit_code == 0


def test_max_prior_without_prior_rows_is_refused_by_optimize_as_by_suggest(workdir):
    # before: `optimize --max-prior N` on a resumed study without sources (and either command's
    # --max-prior on a new study without --prior) was taken and did nothing
    args = ("optimize", "objmod:f", "--seed", 0)
    assert invoke(*args, "--space", "space.json", "--storage", "cold.db", "--budget", 2).exit_code == 0
    before = study_rows("cold.db")
    for command in ((*args, "--budget", 3), ("suggest",)):
        out = invoke(*command, "--storage", "cold.db", "--max-prior", 5)
        said = " ".join(out.output.split())
        assert out.exit_code == 1, said
        assert "--max-prior caps the prior rows the model sees, and cold.db holds none" in said
        assert "give earlier studies or CSV files with --prior" in said, said
        made = invoke(*command, "--space", "space.json", "--storage", "new.db", "--max-prior", 5)
        said = " ".join(made.output.split())
        assert made.exit_code == 1 and "a new study holds none" in said, said
        assert not (workdir / "new.db").exists()
    assert study_rows("cold.db") == before  # nothing evaluated
    # with sources stored, or prior rows imported as trials (--transfer none), it caps them
    (workdir / "run1.csv").write_text("x,mode,y\n0.5,a,0.0\n-1.0,a,2.25\n1.5,a,1.0\n2.0,a,2.3\n")
    for name, transfer in (("warm.db", "rgpe"), ("told.db", "none")):
        made = invoke(*args, "--space", "space.json", "--storage", name, "--budget", 1, "--prior", "run1.csv",
                      "--transfer", transfer)  # fmt: skip
        assert made.exit_code == 0, made.output
        resumed = invoke(*args, "--storage", name, "--budget", 2, "--max-prior", 2)
        assert resumed.exit_code == 0, resumed.output
    assert json.loads(wb.Study("warm.db").get_meta("transfer_sources"))["max_prior"] == 2
    # before: --transfer none on the study with stored sources (not used then) and no imported rows
    # took --max-prior and capped nothing
    before = study_rows("warm.db")
    for command in ((*args, "--budget", 3), ("suggest",)):
        out = invoke(*command, "--storage", "warm.db", "--transfer", "none", "--max-prior", 2)
        said = " ".join(out.output.split())
        assert out.exit_code == 1, said
        assert (
            "warm.db holds none imported as trials (its stored sources are not used with --transfer none)"
            in said
        )
    assert study_rows("warm.db") == before


def test_suggest_creating_a_study_from_imported_rows_says_when_the_model_chooses(workdir):
    # before: "the first 4 suggestions are a design, then the model chooses", while the imported rows
    # (trials of the study) had filled the design and the model chose the very first suggestion
    (workdir / "run1.csv").write_text("x,mode,y\n0.5,a,0.0\n-1.0,a,2.25\n1.5,a,1.0\n2.0,a,2.3\n0.1,a,0.2\n")
    args = ("suggest", "--space", "space.json", "--transfer", "none", "--json")
    full = invoke(*args, "--storage", "full.db", "--prior", "run1.csv")
    assert full.exit_code == 0, full.output
    said = " ".join(full.output.split())
    assert "the model chooses from the first suggestion, on the 5 imported prior evaluations" in said
    assert "suggestions are a design" not in said
    assert wb.Study("full.db").get_meta("warm_start") is not None  # a model was fitted for it
    (workdir / "one.csv").write_text("x,mode,y\n0.5,a,0.0\n")
    part = invoke(*args, "--storage", "part.db", "--prior", "one.csv")
    assert part.exit_code == 0, part.output
    said = " ".join(part.output.split())
    assert "the first 3 suggestion(s) are design points, then the model chooses" in said  # 4 - 1
    assert wb.Study("part.db").get_meta("warm_start") is None  # a design point: no model yet


def test_new_prior_files_with_the_stored_method_named_keep_the_stored_cap(workdir):
    # before: `--prior new.csv --transfer rgpe` on a study stored with rgpe and --max-prior 2 reset the
    # cap to rgpe's default (1000) without a word, while the same command without --transfer, or
    # `--transfer rgpe` without --prior, kept it
    (workdir / "run1.csv").write_text("x,mode,y\n0.5,a,0.0\n-1.0,a,2.25\n1.5,a,1.0\n2.0,a,2.3\n")
    (workdir / "run2.csv").write_text("x,mode,y\n0.6,a,0.1\n-2.0,a,6.8\n0.0,a,0.4\n")

    def stored(path):
        return json.loads(wb.Study(path).get_meta("transfer_sources"))["max_prior"]

    made = invoke("suggest", "--storage", "s.db", "--space", "space.json", "--prior", "run1.csv",
                  "--transfer", "rgpe", "--max-prior", 2, "--json")  # fmt: skip
    assert made.exit_code == 0, made.output
    again = invoke(
        "suggest", "--storage", "s.db", "--prior", "run2.csv", "--transfer", "rgpe", "--prior-add", "--json"
    )
    assert again.exit_code == 0, again.output
    assert stored("s.db") == 2
    assert wb.Optimizer.load("s.db", prior="run1.csv", transfer="rgpe").max_prior == 2  # Python: the same
    args = ("optimize", "objmod:f", "--storage", "o.db", "--seed", 0)
    assert invoke(*args, "--space", "space.json", "--budget", 1, "--prior", "run1.csv",
                  "--transfer", "rgpe", "--max-prior", 2).exit_code == 0  # fmt: skip
    resumed = invoke(*args, "--budget", 2, "--prior", "run2.csv", "--transfer", "rgpe", "--prior-add")
    assert resumed.exit_code == 0, resumed.output
    assert stored("o.db") == 2


# ----------------------------------------------------------------- a lab sharing one study (walkthrough)
def test_a_value_for_a_failed_trial_says_it_had_failed(workdir):
    # before: `observe --trial 5 --value 40` on a trial a colleague had marked failed (an instrument
    # error) printed "trial 5: value 40 stored" alone: a mistyped --trial turned a reported failure
    # into a value without a word
    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 2)
    failed = ("observe", "--storage", "lab.db", "--trial", 1, "--failed", "--note", "plate reader error E42")
    assert invoke(*failed).exit_code == 0
    later = invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", "40")
    assert later.exit_code == 0, later.output
    said = " ".join(later.output.split())
    assert "trial 1: value 40 stored (it had been marked failed: plate reader error E42;" in said, said
    plain = invoke("observe", "--storage", "lab.db", "--trial", 2, "--value", "41")
    assert plain.exit_code == 0 and "marked failed" not in plain.output, plain.output


def test_one_result_recorded_twice_with_params_is_pointed_out(workdir):
    # before: the same `observe --params ... --value 33` run twice (the shell's history) stored two
    # trials with the same settings and value, and said "(a new trial)" both times
    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 1)
    args = ("observe", "--storage", "lab.db", "--params", '{"x": 0.5, "mode": "a"}', "--value", "33")
    first = invoke(*args)
    assert first.exit_code == 0 and "note:" not in first.output, first.output
    second = invoke(*args)
    assert second.exit_code == 0, second.output
    said = " ".join(second.output.split())
    assert "note: trial 2 holds the same settings and the same value 33" in said, said
    assert "--trial 3 --withdraw --note 'recorded twice'" in said, said
    # the advice, followed: the duplicate is gone from the model, the counts and export, and kept
    withdrawn = invoke(
        "observe", "--storage", "lab.db", "--trial", 3, "--withdraw", "--note", "recorded twice"
    )
    assert withdrawn.exit_code == 0, withdrawn.output
    assert "trial 3 withdrawn (was value 33, at x=0.5, mode=a)" in " ".join(withdrawn.output.split())
    study = wb.Study("lab.db")
    assert [t.id for t in study.trials()] == [1, 2] and study.count("failed") == 0
    assert study.withdrawn()[3]["value"] == 33 and study.withdrawn()[3]["note"] == "recorded twice"
    other = invoke("observe", "--storage", "lab.db", "--params", '{"x": 0.5, "mode": "a"}', "--value", "34")
    assert other.exit_code == 0 and "note:" not in other.output, other.output  # a replicate


def test_a_new_study_warm_from_earlier_studies_takes_their_direction(workdir):
    # a chemist user test: `suggest --prior april.db` without --maximize created a study that
    # minimised the yield, without a word, and the refusal of --maximize afterwards said only to leave
    # the flag out
    invoke("suggest", "--storage", "apr.db", "--space", "space.json", "--maximize", "-n", 2)
    invoke("observe", "--storage", "apr.db", "--trial", 1, "--value", "62")
    invoke("observe", "--storage", "apr.db", "--trial", 2, "--value", "30")
    warm = invoke("suggest", "--storage", "may.db", "--space", "space.json", "--prior", "apr.db")
    said = " ".join(warm.output.split())
    assert warm.exit_code == 0 and "created study may.db (maximise, as apr.db;" in said, said
    assert wb.Study("may.db").settings["direction"] == "maximize"
    run = invoke("optimize", "objmod:f", "--space", "space.json", "--storage", "o.db", "--prior", "apr.db",
                 "--budget", 1)  # fmt: skip
    assert run.exit_code == 0 and "the new study maximises, as apr.db" in run.output, run.output
    assert wb.Study("o.db").settings["direction"] == "maximize"
    # a flag against it is kept, and said
    other = invoke(
        "suggest", "--storage", "jun.db", "--space", "space.json", "--prior", "apr.db", "--minimize"
    )
    said = " ".join(other.output.split())
    assert other.exit_code == 0 and "note: apr.db was created to maximize; the new study minimises" in said
    assert wb.Study("jun.db").settings["direction"] == "minimize"
    # earlier studies in both directions: the new one's must be said
    both = invoke("suggest", "--storage", "jul.db", "--space", "space.json", "--prior", "apr.db",
                  "--prior", "jun.db")  # fmt: skip
    said = " ".join(both.output.split())
    assert both.exit_code == 1 and "give --maximize or --minimize" in said and not Path("jul.db").exists()
    # the refusal of a flag against a study says how to start again, keeping the results
    turned = invoke("suggest", "--storage", "jun.db", "--maximize")
    said = " ".join(turned.output.split())
    assert turned.exit_code == 1 and "warmbo export jun.db --complete -o results.csv" in said, said


def test_a_mistyped_trial_id_lists_the_suggestions_waiting_for_a_result(workdir):
    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 3)
    invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", "2")
    wrong = invoke("observe", "--storage", "lab.db", "--trial", 99, "--value", "2")
    said = " ".join(wrong.output.split())
    assert wrong.exit_code == 1 and "no trial with id 99 in study 'lab.db'" in said, said
    assert "the suggestions waiting for a result are trials 2, 3" in said, said
    slip = invoke("suggest", "--storage", "other.db", "--space", "spaec.json")  # (a space file's name)
    said = " ".join(slip.output.split())
    assert (
        slip.exit_code == 1 and "space file 'spaec.json' does not exist: did you mean 'space.json'?" in said
    )
    bare = invoke("status", "--storage", "lab")  # (the study's name without its ending)
    assert bare.exit_code == 1 and "did you mean 'lab.db'?" in bare.output, bare.output


def test_a_new_study_one_typo_from_an_existing_one_is_refused_without_create(workdir):
    # a chemist user test: `suggest --space ... --storage lab.bd` created a second study beside
    # lab.db with a warning on stderr, under the suggestions, easy to miss
    assert invoke("suggest", "--storage", "lab.db", "--space", "space.json").exit_code == 0
    for command in (
        ("suggest",),
        ("enqueue", "--params", '{"x": 0.5, "mode": "a"}'),
        ("optimize", "objmod:f", "--budget", 1),
    ):
        refused = invoke(*command, "--storage", "lab.bd", "--space", "space.json")
        said = " ".join(refused.output.split())
        assert refused.exit_code == 1, refused.output
        assert "no study at 'lab.bd', and 'lab.db' beside it is one: did you mean --storage lab.db?" in said
        assert "add --create" in said and not Path("lab.bd").exists()
    created = invoke("suggest", "--storage", "lab.bd", "--space", "space.json", "--create")
    assert created.exit_code == 0 and "did you mean" not in created.output, created.output
    assert len(wb.Study("lab.bd")) == 1 and len(wb.Study("lab.db")) == 1
    series = invoke("suggest", "--storage", "lab2.db", "--space", "space.json")  # a numbered series
    assert series.exit_code == 0 and "did you mean" not in series.output, series.output
    Path("notes.txt").write_text("a file of a close name that is no study\n")
    assert invoke("suggest", "--storage", "notes.tx", "--space", "space.json").exit_code == 0
    swapped = invoke("suggest", "--storage", "alb.db", "--space", "space.json")  # (two letters swapped)
    assert swapped.exit_code == 1 and "did you mean --storage lab.db?" in swapped.output, swapped.output
    upper = invoke("suggest", "--storage", "Lab.db", "--space", "space.json")  # (another file on Linux)
    assert upper.exit_code == 1 and "did you mean --storage lab.db?" in upper.output, upper.output
    Path("enzyme.db.bak").write_bytes(Path("lab.db").read_bytes())  # an archived study, a new one beside
    fresh = invoke("suggest", "--storage", "enzyme.db", "--space", "space.json")
    assert fresh.exit_code == 0 and "created study enzyme.db" in fresh.output, fresh.output  # (a warning)
    # a close name that is a name of its own (one letter more or less) keeps the warning alone
    other = invoke("suggest", "--storage", "flab.db", "--space", "space.json")
    assert other.exit_code == 0 and len(wb.Study("flab.db")) == 1, other.output


def test_observe_withdraw_takes_a_trial_out_and_status_lists_it(workdir, monkeypatch):
    # a chemist user test: the only way to take out a suggestion run at other settings, or a result
    # recorded twice, was --failed, which the model reads (the worst value there) and status counts
    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 2)
    assert invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", "3").exit_code == 0
    before = study_rows("lab.db")
    for args, message in [
        (("--trial", 2, "--withdraw", "--value", "1"), "alone, not with --value"),
        (("--trial", 2, "--withdraw", "--failed", "--amend"), "not with --failed, --amend"),
        (("--withdraw", "--note", "x"), "--withdraw needs the trial to take out: --trial ID"),
        (("--trial", 2, "--withdraw", "--note", " "), "--note is empty"),
        (("--trial", 9, "--withdraw"), "no trial with id 9"),
    ]:
        refused = invoke("observe", "--storage", "lab.db", *args)
        assert refused.exit_code == 1 and message in " ".join(refused.output.split()), refused.output
    assert study_rows("lab.db") == before  # nothing changed
    monkeypatch.setenv("WARMBO_USER", "ana")
    out = invoke(
        "observe", "--storage", "lab.db", "--trial", 2, "--withdraw", "--note", "run at other settings"
    )
    said = " ".join(out.output.split())
    assert out.exit_code == 0 and "trial 2 withdrawn (was pending, at x=" in said, said
    status = invoke("status", "--storage", "lab.db")
    said = " ".join(status.output.split())
    assert "1 complete, 0 pending, 0 failed" in said, said
    assert "1 withdrawn, read by nothing (kept in the study): trial 2 (run at other settings; by ana)" in said
    again = invoke("observe", "--storage", "lab.db", "--trial", 2, "--value", "4")
    said = " ".join(again.output.split())
    assert again.exit_code == 1 and "trial 2 of study 'lab.db' was withdrawn by ana" in said, said
    assert invoke("export", "--storage", "lab.db", "--out", "t.csv").exit_code == 0
    assert [line.split(",")[0] for line in Path("t.csv").read_text().splitlines()] == [
        "trial",
        "1",
    ]  # (a withdrawn duplicate would be read as prior data)
    # a queued configuration's trial, withdrawn, does not go back into the queue (a review)
    assert invoke("enqueue", "--storage", "lab.db", "--params", '{"x": 0.25, "mode": "a"}').exit_code == 0
    invoke("suggest", "--storage", "lab.db")
    (queued,) = [t for t in wb.Study("lab.db").trials() if t.params == {"x": 0.25, "mode": "a"}]
    assert invoke("observe", "--storage", "lab.db", "--trial", queued.id, "--withdraw").exit_code == 0
    assert wb.Optimizer.load("lab.db").queued() == []
    # a prior row is the import's, not the study's: refused with what to do
    (workdir / "old.csv").write_text("x,mode,y\n0.5,a,1.0\n0.5,a,1.0\n")
    invoke(
        "suggest", "--storage", "imp.db", "--space", "space.json", "--prior", "old.csv", "--transfer", "none"
    )
    row = invoke("observe", "--storage", "imp.db", "--trial", 2, "--withdraw")
    said = " ".join(row.output.split())
    assert (
        row.exit_code == 1
        and "withdraw trial 2: it is a row of prior data" in said
        and "prior remove" in said
    ), said
    # amended as failed, it left no failed trial of the study's own and every later suggest raised
    # "SuccessClassifier needs both complete and failed trials" (hostile-input user test); amended
    # to another value, a re-import of the grown file brought the old value back beside it
    before = [(t.id, t.state, t.value) for t in wb.Study("imp.db").trials()]
    for amend in (["--failed", "--note", "bad row"], ["--value", "1.5"]):
        row = invoke("observe", "--storage", "imp.db", "--trial", 1, "--amend", *amend)
        said = " ".join(row.output.split())
        assert row.exit_code == 1 and "amend trial 1: it is a row of prior data" in said, said
    assert [(t.id, t.state, t.value) for t in wb.Study("imp.db").trials()] == before


def test_one_result_recorded_twice_from_a_suggestions_rounded_settings_is_pointed_out(workdir):
    # a user test: the first run completed the pending suggestion from the settings as `suggest`
    # printed them (rounded), which keeps the suggestion's own; the second, a new trial at the
    # rounded settings, was compared with exact equality and went by without a note
    opt = wb.Optimizer.load  # (the suggestion's stored settings, to print them rounded)
    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 1)
    stored = opt("lab.db").study.trial(1).params
    typed = json.dumps({"x": float(f"{stored['x']:.6g}"), "mode": stored["mode"]})
    assert json.loads(typed)["x"] != stored["x"]  # (rounded: not the stored value)
    args = ("observe", "--storage", "lab.db", "--params", typed, "--value", "33")
    first = invoke(*args)
    assert first.exit_code == 0 and "suggested as trial 1" in " ".join(first.output.split()), first.output
    second = invoke(*args)
    assert second.exit_code == 0, second.output
    said = " ".join(second.output.split())
    assert "note: trial 1 holds the same settings and the same value 33" in said, said


def test_ask_and_tell_are_other_names_of_suggest_and_observe(workdir):
    # Optuna's CLI words (`optuna ask`, `optuna tell`); a user test typed `warmbo tell`: "No such command"
    asked = invoke("ask", "--storage", "lab.db", "--space", "space.json", "--json")
    assert asked.exit_code == 0, asked.output
    trial = json.loads(asked.output.strip().splitlines()[-1])["trial"]
    told = invoke("tell", "--storage", "lab.db", "--trial", trial, "--value", "2.5")
    assert told.exit_code == 0 and f"trial {trial}: value 2.5 stored" in told.output, told.output
    assert wb.Study("lab.db").trial(trial).value == 2.5
    listed = invoke("--help").output
    assert "observe" in listed and " tell " not in listed  # (hidden: one name per command in the list)
    # `warmbo history` (the Python API's opt.history) is `status --all`
    shown = invoke("history", "lab.db")
    assert shown.exit_code == 0 and shown.output == invoke("status", "lab.db", "--all").output
    assert "1 complete" in shown.output and " history " not in listed


def test_amending_a_trial_to_the_value_it_holds_changes_nothing(workdir):
    # before: two people correcting the same typo stored a second amendment, and status then said
    # "amended 2x, was value 55.3" of a trial holding 55.3, hiding the typo it had corrected
    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 1)
    assert invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", "5.53").exit_code == 0
    assert invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", "55.3", "--amend").exit_code == 0
    again = invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", "55.30", "--amend")
    assert again.exit_code == 0 and "trial 1 already holds value 55.3: nothing changed" in again.output
    record = json.loads(wb.Study("lab.db").get_meta("amended:1"))
    assert [r["value"] for r in record] == [5.53]
    status = invoke("status", "--storage", "lab.db")
    assert "amended, was value 5.53" in status.output, status.output


def test_a_prior_csv_error_speaks_the_command_lines_options(workdir):
    # before: suggest --prior with a 'yield' column said "name the column of the values with y=
    # (warmbo optimize: --prior-y COLUMN)": Python's argument, and another command
    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 1)
    (workdir / "old.csv").write_text("x,mode,yield\n0.5,a,30.1\n")
    missing = invoke("suggest", "--storage", "lab.db", "--prior", "old.csv")
    assert missing.exit_code == 1
    said = " ".join(missing.output.split())
    assert "name the column of the values with --prior-y COLUMN" in said, said
    assert "y=" not in said and "warmbo optimize" not in said, said
    (workdir / "eu.csv").write_text("x;mode;y\n0.5;a;30.1\n")
    semicolons = invoke("suggest", "--storage", "lab.db", "--prior", "eu.csv")
    said = " ".join(semicolons.output.split())
    assert semicolons.exit_code == 1 and "give --prior-delimiter ';'" in said, said
    assert "TaskData" not in said and "delimiter=" not in said, said


def test_status_says_how_long_suggestions_have_been_pending_in_hours(workdir, monkeypatch):
    # before: a suggestion taken yesterday read "last heartbeat (or suggestion) 97200 s ago"
    from warmbo.cli import _duration

    assert [_duration(s) for s in (4, 170, 3 * 3600 + 25 * 60, 27 * 3600 + 65, 3600 * 53)] == [
        "4 s", "3 min", "3 h 25 min", "27 h 1 min", "2 d 5 h"
    ]  # fmt: skip
    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 1)
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 27 * 3600)
    status = invoke("status", "--storage", "lab.db")
    assert status.exit_code == 0 and "the latest taken 27 h ago" in status.output, status.output


def test_a_suggestion_names_the_person_who_took_it(workdir):
    # before: the worker was host:pid ("vm:28630"), so `warmbo status` could not say which of the
    # lab's people had taken a pending suggestion
    import getpass

    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 1)
    worker = wb.Study("lab.db").trial(1).worker
    assert worker.startswith(f"{getpass.getuser()}@"), worker
    status = invoke("status", "--storage", "lab.db")
    who = worker.rsplit(":", 1)[0]  # (without the process id, which changes with every command)
    from warmbo.cli import _who

    assert [_who(w) for w in ("ana@pc:123", "ana@pc:123:worker-2", "gpu:0", "pc:77", "prior")] == [
        "ana@pc",
        "ana@pc",
        "gpu:0",
        "pc:77",
        "prior",
    ]  # fmt: skip  (a name of the user's own, or no user name found: shown whole)
    assert f"{who}: 1 suggestion waiting for a result (trial 1)" in status.output, status.output
    assert worker not in status.output  # (the table's column too)
    wb.Study("lab.db").add_trial({"x": 0.1, "mode": "a"}, worker=f"{who}:99999")  # another command's
    status = invoke("status", "--storage", "lab.db")
    assert f"{who}: 2 suggestions waiting for a result (trials 1, 2)" in status.output, status.output
    # a run's pending trials (a heartbeat) are the run's, named with its process
    live = os.getpid()  # (a process of this machine that exists: this one)
    run = wb.Study("lab.db").add_trial({"x": 0.2, "mode": "a"}, worker=f"{who}:{live}")
    wb.Study("lab.db").heartbeat([run.id])
    status = invoke("status", "--storage", "lab.db")
    said = " ".join(status.output.split())
    assert f"run {who}:{live}: 1 pending (trial 3), last heartbeat" in said, said
    assert "stopped or killed" not in said  # (its heartbeat is fresh)
    # a process of this machine that no longer exists is gone at once, fresh heartbeat or not (a
    # Python run ended by SIGTERM records no stop, and read as live for 30 s: a user test)
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    dead = int(ended.stdout)
    host = worker.rsplit(":", 1)[0]
    gone = wb.Study("lab.db").add_trial({"x": 0.3, "mode": "a"}, worker=f"{host}:{dead}")
    wb.Study("lab.db").heartbeat([gone.id])
    said = " ".join(invoke("status", "--storage", "lab.db").output.split())
    assert f"run {who}:{dead}: 1 pending (trial 4), last heartbeat" in said and "stopped or killed" in said, (
        said
    )
    wb.Study("lab.db").withdraw(gone.id)
    # a run whose heartbeat stopped (kill -9) is said to be gone, with what clears its trials; it was
    # listed as if it still ran (a user test: 19 such lines after 30 kills)
    with wb.Study("lab.db").transaction() as conn:
        conn.execute("UPDATE trials SET heartbeat = heartbeat - 600 WHERE id = ?", (run.id,))
    said = " ".join(invoke("status", "--storage", "lab.db").output.split())
    assert f"run {who}:{live}: 1 pending (trial 3), last heartbeat 10 min ago - stopped or killed" in said, (
        said
    )
    assert "`warmbo clean-pending` marks its trials failed" in said


def test_the_advised_observe_command_is_one_line(workdir):
    # before: the console broke "report results with: warmbo observe --storage ... --trial ID
    # --value V" at 80 columns, so the line pasted into a shell ran as two commands
    long_name = "a-study-name-long-enough-to-pass-eighty-columns.db"
    done = invoke("suggest", "--storage", long_name, "--space", "space.json", "-n", 1)
    assert done.exit_code == 0, done.output
    line = next(line for line in done.output.splitlines() if line.startswith("report results with:"))
    assert line.endswith("--trial ID --value V"), done.output


def test_prior_list_mentions_the_sources_a_study_transfers_from(workdir):
    # before: after `suggest --prior old.csv` (transfer auto: the file is stored as a source, not
    # imported), `warmbo prior list` showed an empty table titled "0 prior rows", as if the file
    # had been lost
    (workdir / "old.csv").write_text("x,mode,y\n0.5,a,30.1\n-1.0,a,2.0\n1.5,a,10.0\n")
    made = invoke("suggest", "--storage", "lab.db", "--space", "space.json", "--prior", "old.csv")
    assert made.exit_code == 0, made.output
    listed = invoke("prior", "list", "lab.db")
    said = " ".join(listed.output.split())
    assert listed.exit_code == 0 and "transfers from 1 source task(s) of 3 rows (transfer auto)" in said, said
    invoke("suggest", "--storage", "cold.db", "--space", "space.json")
    assert "transfers from" not in invoke("prior", "list", "cold.db").output


def test_a_failure_reported_twice_keeps_the_first_reason(workdir):
    # before: a second `observe --trial N --failed --note ...` replaced the first reason in the study
    # (two people reporting the same instrument error, one of them with other words)
    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 1)
    args = ("observe", "--storage", "lab.db", "--trial", 1, "--failed")
    assert invoke(*args, "--note", "plate reader error E42").exit_code == 0
    again = invoke(*args)
    assert again.exit_code == 0, again.output
    assert "trial 1 was already marked failed: plate reader error E42; nothing changed" in again.output
    more = invoke(*args, "--note", "lamp flickering")
    assert more.exit_code == 0 and "plate reader error E42; lamp flickering" in more.output, more.output
    assert wb.Study("lab.db").trial(1).error == "plate reader error E42; lamp flickering"


@pytest.mark.parametrize(
    "attrs, said",
    [
        (None, "left out 1 row(s) without a value whose 'state' is not complete (FAIL 1)"),
        (
            ("params", "value"),
            "left out 1 row(s) with no value in 'value' (an empty cell, or such as n/a or #DIV/0!)",
        ),
    ],
)
def test_an_optuna_export_with_a_failed_trial_is_a_prior_on_the_command_line(workdir, attrs, said):
    # an Optuna study's trials_dataframe().to_csv() holds its FAIL trial with an empty value (with a
    # 'state' column, or without one for attrs=("params", "value")): before 9b24c2d and 663429b,
    # --prior refused it ("column 'value': empty value"); its row is left out and said
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    source = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))

    def objective(trial):
        x = trial.suggest_float("x", -2.0, 2.0)
        mode = trial.suggest_categorical("mode", ["a", "; touch pwned"])
        if trial.number == 2:
            raise ValueError("diverged")
        return (x - 0.5) ** 2 + (mode != "a")

    source.optimize(objective, n_trials=6, catch=(ValueError,))
    frame = source.trials_dataframe() if attrs is None else source.trials_dataframe(attrs=attrs)
    frame.to_csv("optuna.csv", index=False)
    rename = ("--prior-rename", "params_x=x", "--prior-rename", "params_mode=mode")
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "new.db", "--budget", 2)
    result = invoke(*args, "--prior", "optuna.csv", "--prior-y", "value", *rename, "--transfer", "none")
    told = " ".join(result.output.split())
    assert result.exit_code == 0, told
    assert f"optuna.csv: {said}" in told and "failed or unfinished trials" in told
    assert wb.Optimizer.load("new.db")._prior_rows() == 5
    # a value that is not a number is still refused, naming its row and column
    text = Path("optuna.csv").read_text().splitlines()
    header = text[0].split(",")
    row = text[1].split(",")
    row[header.index("value")] = "oops"
    with open("bad.csv", "w") as fh:
        fh.write("\n".join([text[0], ",".join(row)]) + "\n")
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "bad.db", "--budget", 2)
    bad = invoke(*args, "--prior", "bad.csv", "--prior-y", "value", *rename)
    said = " ".join(bad.output.split())
    assert bad.exit_code == 1 and "row 1 (line 2), column 'value': value 'oops' is not a number" in said, said


def test_export_with_force_never_writes_over_the_study_itself(workdir):
    # before: `export lab.db --out lab.db --force` wrote the CSV over the study: every trial was lost
    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 2, "--seed", 0)
    invoke("observe", "--storage", "lab.db", "--trial", 1, "--value", "0.5")
    before = study_rows("lab.db")
    for out in ("lab.db", "./lab.db", str(workdir / "lab.db")):
        for study in ("lab.db", "sqlite:///lab.db"):
            result = invoke("export", study, "--out", out, "--force")
            assert result.exit_code == 1 and "is the study's own file" in result.output, result.output
    assert study_rows("lab.db") == before
    assert invoke("export", "lab.db", "--out", "other.csv", "--force").exit_code == 0  # --force still works
    assert invoke("export", "lab.db", "--out", "other.csv", "--force").exit_code == 0


def test_clean_pending_clears_at_once_the_trials_of_a_run_that_stopped(workdir):
    # before: for 30 s after Ctrl-C (or SIGTERM, or an error) a run's trial kept a fresh heartbeat,
    # and clean-pending, which the interrupted run itself recommends, kept it as "a live run"'s
    space = wb.Space.from_dict(SPACE)

    def stopped(params):
        raise KeyboardInterrupt  # Ctrl-C during the evaluation: the trial stays pending

    opt = wb.Optimizer(space, seed=0, storage="end.db")
    with pytest.raises(KeyboardInterrupt):
        opt.run(stopped, budget=3, progress=False)
    (left,) = opt.study.trials(("pending",))
    assert time.time() - opt.study.last_beats()[left.id] < 30  # a fresh heartbeat: "live" before
    other = wb.Optimizer.load("end.db", worker="machine-b")  # another worker's evaluation, beating
    live = other.ask()
    other.heartbeat(live.trial_id)
    opt.study.close()
    other.study.close()
    shown = invoke("clean-pending", "end.db").output
    assert f"marked 1 pending trial(s) failed: {left.id}" in shown, shown
    assert "its run has stopped (interrupted, or stopped by an error)" in shown
    assert f"kept pending: trial {live.trial_id} " in shown and "it may still be evaluating it" in shown
    states = {t.id: t.state for t in wb.Study("end.db").trials()}
    assert states == {left.id: "failed", live.trial_id: "pending"}
    # a later run of the same worker beats again: its trials are live once more
    again = wb.Optimizer.load("end.db", worker=opt.worker)
    fresh = again.ask()
    time.sleep(0.01)
    again.heartbeat(fresh.trial_id)
    again.study.close()
    assert f"kept pending: trial {fresh.trial_id} " in invoke("clean-pending", "end.db").output


def test_optimizes_final_table_says_it_shows_the_last_ten_trials(workdir):
    # before: titled "12 trials" over the last 10 rows, with no word that two were left out
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "ten.db", "--seed", 0, "--budget")
    shown = invoke(*args, 12).output
    assert "12 trials (minimize)" in shown and "(the last 10 of 12 trials; warmbo status --all" in shown
    small = invoke("optimize", "objmod:f", "--space", "space.json", "--storage", "few.db", "--budget", 4)
    small = small.output
    assert "4 trials (minimize)" in small and "the last 10 of" not in small


def test_status_renames_its_own_columns_when_a_parameter_has_their_name(workdir):
    # before: the header read "trial | state | value | y | state | value | worker"
    space = {"params": [{"type": "float", "name": n, "low": 0, "high": 1} for n in ("y", "state", "value")]}
    (workdir / "clash.json").write_text(json.dumps(space))
    invoke("suggest", "--storage", "c.db", "--space", "clash.json", "--seed", 0)
    shown = invoke("status", "c.db").output
    header = next(line for line in shown.splitlines() if "warmbo_state" in line)
    cells = [c.strip() for c in header.replace("\u2503", "|").replace("\u2502", "|").split("|") if c.strip()]
    assert cells == ["trial", "warmbo_state", "warmbo_value", "y", "state", "value", "worker"], header


def test_optimize_refuses_another_seed_or_transform_on_a_resumed_study(workdir):
    # before: taken without a word and not applied (suggest refused the same --seed)
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "k.db", "--budget")
    assert invoke(*args, 3, "--seed", 0).exit_code == 0
    other = invoke(*args, 4, "--seed", 5)
    assert other.exit_code == 1 and "--seed 5: study k.db keeps the seed it was created with (0)" in (
        other.output
    )
    flat = invoke(*args, 4, "--output-transform", "none")
    assert flat.exit_code == 1 and "keeps the transform it was created with (yeo-johnson)" in flat.output
    assert len(wb.Study("k.db").trials()) == 3  # nothing evaluated under the refused settings
    again = invoke(*args, 4, "--seed", 0, "--output-transform", "yeo-johnson")  # the same: taken
    assert again.exit_code == 0 and len(wb.Study("k.db").trials()) == 4


def test_optimize_takes_the_failure_model_and_a_resumed_study_keeps_its_own(workdir):
    # (session 43: failed evaluations weigh EI by a classifier of success by default; --failures liar
    # keeps the constant liar, stored with a new study)
    args = ("optimize", "objmod:f", "--space", "space.json", "--budget")
    assert invoke(*args, 3, "--storage", "c.db", "--seed", 0).exit_code == 0
    assert wb.Study("c.db").settings["failures"] == "classifier"
    assert invoke(*args, 3, "--storage", "l.db", "--seed", 0, "--failures", "liar").exit_code == 0
    assert wb.Study("l.db").settings["failures"] == "liar"
    assert wb.Optimizer.load("l.db").failures == "liar"
    resumed = invoke("optimize", "objmod:f", "--storage", "l.db", "--budget", 4)
    assert resumed.exit_code == 0 and len(wb.Study("l.db").trials()) == 4
    bad = invoke(*args, 3, "--storage", "b.db", "--failures", "ignore")
    assert bad.exit_code == 1 and "failures must be one of 'classifier', 'liar', got 'ignore'" in bad.output
    assert not (workdir / "b.db").exists()  # (refused before a study was made)


def test_a_log_parameter_from_zero_is_refused_in_the_files_words(workdir):
    # before: 'parameter a: log=True requires low > 0, got low=0.0' (Python's keyword, not the JSON)
    space = {"params": [{"type": "float", "name": "a", "low": 0, "high": 1, "log": True}]}
    (workdir / "logsp.json").write_text(json.dumps(space))
    result = invoke("suggest", "--storage", "lg.db", "--space", "logsp.json")
    assert result.exit_code == 1 and 'parameter a: "log": true needs a "low" above 0, got 0' in result.output
    assert "log=True" not in result.output


def test_a_json_value_that_is_not_a_number_is_shown_as_the_json_wrote_it():
    # before: "the JSON value of 'value' is None, not a number" for {"value": null}
    with pytest.raises(ObjectiveError, match='the JSON value of "value" is null, not a number'):
        parse_values('{"value": null}\n', (), None)
    with pytest.raises(ObjectiveError, match='the JSON value of "acc" is true, not a number'):
        parse_values('{"acc": true, "lat": 3}\n', ("acc", "lat"), None)
    with pytest.raises(ObjectiveError, match=r'has no key\(s\) \["lat"\]; it has \["acc"\]'):
        parse_values('{"acc": 0.5}\n', ("acc", "lat"), None)


def test_observe_says_which_suggestion_a_value_completes_when_tell_matches_it(workdir):
    # settings typed with more digits than printed, the last ones off: the CLI's typed-digits match
    # said "a new trial" while tell completed the suggestion (its 6-significant-digit match)
    space = {"params": [{"type": "float", "name": "x", "low": 0, "high": 1}]}
    (workdir / "ob.json").write_text(json.dumps(space))
    invoke("suggest", "--storage", "ob.db", "--space", "ob.json", "--seed", 0)
    (pending,) = wb.Study("ob.db").trials()
    typed = json.dumps({"x": pending.params["x"] * (1 + 1e-9)})
    shown = invoke("observe", "ob.db", "--params", typed, "--value", 1.0).output
    assert f"trial {pending.id}: value 1 stored (suggested as trial {pending.id} at" in shown, shown
    assert "a new trial" not in shown
    assert [(t.id, t.state) for t in wb.Study("ob.db").trials()] == [(pending.id, "complete")]


def test_observe_warns_of_a_value_the_other_trials_rule_out_and_names_an_earlier_wrong_one(workdir):
    # a user test typed 8.44 for 84.4 and was told nothing (status flags outliers from 10 trials on,
    # and only when run); then a correct value next to an uncorrected typo must not be blamed alone
    space = wb.Space([wb.Float("temp", 40, 120), wb.Float("time", 0.5, 24, log=True)])
    rng = np.random.default_rng(0)

    def lab(p):
        return 85 - 10 * ((p["temp"] - 88) / 18) ** 2 - 8 * np.log(p["time"] / 6) ** 2 + rng.normal(0, 1.5)

    opt = wb.Optimizer(space, maximize=True, storage="lab.db", seed=0)
    for _ in range(8):
        suggestion = opt.ask()
        opt.tell(suggestion, lab(suggestion))
    for _ in range(12):  # right values, noisy: never a warning (12 checks at probability 0.001 each)
        suggestion = opt.ask()
        said = invoke(
            "observe", "lab.db", "--trial", suggestion.trial_id, "--value", round(lab(suggestion), 2)
        )
        assert said.exit_code == 0 and "warning" not in said.output, said.output
    typo = invoke("observe", "lab.db", "--params", '{"temp": 90, "time": 6}', "--value", 8.44)
    assert typo.exit_code == 0 and "warning: 8.44 lies far outside what the other 20 trials" in typo.output
    wrong = max(t.id for t in wb.Study("lab.db").trials())
    assert f"--trial {wrong} --value V --amend" in typo.output
    right = invoke("observe", "lab.db", "--params", '{"temp": 89, "time": 6}', "--value", 84.1)
    assert f"trial {wrong}'s value is the likely wrong one" in " ".join(right.output.split())
    assert [t.value for t in wb.Study("lab.db").trials()][-2:] == [8.44, 84.1]  # (both stored as given)


def test_a_prior_file_with_decimal_commas_is_read_with_prior_decimal(workdir):
    (workdir / "de.csv").write_text("x;mode;y\n0,25;a;1,5\n-0,5;a;2\n")
    args = (
        "suggest",
        "--storage",
        "de.db",
        "--space",
        "space.json",
        "--prior",
        "de.csv",
        "--prior-delimiter",
        ";",
    )
    refused = invoke(*args)
    assert refused.exit_code == 1 and "--prior-decimal ','" in " ".join(refused.output.split())
    assert not (workdir / "de.db").exists()  # (refused before the study was created)
    made = invoke(*args, "--prior-decimal", ",", "--transfer", "none")
    assert made.exit_code == 0, made.output
    assert sorted(t.value for t in wb.Study("de.db").trials() if t.is_complete) == [1.5, 2.0]


def test_observe_does_not_flag_a_right_value_where_the_other_trials_say_nothing(workdir):
    # a user test: after five trials of a warm start at 84-85 (buffer hepes), an exact 64.6 with a
    # buffer never tried, far from them, was "far outside what the other 5 trials predict" (the
    # prediction there is the prior's, its amplitude set by the cluster); a typo inside it still is
    space = {
        "params": [
            {"type": "float", "name": "conc_mM", "low": 0.01, "high": 100, "log": True},
            {"type": "float", "name": "temp_C", "low": 20, "high": 95},
            {"type": "int", "name": "stir_rpm", "low": 100, "high": 1200, "step": 100},
            {"type": "categorical", "name": "buffer", "choices": ["tris", "hepes", "pbs"]},
        ]
    }
    (workdir / "lab.json").write_text(json.dumps(space))
    assert (
        invoke("suggest", "--space", "lab.json", "--storage", "o.db", "--maximize", "--seed", 0).exit_code
        == 0
    )
    assert invoke("observe", "o.db", "--trial", 1, "--withdraw").exit_code == 0
    cluster = [((3.3, 72.8, 600), 84.921), ((5.5, 71.8, 800), 84.35), ((4.5, 70.7, 600), 84.925)]
    cluster += [((1.8, 66.8, 500), 84.607), ((8.5, 76.6, 600), 84.011)]
    for (conc, temp, rpm), value in cluster:
        point = {"conc_mM": conc, "temp_C": temp, "stir_rpm": rpm, "buffer": "hepes"}
        said = invoke("observe", "o.db", "--params", json.dumps(point), "--value", value)
        assert said.exit_code == 0 and "warning" not in said.output, said.output
    far = {"conc_mM": 0.057, "temp_C": 80.8, "stir_rpm": 500, "buffer": "pbs"}
    said = invoke("observe", "o.db", "--params", json.dumps(far), "--value", 64.597)
    assert said.exit_code == 0 and "warning" not in said.output, said.output
    inside = {"conc_mM": 4.0, "temp_C": 71.5, "stir_rpm": 600, "buffer": "hepes"}
    typo = invoke("observe", "o.db", "--params", json.dumps(inside), "--value", 8.49)
    assert "warning: 8.49 lies far outside what the other 6 trials predict" in typo.output, typo.output


@pytest.mark.parametrize("maximize", [True, False])
def test_observes_check_flags_a_typo_under_the_default_output_transform(tmp_path, maximize):
    # a review: the interval was widened on the Yeo-Johnson scale and mapped back, so its far side
    # ran to -225 (maximising) or 3278 (minimising) and a value typed a tenth of the right one passed
    from warmbo.cli import _surprise_line

    space = wb.Space([wb.Float("x", 0, 1), wb.Float("z", 0, 1)])
    sign = 1.0 if maximize else -1.0
    rng = np.random.default_rng(1)
    opt = wb.Optimizer(space, maximize=maximize, seed=0, n_initial=6, storage=str(tmp_path / "s.db"))
    assert opt.output_transform != "none"  # (the default: the case of the review)
    for _ in range(12):
        s = opt.ask()
        opt.tell(s, sign * (80 - 30 * (s["x"] - 0.3) ** 2 - 20 * (s["z"] - 0.6) ** 2) + rng.normal(0, 0.5))
    right = sign * (80 - 30 * 0.2**2 - 20 * 0.1**2)
    said = {}
    for label, value in (("right", right), ("typo", right / 10)):
        trial = opt.tell({"x": 0.5, "z": 0.5}, value)
        said[label] = _surprise_line(opt, trial, "s.db")
        opt.amend(trial.id, failed=True, note="test")  # (out of the next check's trials)
    assert said["right"] is None and said["typo"] is not None


def test_warmbo_user_names_the_person_on_a_shared_login(workdir, monkeypatch):
    # a lab computer everyone uses under one account: every trial said that account (a user test)
    import getpass
    import socket

    monkeypatch.setenv("WARMBO_USER", "alice")
    invoke("suggest", "--storage", "lab.db", "--space", "space.json", "-n", 1)
    monkeypatch.setenv("WARMBO_USER", "bob")
    said = invoke("observe", "lab.db", "--params", '{"x": 1, "mode": "a"}', "--value", "2")
    assert said.exit_code == 0, said.output
    took, reported = (t.worker for t in wb.Study("lab.db").trials())
    assert took.startswith("alice@") and reported.startswith("bob@"), (took, reported)
    host = socket.gethostname()
    assert took.startswith(f"alice@{host}:") and reported.startswith(f"bob@{host}:")  # (host and pid kept)
    # bob reports the result of alice's suggestion: kept as a note, which status and export show
    assert invoke("observe", "lab.db", "--trial", 1, "--value", "3").exit_code == 0
    assert wb.Study("lab.db").notes() == {1: "reported by bob"}
    rows = [line for line in invoke("status", "lab.db").output.splitlines() if line.count("│") > 3]
    assert "reported by bob" in rows[0] and "alice@" in rows[0]
    monkeypatch.setenv("WARMBO_USER", "alice")  # (her own results: no such note)
    invoke("suggest", "--storage", "lab.db", "-n", 1)
    assert invoke("observe", "lab.db", "--trial", 3, "--value", "4").exit_code == 0
    assert 3 not in wb.Study("lab.db").notes()
    monkeypatch.setenv("WARMBO_USER", "  ")  # (blank: the login's name, as without it)
    invoke("suggest", "--storage", "lab.db", "-n", 1)
    assert wb.Study("lab.db").trials()[-1].worker.startswith(f"{getpass.getuser()}@")


def test_observe_refuses_a_trial_a_live_run_is_evaluating_and_a_run_says_when_its_result_is_dropped(workdir):
    # a user test: `observe --trial 1` while `warmbo optimize` evaluated trial 1 stored the person's
    # value, and the run dropped its own measurement without a word (--withdraw was refused)
    space = wb.Space([wb.Float("x", -2.0, 2.0), wb.Categorical("mode", ["a", "; touch pwned"])])
    run = wb.Optimizer(space, storage="live.db", seed=0)
    evaluating = run.ask()
    run.heartbeat()  # what a run does while it evaluates: its trial is now a live run's
    person = wb.Optimizer.load("live.db").ask()  # a suggestion waiting for a person: no heartbeat
    for given in (("--trial", evaluating.trial_id), ("--params", json.dumps(dict(evaluating)))):
        result = invoke("observe", "live.db", *given, "--value", 5)
        assert (
            result.exit_code == 1
            and f"trial {evaluating.trial_id} is being evaluated by a live run" in result.output
        )
        assert "--amend" in result.output
    assert invoke("observe", "live.db", "--trial", person.trial_id, "--value", 4).exit_code == 0
    assert [(t.id, t.state, t.value) for t in wb.Study("live.db").trials()] == [
        (evaluating.trial_id, "pending", None),
        (person.trial_id, "complete", 4.0),
    ]
    # a run whose trial someone records meanwhile (a Python tell, another worker) says so
    (workdir / "meddle.py").write_text(
        "import warmbo as wb\n"
        "def f(p):\n"
        "    study = wb.Study('meddled.db')\n"
        "    pending = study.trials(('pending',))[-1]\n"
        "    study.complete(pending.id, 5.0)\n"
        "    return 1.0\n"
    )
    result = invoke("optimize", "meddle:f", "--space", "space.json", "--budget", 2, "--storage", "meddled.db")
    assert result.exit_code == 0, result.output
    assert "warning: trial 1 was recorded by another worker meanwhile" in result.output
    assert "this evaluation's outcome is not stored" in result.output
    assert [t.value for t in wb.Study("meddled.db").trials()] == [5.0, 5.0]


def test_a_prior_study_with_a_parameter_removed_since_is_read_as_in_python(workdir):
    # a user test: `--prior two.db` whose study has a parameter the new space dropped was refused on
    # the command line, where docs/transfer.md and wb.Optimizer(space, prior=[url]) read it on the
    # shared parameters with a warning; --transfer none still refuses it, and a CSV file of those
    # trials names the column
    two = wb.Optimizer(wb.Space([wb.Float("x", -2.0, 2.0), wb.Int("layers", 1, 4)]), storage="two.db", seed=0)
    for x, layers in ((0.1, 1), (0.6, 3), (-1.0, 2)):
        two.tell({"x": x, "layers": layers}, (x - 0.5) ** 2 + layers)
    two.study.close()
    (workdir / "one.json").write_text(
        json.dumps({"params": [{"type": "float", "name": "x", "low": -2.0, "high": 2.0}]})
    )
    weighed = invoke("suggest", "--space", "one.json", "--storage", "a.db", "--prior", "two.db")
    assert weighed.exit_code == 0, weighed.output
    assert "warning: prior study 'two.db' has parameters this study has not (layers)" in weighed.output
    assert len(wb.Optimizer.load("a.db").prior) == 3
    refused = invoke(
        "suggest", "--space", "one.json", "--storage", "b.db", "--prior", "two.db", "--transfer", "none"
    )
    assert refused.exit_code == 1 and "parameter 'layers' only in the prior study" in refused.output
    assert not (workdir / "b.db").exists()
    assert invoke("export", "two.db", "--complete", "--out", "two.csv").exit_code == 0
    from_csv = invoke(
        "suggest", "--space", "one.json", "--storage", "c.db", "--prior", "two.csv", "--prior-y", "y"
    )
    assert from_csv.exit_code == 0, from_csv.output
    said = " ".join(from_csv.output.split())
    assert "warning: prior " in said and "has columns that are not parameters of this study and vary" in said
    assert "('layers')" in said and "'trial'" not in said and "'worker'" not in said


def test_a_signal_lost_inside_an_extension_during_suggest_prints_no_traceback(capsys, monkeypatch):
    # a user test, once in ~45: SIGTERM during `suggest -n 30` landed inside scipy's Sobol
    # initialisation (Cython), and Python printed "Exception ignored in ..." with a traceback before
    # the right "stopped by SIGTERM"; an exception raised in __del__ is lost the same way
    import signal as signals

    import typer

    from warmbo.cli import _ask_all_or_nothing

    class Lost:
        def __del__(self):
            os.kill(os.getpid(), signals.SIGTERM)
            for _ in range(1000):  # the handler runs between bytecodes, here: its exception is lost
                time.sleep(0.001)

    class Asking:
        def ask(self, n):
            Lost()  # (collected at once)
            return []

    seen = []  # what Python's hook would print ("Exception ignored in ...")

    def hook(unraisable):
        seen.append(type(unraisable.exc_value).__name__)

    monkeypatch.setattr(sys, "unraisablehook", hook)
    with pytest.raises(typer.Exit) as stopped:
        _ask_all_or_nothing(Asking(), 30)
    assert stopped.value.exit_code == 128 + signals.SIGTERM
    said = capsys.readouterr()
    assert "stopped by SIGTERM: no suggestion was stored" in said.err + said.out
    assert seen == [] and sys.unraisablehook is hook  # (and the hook is given back)


def test_small_words_of_a_user_test(workdir):
    # export --out a folder: "exists: give --force", then with --force "Is a directory"
    assert (
        invoke("optimize", "objmod:f", "--space", "space.json", "--budget", 2, "--storage", "w.db").exit_code
        == 0
    )
    (workdir / "rep").mkdir()
    for extra in ((), ("--force",)):
        said = invoke("export", "w.db", "--out", "rep", *extra)
        assert (
            said.exit_code == 1
            and "rep is a folder: give a file name, e.g. --out rep/trials.csv" in said.output
        )
    # --budget 0 (an import, a look at the table) is not told it evaluated nothing and to give --budget 2
    again = invoke("optimize", "objmod:f", "--budget", 0, "--storage", "w.db")
    assert again.exit_code == 0 and "nothing was evaluated" not in again.output, again.output
    assert "nothing was evaluated. For 1 more, give --budget 3" in invoke(
        "optimize", "objmod:f", "--budget", 1, "--storage", "w.db"
    ).output.replace("\n", " ")


def test_a_prior_studys_source_is_one_whatever_its_spelling_and_keeps_no_password():
    # a review: a PostgreSQL prior's source kept the URL as typed (its password too, printed in the
    # advice to remove it), and another spelling of the same study was another source
    from warmbo.prior import import_source as _prior_source

    spellings = [
        "postgres://lab:secret@db.example:5432/lab?study=enzyme&sslmode=require",
        "postgresql://lab:secret@db.example:5432/lab?sslmode=require&study=enzyme",
        "postgresql://lab:***@db.example:5432/lab?study=enzyme&sslmode=require",  # (as printed)
    ]
    sources = {_prior_source(url) for url in spellings}
    assert sources == {"postgresql://lab:***@db.example:5432/lab?sslmode=require&study=enzyme"}
    assert "secret" not in _prior_source("postgresql://lab@db/lab?study=a%20b&password=secret")
    assert _prior_source("postgresql://lab@db/lab?study=a%20b").endswith("?study=a%20b")


def test_a_module_objective_given_as_a_file_or_misspelled_is_told_how_to_name_it(workdir):
    # a first-time user test: objective.py:loss, an absolute path and a function's case got Python's
    # import error alone
    (workdir / "objective.py").write_text("def loss(p):\n    return p['x']\n")
    args = ("--space", "space.json", "--budget", 1)
    for spec in ("objective.py:loss", f"{workdir / 'objective'}:loss"):
        said = " ".join(invoke("optimize", spec, *args, "--storage", "a.db").output.split())
        assert "give the module's name, not its file: objective:loss" in said, said
    said = " ".join(invoke("optimize", "objective:Loss", *args, "--storage", "b.db").output.split())
    assert "module 'objective' has no function 'Loss' (did you mean 'loss'?)" in said
    said = " ".join(invoke("optimize", "elsewhere:loss", *args, "--storage", "c.db").output.split())
    assert f"warmbo imports it from the folder it runs in ({workdir})" in said


def test_warmbo_version():
    # a first-time user test: `warmbo --version` was "No such option"
    result = invoke("--version")
    assert result.exit_code == 0 and result.output.strip() == f"warmbo {wb.__version__}"


def test_suggest_n_0_imports_prior_rows_without_asking(workdir):
    # (lab user test) the only import of a spreadsheet was `suggest --prior F --transfer none`, which
    # refused -n 0, so every import (and every re-import of a corrected file) left an unwanted pending
    # suggestion in the study
    (workdir / "old.csv").write_text("x,mode,y\n0.5,a,1.0\n0.25,a,2.0\n")
    (workdir / "more.csv").write_text("x,mode,y\n0.75,a,3.0\n")
    first = invoke(
        "suggest",
        "--storage",
        "imp.db",
        "--space",
        "space.json",
        "--prior",
        "old.csv",
        "--transfer",
        "none",
        "-n",
        0,
    )
    assert first.exit_code == 0 and "no suggestion asked (-n 0)" in first.output, first.output
    again = invoke("suggest", "--storage", "imp.db", "--prior", "more.csv", "--transfer", "none", "-n", 0)
    assert again.exit_code == 0, again.output
    trials = wb.Study("imp.db").trials()
    assert [(t.state, t.value) for t in trials] == [("complete", 1.0), ("complete", 2.0), ("complete", 3.0)]
    assert invoke("suggest", "--storage", "imp.db", "-n", -1).exit_code == 2  # (still bounded below)


def test_enqueue_on_a_file_that_holds_no_study_says_what_the_file_is(workdir):
    # (hostile-input user test) enqueue said "no study at" of another program's database and of an
    # empty (truncated) study file, where every other command named them
    import os
    import sqlite3

    other = sqlite3.connect("other.db")
    other.execute("CREATE TABLE users (name TEXT)")
    other.commit()
    other.close()
    Path("empty.db").touch()
    os.utime("empty.db", (0, 0))  # (settled: not a study another process is creating this moment)
    said = {}
    for name in ("other.db", "empty.db", "nowhere.db"):
        result = invoke("enqueue", "--storage", name, "--params", '{"x": 0.5, "mode": "a"}')
        assert result.exit_code == 1, result.output
        said[name] = " ".join(result.output.split())
    assert "an SQLite database of another program (tables: users)" in said["other.db"]
    assert "is an empty file (0 bytes)" in said["empty.db"]
    assert "no study at 'nowhere.db': create it with the configurations" in said["nowhere.db"]
    assert not Path("nowhere.db").exists() and Path("empty.db").stat().st_size == 0


def test_a_space_file_with_a_byte_order_mark_is_read(workdir):
    # (hostile-input user test) a UTF-8 BOM, as Windows editors write it, was refused with Python's
    # "Unexpected UTF-8 BOM (decode using utf-8-sig)"; a CSV with one was read
    Path("bom.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(SPACE).encode())
    assert invoke("suggest", "--space", "bom.json", "--storage", "bom.db").exit_code == 0
    Path("latin.json").write_bytes(json.dumps(SPACE).replace("mode", "m\xf6de").encode("latin-1"))
    result = invoke("suggest", "--space", "latin.json", "--storage", "latin.db")
    assert result.exit_code == 1 and "is not UTF-8 text" in " ".join(result.output.split()), result.output


@pytest.mark.parametrize("command", ["demo", "export", "audit", "report", "bench", "reproduce"])
def test_every_out_option_takes_o_as_export_does(command):
    # (`warmbo report rl.db -o x` said "No such option: -o" where `warmbo export rl.db -o rl.csv` works:
    # noisy-objective user test)
    shown = invoke(command, "--help")
    assert shown.exit_code == 0 and re.search(r"--out\s+-o\b", shown.output), shown.output
