"""Conditional parameters (``when=``): a parameter active only for some values of a categorical parent.

Oracles: brute-force enumeration of a finite conditional space (its distinct canonical points) for
``cardinality``; the definition of activity (parents active and at a listed value) checked point by
point on random encodings; the model's prediction at two points that differ only in an inactive value
(the same encoded row, so bit-for-bit the same prediction).
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

import warmbo as wb
from warmbo.data import DataError, TaskData
from warmbo.fixed import fix
from warmbo.maximize import maximize
from warmbo.space import INACTIVE, SpaceError


def svm_space() -> wb.Space:
    return wb.Space(
        [
            wb.Float("C", 1e-2, 1e3, log=True),
            wb.Float("gamma", 1e-5, 1.0, log=True, when={"kernel": ["poly", "rbf", "sigmoid"]}),
            wb.Categorical("kernel", ["linear", "poly", "rbf", "sigmoid"]),
            wb.Int("degree", 2, 5, when={"kernel": "poly"}),
        ]
    )


def nested_space() -> wb.Space:
    """model -> (tree: depth; net: optimizer -> (sgd: momentum)), all finite."""
    return wb.Space(
        [
            wb.Categorical("model", ["tree", "net"]),
            wb.Int("depth", 1, 3, when={"model": "tree"}),
            wb.Categorical("optimizer", ["adam", "sgd"], when={"model": "net"}),
            wb.Float("momentum", 0.0, 0.9, step=0.3, when={"optimizer": "sgd"}),
            wb.Int("width", 1, 2),
        ]
    )


def svm_objective(p: dict) -> float:
    """Maximised; 'gamma' and 'degree' are read only where they are active (a KeyError otherwise)."""
    value = -((np.log10(p["C"]) - 1.0) ** 2)
    if p["kernel"] == "linear":
        return value - 1.0
    value -= (np.log10(p["gamma"]) + 2.0) ** 2
    if p["kernel"] == "poly":
        value -= 0.5 + (p["degree"] - 3) ** 2
    return value - (2.0 if p["kernel"] == "sigmoid" else 0.0)


# -- parameters ----------------------------------------------------------------------------------


def test_when_is_stored_sorted_and_round_trips():
    p = wb.Float("x", 0.0, 1.0, when={"b": "u", "a": ["y", "x", "y"]})
    assert p.when == (("a", ("y", "x")), ("b", ("u",)))
    assert p.to_dict()["when"] == {"a": ["y", "x"], "b": "u"}
    assert wb.Float.from_dict(p.to_dict()) == p
    assert repr(p) == "wb.Float('x', 0.0, 1.0, when={'a': ['y', 'x'], 'b': 'u'})"
    assert eval(repr(p), {"wb": wb}) == p
    c = wb.Categorical("c", ["p", "q"], when={"a": "x"})
    assert c != wb.Categorical("c", ["p", "q"]) and hash(c) != hash(wb.Categorical("c", ["p", "q"]))
    assert wb.Int("n", 1, 3).to_dict() == {"type": "int", "name": "n", "low": 1, "high": 3, "log": False}


@pytest.mark.parametrize(
    ("when", "match"),
    [
        ({}, "non-empty dict"),
        ("kernel", "non-empty dict"),
        ({"x": "a"}, "names the parameter itself"),
        ({"k": []}, "lists no value"),
        ({"k": [None]}, "is not a str, int, float or bool"),
    ],
)
def test_malformed_when_is_refused(when, match):
    with pytest.raises(SpaceError, match=match):
        wb.Float("x", 0.0, 1.0, when=when)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ([wb.Float("x", 0.0, 1.0, when={"k": "a"})], "not a parameter of the space"),
        ([wb.Int("k", 0, 2), wb.Float("x", 0.0, 1.0, when={"k": 1})], "an int parameter; a parent must be"),
        ([wb.Categorical("k", ["a"]), wb.Float("x", 0.0, 1.0, when={"k": "b"})], "not one of 'k'"),
        (
            [wb.Categorical("a", ["x"], when={"b": "y"}), wb.Categorical("b", ["y"], when={"a": "x"})],
            "cycle: a -> b -> a",
        ),
    ],
)
def test_inconsistent_conditions_are_refused(params, match):
    with pytest.raises(SpaceError, match=match):
        wb.Space(params)


def test_a_grid_space_cannot_be_conditional():
    assert not wb.Space.grid([[0.0, 1.0], [1.0, 0.0]]).is_conditional
    params = [wb.Categorical("k", ["a"]), wb.Float("x", 0.0, 1.0, when={"k": "a"})]
    with pytest.raises(SpaceError, match="grid space"):
        wb.Space(params, candidate_points=[[0.0, 0.5]])


# -- points and encoding ----------------------------------------------------------------------


def test_validate_keeps_the_active_parameters_and_names_what_is_missing():
    space = svm_space()
    assert space.is_conditional
    assert space.validate({"C": 1, "kernel": "linear", "gamma": 0.1, "degree": 9}) == {
        "C": 1.0,
        "kernel": "linear",
    }
    assert space.validate({"kernel": "poly", "degree": 4, "gamma": 0.5, "C": 2}) == {
        "C": 2.0,
        "gamma": 0.5,
        "kernel": "poly",
        "degree": 4,
    }
    with pytest.raises(
        SpaceError, match=r"missing parameter\(s\) \['degree'\].*'degree' when kernel is 'poly'"
    ):
        space.validate({"C": 1, "kernel": "poly", "gamma": 0.5})
    with pytest.raises(SpaceError, match=r"\['kernel'\]"):
        space.validate({"C": 1})
    with pytest.raises(SpaceError, match="outside"):
        space.validate({"C": 1, "kernel": "rbf", "gamma": 2.0})
    assert space.missing({"C": 1}) == ["kernel"]
    assert space.missing({"C": 1, "kernel": "poly"}) == ["gamma", "degree"]
    assert space.missing({"kernel": "bogus"}) == ["C"]  # (the bad value is validate's to name)
    assert space.active({"kernel": "rbf"}) == ("C", "gamma", "kernel")


def test_nested_conditions_follow_the_parent_chain():
    space = nested_space()
    assert space.validate({"model": "tree", "depth": 2, "optimizer": "sgd", "momentum": 0.3, "width": 1}) == {
        "model": "tree",
        "depth": 2,
        "width": 1,
    }
    assert space.active({"model": "net", "optimizer": "sgd"}) == ("model", "optimizer", "momentum", "width")
    assert space.active({"model": "net", "optimizer": "adam"}) == ("model", "optimizer", "width")
    with pytest.raises(SpaceError, match="momentum"):
        space.validate({"model": "net", "optimizer": "sgd", "width": 2})


def _brute_force_points(space: wb.Space) -> set[tuple]:
    """Every distinct canonical point of a finite space, from the product of all values."""
    values = [p.choices if isinstance(p, wb.Categorical) else p.decode(
        (np.arange(int(p._size())) + 0.5)[:, None] / p._size()) for p in space.params]  # fmt: skip
    seen = set()
    for combo in itertools.product(*values):
        point = space.validate(dict(zip(space.names, combo, strict=True)))
        seen.add(tuple(sorted(point.items())))
    return seen


def test_cardinality_counts_the_distinct_points():
    space = nested_space()
    # tree: 3 depths x 2 widths; net+adam: 2; net+sgd: 4 momenta x 2 = 8 -> 16
    assert space.cardinality == len(_brute_force_points(space)) == 16
    assert svm_space().cardinality == math.inf


def test_encoding_puts_inactive_columns_at_the_constant_and_decoding_leaves_them_out():
    space = svm_space()
    rng = np.random.default_rng(0)
    U = rng.random((400, space.dim))
    snapped = space.snap(U)
    points = space.decode(U)
    for u, point in zip(snapped, points, strict=True):
        kernel = point["kernel"]
        assert ("gamma" in point) == (kernel != "linear")
        assert ("degree" in point) == (kernel == "poly")
        if kernel == "linear":
            assert u[space.slice_of("gamma")] == INACTIVE
        if kernel != "poly":
            assert u[space.slice_of("degree")] == INACTIVE
    assert np.array_equal(space.snap(snapped), snapped)  # idempotent
    assert np.allclose(space.encode(points), snapped, rtol=0, atol=1e-12)  # snap == encode(decode(.))
    for point in space.sample(64, seed=1):
        assert set(point) == set(space.active(point))
        assert space.validate(point) == point


# -- the model and the search -------------------------------------------------------------------


def _run(space, n=16, seed=0, **kwargs) -> wb.Optimizer:
    opt = wb.Optimizer(space, seed=seed, maximize=True, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt.run(svm_objective, budget=n, progress=False)
    return opt


def test_optimizer_suggests_active_parameters_only_and_never_repeats():
    space = svm_space()
    opt = _run(space, n=24)
    trials = opt.history
    assert len(trials) == 24 and all(t.state == "complete" for t in trials)
    for t in trials:
        assert set(t.params) == set(space.active(t.params))  # (svm_objective raises on a missing one)
    encoded = space.encode([t.params for t in trials])
    assert np.unique(encoded, axis=0).shape[0] == 24
    # the best kernel (rbf, gamma 1e-2, C 10: value 0) is found on this budget
    assert opt.best.params["kernel"] == "rbf" and opt.best.value > -0.5


def test_points_differing_only_in_an_inactive_value_are_one_point_to_the_model():
    opt = _run(svm_space(), n=12)
    mean, std = opt.predict(
        [{"C": 5.0, "kernel": "linear"}, {"C": 5.0, "kernel": "linear", "gamma": 0.9, "degree": 5}]
    )
    assert mean[0] == mean[1] and std[0] == std[1]
    rbf = opt.predict([{"C": 5.0, "kernel": "rbf", "gamma": 1e-4}, {"C": 5.0, "kernel": "rbf", "gamma": 0.5}])
    assert rbf.mean[0] != rbf.mean[1]  # (an active gamma matters)


def test_the_search_returns_canonical_points():
    space = svm_space()
    opt = _run(space, n=10)
    model = opt.fit_model()
    acq = wb.EI().bind(model, space=space)
    for seed in range(3):
        x = maximize(acq, space, seed=seed, anchors=space.encode([t.params for t in opt.history])).x
        assert np.array_equal(space.snap(x), x)


def test_fixed_parents_switch_children_on_and_off():
    space = svm_space()
    opt = _run(space, n=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        poly = opt.ask(fixed={"kernel": "poly"})
        assert poly["kernel"] == "poly" and set(poly) == {"C", "gamma", "kernel", "degree"}
        opt.tell(poly, svm_objective(poly))
        linear = opt.ask(fixed={"kernel": "linear"})
    assert set(linear) == {"C", "kernel"}
    assert fix(space, {"kernel": "poly", "degree": 3}).params == {"kernel": "poly", "degree": 3}
    with pytest.raises(SpaceError, match="hold its parent"):
        fix(space, {"degree": 3})
    with pytest.raises(SpaceError, match="hold its parent"):
        fix(space, {"kernel": "rbf", "degree": 3})


def test_a_told_inactive_value_is_dropped_and_the_study_resumes(tmp_path):
    space = svm_space()
    path = str(tmp_path / "svm.db")
    opt = wb.Optimizer(space, seed=0, maximize=True, storage=path)
    opt.tell({"C": 1.0, "kernel": "linear", "gamma": 0.3}, -1.0)
    opt.tell({"C": 10.0, "kernel": "rbf", "gamma": 0.01}, 0.0)
    with pytest.raises(ValueError, match="degree"):
        opt.tell({"C": 10.0, "kernel": "poly", "gamma": 0.01}, 0.0)
    again = wb.Optimizer(space, seed=0, maximize=True, storage=path)
    assert [t.params for t in again.history] == [
        {"C": 1.0, "kernel": "linear"},
        {"C": 10.0, "gamma": 0.01, "kernel": "rbf"},
    ]
    frame = again.history.to_dataframe()
    assert np.isnan(frame["gamma"].iloc[0]) and frame["gamma"].iloc[1] == 0.01
    suggestion = again.ask()
    assert set(suggestion) == set(space.active(suggestion))


def test_a_conditional_study_warms_a_new_one(tmp_path):
    space = svm_space()
    path = str(tmp_path / "old.db")
    _run(space, n=14, storage=path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        new = wb.Optimizer(space, seed=1, maximize=True, prior=[path])
        first = new.ask()
    best_old = wb.Optimizer(space, seed=0, maximize=True, storage=path).best.params
    # the warm design starts at the earlier study's best point (to round-off: it is decoded)
    assert set(first) == set(best_old)
    assert np.allclose(space.encode(first), space.encode(best_old), rtol=0, atol=1e-12)
    assert len(new.prior.params) == 14
    # the sources stored with a study (null where inactive) read back as the same rows
    stored = str(tmp_path / "new.db")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wb.Optimizer(space, seed=1, maximize=True, prior=[path], storage=stored)
    data = wb.Optimizer.stored_sources(wb.Optimizer(space, maximize=True, storage=stored).study)["prior"]
    assert list(data.params) == list(new.prior.params)
    assert any("gamma" not in p for p in data.params) and any("gamma" in p for p in data.params)


def test_csv_and_records_hold_inactive_parameters_as_empty(tmp_path):
    space = svm_space()
    points = [{"C": 1.0, "kernel": "linear"}, {"C": 2.0, "gamma": 0.1, "kernel": "poly", "degree": 3}]
    data = TaskData.from_records(points, [0.5, 0.25], space)
    path = tmp_path / "rows.csv"
    data.to_csv(path)
    lines = path.read_text().splitlines()
    assert lines[0] == "C,gamma,kernel,degree,y" and lines[1] == "1.0,,linear,,0.5"
    back = TaskData.from_csv(path, space)
    assert list(back.params) == points and list(back.y) == [0.5, 0.25]
    # a file of linear SVMs alone has no gamma or degree column: read all the same
    (tmp_path / "linear.csv").write_text("C,kernel,y\n3.0,linear,0.1\n")
    assert list(TaskData.from_csv(tmp_path / "linear.csv", space).params) == [{"C": 3.0, "kernel": "linear"}]
    (tmp_path / "bad.csv").write_text("C,gamma,kernel,degree,y\n3.0,,rbf,,0.1\n")
    with pytest.raises(DataError, match="row 1.*gamma.*missing value \\('gamma' when kernel is one of"):
        TaskData.from_csv(tmp_path / "bad.csv", space)
    with pytest.raises(DataError, match=r"missing parameter\(s\) \['C'\]"):
        TaskData.from_records([{"kernel": "linear"}], [0.0], space)


def test_the_report_slices_through_the_active_parameters(tmp_path):
    from warmbo.report import _posterior_slices

    space = svm_space()
    opt = _run(space, n=12)
    best = {"C": 10.0, "gamma": 0.01, "kernel": "rbf"}

    def predict(U):
        return opt.fit_model().predict(U)

    slices = _posterior_slices(space, best, predict)
    assert [s.param.name for s in slices] == ["C", "gamma", "kernel"]
    path = opt.report(tmp_path / "report")
    assert (tmp_path / "report" / "slices.png").stat().st_size > 1000
    assert "Posterior mean and mean" in path.read_text()


def test_a_space_file_may_hold_when(tmp_path):
    import json

    from warmbo._user_json import point_problem

    space = svm_space()
    assert wb.Space.from_dict(json.loads(json.dumps(space.to_dict()))) == space
    assert point_problem({"C": 1.0, "kernel": "linear"}, space) is None
    assert "degree" in point_problem({"C": 1.0, "kernel": "poly", "gamma": 0.1}, space)


def test_jenattons_function_has_its_minimum_where_stated():
    from warmbo.problems.conditional import JENATTON_MINIMUM, jenatton

    f, flat = jenatton(), jenatton(conditional=False)
    assert f(f.optimizers[0]) == flat(flat.optimizers[0]) == JENATTON_MINIMUM == 0.1
    rng = np.random.default_rng(0)
    points = f.space.decode(rng.random((5000, f.space.dim)))
    values = np.array([f(p) for p in points])
    assert values.min() > JENATTON_MINIMUM and max(len(p) for p in points) == 4
    # each branch's minimum, at its floats' zeros: 0.1, 0.2, 0.3, 0.4
    zeros = {name: 0.0 for name in ("x4", "x5", "x6", "x7", "r8", "r9")}
    branches = [{"x1": 0, "x2": 0}, {"x1": 0, "x2": 1}, {"x1": 1, "x3": 0}, {"x1": 1, "x3": 1}]
    assert [flat({**zeros, "x2": 0, "x3": 0, **b}) for b in branches] == pytest.approx([0.1, 0.2, 0.3, 0.4])
    # the flat function reads the active parameters only: changing an inactive one changes nothing
    point = {**zeros, "x1": 0, "x2": 0, "x3": 1, "x5": 0.9, "r9": 0.7}
    assert flat(point) == f({k: point[k] for k in f.space.active(point)}) == 0.1


SVM_SCRIPT = """
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--kernel")
parser.add_argument("--C", type=float)
parser.add_argument("--gamma", type=float, default=None)
args = parser.parse_args()
assert (args.gamma is None) == (args.kernel == "linear"), args
print((args.C - 3.0) ** 2 + (0.0 if args.gamma is None else args.gamma))
"""


def test_the_command_line_leaves_out_an_inactive_parameters_argument(tmp_path, monkeypatch):
    import json
    import sys

    from typer.testing import CliRunner

    from warmbo.cli import app

    monkeypatch.chdir(tmp_path)
    space = wb.Space([
        wb.Categorical("kernel", ["linear", "rbf"]),
        wb.Float("C", 0.1, 10.0),
        wb.Float("gamma", 1e-3, 1.0, log=True, when={"kernel": "rbf"}),
    ])  # fmt: skip
    (tmp_path / "space.json").write_text(json.dumps(space.to_dict()))
    (tmp_path / "svm.py").write_text(SVM_SCRIPT)
    base = ["optimize", "--space", "space.json", "--budget", "8", "--storage", "svm.db", "--seed", "0"]
    cmd = f"{sys.executable} svm.py --kernel={{kernel}} --C={{C}} --gamma={{gamma}}"
    done = CliRunner().invoke(app, [*base, "--cmd", cmd])
    assert done.exit_code == 0, done.output
    trials = wb.Study("svm.db").trials()
    assert len(trials) == 8 and all(t.state == "complete" for t in trials)  # (the script asserts)
    assert {t.params["kernel"] for t in trials} == {"linear", "rbf"}
    assert all(("gamma" in t.params) == (t.params["kernel"] == "rbf") for t in trials)
    alone = CliRunner().invoke(app, [*base, "--cmd", f"{sys.executable} svm.py --gamma {{gamma}}"])
    assert alone.exit_code != 0 and "e.g. --gamma={gamma}" in " ".join(alone.output.split())


def test_a_dataframe_with_nan_where_a_parameter_is_inactive_reads_back():
    space = svm_space()
    opt = _run(space, n=10)
    frame = opt.history.to_dataframe()
    assert frame["gamma"].isna().any() and frame["degree"].isna().any()
    assert list(frame.columns[-4:]) == ["C", "gamma", "kernel", "degree"]  # (the space's order)
    assert str(frame["degree"].dtype) == "Int64" and frame["degree"].dropna().isin([2, 3, 4, 5]).all()
    data = TaskData.from_dataframe(frame, space, y="value")
    assert list(data.params) == [t.params for t in opt.history]
    assert list(data.y) == [t.value for t in opt.history]


# -- found by a review (session 44): code that assumed a point holds every parameter --------------


def small_svm() -> wb.Space:
    return wb.Space([
        wb.Categorical("kernel", ["linear", "rbf"]),
        wb.Float("C", 0.1, 10.0),
        wb.Float("gamma", 0.1, 1.0, when={"kernel": "rbf"}),
    ])  # fmt: skip


def test_a_rounded_copy_completes_its_pending_trial_beside_pending_trials_of_other_branches():
    opt = wb.Optimizer(small_svm(), seed=0)
    pending = opt.ask(4)
    assert {p["kernel"] for p in pending} == {"linear", "rbf"}
    linear = next(p for p in pending if p["kernel"] == "linear")
    trial = opt.tell({"kernel": "linear", "C": float(f"{linear['C']:.6g}")}, 1.0)
    assert trial.id == linear.trial_id and trial.params == dict(linear)


def test_export_report_and_observe_on_the_command_line(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from warmbo.cli import app

    monkeypatch.chdir(tmp_path)
    opt = wb.Optimizer(small_svm(), seed=0, storage="svm.db")
    opt.run(lambda p: p["C"] + p.get("gamma", 0.0), budget=6, progress=False)
    done = CliRunner().invoke(app, ["export", "--storage", "svm.db", "-o", "out.csv"])
    assert done.exit_code == 0, done.output
    rows = (tmp_path / "out.csv").read_text().splitlines()
    assert rows[0].startswith("trial,state,kernel,C,gamma,y") and len(rows) == 7
    for row, t in zip(rows[1:], opt.history, strict=True):
        assert (row.split(",")[4] == "") == (t.params["kernel"] == "linear")
    # a pending linear suggestion observed with its C as a table prints it
    suggestion = next(s for s in opt.ask(4) if s["kernel"] == "linear")
    typed = f'{{"kernel": "linear", "C": {suggestion["C"]:.6g}}}'
    done = CliRunner().invoke(app, ["observe", "--storage", "svm.db", "--params", typed, "--value", "2"])
    assert done.exit_code == 0 and f"trial {suggestion.trial_id}: value 2 stored" in done.output, done.output
    from warmbo.cli import _shown, _texts

    assert _shown({"kernel": "linear", "C": 1.0}, small_svm()) == "kernel=linear, C=1"  # (no "gamma=")
    assert _texts(small_svm(), {"kernel": "linear", "C": 1.0}) == ["linear", "1", ""]
    assert _texts(small_svm(), {"C": 1.0}) == ["(chosen)", "1", "(chosen)"]  # (a partial enqueued point)
    # nested conditions: a slice whose parent value switches on a parent without a value
    nested = wb.Optimizer(nested_space(), seed=0, storage="nested.db")
    nested.run(
        lambda p: (p["depth"] - 2) ** 2 if p["model"] == "tree" else 5.0 - p["width"],
        budget=10,
        progress=False,
    )
    assert nested.best.params["model"] == "tree"
    done = CliRunner().invoke(app, ["report", "--storage", "nested.db", "--out", "rep"])
    assert done.exit_code == 0 and (tmp_path / "rep" / "slices.png").exists(), done.output


def test_enqueue_reads_a_point_whole_without_its_inactive_values_and_refuses_a_repeat():
    space = wb.Space([
        wb.Categorical("m", ["a", "b"]),
        wb.Float("x", 0.0, 1.0, when={"m": "a"}),
        wb.Float("y", 0.0, 1.0, when={"m": "b"}),
        wb.Float("z", 0.0, 1.0),
    ])  # fmt: skip
    opt = wb.Optimizer(space, seed=0)
    assert opt.enqueue({"m": "a", "x": 0.5, "z": 0.1, "y": 0.3}) == [{"m": "a", "x": 0.5, "z": 0.1}]
    assert opt.ask() == {"m": "a", "x": 0.5, "z": 0.1}
    opt.tell({"m": "b", "y": 0.2, "z": 0.4}, 1.0)
    with pytest.warns(UserWarning, match="not queued"):
        assert opt.enqueue({"m": "b", "y": 0.2, "z": 0.4, "x": 0.9}) == []
    # a partial point: its parent's choice, the rest chosen by the ask that takes it
    assert opt.enqueue({"m": "b"}) == [{"m": "b"}]
    taken = opt.ask()
    assert taken["m"] == "b" and set(taken) == {"m", "y", "z"}


def test_a_held_parent_draws_the_children_it_switches_on():
    space = svm_space()
    opt = wb.Optimizer(space, seed=0, n_initial=12)
    points = []
    for _ in range(12):
        p = opt.ask(fixed={"kernel": "poly"})
        points.append(p)
        opt.tell(p, svm_objective(p))
    gammas = np.log10([p["gamma"] for p in points])
    # drawn over the range, not left at the inactive constant (log-centre 1e-2.5 before the fix)
    assert len(set(np.round(gammas, 6))) == 12 and gammas.min() < -3.5 and gammas.max() > -1.0
    assert len({p["degree"] for p in points}) >= 3


def test_cardinality_is_counted_once_and_bounded_for_many_parents():
    space = nested_space()
    assert space.cardinality == 16 and space._distinct == 16  # (cached: an ask reads it)
    many = wb.Space(
        [wb.Categorical(f"p{i}", list(range(10))) for i in range(6)]
        + [wb.Int(f"c{i}", 1, 3, when={f"p{i}": 0}) for i in range(6)]
    )
    # 10**6 assignments of the parents: beyond COUNT_LIMIT, the unconditional product (an upper bound)
    assert many.cardinality == 10**6 * 3**6


def test_ray_points_to_evaluate_take_a_conditional_point():
    pytest.importorskip("ray")
    from warmbo.integrations.ray import WarmboSearch

    search = WarmboSearch(
        space=small_svm(), metric="loss", mode="min", points_to_evaluate=[{"kernel": "linear", "C": 1.0}]
    )
    assert search._point(0, {"kernel": "linear", "C": 1.0, "gamma": 0.5}) == {"kernel": "linear", "C": 1.0}
    with pytest.raises(ValueError, match="no value for gamma"):
        search._point(0, {"kernel": "rbf", "C": 1.0})


def test_messages_name_the_condition_and_print_when_as_written():
    from warmbo._user_json import point_problem

    space = svm_space()
    assert "('degree' when kernel is 'poly')" in point_problem(
        {"C": 1.0, "kernel": "poly", "gamma": 0.1}, space
    )
    other = wb.Space(
        [*space.params[:1], dataclasses_replace(space.params[1], when={"kernel": "rbf"}), *space.params[2:]]
    )
    assert (
        "parameter 'gamma': when {'kernel': 'rbf'} != {'kernel': ['poly', 'rbf', 'sigmoid']}"
        in other.diff(space)
    )
    with pytest.raises(SpaceError, match="must be a value or a list of values"):
        wb.Float("x", 0.0, 1.0, when={"k": {"a": 1}})


def dataclasses_replace(p, **changes):
    import dataclasses

    return dataclasses.replace(p, **changes)


def test_dataframe_columns_follow_the_space_when_the_first_trial_lacks_a_parameter():
    opt = wb.Optimizer(small_svm(), seed=0)
    opt.tell({"kernel": "linear", "C": 1.0}, 1.0)
    opt.tell({"kernel": "rbf", "C": 2.0, "gamma": 0.5}, 2.0)
    assert list(opt.history.to_dataframe().columns[-3:]) == ["kernel", "C", "gamma"]


def test_most_active_is_the_largest_point():
    for space in (svm_space(), nested_space(), small_svm()):
        sizes = {len(p) for p in space.sample(512, seed=0)}
        assert space._conditions.most_active() == max(sizes)
    assert nested_space()._conditions.most_active() == 4  # model, optimizer, momentum, width


def test_a_when_value_is_stored_as_its_parents_choice():
    space = wb.Space([wb.Categorical("a", [1, 2]), wb.Float("x", 0.0, 1.0, when={"a": 1.0})])
    assert space.params[1].when == (("a", (1,)),) and type(space.params[1].when[0][1][0]) is int
    assert space == wb.Space([wb.Categorical("a", [1, 2]), wb.Float("x", 0.0, 1.0, when={"a": 1})])
    assert "when={'a': 1}" in repr(space)
    with pytest.raises(SpaceError, match="not one of 'a'"):
        wb.Space([wb.Categorical("a", [1, 2]), wb.Float("x", 0.0, 1.0, when={"a": True})])


def test_a_held_child_stays_held_in_the_design_and_the_search():
    opt = wb.Optimizer(svm_space(), seed=0, n_initial=6)
    for _ in range(12):  # 6 design points, then the model's
        p = opt.ask(fixed={"kernel": "poly", "degree": 3})
        assert p["kernel"] == "poly" and p["degree"] == 3 and "gamma" in p
        opt.tell(p, svm_objective(p))


def test_a_sampler_s_prior_of_a_conditional_space_keeps_the_rows_that_hold_their_active_parameters(tmp_path):
    # subspace_prior (WarmboSampler's reading of a prior) took a row only when it held every
    # parameter of the space: in a conditional space, a linear SVM's row (no gamma, no degree) was
    # another branch's and left out, for every form of prior. Now a row needs its active parameters;
    # a row lacking one (an rbf SVM without gamma) is another branch's still, and is left out
    import pandas as pd

    from warmbo.prior import subspace_prior

    space = svm_space()
    rows = [
        ({"C": 1.0, "kernel": "linear"}, 0.1),
        ({"C": 2.0, "kernel": "linear", "gamma": 0.5}, 0.2),  # (an inactive value: dropped)
        ({"C": 3.0, "kernel": "poly", "gamma": 0.1, "degree": 3}, 0.3),
        ({"C": 4.0, "kernel": "rbf"}, 0.4),  # (gamma active and absent: left out)
        ({"C": 5.0, "kernel": "rbf", "gamma": 0.01, "other": 7}, 0.5),  # (another parameter: dropped)
    ]
    kept = [0.1, 0.2, 0.3, 0.5]
    points = [{"C": 1.0, "kernel": "linear"}, {"C": 2.0, "kernel": "linear"}, rows[2][0]]
    points.append({"C": 5.0, "gamma": 0.01, "kernel": "rbf"})
    X, y = [dict(p) for p, _ in rows], [v for _, v in rows]
    csv_path = tmp_path / "rows.csv"
    csv_path.write_text(
        "C,gamma,kernel,degree,y\n"
        + "".join(f"{p['C']},{p.get('gamma', '')},{p['kernel']},{p.get('degree', '')},{v}\n" for p, v in rows)
    )
    wide = wb.Space([*space.params, wb.Int("other", 0, 9, when={"kernel": "rbf"})])
    study = str(tmp_path / "wide.db")
    opt = wb.Optimizer(wide, storage=study, seed=0)
    for p, v in rows:
        if not wide.missing(p) and p["kernel"] != "rbf":  # (its rbf rows would need 'other')
            opt.tell(p, v)
    opt.tell({"C": 5.0, "kernel": "rbf", "gamma": 0.01, "other": 7}, 0.5)
    opt.study.close()
    forms = {
        "(X, y)": (X, y),
        "records": [{**p, "y": v} for p, v in rows],
        "CSV": str(csv_path),
        "DataFrame": pd.read_csv(csv_path),
        "TaskData": TaskData.from_records(
            [{k: v for k, v in p.items() if k in wide.names} for p, _ in rows if not wide.missing(p)],
            [v for p, v in rows if not wide.missing(p)],
            wide,
        ),
        "warmbo study": study,
    }
    for name, prior in forms.items():
        data = subspace_prior(prior, space, maximize=False)
        assert sorted(data.y) == kept, name  # (TaskData and the study never held the rbf row without gamma)
        assert sorted(map(sorted, (p.items() for p in data.params))) == sorted(
            map(sorted, (p.items() for p in points))
        ), name
    # a row lacking a parent (no kernel) is another branch's too; no row left: None
    assert subspace_prior(([{"C": 1.0}], [0.0]), space, maximize=False) is None
