import json

import numpy as np
import pytest

from warmbo.experiments.tuned_prior import FUNCTIONS, normalised_problem, run_tuned_prior, tuned_prior_run
from warmbo.transfer.mkl import fit_ard_kernel, fit_mkl_kernel


@pytest.mark.parametrize("name", FUNCTIONS)
def test_normalisation_maps_domain_and_outputs(name):
    p = normalised_problem(name, grid=101)
    axis = np.linspace(-1, 1, 101)
    X = np.stack(np.meshgrid(axis, axis, indexing="ij"), axis=-1).reshape(-1, 2)
    f = p(X)
    assert f.min() == pytest.approx(0.0, abs=1e-12)
    assert f.max() <= 1.0 + 1e-12
    assert np.allclose(p(p.optimizers), 1.0)
    assert np.all(np.abs(p.optimizers) <= 1.0)
    assert np.allclose(p.flipped(X), 1.0 - f)


def test_mkl_and_ard_kernels_fit():
    X = np.random.default_rng(0).uniform(size=(20, 2))
    y = np.sin(5 * X[:, 0])
    k, noise = fit_mkl_kernel(X, y, seed=0, return_noise=True, n_restarts=1)
    assert k.gram(X).shape == (20, 20) and noise > 0
    assert np.all(np.linalg.eigvalsh(k.gram(X)) > -1e-8)
    assert fit_ard_kernel(X, y, seed=0, n_restarts=1).gram(X).shape == (20, 20)
    with pytest.raises(ValueError):
        fit_mkl_kernel(X, y, objective="nope")


def test_run_is_deterministic():
    kw = dict(T=2, methods=("plain", "tuned-prior"), acquisitions=("EI",))
    a = tuned_prior_run("himmelblau", 0, seed=3, **kw)
    b = tuned_prior_run("himmelblau", 0, seed=3, **kw)
    assert a.regret == b.regret
    assert set(a.regret) == {"plain-EI", "tuned-prior-EI"}
    assert all(len(v) == 5 for v in a.regret.values())


def test_quick_run_writes_files(tmp_path):
    res = run_tuned_prior(tmp_path, quick=True, methods=("plain", "tuned-prior"))
    for name in ("results.json", "convergence_ei.png", "report.html"):
        assert (tmp_path / name).exists()
    data = json.loads((tmp_path / "results.json").read_text())
    assert {"settings", "mean", "sd", "runs", "headline"} <= set(data)
    assert "final_regret" in res.headline()


def test_cli_reproduce_tuned_prior_quick(tmp_path):
    from typer.testing import CliRunner

    from warmbo.cli import app

    done = CliRunner().invoke(app, ["reproduce", "tuned-prior", "--quick", "--out", str(tmp_path)])
    assert done.exit_code == 0, done.output
    assert "tuned prior beats plain BO" in done.output
    assert (tmp_path / "results.json").is_file() and (tmp_path / "report.html").is_file()
