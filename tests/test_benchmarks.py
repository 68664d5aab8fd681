"""The benchmark suite runs end to end at its tiny size, without peers, and writes well-formed results."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from warmbo.benchmarks import SECTIONS, Section, overhead, register, run_suite
from warmbo.benchmarks.markdown import _ms
from warmbo.benchmarks.methods import resolve_peers
from warmbo.cli import app


def test_tiny_suite_writes_json_and_markdown(tmp_path):
    messages = []
    written = run_suite(tmp_path / "results", tmp_path / "README.md", preset="tiny", log=messages.append)
    assert set(written) == {"overhead", "quality", "mt", "readme"}
    overhead = json.loads(written["overhead"].read_text())
    assert overhead["section"] == "overhead" and overhead["preset"] == "tiny"
    assert overhead["machine"]["cpu_count"] >= 1 and overhead["machine"]["versions"]["numpy"]
    assert list(overhead["methods"]) == ["warmbo"]
    rows = overhead["results"]["rows"]
    assert {(r["mode"], r["d"], r["n"]) for r in rows} == {("fixed", 2, 8), ("ml2", 2, 8), ("first", 2, 8)}
    for row in rows:
        stats = row["methods"]["warmbo"]["time_s"]
        assert stats["min"] <= stats["median"] <= stats["max"] and stats["min"] > 0
        assert row["methods"]["warmbo"]["memory"]["tracemalloc_bytes"] > 0
        assert row["peer_over_warmbo"] == {}
    loop = overhead["results"]["run"]  # the running loop: 6 -> 10 trials, every ask timed
    assert (loop["d"], loop["n"]) == (6, [6, 7, 8, 9]) and len(loop["ask_s"]) == 4
    assert min(loop["ask_s"]) > 0 and loop["first_s"] == loop["ask_s"][0]
    assert loop["worst_s"] == max(loop["ask_s"]) == loop["ask_s"][loop["n"].index(loop["worst_n"])]
    assert loop["worst_over_median"] == pytest.approx(loop["worst_s"] / loop["median_s"])
    assert loop["worst_over_median"] >= 1
    (target,) = [t for t in overhead["targets"] if t["target"].startswith("running loop")]
    assert target["met"] is None  # the target is the full preset's 1000 -> 1100 run
    quality = json.loads(written["quality"].read_text())
    regret = quality["results"]["problems"]["branin"]["methods"]["warmbo"]["regret"]
    assert set(regret) == {"6", "8"}
    for stats in regret.values():
        low, high = stats["ci95_median"]
        assert 0 <= stats["min"] <= low <= stats["median"] <= high <= stats["max"]
    # more evaluations never increase the simple regret of a run
    assert all(a >= b for a, b in zip(regret["6"]["values"], regret["8"]["values"], strict=True))
    mt = json.loads(written["mt"].read_text())["results"]
    for name in ("MT-KB (ICM, merged)", "MT-KB (ICM, paper)", "MT-BKB"):
        (row,) = mt[name]
        assert row["step"]["min"] > 0 and row["step"]["repeats"] == 2
    assert mt["MT-BKB"][0]["dictionary"] >= mt["MT-BKB"][0]["distinct"] >= 1
    text = written["readme"].read_text()
    assert "## Targets (issues 8, 14 and 15)" in text and "| 2 | 8 |" in text and "| MT-BKB | 60 |" in text
    assert "**a running loop from 6 to 10 trials (warmbo only)**" in text
    assert f"| 6 | 4 (6..9) | {_ms(loop['first_s'])} |" in text and f"8: {_ms(loop['ask_s'][2])} |" in text
    assert "pending: section `mt`" not in text
    assert "## Simple regret" in text and "branin (d=2)" in text


def test_run_suite_is_deterministic_in_what_it_runs(tmp_path):
    a = run_suite(tmp_path / "a", None, ["quality"], preset="tiny", log=lambda m: None)
    b = run_suite(tmp_path / "b", None, ["quality"], preset="tiny", log=lambda m: None)
    first, second = (json.loads(p["quality"].read_text())["results"]["problems"] for p in (a, b))
    assert first["branin"]["methods"]["warmbo"]["regret"] == second["branin"]["methods"]["warmbo"]["regret"]


def test_a_quality_run_cut_off_resumes_from_its_checkpoint(tmp_path, monkeypatch):
    from warmbo.benchmarks.methods import Warmbo

    whole = run_suite(tmp_path / "whole", None, ["quality"], preset="tiny", log=lambda m: None)
    minimize, calls = Warmbo.minimize, []

    def dies_on_the_second_seed(self, problem, budget, seed):
        calls.append(seed)
        if len(calls) == 2:
            raise KeyboardInterrupt  # a session's end, in the middle of the second run
        return minimize(self, problem, budget, seed)

    monkeypatch.setattr(Warmbo, "minimize", dies_on_the_second_seed)
    out = tmp_path / "cut"
    with pytest.raises(KeyboardInterrupt):
        run_suite(out, None, ["quality"], preset="tiny", log=lambda m: None)
    checkpoint = out / "quality.partial.json"
    assert list(json.loads(checkpoint.read_text())["done"]["branin"]) == ["0"]
    monkeypatch.setattr(Warmbo, "minimize", minimize)
    messages = []
    resumed = run_suite(out, None, ["quality"], preset="tiny", log=messages.append)
    assert any("resuming from" in m for m in messages)
    assert sum("quality: branin, seed" in m for m in messages) == 1  # only seed 1 ran again
    assert not checkpoint.exists()
    first, second = (json.loads(p["quality"].read_text())["results"] for p in (whole, resumed))
    same = first["problems"]["branin"]["methods"]["warmbo"]["regret"]
    assert same == second["problems"]["branin"]["methods"]["warmbo"]["regret"]
    assert second["settings"]["git_commits"] == first["settings"]["git_commits"]
    # a checkpoint of other settings is ignored, not mixed in
    checkpoint.write_text(json.dumps({"key": {"preset": "full"}, "done": {"branin": {"0": {}}}}))
    messages.clear()
    run_suite(out, None, ["quality"], preset="tiny", log=messages.append)
    assert any("other settings" in m for m in messages)
    assert sum("quality: branin, seed" in m for m in messages) == 2


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(ValueError, match="unknown benchmark section 'nope'"):
        run_suite(tmp_path, None, ["nope"], preset="tiny")
    with pytest.raises(ValueError, match="preset must be one of"):
        run_suite(tmp_path, None, preset="huge")
    with pytest.raises(ValueError, match="unknown peer 'scikit-opt'"):
        resolve_peers(["scikit-opt"])


def test_a_new_section_registers_once():
    section = Section("probe-section", "Probe", lambda ctx: {}, lambda r: [], lambda r: [])
    try:
        register(section)
        assert SECTIONS["probe-section"] is section
        with pytest.raises(ValueError, match="already registered"):
            register(section)
    finally:
        SECTIONS.pop("probe-section", None)


def test_missing_peer_is_skipped_with_a_message(monkeypatch):
    monkeypatch.setitem(sys.modules, "optuna", None)  # import optuna now raises ImportError
    methods, skipped = resolve_peers(["optuna-tpe"])
    assert methods == []
    assert skipped == [
        "peer optuna-tpe skipped: optuna not installed (pip install 'warmbo[peers]', or make bench-peers)"
    ]


def test_cli_bench_tiny(tmp_path):
    result = CliRunner().invoke(
        app,
        [
            "bench",
            "--tiny",
            "--section",
            "overhead",
            "--out",
            str(tmp_path),
            "--readme",
            str(tmp_path / "R.md"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Targets of issue 8" in result.output
    assert (tmp_path / "overhead.json").is_file() and (tmp_path / "R.md").is_file()


def test_a_target_not_measured_in_one_file_but_measured_in_another_is_listed_once(tmp_path):
    from warmbo.benchmarks.markdown import write_readme

    out = tmp_path / "results"
    written = run_suite(out, None, ["overhead"], preset="tiny", log=lambda m: None)
    alone = json.loads(written["overhead"].read_text())
    alone["targets"] = [
        {"target": "ratio target", "measured": None, "met": None},
        {"target": "absent target", "measured": None, "met": None},
    ]
    peers = json.loads(json.dumps(alone))
    peers["targets"][0] = {"target": "ratio target", "measured": "21x", "met": True}
    written["overhead"].write_text(json.dumps(alone))
    (out / "overhead-peers.json").write_text(json.dumps(peers))
    text = write_readme(out, tmp_path / "README.md", {"overhead": SECTIONS["overhead"]}, {}).read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ratio target")]
    assert rows == ["| ratio target | 21x | yes | `overhead-peers.json` |"]
    # a target that no file measures keeps its 'not measured' rows
    assert text.count("| absent target | - | not measured |") == 2


def test_the_running_loop_starts_from_a_running_optimizer():
    # the loop's first timed ask is a steady one: n trials told and a fit to warm-start from
    from warmbo.benchmarks.methods import Warmbo

    X, y = overhead._data(6, 12, 0)
    opt = Warmbo().running_optimizer(X, y, "run", 0, overhead.test_function(6))
    trials = opt.study.trials()
    assert len(trials) == 12 and all(t.state == "complete" for t in trials)
    assert opt._warm_start  # the previous step's hyperparameters: the next ask is a warm refit
    full = overhead.PRESETS["full"]
    assert (full["run"]["n_start"], full["run"]["n_end"]) == (1000, 1100)  # crosses 1024
    assert 2000 in full["n"]["fixed"] and full["peer_max_n"]["fixed"] >= 2000


def test_the_first_ask_study_is_removed_with_its_ask(tmp_path, monkeypatch):
    # before: every `warmbo bench` run left a warmbo-first-ask-* folder with its study in the temp folder
    import gc
    import tempfile

    from warmbo.benchmarks.methods import Warmbo

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    X, y = overhead._data(2, 6, 0)
    ask = Warmbo().prepare_ask(X, y, "first", 0, overhead.test_function(2))
    (folder,) = tmp_path.glob("warmbo-first-ask-*")
    assert set(ask()) == {"x0", "x1"} and (folder / "study.db").exists()
    del ask
    gc.collect()
    assert not folder.exists()


def test_issue_15_overhead_targets_check_the_measured_values():
    def results(worst_over_median, ratio, run_sizes=(6, 1000, 1100)):
        d, n_start, n_end = run_sizes
        loop = {
            "d": d, "n_start": n_start, "n_end": n_end, "median_s": 0.5,
            "worst_s": 0.5 * worst_over_median, "worst_n": 1024, "worst_over_median": worst_over_median,
        }  # fmt: skip
        row = {"mode": "fixed", "d": 6, "n": 2000, "peer_over_warmbo": {"botorch-logei": ratio}}
        return {"rows": [row], "run": loop}

    def check(res):
        targets = {t["target"]: t for t in overhead.targets(res)}
        loop = targets["running loop 1000 -> 1100 trials, d=6: worst ask under 2x the median ask"]
        fixed = targets["ask, fixed hyperparameters, n=2000, d=6: >= 10x cheaper than BoTorch"]
        return loop, fixed

    loop, fixed = check(results(1.5, 12.0))
    assert loop["met"] is True and loop["measured"].startswith("1.50x (worst 0.750 s at n=1024")
    assert (fixed["measured"], fixed["met"]) == ("12.0x", True)
    loop, fixed = check(results(2.5, 6.0))
    assert loop["met"] is False and fixed["met"] is False
    loop, _ = check(results(1.5, 12.0, run_sizes=(6, 200, 260)))  # the quick preset's run
    assert loop["met"] is None and loop["measured"] is None


def test_issue_15_cost_targets_compare_the_median_time_of_a_run():
    from warmbo.benchmarks import quality

    def method(seconds):
        regret = {"50": {"median": 1.0, "ci95_median": [0.5, 2.0]}}
        return {"regret": regret, "run_time_s": {"median": seconds}}

    results = {
        "settings": {"budgets": [50]},
        "problems": {
            "p": {"methods": {"warmbo": method(0.4), "optuna-gp": method(1.0), "botorch-logei": method(4.4)}}
        },
    }
    cost = {t["target"]: (t["met"], t["measured"]) for t in quality.targets(results) if "time" in t["target"]}
    assert cost == {
        "p, time per run: >= 3x less than optuna-gp": (False, "2.50x (warmbo 0.400 s, optuna-gp 1.00 s)"),
        "p, time per run: >= 10x less than botorch-logei": (
            True,
            "11.00x (warmbo 0.400 s, botorch-logei 4.40 s)",
        ),
    }


def test_issue_15_quality_targets_check_25_and_50_evaluations():
    from warmbo.benchmarks import quality

    def regret(median, interval):
        return {"median": median, "ci95_median": list(interval)}

    results = {
        "settings": {"budgets": [10, 25, 50]},
        "problems": {
            "p": {
                "methods": {
                    "warmbo": {
                        "regret": {"10": regret(9, (8, 10)), "25": regret(5, (4, 6)), "50": regret(1, (0, 2))}
                    },
                    "peer": {
                        "regret": {"10": regret(1, (0, 2)), "25": regret(2, (1, 3)), "50": regret(3, (2, 4))}
                    },
                }
            }
        },
    }
    targets = {t["target"]: t["met"] for t in quality.targets(results)}
    assert targets == {  # after 10 is not a target; after 25 warmbo (5) is above the peer's interval
        "p, regret after 25: warmbo within peer's 95% interval or better": False,
        "p, regret after 50: warmbo within peer's 95% interval or better": True,
    }
    results["settings"]["budgets"] = [5, 10]  # a small preset: its largest budget only
    for budget, value in (("5", 9), ("10", 1)):
        for method in results["problems"]["p"]["methods"].values():
            method["regret"][budget] = regret(value, (value - 1, value + 1))
    assert [t["target"] for t in quality.targets(results)] == [
        "p, regret after 10: warmbo within peer's 95% interval or better"
    ]


def test_sign_test_counts_paired_wins_losses_and_ties():
    from scipy.stats import binomtest

    from warmbo.benchmarks._common import sign_test

    arm = np.array([1.0, 2.0, 3.0, 4.0, 0.5, 7.0])
    base = np.array(
        [2.0, 2.0 + 1e-9, 1.0, 5.0, 0.6, 7.0]
    )  # lower, tie (1e-6 relative), higher, lower, lower, tie
    result = sign_test(arm, base)
    assert (result["wins"], result["losses"], result["ties"]) == (3, 1, 2)
    assert result["p_value"] == pytest.approx(binomtest(3, 4).pvalue)
    assert sign_test(arm, arm)["p_value"] == 1.0
    with pytest.raises(ValueError, match="paired"):
        sign_test(arm, base[:3])


def test_regret_trace_runs_the_users_loop_and_reports_best_so_far():
    import warmbo as wb
    from warmbo.benchmarks._common import regret_trace
    from warmbo.problems import functions as F

    fn = F.branin()
    opt = wb.Optimizer(wb.Space.box([tuple(b) for b in fn.bounds]), seed=0)
    calls = []
    trace, seconds = regret_trace(opt, fn, 6, lambda: calls.append(len(opt.study.trials())))
    values = np.array([t.value for t in opt.study.trials()])
    assert calls == [1, 2, 3, 4, 5, 6]  # after each tell
    np.testing.assert_allclose(trace, np.minimum.accumulate(values) - fn.optimum_value)
    assert np.all(np.diff(trace) <= 0) and seconds > 0


def test_write_results_records_the_end_load_and_makes_the_folder(tmp_path, capsys):
    import json

    from warmbo.benchmarks._common import write_results

    path = tmp_path / "deeper" / "out.json"
    results = {"runs": 3}
    write_results(path, results)
    stored = json.loads(path.read_text())
    assert stored["runs"] == 3 and len(stored["load_average_end"]) == 3
    assert f"wrote {path}" in capsys.readouterr().out
