"""WarmboSearch in a real Ray Tune run (issue 16, item 4): one small local run (12 trials, 2 at a
time on ``num_cpus=2``) with a warmbo Space, the conversion of Tune's search space dicts, and a
save/restore round trip that continues with the same observations. Ray's start-up costs ~4 s and a
12-trial run ~15 s here, so the run is shared by the tests through a module fixture."""

from __future__ import annotations

import math
import signal
import warnings

import numpy as np
import pandas as pd
import pytest
import ray
from ray import tune
from ray.tune.search import Searcher

import warmbo as wb
from warmbo.data import DataError
from warmbo.integrations.ray import WarmboSearch, space_from_tune
from warmbo.optimizer import BudgetNotReachedWarning


def loss(config: dict) -> float:
    return (config["x"] - 0.3) ** 2 + (config["y"] + 0.2) ** 2


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    def bowl(config: dict) -> dict:  # nested: pickled by value (Ray's workers cannot import tests/)
        return {"loss": (config["x"] - 0.3) ** 2 + (config["y"] + 0.2) ** 2}

    sigint = signal.getsignal(signal.SIGINT)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        space = wb.Space([wb.Float("x", -2.0, 2.0), wb.Float("y", -2.0, 2.0)])
        # a user's known configuration first (Tune searchers take points_to_evaluate), then 4 Sobol
        # points and 8 GP-EI proposals
        start = [{"x": 1.5, "y": 1.5}]
        search = WarmboSearch(space, metric="loss", mode="min", seed=0, n_initial=4, points_to_evaluate=start)
        tuner = tune.Tuner(
            bowl,
            tune_config=tune.TuneConfig(search_alg=search, num_samples=13, max_concurrent_trials=2),
            run_config=tune.RunConfig(storage_path=str(tmp_path_factory.mktemp("ray")), verbose=0),
        )
        results = tuner.fit()
    finally:
        ray.shutdown()
        # Tune leaves its own SIGINT handler installed, which swallows the Ctrl-C that later tests
        # send (tests/test_optimizer.py's interrupted runs): the handler from before comes back
        signal.signal(signal.SIGINT, sigint)
    return search, results


def test_tune_run_with_a_warmbo_space(tuned):
    search, results = tuned
    assert len(results) == 13 and results.num_errors == 0
    best = results.get_best_result(metric="loss", mode="min")
    # 12 uniform random points reach loss < 0.01 (a disc of area 0.03 in a box of 16) with
    # probability 2%; 4 Sobol points and 8 GP-EI proposals do
    assert best.metrics["loss"] < 0.01, best.metrics
    study = search.optimizer.study
    assert study.count("complete") == 13 and study.count("pending") == 0
    first = study.trials()[0]  # the given point ran first, and its result reached the optimizer
    assert first.params == {"x": 1.5, "y": 1.5} and first.value == pytest.approx(1.2**2 + 1.7**2)
    assert sorted(t.value for t in study.trials())[0] == pytest.approx(best.metrics["loss"])


def test_a_ray_results_table_as_a_prior_says_how_to_read_it(tuned):
    """A previous experiment's results table (config/<name> columns and the metric) given as prior=
    said only which columns were missing (a Ray Tune user test); it says how to rename them, and the
    renamed table is read."""
    _, results = tuned
    # (the run's parameter y renamed v: a parameter named y is another message, the values' column)
    frame = results.get_dataframe().rename(columns={"config/y": "config/v"})
    space = wb.Space([wb.Float("x", -2.0, 2.0), wb.Float("v", -2.0, 2.0)])
    with pytest.raises(DataError, match=r"looks like a Ray Tune results table") as info:
        WarmboSearch(space, metric="loss", mode="min", prior=frame)
    assert "df.rename(columns=lambda c: c.removeprefix('config/'))" in str(info.value)
    renamed = frame.rename(columns=lambda c: c.removeprefix("config/")).rename(columns={"loss": "y"})
    search = WarmboSearch(space, metric="loss", mode="min", prior=renamed[["x", "v", "y"]])
    search.suggest("t0")
    assert len(search.optimizer.prior) == 13  # every row of the table read


def test_save_and_restore_continue_with_the_same_observations(tuned, tmp_path):
    search, _ = tuned
    path = str(tmp_path / "searcher.pkl")
    pending = search.suggest("running-trial")  # a trial that was running at the checkpoint
    search.save(path)
    restored = WarmboSearch()
    restored.restore(path)
    before = [(t.params, t.state, t.value) for t in search.optimizer.study.trials()]
    after = [(t.params, t.state, t.value) for t in restored.optimizer.study.trials()]
    assert after == before and restored.metric == "loss" and restored.mode == "min"
    # both go on alike: the running trial completes, and the next proposals agree up to the
    # hyperparameter fit (the original warm-starts from its last fit, the restored one fits afresh:
    # seen 1e-5 to 2e-3 apart in the 4 x 4 box); 0.05 still tells a restore that lost or changed
    # observations, which proposes from another model
    for searcher in (search, restored):
        searcher.on_trial_complete("running-trial", {"loss": loss(pending)})
    assert restored.optimizer.study.count("complete") == 14
    mine, theirs = restored.suggest("next"), search.suggest("next")
    assert mine == pytest.approx(theirs, abs=0.05), (mine, theirs)


def test_tune_search_space_dicts_are_converted():
    space = space_from_tune(
        {
            "lr": tune.loguniform(1e-4, 1e-1),
            "model": {"layers": tune.randint(1, 5), "act": tune.choice(["relu", "tanh"])},
            "width": tune.lograndint(8, 257),
            "momentum": tune.uniform(0.5, 0.99),
            "epochs": 10,
        }
    )
    by_name = {p.name: p for p in space.params}
    assert set(by_name) == {"lr", "model/layers", "model/act", "width", "momentum"}
    assert by_name["lr"] == wb.Float("lr", 1e-4, 1e-1, log=True)
    assert by_name["model/layers"] == wb.Int("model/layers", 1, 4)  # Tune's upper bound is exclusive
    assert by_name["width"] == wb.Int("width", 8, 256, log=True)
    assert by_name["model/act"] == wb.Categorical("model/act", ("relu", "tanh"))
    search = WarmboSearch(metric="loss", mode="max", seed=0)
    assert search.set_search_properties(
        None, None, {"a": tune.uniform(0, 1), "b": {"c": tune.choice([1, 2])}}
    )
    config = search.suggest("t0")
    assert set(config) == {"a", "b"} and config["b"]["c"] in (1, 2) and 0 <= config["a"] <= 1
    with pytest.raises(ValueError, match="grid_search"):
        space_from_tune({"g": tune.grid_search([1, 2])})


def test_failed_trials_and_missing_metrics_are_failed_points():
    search = WarmboSearch(wb.Space([wb.Float("x", 0.0, 1.0)]), metric="loss", mode="min", seed=0)
    for i in range(3):
        search.suggest(f"t{i}")
    search.on_trial_complete("t0", {"loss": 0.5})
    search.on_trial_complete("t1", None, error=True)
    search.on_trial_complete("t2", {"accuracy": 0.9})
    states = [t.state for t in search.optimizer.study.trials()]
    assert states == ["complete", "failed", "failed"]
    with pytest.raises(RuntimeError, match="metric and a mode"):
        WarmboSearch(wb.Space([wb.Float("x", 0.0, 1.0)])).suggest("t")
    # the searcher names its optimizer's worker: this was a TypeError at the first suggest
    with pytest.raises(ValueError, match="may not set worker \\(the searcher names its trials' worker"):
        WarmboSearch(wb.Space([wb.Float("x", 0.0, 1.0)]), optimizer_options={"worker": "me"})
    assert math.isfinite(search.optimizer.best.value)


def test_a_misspelt_optimizer_option_is_refused_when_the_searcher_is_made():
    # before, it was a TypeError at the first suggest, inside the Tune run
    with pytest.raises(ValueError, match="Optimizer has no argument acqusition \\(it takes acquisition, "):
        WarmboSearch(wb.Space([wb.Float("x", 0.0, 1.0)]), optimizer_options={"acqusition": wb.UCB()})
    search = WarmboSearch(
        wb.Space([wb.Float("x", 0.0, 1.0)]), "loss", "min", optimizer_options={"acquisition": wb.UCB()}
    )
    assert isinstance(search.suggest("t0"), dict) and isinstance(search.optimizer.acquisition, wb.UCB)


def test_reserved_optimizer_options_are_refused_with_what_to_do_instead(tmp_path):
    # before: "use WarmboSearch's arguments" for all of them, though WarmboSearch has no storage= (nor
    # maximize=, nor worker=), and docs/scale.md said storage= was kept
    space = wb.Space([wb.Float("x", -2.0, 2.0), wb.Float("z", -2.0, 2.0)])
    url = f"sqlite:///{tmp_path / 'run.db'}"
    with pytest.raises(ValueError) as caught:
        WarmboSearch(space, "loss", "min", optimizer_options={"storage": url})
    said = str(caught.value)
    assert said.startswith("optimizer_options may not set storage (")
    assert "a restore re-adds every checkpointed trial" in said and "each trial twice" in said
    assert "search.optimizer.history.complete()" in said and "prior=[url]" in said
    with pytest.raises(
        ValueError, match=r"may not set maximize \(give WarmboSearch's mode='max' or mode='min'"
    ):
        WarmboSearch(space, optimizer_options={"maximize": True})
    with pytest.raises(ValueError, match=r"n_initial \(give WarmboSearch's n_initial=\); seed \(give"):
        WarmboSearch(space, optimizer_options={"seed": 1, "n_initial": 3})
    assert not (tmp_path / "run.db").exists()

    # the advice works: the run's trials told to a study after the run are a later run's prior
    search = WarmboSearch(space, "loss", "min", seed=0, n_initial=3)
    for i in range(4):
        config = search.suggest(f"t{i}")
        search.on_trial_complete(f"t{i}", {"loss": loss({"x": config["x"], "y": config["z"]})})
    keep = wb.Optimizer(search.optimizer.space, storage=url, maximize=False)
    for t in search.optimizer.history.complete():
        keep.tell(t.params, t.value)
    keep.study.close()
    later = WarmboSearch(space, "loss", "min", seed=1, prior=[url])
    assert set(later.suggest("u0")) == {"x", "z"}
    np.testing.assert_allclose(
        np.sort(later.optimizer.prior.y), np.sort([t.value for t in search.optimizer.history])
    )


def test_a_finite_space_with_every_point_running_or_failed_waits_then_finishes():
    # tune.choice(["a", "b"]) with max_concurrent_trials=3: the third suggest found both points
    # pending and raised SpaceExhaustedError out of Tuner.fit; Tune's answer for "not now" is None
    search = WarmboSearch({"c": tune.choice(["a", "b"])}, metric="loss", mode="min", seed=0)
    first, second = search.suggest("t0"), search.suggest("t1")
    assert {first["c"], second["c"]} == {"a", "b"}
    assert search.suggest("t2") is None
    search.on_trial_complete("t0", {"loss": 1.0})
    assert search.suggest("t3") == first  # a complete point may come back; a failed one may not
    search.on_trial_complete("t1", error=True)
    search.on_trial_complete("t3", error=True)
    # every point failed and none is running: no configuration is left, the run ends
    with pytest.warns(BudgetNotReachedWarning, match="no configuration is left"):
        assert search.suggest("t4") == Searcher.FINISHED
    assert search.optimizer.study.count("pending") == 0


def test_points_to_evaluate_come_first_survive_a_checkpoint_and_are_checked():
    space = {"opt": {"lr": tune.loguniform(1e-4, 1e-1)}, "layers": tune.randint(1, 4)}
    points = [{"opt": {"lr": 0.01}, "layers": 2}, {"opt": {"lr": 0.001}, "layers": 3}]
    search = WarmboSearch(space, metric="loss", mode="min", seed=0, points_to_evaluate=points)
    assert search.suggest("t0") == points[0]
    search.on_trial_complete("t0", {"loss": 0.5})
    state = search.get_state()
    restored = WarmboSearch()
    restored.set_state(state)  # a checkpoint between the two keeps the second to run
    for searcher in (search, restored):
        assert searcher.suggest("t1") == points[1]
        assert searcher.suggest("t2") not in points  # then the optimizer's own design
    trials = search.optimizer.study.trials()
    assert [t.state for t in trials] == ["complete", "pending", "pending"]
    assert trials[0].params == {"opt/lr": 0.01, "layers": 2} and trials[0].value == 0.5
    # a point missing a parameter, outside the space, or not a dict is refused when it is given
    for bad, message in [
        ([{"opt": {"lr": 0.01}}], "gives no value for layers: each point"),
        ([{"opt": {"lr": 5.0}, "layers": 2}], "points_to_evaluate\\[0\\]"),
        ({"opt": {"lr": 0.01}, "layers": 2}, "list of configuration dicts"),
    ]:
        with pytest.raises(ValueError, match=message):
            WarmboSearch(space, metric="loss", mode="min", points_to_evaluate=bad)


def test_quantised_domains_are_searched_on_their_grid_and_given_to_tune_as_its_values():
    # before: tune.quniform/qloguniform/qrandint/qlograndint were refused ("cannot convert Float with
    # a Quantized sampler"); each is the multiples k q inside its bounds (both included, Tune's
    # Quantized.sample): then held as an Int over k; now as warmbo's own step (the study holds the
    # values Tune runs), but on a log scale, which step does not take, still as k (log scale kept)
    config = {
        "dropout": tune.quniform(0.0, 0.5, 0.1),  # 0.0 .. 0.5: k = 0 .. 5
        "lr": tune.qloguniform(1e-4, 1e-1, 1e-4),  # k = 1 .. 1000, log-uniform
        "batch": tune.qrandint(16, 256, 16),  # k = 1 .. 16
        "width": tune.qlograndint(8, 512, 8),  # k = 1 .. 64, log-uniform
        "layers": tune.qrandint(1, 4, 1),  # q = 1 is randint: 1 .. 3
    }
    space = space_from_tune(config)
    assert list(space.params) == [
        wb.Float("dropout", 0.0, 0.5, step=0.1),
        wb.Int("lr", 1, 1000, log=True),
        wb.Int("batch", 16, 256, step=16),
        wb.Int("width", 1, 64, log=True),
        wb.Int("layers", 1, 3),
    ]
    # Tune's own sampler draws exactly the grid that the index space holds
    rng = np.random.default_rng(0)
    for name, domain in config.items():
        drawn = set(domain.sample(size=400, random_state=rng))
        step = {"dropout": 0.1, "lr": 1e-4, "batch": 16, "width": 8, "layers": 1}[name]
        p = next(q for q in space.params if q.name == name)
        low, high = (p.low, p.high) if name in ("lr", "width") else (p.low / step, p.high / step)
        grid = {k * step for k in range(round(low), round(high) + 1)}
        assert all(min(abs(v - g) for g in grid) < 1e-12 for v in drawn) or name == "lr", name
    # the searcher gives Tune k q; what it reads back (points_to_evaluate, add_evaluated_point, a
    # checkpoint) is the value again, or the index on a log scale
    points = [{"dropout": 0.3, "lr": 0.001, "batch": 64, "width": 128, "layers": 2}]
    search = WarmboSearch(config, metric="loss", mode="min", seed=0, points_to_evaluate=points)
    first = search.suggest("t0")
    assert first == pytest.approx(points[0]) and isinstance(first["batch"], int)
    assert search.optimizer.study.trials()[0].params == {
        "dropout": 0.3,
        "lr": 10,
        "batch": 64,
        "width": 16,
        "layers": 2,
    }
    search.on_trial_complete("t0", {"loss": 1.0})
    search.add_evaluated_point({"dropout": 0.5, "lr": 0.1, "batch": 256, "width": 512, "layers": 3}, 2.0)
    assert search.optimizer.study.trials()[1].params == {
        "dropout": 0.5,
        "lr": 1000,
        "batch": 256,
        "width": 64,
        "layers": 3,
    }
    restored = WarmboSearch()
    restored.set_state(search.get_state())
    seen = set()
    for i, searcher in enumerate([search, restored] * 4):
        config_i = searcher.suggest(f"s{i}")
        assert isinstance(config_i["batch"], int) and isinstance(config_i["width"], int)
        assert config_i["batch"] % 16 == 0 and 16 <= config_i["batch"] <= 256
        assert config_i["width"] % 8 == 0 and 8 <= config_i["width"] <= 512
        assert round(config_i["dropout"], 1) == config_i["dropout"]  # (0.3, not 3 * 0.1)
        assert 0.0 <= config_i["dropout"] <= 0.5 + 1e-12
        assert 1e-4 - 1e-16 <= config_i["lr"] <= 0.1 + 1e-12
        seen.add(tuple(sorted(config_i.items())))
    assert len(seen) >= 4  # (two searchers on one history: each proposes distinct points of its own)
    # values off the grid, an empty or one-point grid, and prior= with quantised domains are refused
    for bad, message in [
        ([{**points[0], "batch": 60}], "points_to_evaluate\\[0\\]: .*'batch': value 60 is not on its grid"),
        ([{**points[0], "dropout": 0.35}], "'dropout': value 0.35 is not on its grid"),
        ([{**points[0], "width": 100}], "width: 100 is not a multiple of the quantisation step 8"),
    ]:
        with pytest.raises(ValueError, match=message):
            WarmboSearch(config, metric="loss", mode="min", points_to_evaluate=bad)
    with pytest.raises(ValueError, match="there is no multiple of q = 10"):
        space_from_tune({"a": tune.qrandint(1, 9, 10)})
    with pytest.raises(ValueError, match="one multiple"):
        space_from_tune({"a": tune.qrandint(5, 12, 10)})
    with pytest.raises(ValueError, match="prior= with log-quantised Tune domains \\(width: "):
        WarmboSearch({"width": tune.qlograndint(8, 512, 8)}, metric="m", mode="min", prior=[])


def test_a_prior_in_tune_values_is_read_for_quantised_domains():
    # before: prior= with any quantised domain was refused ("the optimizer holds their grid index"),
    # and the study held k, not the values; now the prior's rows are read in the values Tune runs
    config = {"batch": tune.qrandint(16, 256, 16), "dropout": tune.quniform(0.0, 0.5, 0.1)}
    X = [{"batch": b, "dropout": d} for b, d in [(32, 0.1), (96, 0.3), (256, 0.5), (128, 0.2)]]
    y = [(p["batch"] - 96) ** 2 / 1e4 + (p["dropout"] - 0.3) ** 2 for p in X]
    search = WarmboSearch(config, metric="loss", mode="min", seed=0, prior=(X, y), transfer="none")
    first = search.suggest("t0")
    assert search.optimizer.prior.params == tuple(X)
    assert first["batch"] % 16 == 0 and isinstance(first["batch"], int)
    assert search.optimizer.study.trials()[-1].params == first  # the study holds what Tune runs
    with pytest.raises(DataError, match="'batch': value 100 is not on its grid"):
        WarmboSearch(
            config, metric="loss", mode="min", prior=([{"batch": 100, "dropout": 0.1}], [1.0])
        ).suggest("t0")


def test_a_checkpoint_of_the_index_encoding_restores_and_goes_on():
    # a checkpoint saved before quantised domains were warmbo steps holds their grid index k (the
    # state as that version wrote it): it restores with its index space, and completes its running
    # trial and proposes values of the grid, while a new searcher on the same domains holds the values
    config = {"batch": tune.qrandint(16, 256, 16), "dropout": tune.quniform(0.0, 0.5, 0.1)}
    old = {
        "version": 1,
        "space": wb.Space([wb.Int("batch", 1, 16), wb.Int("dropout", 0, 5)]).to_dict(),
        "nested": True,
        "steps": {"batch": (16, True), "dropout": (0.1, False)},
        "metric": "loss",
        "mode": "min",
        "seed": 0,
        "prior": None,
        "transfer": None,
        "n_initial": 2,
        "options": {},
        "started": True,
        "points": [],
        "trials": [
            (1, {"batch": 4, "dropout": 3}, "complete", 0.5, None),
            (2, {"batch": 8, "dropout": 1}, "pending", None, None),
        ],
        "live": {"t1": 2},
    }
    restored = WarmboSearch(config)
    restored.set_state(old)
    restored.on_trial_complete("t1", {"loss": 0.25})
    assert [(t.params, t.value) for t in restored.optimizer.study.trials()] == [
        ({"batch": 4, "dropout": 3}, 0.5),
        ({"batch": 8, "dropout": 1}, 0.25),
    ]
    for i in range(3):
        proposed = restored.suggest(f"t{i + 2}")
        assert proposed["batch"] % 16 == 0 and isinstance(proposed["batch"], int), proposed
        assert abs(proposed["dropout"] * 10 - round(proposed["dropout"] * 10)) < 1e-9, proposed
        restored.on_trial_complete(f"t{i + 2}", {"loss": float(i)})
    again = WarmboSearch()
    again.set_state(restored.get_state())  # (and saved again, it stays the index encoding)
    assert again.optimizer.space == restored.optimizer.space and again.optimizer.study.count("complete") == 5
    fresh = WarmboSearch(config, metric="loss", mode="min", seed=0)
    fresh.suggest("t0")
    assert list(fresh.optimizer.space.params) == [
        wb.Int("batch", 16, 256, step=16),
        wb.Float("dropout", 0.0, 0.5, step=0.1),
    ]


def test_a_tune_run_over_quantised_domains():
    # a real Tune run whose param_space has quantised domains: every trial runs a value of the grid
    def trainable(config: dict) -> dict:
        return {"loss": (config["batch"] - 96) ** 2 / 1e4 + (config["dropout"] - 0.3) ** 2}

    sigint = signal.getsignal(signal.SIGINT)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        search = WarmboSearch(metric="loss", mode="min", seed=1, n_initial=3)
        results = tune.Tuner(
            trainable,
            param_space={"batch": tune.qrandint(16, 256, 16), "dropout": tune.quniform(0.0, 0.5, 0.1)},
            tune_config=tune.TuneConfig(search_alg=search, num_samples=6, max_concurrent_trials=2),
            run_config=tune.RunConfig(verbose=0),
        ).fit()
    finally:
        ray.shutdown()
        signal.signal(signal.SIGINT, sigint)
    assert len(results) == 6 and results.num_errors == 0
    configs = [r.config for r in results]
    assert all(c["batch"] % 16 == 0 and isinstance(c["batch"], int) for c in configs), configs
    assert all(abs(c["dropout"] * 10 - round(c["dropout"] * 10)) < 1e-9 for c in configs), configs
    assert len({(c["batch"], round(c["dropout"], 9)) for c in configs}) == 6  # no grid point twice
    assert search.optimizer.study.count("complete") == 6


def test_log_quantised_values_out_of_range_are_refused_in_tunes_values():
    """points_to_evaluate and add_evaluated_point outside a log-quantised domain are refused in the
    values the user wrote (it said "value 10000 is outside [2, 2000]", indices, for lr = 0.5 of
    qloguniform(1e-4, 0.1, 5e-5): a Ray Tune user test); a NaN metric is failed without advice to
    call tell_failed."""
    config = {"lr": tune.qloguniform(1e-4, 1e-1, 5e-5), "bs": tune.qlograndint(8, 512, 8)}
    with pytest.raises(
        ValueError, match=r"points_to_evaluate\[0\]: parameter 'lr': value 0.5 is outside \[0.0001, 0.1\]"
    ):
        WarmboSearch(config, metric="loss", mode="min", points_to_evaluate=[{"lr": 0.5, "bs": 64}])
    with pytest.raises(ValueError, match=r"parameter 'bs': value 1024 is outside \[8, 512\]"):
        WarmboSearch(config, metric="loss", mode="min", points_to_evaluate=[{"lr": 1e-3, "bs": 1024}])
    search = WarmboSearch(config, metric="loss", mode="min", seed=0)
    with pytest.raises(ValueError, match=r"'lr': value 0.5 is outside \[0.0001, 0.1\]"):
        search.add_evaluated_point({"lr": 0.5, "bs": 64}, 1.0)
    search.suggest("t1")
    search.on_trial_complete("t1", {"loss": float("nan")})
    [failed] = search.optimizer.study.trials()
    assert failed.error == "metric 'loss' is nan, not a finite number"


def test_a_started_searcher_pickles_as_tune_pickles_it_and_goes_on():
    """Tune pickles its search_alg when a Tuner is made: a searcher warm-started with
    add_evaluated_point (or restored) held an in-memory study and could not be given to a Tuner
    (a user test); it pickles as its state, with its trials, the trials in flight and their last
    reported metrics, and goes on."""
    search = WarmboSearch(wb.Space([wb.Float("x", 0.0, 1.0)]), metric="loss", mode="min", seed=0)
    search.add_evaluated_point({"x": 0.25}, 0.0125)
    config = search.suggest("t1")
    search.on_trial_result("t1", {"loss": 0.4, "epoch": 1})
    again = ray.cloudpickle.loads(ray.cloudpickle.dumps(search))
    study = again.optimizer.study
    assert [(t.params, t.state) for t in study.trials()] == [({"x": 0.25}, "complete"), (config, "pending")]
    again.on_trial_complete("t1")  # (stopped while paused: no result; its last reported metric)
    assert study.trials()[1].value == 0.4 and study.trials()[1].state == "complete"
    assert set(again.suggest("t2")) == {"x"}


def test_a_trial_completed_without_a_result_is_told_its_last_reported_metric():
    """Tune completes a trial it stopped while paused (HyperBand) with result=None: it was stored as
    failed, "the result has no metric" (a user test: 4 of 9 finished trials, one Tune's best); it is
    told its last reported metric. A trial that raised, or never reported the metric, still fails."""
    search = WarmboSearch(wb.Space([wb.Float("x", 0.0, 1.0)]), metric="loss", mode="min", seed=0)
    for i in range(4):
        search.suggest(f"t{i}")
    for epoch, value in enumerate((0.9, 0.5, 0.3)):
        search.on_trial_result("t0", {"loss": value, "epoch": epoch})
    search.on_trial_result("t1", {"loss": 0.2})
    search.on_trial_result("t2", {"accuracy": 0.9})
    search.on_trial_complete("t0", None)
    search.on_trial_complete("t1", None, error=True)
    search.on_trial_complete("t2", None)
    search.on_trial_complete("t3", {"loss": 0.7})
    trials = search.optimizer.study.trials()
    assert [(t.state, t.value) for t in trials] == [
        ("complete", 0.3),
        ("failed", None),
        ("failed", None),
        ("complete", 0.7),
    ]
    assert search._last == {}  # (nothing kept for trials that ended)


def test_hyperband_and_a_warm_started_searcher_in_a_real_tune_run(tmp_path):
    """A real Tune run with HyperBandScheduler (which pauses trials and completes some it stops while
    paused with no result) and a searcher warm-started with add_evaluated_point before the Tuner is
    made: every trial's outcome is its last reported loss, none failed, and warmbo's best is Tune's."""

    def trainable(config: dict) -> None:
        for epoch in range(1, 10):
            tune.report({"loss": (config["x"] - 0.3) ** 2 + 1.0 / epoch, "epoch": epoch})

    sigint = signal.getsignal(signal.SIGINT)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        search = WarmboSearch(wb.Space([wb.Float("x", 0.0, 1.0)]), metric="loss", mode="min", seed=0)
        search.add_evaluated_point({"x": 0.9}, 0.5)  # (a Tuner could not pickle this searcher)
        results = tune.Tuner(
            trainable,
            tune_config=tune.TuneConfig(
                search_alg=search,
                scheduler=tune.schedulers.HyperBandScheduler(max_t=9, time_attr="epoch"),
                num_samples=9,
                max_concurrent_trials=2,
                metric="loss",
                mode="min",
            ),
            run_config=tune.RunConfig(storage_path=str(tmp_path), verbose=0),
        ).fit()
    finally:
        ray.shutdown()
        signal.signal(signal.SIGINT, sigint)
    assert len(results) == 9 and results.num_errors == 0
    # (Tune's search_alg is the searcher Tune unpickled, not this object: the trials are in the
    # experiment's searcher checkpoint)
    [state_file] = list(tmp_path.rglob("searcher-state-*.pkl"))
    restored = WarmboSearch()
    restored.restore(str(state_file))
    trials = [t for t in restored.optimizer.study.trials() if t.params != {"x": 0.9}]
    assert len(trials) == 9 and all(t.state == "complete" for t in trials), [
        (t.state, t.error) for t in trials
    ]
    last = {round(r.config["x"], 12): r.metrics["loss"] for r in results}
    assert {round(t.params["x"], 12): t.value for t in trials} == pytest.approx(last)
    best = results.get_best_result(metric="loss", mode="min")
    assert min(t.value for t in trials) == pytest.approx(best.metrics["loss"])


def test_a_checkpoint_holds_the_prior_data_not_a_postgresql_password(postgres_server, tmp_path):
    # before: get_state kept prior= as given, so a PostgreSQL URL's password was written in clear to
    # every Tune experiment checkpoint; now a started searcher's checkpoint holds the prior's rows
    # (read once, as the optimizer holds them) and the restored searcher needs no connection to it
    space = wb.Space([wb.Float("x", -2.0, 2.0), wb.Float("y", -2.0, 2.0)])
    url = postgres_server.url()
    secret_url = url.replace(
        f"postgresql://{postgres_server.user}@", f"postgresql://{postgres_server.user}:s3cret@"
    )
    prior = wb.Optimizer(space, storage=url, seed=0)
    rng = np.random.default_rng(0)
    for x, y in rng.uniform(-2, 2, size=(6, 2)):
        prior.tell({"x": float(x), "y": float(y)}, loss({"x": x, "y": y}))
    prior.study.close()
    search = WarmboSearch(space, metric="loss", mode="min", seed=0, prior=secret_url)
    config = search.suggest("t0")
    search.on_trial_complete("t0", {"loss": loss(config)})
    path = tmp_path / "searcher.pkl"
    search.save(str(path))
    assert b"s3cret" not in path.read_bytes()
    restored = WarmboSearch()
    restored.restore(str(path))
    assert restored.suggest("t1") == search.suggest("t1")
    np.testing.assert_array_equal(restored.optimizer.prior.y, search.optimizer.prior.y)
    assert [t.value for t in restored.optimizer.study.trials()][:1] == [loss(config)]


def test_a_kernel_that_the_transfer_would_drop_is_refused_when_the_searcher_is_made():
    # before: refused only when the optimizer was built, inside the Tune run, after trials were spent
    from warmbo.kernels import RBF

    prior = ([{"x": 0.1}, {"x": 0.5}], [1.0, 2.0])
    space = wb.Space([wb.Float("x", 0.0, 1.0)])
    with pytest.raises(ValueError, match="so kernel= would be ignored: give transfer='none'"):
        WarmboSearch(space, metric="loss", mode="min", prior=prior, optimizer_options={"kernel": RBF(0.2)})
    WarmboSearch(
        space, metric="loss", mode="min", prior=prior, transfer="none", optimizer_options={"kernel": RBF(0.2)}
    )


@pytest.mark.filterwarnings("ignore::warmbo.data.UnfinishedRowsWarning")  # (the Optimizer's own)
def test_a_prior_that_cannot_be_read_is_refused_when_the_searcher_is_made(tmp_path):
    # before: WarmboSearch(space, prior="no_such_file.csv") was accepted, and the DataError came only
    # inside tuner.fit(), when the first suggestion built the optimizer
    space = wb.Space([wb.Float("x", 0.0, 1.0)])
    empty, outside = tmp_path / "empty.csv", tmp_path / "outside.csv"
    empty.write_text("")
    outside.write_text("x,y\n5.0,1.0\n")  # (its x is read in the space: known here; every row outside)
    priors = [
        str(tmp_path / "no_such_file.csv"),
        str(empty),
        str(outside),
        pd.DataFrame({"x": [0.5], "y": [np.nan], "state": ["COMPLETE"]}),
        ([{"x": 0.5}], [np.inf]),
    ]
    for prior in priors:
        with pytest.raises(DataError) as direct:
            wb.Optimizer(space, prior=prior)
        for given in (space, {"x": tune.uniform(0.0, 1.0)}):
            with pytest.raises(DataError) as made:
                WarmboSearch(given, metric="loss", mode="min", prior=prior)
            assert str(made.value) == str(direct.value)
    # without a space (Tune passes its param_space when the run starts): what needs none is refused
    # when the searcher is made, the rest when Tune passes the space, before any trial runs
    with pytest.raises(DataError, match="empty.csv: empty file"):
        WarmboSearch(metric="loss", mode="min", prior=str(empty))
    search = WarmboSearch(metric="loss", mode="min", prior=str(outside))
    with pytest.raises(
        DataError, match=r"every row .*row 1 \(line 2\), column 'x': value 5.0 is outside \[0.0, 1.0\]"
    ):
        search.set_search_properties(None, None, {"x": tune.uniform(0.0, 1.0)})


def test_a_minimised_prior_study_for_a_minimising_searcher_is_read_without_a_direction_warning(
    minimised_study,
):
    # a user test: WarmboSearch(metric=..., mode="min", prior=[a minimised study]) without a space
    # warned PriorDirectionWarning ("this study maximizes") when it was made
    from warmbo.prior import PriorDirectionWarning

    old = minimised_study
    with warnings.catch_warnings():
        warnings.simplefilter("error", PriorDirectionWarning)
        search = WarmboSearch(metric="loss", mode="min", seed=0, prior=[old])
        search.set_search_properties(None, None, {"x": tune.uniform(0.0, 1.0)})
        first = search.suggest("t0")
    assert first["x"] == pytest.approx(0.5)  # the prior's best, read as a minimum
    turned = WarmboSearch(metric="score", mode="max", seed=0, prior=[old])
    with pytest.warns(PriorDirectionWarning, match="created to minimize, and this study maximizes"):
        turned.set_search_properties(None, None, {"x": tune.uniform(0.0, 1.0)})
        turned.suggest("t0")


def test_a_dataframe_prior_with_a_failed_trial_is_read_once(tmp_path):
    # a DataFrame as Optimizer takes it; a failed trial's NaN value (trials_dataframe()) was refused
    # at the first suggestion; the prior is read when the searcher is made, and its warning said once
    from warmbo.data import UnfinishedRowsWarning

    space = wb.Space([wb.Float("x", 0.0, 1.0)])
    df = pd.DataFrame(
        {"x": [0.1, 0.45, 0.3], "y": [0.2, np.nan, 0.01], "state": ["COMPLETE", "FAIL", "COMPLETE"]}
    )
    with pytest.warns(UnfinishedRowsWarning) as record:
        search = WarmboSearch(space, metric="loss", mode="min", seed=0, prior=df)
        search.suggest("t0")
    assert sum(issubclass(w.category, UnfinishedRowsWarning) for w in record) == 1
    assert [p["x"] for p in search.optimizer.prior.params] == [0.1, 0.3]
    np.testing.assert_array_equal(search.optimizer.prior.y, [0.2, 0.01])
    # a mode Tune gives later than the guess: the prior is read again in it, to the same rows
    with pytest.warns(UnfinishedRowsWarning):  # (read in the guessed mode, min)
        later = WarmboSearch(space, metric="loss", seed=0, prior=df)
    later.set_search_properties(None, "max", {})
    with pytest.warns(UnfinishedRowsWarning):
        later.suggest("t0")
    assert later.optimizer.prior == search.optimizer.prior and later.optimizer.maximize


def test_metric_and_mode_from_tune_config_are_said_where_tune_does_not_pass_them():
    # a searcher-held space with TuneConfig(metric=, mode=) and no param_space: Tune passes neither,
    # and the error said to give them to TuneConfig, as the user had; given both ways and differently,
    # the searcher kept its own without a word while Tune ranked by the other (a user test)
    space = wb.Space([wb.Float("x", 0.0, 1.0)])
    bare = WarmboSearch(space, seed=0)
    with pytest.raises(
        RuntimeError, match=r"pass them to WarmboSearch\(metric=..., mode=...\); tune.TuneConfig's"
    ):
        bare.suggest("t1")
    kept = WarmboSearch(space, metric="loss", mode="min", seed=0)
    with pytest.warns(
        UserWarning, match=r"optimises metric='loss', mode='min'.*TuneConfig says metric='score'"
    ):
        kept.set_search_properties("score", "max", {})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        WarmboSearch(space, metric="loss", mode="min", seed=0).set_search_properties("loss", "min", {})
