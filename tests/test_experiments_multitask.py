"""The multi-task reproduction (001 Section 5; warmbo reproduce multitask): problems, BO loop, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from warmbo.cli import app
from warmbo.experiments.multitask import ALGORITHMS, bo_run, regret_study, run_multitask
from warmbo.kernels import RBF
from warmbo.kernels.multitask import ICM
from warmbo.problems.functions import branin
from warmbo.problems.hpo import data_dir
from warmbo.problems.multitask import (
    INTEL_FILES,
    SINE_CENTRES,
    SINE_WEIGHTS,
    branin_problem,
    build_problem,
    independent_counterpart,
    load_intel_lab,
    perturbed_sine_problem,
    rkhs_problem,
    sensor_problem,
)


def _sensor_available() -> str | None:
    """None when the Intel lab files are there, else the path of the first missing one."""
    folder = data_dir()
    for names in INTEL_FILES.values():
        for name in names:
            if not (folder / name).is_file():
                return str(folder / name)
    return None


_MISSING = _sensor_available()
needs_sensor_data = pytest.mark.skipif(_MISSING is not None, reason=f"Intel lab data missing: {_MISSING}")


# ---------------------------------------------------------------------------------------------- problems
@pytest.mark.parametrize(("n_tasks", "seed"), [(2, 0), (5, 3)])
def test_rkhs_function_and_its_norms(n_tasks, seed):
    p = rkhs_problem(n_tasks, seed, step=0.02, n_centres=20)
    centres = np.asarray(p.info["centres"])[:, None]
    C = np.asarray(p.info["coefficients"])
    assert p.X.shape == (51, 1) and p.F.shape == (51, n_tasks) and C.shape == (20, n_tasks)
    assert np.all(np.isin(centres, p.X)) and np.unique(centres).size == 20
    assert np.all((C >= -1) & (C <= 1))
    # f = sum_i Gamma(., x_i) c_i, with the (N, M, n, n) blocks of the multi-task kernel
    blocks = p.kernel.blocks(p.X, centres)
    assert np.allclose(p.F, np.einsum("nmab,mb->na", blocks, C), atol=1e-10)
    # ||f||_Gamma^2 = c^T G c with the point-major block Gram matrix
    c = C.reshape(-1)
    assert np.isclose(p.b**2, c @ p.kernel.gram(centres) @ c, rtol=1e-10)
    # in the diagonal kernel k D the coefficients are D^{-1} B c_i
    D = np.diag(p.kernel.B)
    d = (C @ p.kernel.B / D).reshape(-1)
    assert np.isclose(p.b_independent**2, d @ p.independent.gram(centres) @ d, rtol=1e-10)
    assert np.allclose(p.independent.B, np.diag(D))
    assert np.all(p.ref < p.F.min(axis=0)) and p.sigma == 0.1


def test_rkhs_problem_is_reproducible_and_B_is_a_gram_matrix():
    a, b = rkhs_problem(3, 11), rkhs_problem(3, 11)
    assert np.array_equal(a.F, b.F) and np.array_equal(a.kernel.B, b.kernel.B)
    assert not np.array_equal(a.F, rkhs_problem(3, 12).F)
    assert np.all(np.linalg.eigvalsh(a.kernel.B) >= -1e-12) and np.all(a.kernel.B >= 0)  # A^T A, A >= 0
    assert a.X.shape == (101, 1)


def test_perturbed_sine_shapes_and_formula():
    p = perturbed_sine_problem()
    x = p.X[:, 0]
    assert p.F.shape == (101, 4) and np.isclose(x[1] - x[0], 0.01)
    bumps = np.exp(-((x[:, None] - np.array(SINE_CENTRES)) ** 2) / (2 * 0.1**2))
    assert np.allclose(p.F - np.sin(2 * np.pi * x)[:, None], 0.6 * bumps @ SINE_WEIGHTS.T)
    assert np.unique(np.argmax(p.F, axis=0)).size > 1  # the tasks' optima differ locally
    assert np.isclose(p.sigma**2, 0.01) and p.kernel.omega == 0.4
    assert np.allclose(p.independent.B, np.eye(4))
    assert np.isclose(p.b, np.max(np.linalg.norm(p.F, axis=1))) and p.b_independent == p.b


def test_shifted_branin_tasks():
    p = branin_problem(grid=12)
    fn = branin()
    low, high = fn.bounds[:, 0], fn.bounds[:, 1]
    Z = low + p.X * (high - low)
    m, s = p.info["scale"]
    assert p.F.shape == (144, 9) and p.X.min() == 0 and p.X.max() == 1
    # task 1 shifted by 1% along x_1, task 2 by 2% along x_2
    assert np.allclose(p.F[:, 0], -(fn(Z - [0.15, 0.0]) - m) / s)
    assert np.allclose(p.F[:, 1], -(fn(Z - [0.0, 0.3]) - m) / s)
    corr = np.corrcoef(p.F.T)
    assert corr.min() > 0.9 and not np.allclose(p.F[:, 0], p.F[:, 8])  # related, not identical
    assert p.kernel.omega == 0.5 and np.all(p.ref < p.F.min(axis=0))


@needs_sensor_data
def test_sensor_problem_loads_and_B_is_psd():
    readings = load_intel_lab()
    assert set(readings) == {"temperature", "humidity"}
    assert all(r.shape == (50, 240) for r in readings.values())
    p = sensor_problem()
    assert p.F.shape == (50, 2) and p.X[:, 0].tolist() == list(range(50))
    K = p.kernel.kernel.K
    assert np.isclose(np.mean(np.diag(K)), 1.0) and np.linalg.eigvalsh(K)[0] > -1e-10
    B = p.kernel.B
    assert B.shape == (2, 2) and np.linalg.eigvalsh(B)[0] >= 0
    assert B[0, 1] < 0  # temperature and humidity move against each other in the lab
    assert p.sigma > 0 and np.isclose(p.sigma**2, p.info["noise_variance"])
    assert np.allclose(p.independent.B, np.diag(np.diag(B)))


def test_sensor_data_missing_names_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="intelTemperatureTrain.csv"):
        sensor_problem(tmp_path)
    with pytest.raises(FileNotFoundError, match="intel_lab"):
        run_multitask(tmp_path / "out", quick=True, parts=["sensor"], data_dir=tmp_path)


def test_bad_inputs():
    with pytest.raises(ValueError, match="unknown problem"):
        build_problem("nope")
    with pytest.raises(ValueError, match="unknown algorithm"):
        bo_run(perturbed_sine_problem(), "GP-UCB", T=2)
    with pytest.raises(ValueError, match="scalarization"):
        bo_run(perturbed_sine_problem(), "MT-KB", "pareto", T=2)
    with pytest.raises(ValueError, match="T must be"):
        bo_run(perturbed_sine_problem(), "MT-KB", T=0)
    with pytest.raises(ValueError, match="unknown part"):
        run_multitask("unused", parts=["fig9"])
    with pytest.raises(ValueError, match="n_tasks"):
        rkhs_problem(0)
    with pytest.raises(ValueError, match="ICM"):
        independent_counterpart("k")


# ---------------------------------------------------------------------------------------------- the loop
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_algorithm_runs_end_to_end(algorithm):
    p = rkhs_problem(3, 0, step=0.05, n_centres=10)
    T = 8
    run = bo_run(p, algorithm, "chebyshev", T, seed=4)
    assert len(run["chosen"]) == len(run["average_regret"]) == len(run["step_seconds"]) == T
    assert all(0 <= i < p.size for i in run["chosen"])
    assert np.all(np.asarray(run["average_regret"]) >= -1e-12)
    assert np.all(np.diff(run["bayes_regret"]) <= 1e-12)  # the best point so far only improves
    assert all(b > 0 for b in run["root_beta"]) and run["stopped"] is None
    if algorithm.endswith("BKB"):
        assert len(run["dictionary_sizes"]) == T and run["method"] == "icm"
        assert all(
            d <= m for d, m in zip(run["distinct_dictionary_sizes"], run["dictionary_sizes"], strict=True)
        )
    else:
        assert run["dictionary_sizes"] == []
    again = bo_run(p, algorithm, "chebyshev", T, seed=4)
    assert again["chosen"] == run["chosen"]  # a pure function of its arguments


def test_it_kb_uses_the_diagonal_kernel_and_its_own_norm():
    p = rkhs_problem(2, 1, step=0.05, n_centres=10)
    mt = bo_run(p, "MT-KB", T=1, seed=0)
    it = bo_run(p, "IT-KB", T=1, seed=0)
    # at t = 1 the information gain is 0, so beta_1^{1/2} = b + sigma/sqrt(eta) sqrt(2 log(1/delta))
    extra = 0.1 / np.sqrt(0.1) * np.sqrt(2 * np.log(10))
    assert np.isclose(mt["root_beta"][0], p.b + extra)
    assert np.isclose(it["root_beta"][0], p.b_independent + extra)


def test_linear_scalarisation_and_a_tabulated_domain():
    K = RBF(3.0)(np.arange(6.0)[:, None], np.arange(6.0)[:, None])
    from warmbo.kernels.tabulated import Tabulated
    from warmbo.problems.multitask import Problem

    kernel = ICM(Tabulated(K), [[1.0, 0.5], [0.5, 1.0]])
    F = np.c_[np.linspace(0, 1, 6), np.linspace(1, 0, 6) ** 2]
    p = Problem(
        "toy",
        np.arange(6.0)[:, None],
        F,
        kernel,
        independent_counterpart(kernel),
        0.1,
        1.5,
        1.5,
        "",
        F.min(0) - 0.1,
    )
    run = bo_run(p, "MT-BKB", "linear", 10, seed=2)
    assert len(run["chosen"]) == 10 and run["scalarization"] == "linear"


def test_step_limits_stop_a_run():
    p = rkhs_problem(2, 0, step=0.05, n_centres=10)
    run = bo_run(p, "MT-KB", T=50, seed=0, max_step_seconds=0.0, regrets=False)
    assert len(run["chosen"]) == 1 and "step 1" in run["stopped"] and "average_regret" not in run


def test_mt_kb_beats_it_kb_on_small_rkhs_problems():
    """001 Fig. 1: learning with the MT kernel gives lower R_C(T)/T than the independent kernel.

    On 8 fixed draws of a 2-task RKHS function (0.05-net, 10 centres, T = 60) MT-KB's R_C(T)/T was below
    IT-KB's in all 8 (ratios 0.87-0.97, mean 0.92). Requiring at least 7 of 8 (a chance of 9/256 under
    "no difference" for a sign test) and a mean ratio below 0.97 leaves room for round-off differences.
    """
    ratios = []
    for seed in range(8):
        p = rkhs_problem(2, seed, step=0.05, n_centres=10)
        mt = bo_run(p, "MT-KB", "chebyshev", 60, seed)["average_regret"][-1]
        it = bo_run(p, "IT-KB", "chebyshev", 60, seed)["average_regret"][-1]
        ratios.append(mt / it)
    ratios = np.asarray(ratios)
    assert np.sum(ratios < 1) >= 7, ratios
    assert ratios.mean() < 0.97, ratios


def test_regret_study_summarises_trials():
    study = regret_study("sine", ["MT-KB", "MOBO"], runs=2, T=5)
    assert study.algorithms == ["MT-KB", "MOBO"] and len(study.runs) == 4
    rows = [r["average_regret"] for r in study.runs if r["algorithm"] == "MT-KB"]
    assert np.allclose(study.mean["MT-KB"], np.mean(rows, axis=0))
    assert np.allclose(study.sd["MT-KB"], np.std(rows, axis=0))
    assert study.final()["MOBO"]["mean"] == study.mean["MOBO"][-1]
    assert study.description["name"] == "sine" and study.description["n_tasks"] == 4


# ---------------------------------------------------------------------------------------------- CLI
def test_cli_reproduce_multitask_quick(tmp_path):
    out = tmp_path / "repro"
    done = CliRunner().invoke(
        app,
        ["reproduce", "multitask", "--quick", "--out", str(out), "--parts", "rkhs,sine", "--parts", "timing"],
    )
    assert done.exit_code == 0, done.output
    assert "MT-KB / IT-KB" in done.output and "timing MT-BKB" in done.output
    payload = json.loads((out / "results.json").read_text())
    assert payload["settings"]["parts"] == ["rkhs", "sine", "timing"]
    assert set(payload["studies"]) == {"rkhs-2", "rkhs-20", "sine"}
    assert set(payload["headline"]["timing"]) == {
        "MT-KB (dense)",
        "MT-KB (ICM, paper)",
        "MT-KB (ICM)",
        "MT-BKB",
    }
    for name in ("fig1_rkhs.png", "fig2_sine_branin.png", "timing.png"):
        assert (out / name).stat().st_size > 1000
    assert not (out / "fig3_sensor.png").exists()


def test_cli_parts_only_for_multitask_and_envelope(tmp_path):
    done = CliRunner().invoke(app, ["reproduce", "metakel", "--parts", "rkhs", "--out", str(tmp_path)])
    assert done.exit_code == 1 and "--part" in done.output


def test_cli_multitask_sensor_with_a_missing_data_dir(tmp_path):
    done = CliRunner().invoke(
        app,
        [
            "reproduce",
            "multitask",
            "--quick",
            "--part",
            "sensor",
            "--data-dir",
            str(tmp_path),
            "--out",
            str(tmp_path),
        ],
    )
    assert done.exit_code == 1 and "intelTemperatureTrain.csv" in done.output.replace("\n", "")


def test_deciding_arms_and_their_sign_tests_against_mobo():
    from warmbo.experiments.multitask import DECIDING, RegretStudy, _learner, sign_tests
    from warmbo.problems.multitask import build_problem

    prob = build_problem("sine", seed=0)
    scal = prob.scalarization("chebyshev")
    settings = {a: _learner(prob, a, scal, 10, 0, None)[1] for a in DECIDING}
    assert settings["MT-KB (tight L)"].lipschitz == "tight" and settings["IT-KB (tight L)"].optimism == "norm"
    assert settings["IT-KB (Remark 2)"].optimism == "trace"
    assert settings["MOBO (random lambda)"].mode == "random"
    assert settings["MOBO (random lambda)"].optimism == "componentwise"
    assert settings["MT + MOBO acquisition"].optimism == "componentwise"
    # paired by trial: 3 wins, 1 loss, 1 tie against MOBO
    runs = [
        {"algorithm": a, "run": r, "average_regret": [1.0, v]}
        for a, values in (("MOBO", [1.0, 1.0, 1.0, 1.0, 1.0]), ("MT-KB", [0.5, 0.9, 0.8, 1.2, 1.0]))
        for r, v in enumerate(values)
    ]
    study = RegretStudy("sine", "chebyshev", 2, ["MOBO", "MT-KB"], {}, {}, {}, {}, runs)
    (row,) = sign_tests(study).values()
    assert (row["wins"], row["losses"], row["ties"]) == (3, 1, 1)
    assert row["mean_ratio"] == pytest.approx(np.mean([0.5, 0.9, 0.8, 1.2, 1.0]))
    assert row["p_value"] == pytest.approx(0.625)  # two-sided binomial, 3 of 4


def test_horizon_part_reruns_the_rkhs_trials_longer_and_its_tables(tmp_path):
    """The ``horizon`` part runs MT-KB and IT-KB on the same f as the first trials of ``rkhs-20``
    (equal traces up to the shorter T), and the page's ``horizon`` and ``timing`` tables come from
    the run: the ratio row is MT-KB / IT-KB at each T, the timing rows one per arm."""
    from warmbo.experiments.multitask_report import doc_tables

    res = run_multitask(tmp_path, quick=True, parts=["rkhs", "horizon", "timing"])
    horizon, rkhs = res.studies["horizon-rkhs-20"], res.studies["rkhs-20"]
    assert horizon.T == 24 and rkhs.T == 12 and horizon.algorithms == ["MT-KB", "IT-KB"]
    for arm in ("MT-KB", "IT-KB"):
        np.testing.assert_allclose(horizon.mean[arm][:12], rkhs.mean[arm][:12])
    tables = doc_tables(res)
    assert {"horizon", "timing"} <= set(tables)
    assert tables["horizon"][0] == "| T | 24 |"
    ratio = float(tables["horizon"][4].split("|")[2])
    assert ratio == pytest.approx(horizon.at("MT-KB", 24) / horizon.at("IT-KB", 24), abs=5e-4)
    arms = [row.split("|")[1].strip() for row in tables["timing"][2:]]
    assert sorted(arms) == sorted(res.timing.runs) and all("finished" in r for r in tables["timing"][2:])


def test_regret_plot_says_what_the_band_is_and_what_r_c_is(tmp_path):
    """Before: the panels said '(2 trials)' and 'R_C(T) / T', not that the line is the mean and the
    band +/- 1 sd, nor what R_C is."""
    from warmbo.experiments.multitask_report import plot_regret

    study = regret_study("sine", ["MT-KB", "MOBO"], runs=2, T=4)
    fig = plot_regret([study], tmp_path / "fig.png")
    ax = fig.axes[0]
    assert "mean, band +/- 1 sd over 2 trials" in ax.get_title()
    assert "cumulative regret" in ax.get_ylabel()
