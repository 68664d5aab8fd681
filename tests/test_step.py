"""Float and Int with ``step=``: a grid ``low + k * step`` as a native parameter.

Before, ``Float`` and ``Int`` took no ``step``: a temperature set in steps of 5 degrees had to be an
``Int`` over the grid index, converted by hand in the objective (the Optuna and Ray integrations did
that internally; they now map a step range to ``step`` too, tests/test_integrations_*.py).
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import warmbo as wb
from warmbo.cli import app
from warmbo.data import DataError, TaskData
from warmbo.optimizer import SpaceExhaustedError
from warmbo.space import Categorical, Float, Int, Space, SpaceError, param_from_dict
from warmbo.storage import StorageError

SETTINGS = settings(max_examples=100, deadline=None, database=None, derandomize=True)


@st.composite
def step_floats(draw: Any) -> tuple[Float, list[float]]:
    """A step Float with decimal low and step, and its grid computed exactly in decimal."""
    low = Decimal(draw(st.integers(-10_000, 10_000))) / Decimal(10) ** draw(st.integers(0, 3))
    step = Decimal(draw(st.integers(1, 999))) / Decimal(10) ** draw(st.integers(0, 4))
    count = draw(st.integers(1, 60))
    high = low + count * step
    grid = [float(low + k * step) for k in range(count + 1)]
    return Float("x", float(low), float(high), step=float(step)), grid


@given(step_floats(), st.data())
@SETTINGS
def test_step_float_round_trips_on_its_grid_with_exact_decimal_values(pair, data) -> None:
    p, grid = pair
    assert p._size() == len(grid)
    # every bin of the encoding decodes to its grid value, the exact decimal (0.3, not 0.30000000000000004)
    centres = (np.arange(len(grid)) + 0.5) / len(grid)
    assert p.decode(centres[:, None]) == grid
    assert np.allclose(p.encode(grid)[:, 0], centres, rtol=0, atol=1e-12)
    # any u decodes to a grid value that validates to itself; snapping is idempotent
    u = np.array(data.draw(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=20)))[:, None]
    values = p.decode(u)
    assert all(v in grid and p.validate(v) == v and type(v) is float for v in values)
    snapped = p._snap_clipped(u)
    assert np.array_equal(p._snap_clipped(snapped), snapped)
    assert p.decode(snapped) == values
    # a value computed in floats (float noise) is taken as the grid value
    k = data.draw(st.integers(0, len(grid) - 1))
    assert p.validate(p.low + k * p.step) == grid[k]


@given(st.integers(-1000, 1000), st.integers(1, 50), st.integers(1, 40), st.data())
@SETTINGS
def test_step_int_round_trips_on_its_grid(low, step, count, data) -> None:
    p = Int("n", low, low + count * step, step=step)
    grid = [low + k * step for k in range(count + 1)]
    centres = (np.arange(count + 1) + 0.5) / (count + 1)
    assert p.decode(centres[:, None]) == grid
    assert p.encode(grid).ravel().tolist() == centres.tolist()
    u = np.array(data.draw(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=20)))[:, None]
    assert all(v in grid and type(v) is int for v in p.decode(u))


def test_decimal_grid_values() -> None:
    assert Float("x", 0.0, 1.0, step=0.1).decode(np.array([[0.35]])) == [0.3]
    assert Float("v", 0.5, 10.0, step=0.5).validate(0.1 * 3 + 0.2) == 0.5
    assert Float("t", 20, 95, step=5).decode(np.array([[0.0], [1.0]])) == [20.0, 95.0]


@pytest.mark.parametrize(
    "param, value, fragments",
    [
        (Float("temp", 20, 95, step=5), 37.2, ["'temp'", "37.2", "35.0 and 40.0"]),
        (Float("vol", 0.5, 10, step=0.5), 1.3, ["'vol'", "1.3", "1.0 and 1.5"]),
        (Float("x", 0.0, 1.0, step=0.1), 0.3 + 2e-9, ["'x'", "0.3 and 0.4"]),
        (Int("units", 16, 128, step=16), 40, ["'units'", "40", "32 and 48"]),
    ],
)
def test_off_grid_values_are_refused_naming_the_nearest_grid_values(param, value, fragments) -> None:
    with pytest.raises(SpaceError, match="not on its grid") as info:
        param.validate(value)
    for fragment in fragments:
        assert fragment in str(info.value)
    with pytest.raises(SpaceError):
        Space([param]).encode({param.name: value})


def test_float_noise_within_a_billionth_of_a_step_is_taken() -> None:
    p = Float("x", 0.0, 1.0, step=0.1)
    assert p.validate(0.3 + 5e-11) == 0.3 and p.validate(0.30000000000000004) == 0.3


@pytest.mark.parametrize(
    "factory, fragments",
    [
        (lambda: Float("x", 0, 1, step=0.3), ["high 1.0 is not on the grid", "high=0.9 or high=1.2"]),
        # half a thousandth of a step off, a million steps up: off the grid, as a value would be
        (lambda: Float("x", 0, 1000.0000005, step=0.001), ["high=1000.0 or high=1000.001"]),
        (lambda: Int("u", 16, 130, step=16), ["high 130 is not on the grid", "high=128 or high=144"]),
        (lambda: Float("x", 1, 10, step=1, log=True), ["step and log=True cannot be combined"]),
        (lambda: Int("x", 1, 9, step=2, log=True), ["step > 1 and log=True cannot be combined"]),
        (lambda: Float("x", 0, 1, step=0), ["step must be > 0"]),
        (lambda: Float("x", 0, 1, step=-0.1), ["step must be > 0"]),
        (lambda: Float("x", 0, 1, step=math.inf), ["step inf is not finite"]),
        (lambda: Int("x", 0, 10, step=0), ["step must be >= 1"]),
        (lambda: Int("x", 0, 10, step=2.5), ["step 2.5 is not an integer"]),
        (lambda: Float("x", 0, 1, step=True), ["step must be a real number"]),
    ],
)
def test_invalid_steps_are_refused(factory, fragments) -> None:
    with pytest.raises(SpaceError) as info:
        factory()
    for fragment in fragments:
        assert fragment in str(info.value)


def test_int_log_with_step_one_still_works() -> None:
    assert Int("w", 16, 1024, log=True, step=1) == Int("w", 16, 1024, log=True)


def test_a_space_of_step_parameters_is_enumerated_exactly() -> None:
    space = Space(
        [Float("t", 20, 40, step=5), Int("u", 16, 64, step=16), Categorical("c", ["a", "b"]), Int("i", 0, 2)]
    )
    assert space.cardinality == 5 * 4 * 2 * 3
    assert not space.is_finite  # (is_finite means a Space.grid, as for Int and Categorical spaces)
    assert Space([Float("t", 20, 40, step=5), Float("x", 0, 1)]).cardinality == math.inf
    # the bin centres of every parameter decode to every point once
    axes = [np.linspace(0, 1, 9)] * space.dim
    U = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, space.dim)
    distinct = {tuple(p.values()) for p in space.decode(U)}
    expected = {
        (t, u, c, i)
        for t in (20.0, 25.0, 30.0, 35.0, 40.0)
        for u in (16, 32, 48, 64)
        for c in "ab"
        for i in (0, 1, 2)
    }
    assert distinct == expected
    assert all(space.validate(p) == p for p in space.sample(64, seed=0))


def test_the_optimizer_proposes_grid_values_and_repeats_only_once_the_grid_is_exhausted() -> None:
    space = Space([Float("temp", 20, 40, step=5), Float("vol", 0.5, 2.0, step=0.5)])
    assert space.cardinality == 20
    opt = wb.Optimizer(space, seed=0, n_initial=4)
    grid = {(t, v) for t in (20.0, 25.0, 30.0, 35.0, 40.0) for v in (0.5, 1.0, 1.5, 2.0)}
    seen = []
    for _ in range(20):
        p = opt.ask()
        seen.append((p["temp"], p["vol"]))
        opt.tell(p, -((p["temp"] - 31) ** 2) - p["vol"])
    assert set(seen) == grid and len(seen) == 20  # every grid point once, nothing off the grid
    extra = opt.ask()
    assert (extra["temp"], extra["vol"]) in grid
    with pytest.raises(SpaceExhaustedError, match="20 point"):
        wb.Optimizer(space, seed=0).ask(21)


def test_maximize_snaps_to_the_grid() -> None:
    space = Space([Float("x", 0.0, 1.0, step=0.25), Float("y", -1.0, 1.0)])
    gp = wb.GP(wb.kernels.Matern(2.5, 0.3), noise=1e-4).fit(
        np.array([[0.1, 0.5], [0.9, 0.2]]), np.array([1.0, 0.0])
    )
    result = wb.maximize(wb.EI().bind(gp), space, seed=0, anchors=np.array([[0.1, 0.5]]))
    x = space.decode(result.x)[0]["x"]
    assert x in (0.0, 0.25, 0.5, 0.75, 1.0)
    assert np.array_equal(space.snap(result.x), result.x)


def test_stored_descriptions_keep_the_step_and_old_ones_load() -> None:
    f, i = Float("t", 20, 95, step=5), Int("u", 16, 128, step=16)
    assert f.to_dict()["step"] == 5.0 and i.to_dict()["step"] == 16
    assert param_from_dict(json.loads(json.dumps(f.to_dict()))) == f
    assert param_from_dict(i.to_dict()) == i
    # without a step the description is the one studies stored before steps existed, both ways
    old_float = {"type": "float", "name": "t", "low": 20.0, "high": 95.0, "log": False}
    old_int = {"type": "int", "name": "u", "low": 16, "high": 128, "log": False}
    assert Float("t", 20, 95).to_dict() == old_float and Int("u", 16, 128).to_dict() == old_int
    assert param_from_dict(old_float) == Float("t", 20, 95) and param_from_dict(old_float).step is None
    assert param_from_dict(old_int).step == 1
    assert repr(Float("t", 20, 95)) == "wb.Float('t', 20.0, 95.0)"
    assert repr(f) == "wb.Float('t', 20.0, 95.0, step=5.0)"
    assert f != Float("t", 20, 95) and f != Float("t", 20, 95, step=2.5)


def test_a_study_refuses_a_changed_step_naming_it(tmp_path) -> None:
    url = str(tmp_path / "s.db")
    wb.Optimizer(Space([Float("t", 20, 95, step=5)]), storage=url, seed=0).tell({"t": 25.0}, 1.0)
    assert wb.Optimizer(Space([Float("t", 20, 95, step=5)]), storage=url, seed=0).study.count("complete") == 1
    with pytest.raises(StorageError, match=r"parameter 't': step 2.5 != 5.0"):
        wb.Optimizer(Space([Float("t", 20, 95, step=2.5)]), storage=url, seed=0)
    with pytest.raises(StorageError, match=r"parameter 't': step None != 5.0"):
        wb.Optimizer(Space([Float("t", 20, 95)]), storage=url, seed=0)


def test_an_old_study_without_step_still_opens(tmp_path) -> None:
    url = str(tmp_path / "old.db")
    space = Space([Float("x", 0, 1), Int("n", 1, 5)])
    opt = wb.Optimizer(space, storage=url, seed=0)
    opt.tell({"x": 0.5, "n": 2}, 1.0)
    stored = json.loads(wb.Study(url).get_meta("space"))
    assert all("step" not in p for p in stored["params"])  # what a study written before steps holds
    assert wb.Optimizer(space, storage=url, seed=0).study.count("complete") == 1


def test_told_values_and_prior_rows_off_the_grid_are_refused(tmp_path) -> None:
    space = Space([Float("temp", 20, 95, step=5), Int("units", 16, 128, step=16)])
    opt = wb.Optimizer(space, seed=0)
    with pytest.raises(SpaceError, match="'temp': value 37.2 is not on its grid"):
        opt.tell({"temp": 37.2, "units": 32}, 1.0)
    opt.tell({"temp": 0.1 * 350, "units": 32}, 1.0)  # float noise: stored as the grid value
    assert opt.study.trials()[0].params == {"temp": 35.0, "units": 32}
    path = tmp_path / "prior.csv"
    path.write_text("temp,units,y\n35,32,1.0\n37.2,32,2.0\n")
    with pytest.raises(DataError, match="temp.*37.2 is not on its grid.*35.0 and 40.0"):
        TaskData.from_csv(path, space)
    path.write_text("temp,units,y\n35,32,1.0\n40,48,2.0\n")
    assert list(TaskData.from_csv(path, space).params) == [
        {"temp": 35.0, "units": 32},
        {"temp": 40.0, "units": 48},
    ]


def test_text_tells_neighbouring_grid_values_apart() -> None:
    assert Float("x", 1000, 2000, step=0.001).text(1500.123) == "1500.123"
    assert Float("v", 0.5, 10, step=0.5).text(9.5) == "9.5"


def test_the_cli_takes_a_step_in_the_space_file(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    space = {
        "params": [
            {"type": "float", "name": "temp_C", "low": 60, "high": 100, "step": 5},
            {"type": "float", "name": "volume_uL", "low": 0.5, "high": 10, "step": 0.5},
            {"type": "int", "name": "rpm", "low": 200, "high": 1000, "step": 200},
        ]
    }
    (tmp_path / "lab.json").write_text(json.dumps(space))
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(app, [str(a) for a in args])

    made = invoke("suggest", "--space", "lab.json", "--storage", "lab.db", "--seed", 0, "-n", 3, "--json")
    assert made.exit_code == 0, made.output
    for line in made.stdout.strip().splitlines():
        p = json.loads(line)["params"]
        assert p["temp_C"] in {60.0 + 5 * k for k in range(9)}
        assert p["volume_uL"] in {0.5 * k for k in range(1, 21)}
        assert p["rpm"] in {200, 400, 600, 800, 1000}
    stored = wb.Study("lab.db").space
    assert [p.step for p in stored.params] == [5.0, 0.5, 200]
    off = invoke(
        "observe",
        "--storage",
        "lab.db",
        "--params",
        '{"temp_C": 62, "volume_uL": 1, "rpm": 400}',
        "--value",
        1,
    )
    assert off.exit_code == 1
    assert "--params: temp_C: value 62 is not on its grid 60.0 + k * 5.0" in off.output
    assert "60.0 and 65.0" in off.output
    ok = invoke(
        "observe",
        "--storage",
        "lab.db",
        "--params",
        '{"temp_C": 65, "volume_uL": 1.5, "rpm": 400}',
        "--value",
        1,
    )
    assert ok.exit_code == 0, ok.output
    assert wb.Study("lab.db").trial(4).params == {"temp_C": 65.0, "volume_uL": 1.5, "rpm": 400}
    shown = invoke("status", "--storage", "lab.db")
    assert shown.exit_code == 0 and "65" in shown.output and "1.5" in shown.output
    # a changed step is a changed space, and the message names it
    space["params"][0]["step"] = 10
    (tmp_path / "lab2.json").write_text(json.dumps(space))
    changed = invoke("suggest", "--space", "lab2.json", "--storage", "lab.db")
    assert changed.exit_code == 1 and "parameter 'temp_C': step 10.0 != 5.0" in changed.output, changed.output
    bad = {"params": [{"type": "float", "name": "t", "low": 60, "high": 102, "step": 5}]}
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    refused = invoke("suggest", "--space", "bad.json", "--storage", "bad.db")
    assert refused.exit_code == 1 and "high=100.0 or high=105.0" in refused.output, refused.output


def test_a_report_axis_of_a_step_parameter_has_a_tick_on_each_grid_value() -> None:
    # before the step: MaxNLocator put an Int's ticks at 20, 40, 60 on a grid of 16, 32, 48, 64
    import matplotlib

    matplotlib.use("Agg")
    from warmbo.report import plot_posterior_slices

    space = Space([Float("temp", 20, 40, step=5), Int("units", 16, 64, step=16), Float("x", 0, 1)])

    def predict(U):
        return U.sum(axis=1), np.full(U.shape[0], 0.1)

    fig = plot_posterior_slices(space, {"temp": 25.0, "units": 32, "x": 0.5}, predict, True)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert list(panels[0].get_xticks()) == [20, 25, 30, 35, 40]
    assert list(panels[1].get_xticks()) == [16, 32, 48, 64]
    assert [t.get_text() for t in panels[1].get_xticklabels()] == ["16", "32", "48", "64"]


@st.composite
def step_spaces(draw: Any) -> Space:
    """Mixed spaces with step floats and step ints beside continuous, integer and categorical ones."""
    params: list[Any] = []
    for i, kind in enumerate(draw(st.lists(st.sampled_from("fsiIc"), min_size=1, max_size=5))):
        name = f"p{i}"
        if kind == "f":
            params.append(Float(name, -1.0, draw(st.floats(-0.5, 100.0))))
        elif kind == "s":
            p, _ = draw(step_floats())
            params.append(Float(name, p.low, p.high, step=p.step))
        elif kind == "i":
            params.append(Int(name, 0, draw(st.integers(1, 30))))
        elif kind == "I":
            step, low = draw(st.integers(2, 25)), draw(st.integers(-50, 50))
            params.append(Int(name, low, low + step * draw(st.integers(1, 12)), step=step))
        else:
            params.append(Categorical(name, ["a", "b", "c"][: draw(st.integers(1, 3))]))
    return Space(params)


@given(step_spaces(), st.integers(1, 40), st.integers(0, 2**32 - 1))
@SETTINGS
def test_samples_snap_and_stored_descriptions_of_spaces_with_steps(space, n, seed) -> None:
    pts = space.sample(n, seed=seed)
    assert all(space.validate(pt) == pt for pt in pts)
    U = space.sample_encoded(n, seed=seed)
    np.testing.assert_array_equal(U, space.encode(pts))
    np.testing.assert_array_equal(space.snap(U), U)
    grid = [p.name for p in space.params if p._discrete]  # (continuous floats: up to round-off)
    assert [{n: pt[n] for n in grid} for pt in space.decode(U)] == [{n: pt[n] for n in grid} for pt in pts]
    noisy = np.random.default_rng(seed).uniform(-0.2, 1.2, size=(6, space.dim))
    snapped = space.snap(noisy)
    np.testing.assert_array_equal(space.snap(snapped), snapped)
    np.testing.assert_allclose(snapped, space.encode(space.decode(noisy)), rtol=0, atol=1e-9)
    again = Space.from_dict(json.loads(json.dumps(space.to_dict())))
    assert again == space and space.diff(again) == [] and hash(again) == hash(space)
    expected = math.prod(p._size() for p in space.params)
    assert space.cardinality == expected


def test_a_run_beyond_a_step_grid_evaluates_every_point_then_warns_that_it_repeats() -> None:
    space = Space([Float("temp", 20, 35, step=5), Float("vol", 0.5, 1.5, step=0.5)])  # 4 x 3 points
    opt = wb.Optimizer(space, seed=0)
    expected = r"has 12 points \(integers, categoricals and step parameters only\)"
    with pytest.warns(wb.optimizer.RepeatedPointsWarning, match=expected):
        opt.run(lambda p: p["temp"] / 10 - p["vol"], budget=14, progress=False)
    points = [(t.params["temp"], t.params["vol"]) for t in opt.history]
    grid = {(t, v) for t in (20, 25, 30, 35) for v in (0.5, 1, 1.5)}
    assert len(set(points[:12])) == 12 and set(points) <= grid


def test_a_float32_value_is_on_the_grid_to_its_own_precision():
    # np.float32(0.7) is 0.699999988 as a float64: refused as off the grid, "the nearest grid values
    # are 0.6 and 0.7" (a fixed-values user test's float32 line log); taken as 0.7, as the float64
    # value within float noise is, while a float32 between two grid values is still refused
    speed = Float("speed", 0.5, 3.0, step=0.1)
    assert speed.validate(np.float32(0.7)) == 0.7 and speed.validate(np.float32(2.9)) == 2.9
    with pytest.raises(SpaceError, match="nearest grid values are 0.7 and 0.8"):
        speed.validate(np.float32(0.75))
    with pytest.raises(SpaceError, match="not on its grid"):
        speed.validate(0.7 + 1e-7)  # (a float64 keeps its own tolerance)
