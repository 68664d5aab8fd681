"""The command line: optimize (module:function and --cmd), suggest/observe/status, report, errors."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import warmbo as wb
from warmbo.cli import app

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
print("epoch 10 loss", (x - 0.5) ** 2 + (0 if mode == "a" else 1))
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
        "import sys\nx = float(sys.argv[1])\nprint('no number here' if x < 0 else 'value', end='')\n"
    )
    cmd = f"{sys.executable} flaky.py {{x}}"
    result = invoke(
        "optimize", "--cmd", cmd, "--space", "space.json", "--budget", 6, "--storage", "f.db", "--seed", 1
    )
    assert result.exit_code == 0, result.output
    trials = wb.Study("f.db").trials()
    assert len(trials) == 6 and all(t.is_failed for t in trials)
    assert "no number" in trials[0].error


def test_optimize_module_function_and_resume(workdir):
    first = invoke(
        "optimize", "objmod:f", "--space", "space.json", "--budget", 5, "--storage", "m.db", "--seed", 0
    )
    assert first.exit_code == 0, first.output
    again = invoke("optimize", "objmod:f", "--budget", 8, "--storage", "m.db")  # space read from the study
    assert again.exit_code == 0, again.output
    assert len(wb.Study("m.db").trials()) == 8


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


@pytest.mark.parametrize(
    "args, message",
    [
        (["observe", "--storage", "h.db", "--trial", 99, "--value", "1"], "no trial with id 99"),
        (["observe", "--storage", "h.db", "--trial", 5, "--value", "abc"], "must be a number"),
        (["observe", "--storage", "h.db", "--trial", 5, "--value", "nan"], "finite"),
        (["observe", "--storage", "h.db", "--trial", 5], "either --value"),
        (["observe", "--storage", "h.db", "--trial", 1, "--value", "2"], "already complete"),
        (["status", "--storage", "missing.db"], "no study"),
        (["optimize", "objmod:f", "--budget", 3, "--storage", "new.db"], "--space is required"),
        (["optimize", "nomodule:f", "--space", "space.json", "--storage", "h.db"], "cannot import"),
        (["optimize", "--space", "space.json", "--storage", "h.db"], "exactly one objective"),
        (
            ["optimize", "--cmd", "python {lr}", "--space", "space.json", "--storage", "h.db"],
            "unknown parameter",
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
        ("x,mode,y\n0.1,a,1.0\n9.0,a,2.0\n", "row 2"),
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


def test_prior_is_imported_once(workdir):
    (workdir / "prior.csv").write_text("x,mode,y\n0.4,a,0.01\n-1.0,a,2.25\n")
    args = ("optimize", "objmod:f", "--space", "space.json", "--storage", "q.db", "--prior", "prior.csv")
    assert invoke(*args, "--budget", 4).exit_code == 0
    assert invoke(*args, "--budget", 5).exit_code == 0
    workers = [t.worker for t in wb.Study("q.db").trials()]
    assert workers.count("prior") == 2 and len(workers) == 5


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
    missing = invoke(*args, "--budget", 6, "--method", "envelope")
    assert missing.exit_code == 1 and "--prior" in missing.output
    unknown = invoke(*args, "--budget", 6, "--prior", "source.csv", "--method", "spline")
    assert unknown.exit_code == 1 and "unknown --method 'spline'" in unknown.output


def test_demo_quick_writes_the_table_plots_and_report(tmp_path):
    result = invoke("demo", "--quick", "--out", tmp_path / "demo")
    assert result.exit_code == 0, result.output
    for panel in ("branin", "hartmann6", "envelope", "tuned prior", "multi-task", "meta-kel"):
        assert panel in result.output
    data = json.loads((tmp_path / "demo" / "results.json").read_text())
    assert len(data["summary"]) == 14  # 2 problems x 3 methods + 4 warm-start panels x 2 methods
    # the output is not a terminal: one plain line per finished problem and method, in run order
    done = re.findall(r"^(.+): (.+) - 2/2 runs done in [\d.]+ s, ([\d.]+) s elapsed$", result.output, re.M)
    assert [(p, m) for p, m, _ in done] == [(row["problem"], row["method"]) for row in data["summary"]]
    elapsed = [float(s) for _, _, s in done]
    assert elapsed == sorted(elapsed)
    assert re.search(r"^demo - 28/28 runs done in", result.output, re.M)
    # and the plain table, uncut, which is also the README block's table (table.md)
    from warmbo.experiments.demo import plain_table, readme_block

    assert plain_table(data) in result.output
    assert (tmp_path / "demo" / "table.md").read_text() == readme_block(data)
    assert "over 2 runs per method (seeds 0, 1; `warmbo demo --quick`" in readme_block(data)
    assert (tmp_path / "demo" / "regret.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "data:image/png;base64," in (tmp_path / "demo" / "report.html").read_text()
