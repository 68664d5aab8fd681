"""The Legendre setup of 000 App. E and the Meta-KeL reproduction (warmbo reproduce metakel)."""

from __future__ import annotations

import contextlib
import json
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from multiprocessing import get_context

import numpy as np
import pytest
from numpy.polynomial import legendre as npleg
from typer.testing import CliRunner

from warmbo.cli import app
from warmbo.experiments.metakel import (
    CALIBRATION_KERNELS,
    REGRET_KERNELS,
    calibration,
    regret,
    regret_run,
    run_metakel,
    support_recovery,
)
from warmbo.problems import LegendreFunction, LegendreSetup


# ---------------------------------------------------------------------------------------------- generator
def legendre_coefficients(f: LegendreFunction, p: int) -> np.ndarray:
    """<f, phi_j>_{L2[-1, 1]} for j = 1..p by Gauss-Legendre quadrature (exact for these polynomials)."""
    nodes, weights = npleg.leggauss(2 * p + 2)
    values = f(nodes)
    out = np.zeros(p)
    for j in range(1, p + 1):
        coef = np.zeros(j + 1)
        coef[j] = np.sqrt((2 * j + 1) / 2)
        out[j - 1] = np.sum(weights * values * npleg.legval(nodes, coef))
    return out


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_setup_support_and_weights(seed):
    setup = LegendreSetup(seed=seed)
    assert setup.support.shape == (setup.s,) == (5,)
    assert np.all(np.diff(setup.support) > 0) and 0 <= setup.support.min() and setup.support.max() < setup.p
    assert np.isclose(setup.eta.sum(), 1.0, atol=1e-12)
    assert np.all(setup.eta[setup.support] > 0)
    assert np.count_nonzero(setup.eta) == setup.s
    assert [k.j for k in setup.base] == list(range(1, setup.p + 1))
    X = np.linspace(-1, 1, 7)[:, None]
    manual = sum(setup.eta[j] * setup.base[j](X, X) for j in setup.support)
    assert np.allclose(setup.k_star(X, X), manual, atol=1e-12)
    assert LegendreSetup(seed=seed).support.tolist() == setup.support.tolist()


@pytest.mark.parametrize("seed", [0, 3])
def test_task_function_has_norm_B_in_k_star(seed):
    setup = LegendreSetup(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(20):
        f = setup.sample_function(rng)
        assert set(f.support.tolist()) <= set(setup.support.tolist()) and 1 <= f.support.size <= setup.s
        assert np.all(f.beta >= 0)
        c = legendre_coefficients(f, setup.p)  # coefficients on the orthonormal features
        assert np.allclose(c[~np.isin(np.arange(setup.p), setup.support)], 0.0, atol=1e-10)
        norm = np.sqrt(np.sum(c[setup.support] ** 2 / setup.eta[setup.support]))  # ||f||_{k*} (000 App. B.1)
        assert abs(norm - setup.B) < 1e-10
        assert abs(f.norm - setup.B) < 1e-10


def test_function_inputs_and_optima():
    setup = LegendreSetup(seed=2)
    f = setup.sample_function(np.random.default_rng(0))
    x = np.linspace(-1, 1, 101)
    assert np.array_equal(f(x), f(x[:, None]))
    with pytest.raises(ValueError, match="shape"):
        f(np.zeros((3, 2)))
    # non-negative coefficients and |P_j| <= P_j(1): the maximiser is always x = 1 (why the regret
    # experiment minimises)
    assert f.argmax(x) == 1.0 and f.maximum(x) == pytest.approx(float(f(np.array([1.0]))[0]))
    assert f.minimum(x) == pytest.approx(f(x).min()) and f(np.array([f.argmin(x)]))[0] == f(x).min()


def test_meta_data_shapes_and_noise():
    setup = LegendreSetup(seed=4)
    tasks = setup.meta_data(30, 40, np.random.default_rng(1))
    assert len(tasks) == 30
    for x, y in tasks:
        assert x.shape == (40, 1) and y.shape == (40,)
        assert np.all(np.abs(x) <= 1)
    same, functions = setup.meta_functions(30, 40, np.random.default_rng(1))
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(tasks, same, strict=True))
    residuals = np.concatenate([y - f(x) for (x, y), f in zip(same, functions, strict=True)])
    assert abs(residuals.std() / setup.noise - 1) < 0.1 and abs(residuals.mean()) < 3 * setup.noise / 30
    with pytest.raises(ValueError, match="m must be"):
        setup.meta_data(0, 5, np.random.default_rng(0))


def test_setup_rejects_bad_arguments():
    with pytest.raises(ValueError, match="at most p"):
        LegendreSetup(p=3, s=4)
    with pytest.raises(ValueError, match="B must be positive"):
        LegendreSetup(B=0.0)
    with pytest.raises(ValueError, match="seed"):
        LegendreSetup(seed=-1)


# ---------------------------------------------------------------------------------------------- reproduction
def test_quick_reproduction_writes_everything(tmp_path):
    result = run_metakel(tmp_path, quick=True)
    for name in ("results.json", "report.html", "calibration.png", "regret.png", "lambda.png", "support.png"):
        assert (tmp_path / name).stat().st_size > 0
    data = json.loads((tmp_path / "results.json").read_text())
    assert {"settings", "calibration", "regret", "lambdas", "support", "seconds", "headline"} <= set(data)
    cal = data["calibration"]
    assert set(cal["coverage_mean"]) == set(CALIBRATION_KERNELS)
    assert all(0 <= v <= 1 for curve in cal["coverage_mean"].values() for v in curve)
    assert len(cal["alphas"]) == len(cal["coverage_mean"]["k_hat"]) and cal["alphas"][-1] == 0.99
    reg = data["regret"]
    assert set(reg["simple_mean"]) == set(REGRET_KERNELS)
    T = data["settings"]["T"]
    for run in reg["runs"]:
        for name in REGRET_KERNELS:
            simple = np.asarray(run["simple"][name])
            assert simple.shape == (T,) and np.all(simple >= 0) and np.all(np.diff(simple) <= 0)
            assert np.all(np.diff(run["cumulative_inference"][name]) >= 0)
    assert set(data["lambdas"]["results"]) == {"0.01", "0.1"}
    assert {row["rule"] for row in data["support"]["rows"]} == {"theory", "0.03"}
    head = data["headline"]
    assert set(head["coverage"]["k_hat"]) == {"0.5", "0.8", "0.9", "0.95"}
    assert head == json.loads(json.dumps(result.headline()))
    page = (tmp_path / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 4 and "Support recovery" in page


def test_results_do_not_depend_on_workers():
    tiny_cal = {"runs": 2, "seed": 5, "m": 10, "n": 10, "n_test": 50}
    tiny_reg = {
        "instances": 2,
        "seed": 5,
        "m": 10,
        "n": 10,
        "T": 4,
        "grid_size": 40,
        "kernels": ("k*", "k_hat"),
    }
    tiny_sup = {"ms": (5,), "ns": (10,), "seeds": 2, "seed": 5}
    inline = [calibration(**tiny_cal), regret(**tiny_reg), support_recovery(**tiny_sup)]
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        pooled = [
            calibration(**tiny_cal, workers=pool),
            regret(**tiny_reg, workers=pool),
            support_recovery(**tiny_sup, workers=pool),
        ]
    for a, b in zip(inline, pooled, strict=True):
        assert asdict(a) == asdict(b)
    other = calibration(**(tiny_cal | {"seed": 6}))
    assert asdict(other)["coverage_mean"] != asdict(inline[0])["coverage_mean"]


def test_regret_run_rejects_unknown_kernels():
    with pytest.raises(ValueError, match="unknown kernels"):
        regret_run(0, kernels=("k_bogus",), T=2, grid_size=10)


def test_maximising_the_raw_target_is_trivial():
    run = regret_run(0, m=10, n=10, T=3, grid_size=41, kernels=("k*", "k_full"), minimize=False)
    assert all(trace[1] == 0.0 for trace in run.simple.values())  # x = 1 is queried by round 2


# ---------------------------------------------------------------------------------------------- CLI
def test_cli_reproduce_quick(tmp_path):
    out = tmp_path / "repro"
    done = CliRunner().invoke(app, ["reproduce", "metakel", "--quick", "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "k_hat" in done.output and "support recovery" in done.output
    assert (out / "results.json").is_file() and (out / "report.html").is_file()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("nope", "unknown experiment"),
    ],
)
def test_cli_reproduce_other_names(name, message, tmp_path):
    done = CliRunner().invoke(app, ["reproduce", name, "--out", str(tmp_path)])
    assert done.exit_code == 1
    assert message in done.output


def test_cli_reproduce_refuses_an_out_that_is_a_file_before_running(tmp_path):
    """Before: the whole run was made, then mkdir failed with '[Errno 17] File exists' and the
    results were lost."""
    taken = tmp_path / "taken"
    taken.write_text("mine")
    done = CliRunner().invoke(app, ["reproduce", "metakel", "--quick", "--out", str(taken)])
    assert done.exit_code == 1
    assert "is a file" in done.output and "calibration (Fig. 4)" not in done.output
    assert taken.read_text() == "mine"


def test_cli_reproduce_refuses_an_out_under_a_file_before_running(tmp_path):
    """Before: the whole run was made, then mkdir failed with '[Errno 20] Not a directory'."""
    taken = tmp_path / "taken"
    taken.write_text("mine")
    done = CliRunner().invoke(app, ["reproduce", "metakel", "--quick", "--out", str(taken / "sub")])
    assert done.exit_code == 1
    text = " ".join(done.output.split())
    assert "a file: give a folder" in text and "calibration (Fig. 4)" not in done.output
    assert taken.read_text() == "mine"


def test_cli_reproduce_keeps_an_earlier_runs_results_unless_forced(tmp_path):
    """Before: a second run into the same --out replaced results.json without a word (a run of other
    --parts of envelope replaced the results of a run of an hour)."""
    out = tmp_path / "repro"
    first = CliRunner().invoke(app, ["reproduce", "metakel", "--quick", "--runs", "1", "--out", str(out)])
    assert first.exit_code == 0, first.output
    before = (out / "results.json").read_text()
    again = CliRunner().invoke(app, ["reproduce", "metakel", "--quick", "--runs", "2", "--out", str(out)])
    assert again.exit_code == 1
    text = " ".join(again.output.split())
    assert "holds the results of an earlier run" in text and "--force" in text
    assert "calibration (Fig. 4)" not in again.output  # refused before running
    assert (out / "results.json").read_text() == before
    forced = CliRunner().invoke(
        app, ["reproduce", "metakel", "--quick", "--runs", "2", "--out", str(out), "--force"]
    )
    assert forced.exit_code == 0, forced.output
    assert json.loads((out / "results.json").read_text())["settings"]["runs_regret"] == 2


def test_quick_keeps_the_runs_given(tmp_path):
    """Before: --quick replaced --runs by its own counts without a word (--quick --runs 1 ran 4
    calibration runs and 3 regret instances)."""
    result = run_metakel(
        tmp_path, quick=True, runs_calibration=1, runs_regret=2, runs_lambda=1, runs_support=1
    )
    assert len(result.calibration.runs) == 1 and len(result.regret.runs) == 2
    assert result.settings["T"] == 10  # the rest stays quick


def test_report_captions_say_what_each_figure_plots(tmp_path):
    """Before: the figures were captioned with their file names, the settings were raw JSON, and the
    regret plots did not say that the bands are +/- 1 sd, over how many instances, or that the
    target is minimised in raw (not normalised) values."""
    run_metakel(tmp_path, quick=True, runs_calibration=1, runs_regret=2, runs_lambda=1, runs_support=1)
    text = " ".join((tmp_path / "report.html").read_text().split())
    assert '{"quick"' not in text and "setup.B = 10.0" in text
    assert "mean over 1 runs, band +/- 1 sd over runs" in text
    assert "mean over 2 instances" in text and "not normalised" in text and "minimised" in text
    assert "Not a figure of 000" in text


def test_regret_plot_says_what_the_band_is(tmp_path):
    """Before: the title was 'GP-UCB regret (Fig. 5)' and the bands were not explained."""
    from warmbo.experiments.metakel_report import plot_regret

    reg = regret(2, 0, T=3, grid_size=41, m=10, n=10, kernels=("k*", "k_full"))
    fig = plot_regret(reg, tmp_path / "regret.png", title="GP-UCB regret (Fig. 5)")
    assert "mean, band +/- 1 sd over 2 instances" in fig.texts[0].get_text()
    assert "target minimised" in fig.axes[0].get_ylabel()


def test_ctrl_c_says_that_the_runs_are_lost_and_leaves_earlier_results(tmp_path):
    """Before: Ctrl-C ended `warmbo reproduce` with status 130 and no word; nothing said that the
    finished parts were not written."""
    import signal
    import subprocess
    import sys

    out = tmp_path / "repro"
    run = subprocess.Popen(
        [sys.executable, "-m", "warmbo.cli", "reproduce", "metakel", "--runs", "20", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as in a terminal
    )
    assert "calibration (Fig. 4)" in run.stdout.readline()  # the first part finished (plain lines: piped)
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=60)
    err = " ".join(err.split())
    assert run.returncode == 130, err
    assert f"interrupted: the runs made so far are lost ({out} is not written)" in err
    assert not out.exists()


@pytest.mark.parametrize(("signum", "group", "status"), [("SIGINT", True, 130), ("SIGTERM", False, 143)])
def test_interrupt_with_workers_ends_at_once_and_leaves_no_worker(signum, group, status, tmp_path):
    """Before: Ctrl-C with --workers 2 (SIGINT to the terminal's process group) waited, at full CPU,
    for every queued run of the part before it said 'interrupted' (minutes, results thrown away), and
    SIGTERM ended warmbo at once leaving its spawned workers behind, orphaned."""
    import os
    import signal
    import subprocess
    import sys

    out = tmp_path / "repro"
    run = subprocess.Popen(
        [sys.executable, "-m", "warmbo.cli", "reproduce", "metakel", "--runs", "60", "--workers", "2"]
        + ["--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # (its own process group, as a terminal's job)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as in a terminal
    )
    try:
        assert "calibration (Fig. 4)" in run.stdout.readline()
        time.sleep(4)  # the workers are inside regret runs, more are queued
        sig = getattr(signal, signum)
        if group:
            os.killpg(run.pid, sig)
        else:
            run.send_signal(sig)
        _, err = run.communicate(timeout=15)
        assert run.returncode == status, err
        assert "interrupted: the runs made so far are lost" in " ".join(err.split())
        deadline = time.monotonic() + 10
        while True:  # the workers (same process group) are gone
            try:
                os.killpg(run.pid, 0)
            except ProcessLookupError:
                break
            assert time.monotonic() < deadline, "worker processes are still running"
            time.sleep(0.2)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
        run.kill()
