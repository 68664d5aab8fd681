"""Envelope-BO reproduction (003 Section 4): quick run, determinism, source-noise trend, HPO objectives."""

from __future__ import annotations

import json

import numpy as np
import pytest

from warmbo.experiments.envelope import (
    HPO_PROBLEMS,
    available_methods,
    hpo_run,
    hpo_source,
    run_envelope,
    synthetic_run,
)
from warmbo.problems.hpo import DATASETS, HPOObjective, data_dir, dataset_path, load_dataset


def _need_data():
    folder = data_dir()
    if not folder.is_dir():
        pytest.skip(f"shared data folder {folder} is missing (set WARMBO_DATA)")
    for name in DATASETS:
        path = dataset_path(name)
        if not path.is_file():
            pytest.fail(f"data folder {folder} exists but {path} is missing")


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("envelope")
    result = run_envelope(
        out, repeats=1, quick=True, hpo=False, T=10, methods=["Envelope-BO", "Generic-BO"], seed=0
    )
    return out, result


def test_quick_run_writes_files(quick):
    out, result = quick
    for name in ("results.json", "report.html", "synthetic_related.png", "source_noise.png"):
        assert (out / name).is_file(), name
    payload = json.loads((out / "results.json").read_text())
    assert {"settings", "synthetic", "hpo", "seconds", "headline", "methods"} <= set(payload)
    assert set(payload["synthetic"]) == {"related", "mildly related"}
    for case in payload["synthetic"].values():
        assert set(case) == {"EI", "GP-UCB"}
        for method in ("Envelope-BO", "Generic-BO"):
            entry = case["EI"][method]
            assert entry["errors"] == []
            assert len(entry["percent_of_max"]["mean"]) == 10
            assert {"median", "q25", "q75", "reached", "runs"} <= set(entry["iterations_to_95"])
            curve = np.array(entry["percent_of_max"]["mean"])
            assert np.all(np.diff(curve) >= -1e-9) and 0 < curve[-1] <= 100 + 1e-9
        assert "source_noise" in case["EI"]["Envelope-BO"]


def test_source_noise_lower_when_related(quick):
    """003 Figs. 6 and 9: sigma_s^2 ends lower for the related target than for the mildly related one."""
    _, result = quick
    head = result.headline()["final_source_noise"]
    for acq in ("EI", "GP-UCB"):
        related, mild = head[f"related / {acq}"], head[f"mildly related / {acq}"]
        assert related < 0.5 < mild, (acq, related, mild)  # prior mode nu0 / (tau0 + 1) = 0.5


def test_synthetic_run_deterministic():
    a = synthetic_run("related", "Envelope-BO", "EI", repeat=0, seed=3, T=6)
    b = synthetic_run("related", "Envelope-BO", "EI", repeat=0, seed=3, T=6)
    assert a.error is None
    assert a.values == b.values
    np.testing.assert_array_equal(a.source_noise, b.source_noise)  # nan before the first fit


def test_methods_listed():
    methods = available_methods()
    assert methods[:2] == ["Envelope-BO", "Generic-BO"]


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="unknown methods"):
        run_envelope(tmp_path, quick=True, methods=["nope"])
    with pytest.raises(ValueError, match="unknown case"):
        synthetic_run("unrelated", "Envelope-BO", "EI", repeat=0)


def test_missing_data_file_is_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="mushrooms"):
        load_dataset("mushrooms", tmp_path)


@pytest.mark.parametrize("model", ["svm", "enet"])
@pytest.mark.parametrize("dataset", list(DATASETS))
def test_hpo_objectives_in_range(model, dataset):
    _need_data()
    f = HPOObjective(model, dataset, seed=0)
    points = f.space.decode(np.array([[0.5, 0.5], [0.9, 0.2]]))
    values = [f(p) for p in points]
    assert all(np.isfinite(v) and 0.0 <= v <= 1.0 for v in values)
    assert values == [f(p) for p in points]  # deterministic


def test_hpo_run_end_to_end():
    _need_data()
    problem = "SVM mushrooms (case 1)"
    assert problem in HPO_PROBLEMS
    source = hpo_source(problem, repeat=0, n_source=8)
    assert len(source[0]) == 8 and all(0 <= v <= 1 for v in source[1])
    run = hpo_run(problem, "Envelope-BO", "EI", repeat=0, source=source, T=4)
    assert run.error is None and len(run.best) == 4
