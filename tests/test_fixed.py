"""Asks with some parameters held (``Optimizer.ask(fixed=...)``, ``maximize(fixed=...)``,
``warmbo suggest --fixed``): every point has the values, the rest is the acquisition's maximiser on
that slice (checked against a dense draw of the slice), errors name the problem and store nothing."""

from __future__ import annotations

import json

import numpy as np
import pytest

import warmbo as wb
from warmbo import EI, GP, Categorical, Float, Int, Space, maximize
from warmbo.fixed import fix, free_point
from warmbo.kernels import RBF
from warmbo.optimizer import SpaceExhaustedError
from warmbo.space import SpaceError


class Quadratic:
    """-||u - c||^2 with its gradient: on the slice u_F = v its maximiser is c with c_F = v."""

    has_gradient = True

    def __init__(self, c):
        self.c = np.asarray(c, dtype=float)

    def __call__(self, U):
        return -np.sum((np.atleast_2d(U) - self.c) ** 2, axis=1)

    def value_and_gradient(self, u):
        return float(-np.sum((u - self.c) ** 2)), -2 * (u - self.c)


MIXED = Space(
    [
        Float("lr", 1e-4, 1e-1, log=True),
        Int("batch", 16, 256),
        Categorical("opt", ["adam", "sgd", "rms"]),
        Float("x", -2.0, 2.0),
    ]
)


def _loss(p):
    return (
        (np.log10(p["lr"]) + 2.5) ** 2
        + (p["batch"] - 100) ** 2 / 1e4
        + {"adam": 0.0, "sgd": 0.5, "rms": 0.2}[p["opt"]]
        + p["x"] ** 2
    )


def test_fix_encodes_the_values_in_their_columns_and_refuses_bad_ones():
    held = fix(MIXED, {"opt": "sgd", "lr": 1e-2})
    assert held.params == {"lr": 1e-2, "opt": "sgd"}  # (the space's order)
    full = MIXED.encode({"lr": 1e-2, "batch": 64, "opt": "sgd", "x": 0.0})[0]
    np.testing.assert_array_equal(held.values, full[held.columns])
    assert held.columns.tolist() == [0, 2, 3, 4]  # lr, then opt's one-hot block
    assert held.holds(full[None, :])[0]
    with pytest.raises(SpaceError, match=r"unknown parameter name.*'lrate'\]; space has"):
        fix(MIXED, {"lrate": 0.1})
    with pytest.raises(SpaceError, match=r"unknown parameter name.*'Batch'\] \(did you mean 'batch'\?\)"):
        fix(MIXED, {"Batch": 64})
    with pytest.raises(SpaceError, match="batch"):
        fix(MIXED, {"batch": 1000})
    with pytest.raises(SpaceError, match="opt"):
        fix(MIXED, {"opt": "adamw"})
    with pytest.raises(SpaceError, match="holds no parameter"):
        fix(MIXED, {})
    grid = Space.grid(np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 2.0]]))
    with pytest.raises(SpaceError, match="none of the 3 grid candidates has x0=1.0, x1=1.0"):
        fix(grid, {"x0": 1.0, "x1": 1.0})


def test_maximize_on_a_slice_finds_the_conditional_maximiser():
    # separable quadratic: holding u1 at v, the maximiser is (c0, v, c2) whatever v is
    c = np.array([0.2, 0.7, 0.45])
    space = Space.box([(0, 1)] * 3)
    held = fix(space, {"x1": 0.3})
    result = maximize(Quadratic(c), space, seed=0, fixed=held)
    np.testing.assert_allclose(result.x, [0.2, 0.3, 0.45], atol=1e-6)
    assert result.x[1] == 0.3  # held exactly, not to L-BFGS-B's tolerance
    assert result.value == pytest.approx(-(0.4**2), abs=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_maximize_on_a_slice_of_a_mixed_space_beats_a_dense_draw_of_the_slice(seed):
    # the batched L-BFGS-B path (EI bound to a GP has values_and_gradients), a categorical block and
    # an integer held; oracle: the best of 20,000 random points of the slice. EI's maximum on a
    # continuous slice is approached, not hit, by such a draw, so the search must reach at least
    # 99.9% of it (a search that ignored the slice or left it would fail the holds() check instead)
    rng = np.random.default_rng(seed)
    U = MIXED.sample_encoded(15, seed=seed)
    y = rng.standard_normal(15)
    gp = GP(RBF(0.3), noise=1e-4).fit(U, y)
    acq = EI().bind(gp, space=MIXED)
    held = fix(MIXED, {"batch": 64, "opt": "rms"})
    result = maximize(acq, MIXED, seed=seed, fixed=held, anchors=U[np.argsort(-y)[:3]])
    point = MIXED.decode(result.x)[0]
    assert point["batch"] == 64 and point["opt"] == "rms"
    np.testing.assert_array_equal(MIXED.snap(result.x[None])[0], result.x)
    draw = MIXED.snap(held.apply(MIXED.sample_encoded(20_000, seed=seed + 10)))
    best = float(np.max(acq(draw)))
    assert float(acq(result.x[None])[0]) >= best * (1 - 1e-3)


def test_maximize_on_a_grid_slice_is_exhaustive_over_the_candidates_that_hold_it():
    rng = np.random.default_rng(0)
    points = np.column_stack([rng.integers(0, 4, 300).astype(float), rng.random(300) * 10])
    space = Space.grid(points)
    target = space.encode({"x0": points[5, 0], "x1": points[5, 1]})[0]
    other = 3.0 if points[5, 0] != 3.0 else 2.0
    result = maximize(Quadratic(target), space, fixed=fix(space, {"x0": other}))
    U = space.candidates
    slice_ = U[U[:, 0] == space.encode({"x0": other, "x1": points[0, 1]})[0, 0]]
    expected = slice_[np.argmax(Quadratic(target)(slice_))]
    np.testing.assert_array_equal(result.x, expected)
    assert result.n_evaluations == slice_.shape[0]


def test_an_empty_fixed_asks_as_none_does():
    # a user test: fixed={} (a dict built conditionally, Ax's fixed_features={}) raised "holds no
    # parameter"; it is the same ask as fixed=None, in the design and after it
    plain, empty = wb.Optimizer(MIXED, seed=0), wb.Optimizer(MIXED, seed=0)
    for _ in range(plain.n_initial + 2):
        a, b = plain.ask(), empty.ask(fixed={})
        assert dict(a) == dict(b)
        plain.tell(a, _loss(a))
        empty.tell(b, _loss(b))
    assert [dict(s) for s in empty.ask(2, fixed={})] == [dict(s) for s in plain.ask(2)]


def test_free_point_draws_a_point_of_the_slice_that_is_not_taken():
    space = Space([Int("a", 0, 2), Categorical("b", ["x", "y"])])
    held = fix(space, {"b": "x"})
    taken = space.encode([{"a": 0, "b": "x"}, {"a": 1, "b": "x"}])
    x = free_point(space, held, taken, seed=0)
    assert space.decode(x)[0] == {"a": 2, "b": "x"}
    assert free_point(space, held, np.vstack([taken, space.encode({"a": 2, "b": "x"})]), seed=0) is None


def test_every_ask_with_fixed_values_has_them_in_the_design_and_after_it():
    opt = wb.Optimizer(MIXED, seed=0)
    asked_fixed = []
    for i in range(24):
        fixed = {"opt": "sgd", "batch": 64} if i % 3 == 0 else None
        s = opt.ask(fixed=fixed)
        if fixed:
            assert (s["opt"], s["batch"]) == ("sgd", 64)
            asked_fixed.append(s)
        opt.tell(s, _loss(s))
    assert opt.n_initial < 24  # the model chose the later ones
    batch = opt.ask(3, fixed={"opt": "rms", "x": 0.5})
    assert all(s["opt"] == "rms" and s["x"] == 0.5 for s in batch)
    assert len({json.dumps(dict(s), sort_keys=True) for s in batch}) == 3
    # the model's points on the slice: the other parameters go where the loss is low on it
    # the slice's minimum is 0.5 + 0.36^2 = 0.6296 (lr = 10^-2.5, x = 0); the best of the 8 asks on
    # it came to 0.70 (as measured; EI on the slice explores too: its last ask went to a corner)
    assert min(_loss(s) for s in asked_fixed) < 0.6296 + 0.15


def test_the_slice_is_optimised_better_than_by_random_points_of_it():
    # Branin with x0 held at 2.5: the slice's minimum is known (a dense 1-D grid), and 8 asks of the
    # model after a 4-point design must come closer to it than the best of 12 random points of the
    # slice in every one of 5 seeds. As measured: the model's gaps 8e-6 to 2.4e-3, random's 1e-4 to
    # 1.5 (seed 2's random draw is the closest call, 7x). With the search not holding x0 (the design's
    # rule alone: the model's point with x0 overwritten) seed 0 fails
    from warmbo.problems import branin

    f = branin()
    space = Space.box(f.bounds)
    low, high = f.bounds[1]

    def value(x1):
        return float(f(np.array([[2.5, x1]]))[0])

    slice_min = float(np.min(f(np.column_stack([np.full(100_001, 2.5), np.linspace(low, high, 100_001)]))))
    for seed in range(5):
        opt = wb.Optimizer(space, seed=seed, n_initial=4)
        for _ in range(12):
            s = opt.ask(fixed={"x0": 2.5})
            opt.tell(s, value(s["x1"]))
        model_gap = min(t.value for t in opt.study.trials(("complete",))) - slice_min
        rng = np.random.default_rng(seed)
        random_gap = min(value(v) for v in rng.uniform(low, high, 12)) - slice_min
        assert model_gap < random_gap, (seed, model_gap, random_gap)


def test_a_bad_fixed_value_stores_nothing_and_an_exhausted_slice_says_so():
    space = Space([Int("a", 0, 2), Categorical("b", ["x", "y"])])
    opt = wb.Optimizer(space, seed=0)
    with pytest.raises(SpaceError, match="b"):
        opt.ask(fixed={"b": "z"})
    assert len(opt.study.trials()) == 0
    for _ in range(3):
        s = opt.ask(fixed={"b": "x"})
        assert s["b"] == "x"
        opt.tell(s, float(s["a"]))
    # every point with b = x is evaluated; on a finite space evaluated points come back only once
    # every point of the whole space is taken, so the slice is exhausted
    with pytest.raises(SpaceExhaustedError, match="with b='x'"):
        opt.ask(fixed={"b": "x"})
    assert len(opt.study.trials()) == 3
    assert opt.ask()["b"] == "y"  # the rest of the space is still there


def test_the_queue_waits_for_an_ask_without_fixed_values():
    opt = wb.Optimizer(MIXED, seed=0)
    queued = {"lr": 1e-3, "batch": 32, "opt": "adam", "x": 0.0}
    opt.enqueue(queued)
    s = opt.ask(fixed={"opt": "sgd"})
    assert s["opt"] == "sgd"
    assert opt.queued() == [queued]
    opt.tell(s, _loss(s))
    assert dict(opt.ask()) == queued


def test_fixed_values_hold_through_a_transfer_study_and_its_warm_design():
    rng = np.random.default_rng(0)
    X = MIXED.sample(30, seed=1)
    y = [_loss(p) + 0.01 * rng.standard_normal() for p in X]
    opt = wb.Optimizer(MIXED, seed=0, prior=(X, y))
    assert opt.warm_design() is not None
    for i in range(12):
        s = opt.ask(fixed={"opt": "adam"} if i % 2 else None)
        if i % 2:
            assert s["opt"] == "adam"
        opt.tell(s, _loss(s))
    s = opt.ask(fixed={"opt": "sgd", "x": -1.0})
    assert (s["opt"], s["x"]) == ("sgd", -1.0)


def test_warmbo_suggest_fixed_holds_the_values_and_refuses_bad_ones_in_the_users_words(tmp_path):
    from typer.testing import CliRunner

    from warmbo.cli import app

    runner = CliRunner()
    space_file = tmp_path / "space.json"
    space_file.write_text(
        json.dumps(
            [
                {"name": "temp_C", "type": "float", "low": 20, "high": 120},
                {"name": "catalyst", "type": "categorical", "choices": ["Pd", "Pt", "Ni"]},
                {"name": "time_h", "type": "int", "low": 1, "high": 24},
            ]
        )
    )
    db = str(tmp_path / "s.db")
    bad = runner.invoke(
        app, ["suggest", "--storage", db, "--space", str(space_file), "--fixed", '{"catalyst": "Pdd"}']
    )
    assert bad.exit_code == 1 and 'catalyst must be one of "Pd", "Pt", "Ni", got "Pdd"' in bad.output
    assert not (tmp_path / "s.db").exists()  # refused before the study was created
    ok = runner.invoke(
        app,
        ["suggest", "--storage", db, "--space", str(space_file), "--fixed", '{"catalyst": "Pd"}', "-n", "2"],
    )
    assert ok.exit_code == 0, ok.output
    more = runner.invoke(
        app, ["suggest", "--storage", db, "--fixed", '{"catalyst": "Ni", "time_h": 3}', "--json"]
    )
    assert more.exit_code == 0, more.output
    assert json.loads(more.output.strip().splitlines()[-1])["params"]["catalyst"] == "Ni"
    trials = wb.Study(db).trials()
    assert [t.params["catalyst"] for t in trials] == ["Pd", "Pd", "Ni"] and trials[2].params["time_h"] == 3
    for fixed, said in [
        ('{"Catalyst": "Pt"}', "the study has no parameter Catalyst (did you mean catalyst?)"),
        ('{"time_h": 3.5}', "time_h must be a whole number, got 3.5"),
        ("{}", "give a value for one parameter at least"),
        ('["Pt"]', "--fixed must be a JSON object"),
    ]:
        result = runner.invoke(app, ["suggest", "--storage", db, "--fixed", fixed])
        assert result.exit_code == 1 and said in " ".join(result.output.split()), (fixed, result.output)
    assert len(wb.Study(db).trials()) == 3  # nothing stored by the refused ones


@pytest.mark.parametrize("seed", range(3))
def test_asks_with_fixed_values_do_not_take_the_design_of_the_asks_without(seed):
    # a user test: seven asks on catalyst Pt's slice took a 5-point design, and the seven free asks
    # after them stayed on Pt on every seed (the model had seen no other catalyst; Pd is worth +1).
    # Now the free asks get the design's five points first (as measured: Pd among them on seeds
    # 0-3, best values 0.71-0.99 against 0.0 before)
    space = wb.Space(
        [wb.Float("temp", 20, 120), wb.Float("time", 1, 12), wb.Categorical("cat", ["Pd", "Pt", "Ni"])]
    )

    def f(p):
        return -((p["temp"] - 80) ** 2 / 2500 + (p["time"] - 6) ** 2 / 36) + (p["cat"] == "Pd")

    opt = wb.Optimizer(space, seed=seed, n_initial=5, maximize=True)
    for i in range(14):
        s = opt.ask(fixed={"cat": "Pt"} if i < 7 else None)
        opt.tell(s, f(s))
    free = [t.params["cat"] for t in opt.history][7:]
    assert "Pd" in free and opt.best.value > 0.5, free
    assert len(opt.study.meta_items("fixed:")) == 7  # (the marks the design count reads)


def test_a_warm_design_point_with_fixed_values_keeps_the_sources_other_values_as_written():
    # a user test: suggest --prior ... --fixed '{"catalyst": "Ni"}' --json gave conc_mM
    # 1.9999999999999998 for the source's 2.0 (the point was no longer "a source's", bit for bit)
    space = wb.Space(
        [wb.Float("conc", 0.1, 20, log=True), wb.Float("t", 1, 10), wb.Categorical("cat", ["Pd", "Pt", "Ni"])]
    )
    X = [
        {"conc": 1.5, "t": 3.3, "cat": "Pd"},
        {"conc": 0.3, "t": 7.7, "cat": "Pt"},
        {"conc": 5.0, "t": 2.0, "cat": "Ni"},
    ]
    opt = wb.Optimizer(space, seed=0, prior=(X, [1.0, 3.0, 2.0]))
    s = opt.ask(fixed={"cat": "Ni"})
    assert dict(s) == {
        "conc": 1.5,
        "t": 3.3,
        "cat": "Ni",
    }  # the best source's, as written (not 1.4999999999999996)


def test_asks_with_fixed_values_take_the_model_not_the_probe_and_the_next_free_ask_probes(monkeypatch):
    # the probe (transfer="auto") is the cold design's first point; set to the fixed values it is
    # not, so it stayed due and every fixed ask of its window took it again, collided, and fell to a
    # random point of the slice. Now fixed asks take the model; the next free ask probes
    import warmbo.optimizer as optimizer_module
    from warmbo.optimizer import PROBE_AFTER

    rng = np.random.default_rng(0)
    X = MIXED.sample(40, seed=2)
    y = [_loss(p) + 0.01 * rng.standard_normal() for p in X]
    opt = wb.Optimizer(MIXED, seed=0, prior=(X, y))
    drawn = []
    real = optimizer_module.free_point
    monkeypatch.setattr(optimizer_module, "free_point", lambda *a, **k: drawn.append(1) or real(*a, **k))
    for _ in range(opt.n_initial + PROBE_AFTER):
        s = opt.ask()
        opt.tell(s, _loss(s))
    for _ in range(4):
        s = opt.ask(fixed={"opt": "rms"})
        assert s["opt"] == "rms"
        opt.tell(s, _loss(s))
    assert drawn == []  # (before: 3 of the 4 were random points of the slice)
    probe = opt.ask()
    head = opt._cold_design_head(1)[0]
    np.testing.assert_allclose(MIXED.encode(dict(probe))[0], MIXED.snap(head), atol=1e-12)


def _lab_yield(p, rng=None):
    """A user test's synthetic lab (yield in %): catalyst Pd best, Pt 12 points below, Ni 20."""
    offset = {"Pd": 0.0, "Pt": -12.0, "Ni": -20.0, "Cu": -30.0}[p["catalyst"]]
    y = (
        85
        - 10 * ((p["temp_C"] - 88) / 18) ** 2
        - 8 * np.log(p["time_h"] / 6) ** 2
        - 3 * (p["equiv"] - 3) ** 2
    )
    return max(0.0, y + offset + (0.0 if rng is None else rng.normal(0, 1.5)))


LAB = Space(
    [Float("temp_C", 40, 120), Float("time_h", 0.5, 24, log=True),
     Categorical("catalyst", ["Pd", "Pt", "Ni", "Cu"]), Int("equiv", 1, 5)]
)  # fmt: skip


def test_ei_on_a_slice_improves_on_the_slices_best_not_the_whole_spaces():
    opt = wb.Optimizer(LAB, maximize=True, seed=0)
    rng = np.random.default_rng(0)
    opt.run(lambda p: _lab_yield(p, rng), budget=12, progress=False)
    model = opt.fit_model()
    bound = EI().bind(model, space=LAB)
    branches = set()
    for catalyst, equiv in [(c, e) for c in ("Pd", "Pt", "Ni", "Cu") for e in range(1, 6)]:
        fixed = fix(LAB, {"catalyst": catalyst, "equiv": equiv})
        on = fixed.holds(model.X_train_)
        branches.add(bool(on.any()))
        sliced = bound.on_slice(model, LAB, fixed)
        if on.any():  # (the slice's best observation, on the model's scale)
            assert sliced.incumbent == min(bound.incumbent, float(np.max(model.y_train_[on])))
        else:  # (the posterior mean's largest on the slice: at least a dense draw's, unless the
            # whole space's incumbent is lower: a slice never raises the bar)
            draw = fixed.apply(LAB.sample_encoded(4000, seed=1))
            dense = float(np.max(model.predict(draw)[0]))
            assert sliced.incumbent >= min(bound.incumbent, dense) - 1e-9
        assert sliced.incumbent <= bound.incumbent
    assert branches == {True, False}  # (both: slices with observations, and without (a review))


def test_an_observed_incumbent_on_a_slice_is_the_models_best_mean_there():
    # a review: on_slice put back the slice's best measurement, which EI(incumbent="observed") (the
    # classifier of success's since session 48) is there to avoid under noise
    opt = wb.Optimizer(LAB, maximize=True, seed=0)
    rng = np.random.default_rng(0)
    opt.run(lambda p: _lab_yield(p, rng), budget=12, progress=False)
    model = opt.fit_model()
    bound = EI(incumbent="observed").bind(model, space=LAB)
    seen = 0
    for catalyst in ("Pd", "Pt", "Ni", "Cu"):
        fixed = fix(LAB, {"catalyst": catalyst})
        on = fixed.holds(model.X_train_)
        if not on.any():
            continue
        seen += 1
        sliced = bound.on_slice(model, LAB, fixed)
        best_mean = float(np.max(model.predict(model.X_train_[on])[0]))
        assert sliced.kind == "observed"
        assert sliced.incumbent == pytest.approx(min(bound.incumbent, best_mean), rel=1e-12)
    assert seen >= 2


def test_asks_on_a_weaker_slice_go_to_its_best_region_not_the_corners():
    # A user test: after 20 experiments, `suggest --fixed '{"catalyst": "Pt"}'` sent Pt to 40 C for 24 h
    # and 80 C for 24 h with 5 equivalents (0% and 43% yield) where Pt reaches 73%: EI measured
    # improvement over Pd's best, which Pt cannot reach but where it is most uncertain. Measured over
    # seeds 0-5 (36 asks): true yield median 29% before, 60% with the slice's own incumbent; here 4
    # seeds, 24 asks: 25% before, 66% now; the test asks for more than 45%.
    yields = []
    for seed in range(4):
        rng = np.random.default_rng(seed)
        opt = wb.Optimizer(LAB, maximize=True, seed=seed)
        opt.run(lambda p, rng=rng: _lab_yield(p, rng), budget=20, progress=False)
        for catalyst in ("Pt", "Ni"):
            batch = opt.ask(3, fixed={"catalyst": catalyst})
            yields += [_lab_yield(s) for s in batch]
            for s in batch:
                opt.tell(s, _lab_yield(s, rng))
    assert np.median(yields) > 45.0, sorted(np.round(yields))
