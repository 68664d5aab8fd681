"""The project's SVM meta-data set (bench/metadata/svm_grid.npz) and its objective, and the transfer
benchmark section that uses it next to HPOBench's."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest

from warmbo.benchmarks import run_suite
from warmbo.problems import svm_grid

STORED = Path(__file__).resolve().parents[1] / "bench" / "metadata" / "svm_grid.npz"


def _fake(path: Path, tasks=("a", "b", "c"), folds: int = 3) -> np.ndarray:
    rng = np.random.default_rng(0)
    lc, lg = np.meshgrid(np.linspace(-2, 3, 4), np.linspace(-3, 2, 3), indexing="ij")
    configs = np.array([(c, g, b) for c, g in zip(lc.ravel(), lg.ravel(), strict=True) for b in (0, 1)])
    scores = rng.uniform(0.4, 0.9, (len(tasks), configs.shape[0], folds))
    np.savez(
        path, tasks=np.array(tasks), sources=np.array(["test"] * len(tasks)), configs=configs, scores=scores
    )
    return scores


@pytest.fixture
def fake_grid(tmp_path, monkeypatch):
    path = tmp_path / "grid.npz"
    scores = _fake(path)
    monkeypatch.setenv("WARMBO_SVM_GRID", str(path))
    svm_grid.load_svm_grid.cache_clear()
    yield scores
    svm_grid.load_svm_grid.cache_clear()


def test_objective_reads_one_fold_and_the_truth_is_the_fold_mean(fake_grid):
    f = svm_grid.SVMGridObjective("b", seed=3)
    assert f.space.is_finite and f.space.candidates.shape == (24, 3)
    for i, params in enumerate(f.space.decode(f.space.candidates)):
        assert f.index(params) == i
        assert f.truth(params) == pytest.approx(fake_grid[1, i].mean())
        assert f(params) in fake_grid[1, i]  # one fold's score
        assert f(params) == f(params)  # the same fold for the same (seed, configuration)
    with pytest.raises(ValueError, match="is not one of the 24 grid candidates"):
        f.index({"C": 0.5, "gamma_scale": 1.0, "balanced": 0.0})
    with pytest.raises(ValueError, match="unknown SVM-grid task 'z'"):
        svm_grid.SVMGridObjective("z")


def test_sources_are_every_other_task_as_a_random_search(fake_grid):
    sources = svm_grid.svm_grid_sources("a", seed=1, n_source=5)
    assert len(sources) == 2
    f = svm_grid.SVMGridObjective("b", seed=1)
    X, y = sources[0]
    assert X.shape == (5, 3) and len(np.unique(X, axis=0)) == 5
    assert np.allclose(y, [f(p) for p in f.space.decode(X)])  # task b's noisy scores


def test_missing_or_malformed_file_gives_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("WARMBO_SVM_GRID", str(tmp_path / "nope.npz"))
    svm_grid.load_svm_grid.cache_clear()
    with pytest.raises(FileNotFoundError, match="SVM meta-data file .*nope.npz is missing"):
        svm_grid.load_svm_grid()
    bad = tmp_path / "bad.npz"
    np.savez(bad, tasks=np.array(["a"]), configs=np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"missing \['scores', 'sources'\]"):
        svm_grid.load_svm_grid(str(bad))
    nan = tmp_path / "nan.npz"
    scores = _fake(nan)
    scores[0, 0, 0] = np.nan
    np.savez(
        nan,
        tasks=np.array(["a", "b", "c"]),
        sources=np.array(["t"] * 3),
        configs=np.load(nan)["configs"],
        scores=scores,
    )
    with pytest.raises(ValueError, match="NaN"):
        svm_grid.load_svm_grid(str(nan))
    svm_grid.load_svm_grid.cache_clear()


def test_the_stored_grid_has_20_tasks_and_reproduces_from_its_script():
    svm_grid.load_svm_grid.cache_clear()
    table = svm_grid.load_svm_grid(str(STORED))
    assert len(table.tasks) >= 20 and table.configs.shape == (288, 3)
    assert np.all((table.values >= 0) & (table.values <= 1))
    assert np.all(
        table.truth.max(axis=1) - table.truth.min(axis=1) > 0.05
    )  # every task separates configurations
    spec = importlib.util.spec_from_file_location("make_svm_grid", STORED.with_name("make_svm_grid.py"))
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    ((name, _, X, y),) = make.load_tasks({"iris"})
    configs, scores = make.score_grid(X, y)
    k = table.row("iris")
    assert np.allclose(10.0 ** configs[:, :2], table.configs[:, :2]) and np.array_equal(
        configs[:, 2], table.configs[:, 2]
    )
    # the same scikit-learn (libsvm) gives the same scores; 0.02 (one iris test point of 50) allows
    # for a changed libsvm tie-break in another version
    assert np.max(np.abs(scores - table.values[k])) <= 0.02


def test_transfer_section_runs_leave_one_task_out_on_both_tables(fake_grid, tmp_path):
    written = run_suite(
        tmp_path / "r", tmp_path / "README.md", ["transfer"], preset="tiny", log=lambda m: None
    )
    report = json.loads(written["transfer"].read_text())
    svm = report["results"]["suites"]["svm"]
    assert svm["tasks"] == ["a", "b", "c"] and svm["n_sources"] == 2
    for name in ("none", "random", "avg-rank", "auto"):
        entry = svm["methods"][name]
        medians = [entry["regret"][k]["median"] for k in ("1", "5")]
        assert 0 <= medians[1] <= medians[0] <= 1  # the best so far only improves
        low, high = entry["evals_to_top1pct"]["ci95_median"]
        assert 1 <= low <= entry["evals_to_top1pct"]["median"] <= high <= 7
    assert report["results"]["suites"]["hpobench"]["n_sources"] == 7
    assert set(report["results"]["scale"]["methods"]) >= {"auto", "envelope", "diff"}
    names = [t["target"] for t in report["targets"]]
    assert "svm: auto at least as good as avg-rank after 1 (medians)" in names
    after5 = next(
        t for t in report["targets"] if t["target"] == "svm: auto better than avg-rank after 5 (medians)"
    )
    # the paired counts over the 3 targets, beside the medians
    counts = [int(w) for w in re.findall(r"on (\d+)", after5["measured"])]
    assert len(counts) == 3 and sum(counts) == 3, after5["measured"]
    assert any("every ask of every transfer method under 1 s" in n for n in names)
    assert "**svm**: 3 targets" in written["readme"].read_text()


def test_a_transfer_run_cut_off_resumes_from_its_checkpoint(fake_grid, tmp_path, monkeypatch):
    # The full section takes about two hours; a session's end used to lose all of it. Cut twice (in the
    # SVM table's first method, then in the scale part), it resumes and ends with the whole run's
    # regret figures. Smaller than "tiny" (two methods, two scale methods) to keep the test short.
    from warmbo.benchmarks import transfer

    sizes = {**transfer.SIZES["tiny"], "methods": ("none", "avg-rank"), "scale": (3, 20, 2)}
    monkeypatch.setitem(transfer.SIZES, "tiny", sizes)
    monkeypatch.setattr(transfer, "TRANSFER", ("auto", "rgpe"))
    whole = run_suite(tmp_path / "whole", None, ["transfer"], preset="tiny", log=lambda m: None)
    run_one, time_method, calls = transfer.run_one, transfer.time_method, []

    def counted_run_one(method, *args):
        calls.append(method)
        if len(calls) == 7:  # 3 HPOBench targets x 2 methods done, the SVM table's first run
            raise KeyboardInterrupt
        return run_one(method, *args)

    def dies_on_rgpe(method, *args):
        if method == "rgpe":
            raise KeyboardInterrupt
        return time_method(method, *args)

    monkeypatch.setattr(transfer, "run_one", counted_run_one)
    out = tmp_path / "cut"
    with pytest.raises(KeyboardInterrupt):
        run_suite(out, None, ["transfer"], preset="tiny", log=lambda m: None)
    checkpoint = out / "transfer.partial.json"
    saved = json.loads(checkpoint.read_text())["done"]
    assert set(saved["hpobench"]) == {"none", "avg-rank"} and not saved.get("svm")

    calls.clear()
    monkeypatch.setattr(transfer, "time_method", dies_on_rgpe)
    messages: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        run_suite(out, None, ["transfer"], preset="tiny", log=messages.append)
    assert any("transfer: resuming from" in m for m in messages)
    assert sum("from the checkpoint" in m for m in messages) == 2  # HPOBench's two methods
    assert calls == ["none"] * 3 + ["avg-rank"] * 3  # the SVM table only
    assert set(json.loads(checkpoint.read_text())["done"]["scale"]) == {"auto"}

    calls.clear()
    monkeypatch.setattr(transfer, "time_method", time_method)
    resumed = run_suite(out, None, ["transfer"], preset="tiny", log=lambda m: None)
    assert calls == [] and not checkpoint.exists()
    first, second = (json.loads(p["transfer"].read_text())["results"] for p in (whole, resumed))
    for suite in ("hpobench", "svm"):
        whole_run, resumed_run = first["suites"][suite]["methods"], second["suites"][suite]["methods"]
        for method in ("none", "avg-rank"):
            assert whole_run[method]["regret"] == resumed_run[method]["regret"], (suite, method)
    assert set(second["scale"]["methods"]) == {"auto", "rgpe"}
    assert second["git_commits"] == first["git_commits"]
