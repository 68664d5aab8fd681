"""Tests for warmbo.space: parameters, encoding, sampling, grid spaces, serialisation."""

from __future__ import annotations

import json
import math
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warmbo.space import (
    Categorical,
    Float,
    Int,
    Parameter,
    Space,
    SpaceError,
    param_from_dict,
)

SETTINGS = settings(max_examples=100, deadline=None, database=None, derandomize=True)
FEW = settings(max_examples=40, deadline=None, database=None, derandomize=True)


# ----------------------------------------------------------------------------------------------
# strategies
# ----------------------------------------------------------------------------------------------


@st.composite
def float_params(draw: Any, name: str) -> Float:
    if draw(st.booleans()):
        low = draw(st.floats(1e-6, 1e3))
        ratio = draw(st.floats(1.001, 1e6))
        return Float(name, low, low * ratio, log=True)
    low = draw(st.floats(-1e3, 1e3))
    width = draw(st.floats(1e-3, 1e3))
    return Float(name, low, low + width)


@st.composite
def int_params(draw: Any, name: str) -> Int:
    if draw(st.booleans()):
        low = draw(st.integers(1, 100))
        return Int(name, low, low + draw(st.integers(1, 1000)), log=True)
    low = draw(st.integers(-100, 100))
    return Int(name, low, low + draw(st.integers(1, 200)))


def _key(v: Any) -> tuple[bool, Any]:
    return (type(v) is bool, v)


CHOICE = st.one_of(
    st.text(max_size=4),
    st.integers(-5, 5),
    st.floats(-5, 5, allow_nan=False),
    st.booleans(),
)


@st.composite
def cat_params(draw: Any, name: str) -> Categorical:
    # (choices written alike, "1" and 1, are refused: unique by their text too)
    return Categorical(name, draw(st.lists(CHOICE, min_size=1, max_size=5, unique_by=(_key, str))))


@st.composite
def spaces(draw: Any, min_size: int = 1, max_size: int = 5) -> Space:
    kinds = draw(st.lists(st.sampled_from(["float", "int", "cat"]), min_size=min_size, max_size=max_size))
    makers = {"float": float_params, "int": int_params, "cat": cat_params}
    return Space([draw(makers[k](f"p{i}")) for i, k in enumerate(kinds)])


def value_strategy(p: Parameter) -> st.SearchStrategy[Any]:
    if isinstance(p, Float):
        return st.floats(p.low, p.high)
    if isinstance(p, Int):
        return st.integers(p.low, p.high)
    assert isinstance(p, Categorical)
    return st.sampled_from(p.choices)


def points(space: Space) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({p.name: value_strategy(p) for p in space})


def assert_value_close(p: Parameter, expected: Any, got: Any) -> None:
    if isinstance(p, Float):
        assert type(got) is float
        scale = abs(expected) if p.log else max(abs(expected), p.high - p.low)
        assert abs(got - expected) <= 1e-9 * scale, (p, expected, got)
    else:
        assert type(got) is type(expected)
        assert got == expected


def mixed_space() -> Space:
    return Space(
        [
            Float("lr", 1e-5, 1.0, log=True),
            Float("momentum", 0.0, 0.99),
            Int("layers", 1, 8),
            Int("width", 16, 1024, log=True),
            Categorical("act", ["relu", "tanh", "gelu"]),
        ]
    )


# ----------------------------------------------------------------------------------------------
# property tests
# ----------------------------------------------------------------------------------------------


@SETTINGS
@given(data=st.data())
def test_decode_encode_roundtrip(data: Any) -> None:
    space = data.draw(spaces())
    pts = data.draw(st.lists(points(space), min_size=1, max_size=4))
    U = space.encode(pts)
    assert U.shape == (len(pts), space.dim)
    assert U.dtype == np.float64
    assert np.all((U >= 0) & (U <= 1))
    back = space.decode(U)
    assert len(back) == len(pts)
    for pt, got in zip(pts, back, strict=True):
        assert list(got) == list(space.names)
        for p in space:
            assert_value_close(p, pt[p.name], got[p.name])
    # the encoding of the decoded points is the original encoding, up to round-off
    np.testing.assert_allclose(space.encode(back), U, rtol=0, atol=1e-9)


@SETTINGS
@given(space=spaces(), n=st.integers(1, 40), seed=st.integers(0, 2**32 - 1))
def test_samples_are_valid(space: Space, n: int, seed: int) -> None:
    pts = space.sample(n, seed=seed)
    assert len(pts) == n
    for pt in pts:
        assert space.validate(pt) == pt
        for p in space:
            if isinstance(p, (Float, Int)):
                assert p.low <= pt[p.name] <= p.high
    U = space.sample_encoded(n, seed=seed)
    assert U.shape == (n, space.dim)
    assert np.all((U >= 0) & (U <= 1))
    np.testing.assert_array_equal(U, space.encode(pts))
    np.testing.assert_array_equal(space.snap(U), U)


@SETTINGS
@given(data=st.data())
def test_log_float_encoding_is_linear_in_log(data: Any) -> None:
    low = data.draw(st.floats(1e-8, 1e4))
    high = low * data.draw(st.floats(1.01, 1e8))
    p = Float("lr", low, high, log=True)
    mid = math.sqrt(low * high)
    if low <= mid <= high:
        assert p.encode([mid])[0, 0] == pytest.approx(0.5, abs=1e-9)
    v = data.draw(st.floats(low, high))
    expected = (math.log(v) - math.log(low)) / (math.log(high) - math.log(low))
    assert p.encode([v])[0, 0] == pytest.approx(expected, abs=1e-9)
    assert p.encode([low])[0, 0] == 0.0
    assert p.encode([high])[0, 0] == 1.0


@pytest.mark.parametrize("low, high", [(1e-4, 1e-1), (1e-6, 1e-2), (1e-5, 1.0), (3e-3, 7.0), (1e-300, 1e300)])
def test_log_float_decodes_the_ends_of_the_cube_to_its_bounds_exactly(low, high) -> None:
    # before: exp(log(1e-4)) came back as 1.0000000000000009e-4 (and 1e-6 as 1.0000000000000004e-6),
    # which is what the optimizer handed to a command's --lr when the best lr was the bound
    p = Float("lr", low, high, log=True)
    assert p.decode([[0.0], [1.0], [-0.5], [1.5]]) == [low, high, low, high]
    space = Space([p, Float("x", -2.0, 3.0)])
    assert space.decode([0.0, 1.0])[0] == {"lr": low, "x": 3.0}


@pytest.mark.parametrize("log", [True, False])
def test_decode_as_written_gives_back_values_of_up_to_ten_digits_and_keeps_any_other_value(log) -> None:
    rng = np.random.default_rng(0)
    space = Space([Float("lr", 1e-5, 0.3, log=log), Float("x", -5.0, 10.0), Int("n", 1, 8)])
    written = [
        {"lr": float(f"{v:.{k}g}"), "x": float(f"{x:.{k}g}"), "n": int(n)}
        for v, x, n, k in zip(
            np.exp(rng.uniform(np.log(1e-5), np.log(0.3), 300)),
            rng.uniform(-5, 10, 300),
            rng.integers(1, 9, 300),
            np.tile([1, 2, 3, 6, 10], 60),
            strict=True,
        )
    ]
    written = [{**p, "lr": min(max(p["lr"], 1e-5), 0.3), "x": min(max(p["x"], -5.0), 10.0)} for p in written]
    U = space.encode(written)
    plain = space.decode(U)
    # the plain decode leaves round-off in most of them (the reason for the option; an oracle: Python's
    # own float parsing of the written text)
    assert sum(a != b for a, b in zip(plain, written, strict=True)) > 100
    assert space.decode(U, as_written=True) == written
    # any other coordinate decodes as before: uniform draws (an acquisition maximum is no shorter)
    V = rng.uniform(size=(2000, space.dim))
    assert space.decode(V, as_written=True) == space.decode(V)


@SETTINGS
@given(low=st.integers(1, 50), span=st.integers(1, 300))
def test_log_int_bins_are_equal_in_log_space(low: int, span: int) -> None:
    p = Int("n", low, low + span, log=True)
    vs = list(range(p.low, p.high + 1))
    u = p.encode(vs)[:, 0]
    a, b = math.log(low - 0.5), math.log(p.high + 0.5)
    expected = [(0.5 * (math.log(v - 0.5) + math.log(v + 0.5)) - a) / (b - a) for v in vs]
    np.testing.assert_allclose(u, expected, rtol=0, atol=1e-12)
    assert np.all(np.diff(u) > 0)
    # bin edges: just inside each edge decodes to the owning integer
    edges = [(math.log(v - 0.5) - a) / (b - a) for v in vs] + [1.0]
    lo_in = np.array(edges[:-1]) + 1e-9
    hi_in = np.array(edges[1:]) - 1e-9
    assert p.decode(lo_in.reshape(-1, 1)) == vs
    assert p.decode(hi_in.reshape(-1, 1)) == vs


@SETTINGS
@given(space=spaces(), seed=st.integers(0, 2**32 - 1))
def test_snap_is_idempotent_projection(space: Space, seed: int) -> None:
    U = np.random.default_rng(seed).uniform(-0.2, 1.2, size=(6, space.dim))
    S = space.snap(U)
    assert S.shape == U.shape
    np.testing.assert_array_equal(space.snap(S), S)
    np.testing.assert_allclose(S, space.encode(space.decode(U)), rtol=0, atol=1e-9)
    for p in space:
        block = S[:, space.slice_of(p.name)]
        if isinstance(p, Categorical):
            assert set(np.unique(block)) <= {0.0, 1.0}
            np.testing.assert_array_equal(block.sum(axis=1), 1.0)
    # a single (dim,) point keeps its shape
    assert space.snap(U[0]).shape == (space.dim,)
    np.testing.assert_array_equal(space.snap(U[0]), S[0])


@SETTINGS
@given(space=spaces(max_size=3), seed=st.integers(0, 2**31))
def test_sample_reproducible_and_seed_dependent(space: Space, seed: int) -> None:
    space = Space([*space.params, Float("extra", -1.0, 1.0)])
    a = space.sample_encoded(8, seed=seed)
    np.testing.assert_array_equal(a, space.sample_encoded(8, seed=seed))
    assert space.sample(8, seed=seed) == space.sample(8, seed=seed)
    assert not np.array_equal(a, space.sample_encoded(8, seed=seed + 1))


@FEW
@given(space=spaces())
def test_dict_roundtrip_property(space: Space) -> None:
    again = Space.from_dict(json.loads(json.dumps(space.to_dict())))
    assert again == space
    assert space.diff(again) == []
    assert hash(again) == hash(space)


# ----------------------------------------------------------------------------------------------
# parameters
# ----------------------------------------------------------------------------------------------


def test_float_linear_encoding_and_decode_clamps() -> None:
    p = Float("x", -2.0, 2.0)
    np.testing.assert_array_equal(p.encode([-2.0, 0.0, 2.0, 1]), [[0.0], [0.5], [1.0], [0.75]])
    assert p.decode(np.array([[-0.5], [0.25], [1.5]])) == [-2.0, -1.0, 2.0]
    assert p.width == 1
    assert p.validate(np.float32(1.5)) == 1.5


def test_int_encoding_bins_and_types() -> None:
    p = Int("k", 0, 3)
    np.testing.assert_allclose(p.encode([0, 1, 2, 3])[:, 0], [0.125, 0.375, 0.625, 0.875])
    assert p.decode(np.array([[0.0], [0.2499], [0.25], [0.99], [1.0]])) == [0, 0, 1, 3, 3]
    assert p.validate(np.int64(2)) == 2 and type(p.validate(np.int64(2))) is int
    assert p.validate(3.0) == 3 and type(p.validate(3.0)) is int
    for bad in (2.5, True, np.bool_(False), "2", None):
        with pytest.raises(SpaceError, match="'k'"):
            p.validate(bad)


def test_constant_range_says_how_to_pass_a_constant() -> None:
    """low == high is refused (a zero-width range cannot be encoded) with the two ways to fix a value;
    a reversed range gets the plain message."""
    for make, shown in (
        (lambda: Int("k", 5, 5), "Categorical('k', [5])"),
        (lambda: Float("x", 1.0, 1.0), "Categorical('x', [1.0])"),
    ):
        with pytest.raises(SpaceError, match="constant") as info:
            make()
        assert shown in str(info.value)
    with pytest.raises(SpaceError, match="must be < high") as info:
        Int("k", 6, 5)
    assert "constant" not in str(info.value)
    space = Space([Float("x", 0.0, 1.0), Categorical("k", [5])])  # the suggested form works
    assert space.decode(space.encode([{"x": 0.5, "k": 5}]))[0]["k"] == 5


def test_categorical_one_hot_and_distinct_kinds() -> None:
    p = Categorical("c", ["a", 1, True, 2.5])
    assert p.width == 4
    np.testing.assert_array_equal(p.encode(["a", True, 1.0]), [[1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 0]])
    assert p.decode(np.array([[0.1, 0.2, 0.9, 0.3], [0.5, 0.5, 0, 0]])) == [True, "a"]
    assert type(p.validate(1.0)) is int  # canonical value is the stored choice
    assert Categorical("c", [np.str_("a"), np.int64(1)]).choices == ("a", 1)
    assert Categorical("c", [1, 2]) != Categorical("c", [True, 2])
    with pytest.raises(SpaceError, match="'c'.*False"):
        p.validate(False)


def test_param_dict_roundtrip() -> None:
    for p in mixed_space():
        d = json.loads(json.dumps(p.to_dict()))
        assert param_from_dict(d) == p
        assert type(p).from_dict(d) == p
    with pytest.raises(SpaceError, match="'lr'"):
        Int.from_dict(Float("lr", 0, 1).to_dict())
    with pytest.raises(SpaceError, match="'x'.*'bogus'.*its keys are type, name, low, high, log"):
        param_from_dict({"type": "float", "name": "x", "low": 0, "high": 1, "bogus": 1})
    with pytest.raises(SpaceError, match="'unit'.*its keys are type, name, choices"):
        param_from_dict({"type": "categorical", "name": "s", "choices": ["a"], "unit": "-"})
    with pytest.raises(SpaceError, match="'x'.*'high'"):
        param_from_dict({"type": "float", "name": "x", "low": 0})
    with pytest.raises(SpaceError, match="'x'.*'complex'"):
        param_from_dict({"type": "complex", "name": "x"})


def test_parameters_are_immutable() -> None:
    p = Float("x", 0, 1)
    with pytest.raises(AttributeError):
        p.low = 0.5  # type: ignore[misc]
    s = mixed_space()
    with pytest.raises(AttributeError):
        s.params = ()  # type: ignore[misc]


# ----------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("param", "value", "fragment"),
    [
        (Float("lr", 0.0, 1.0), float("nan"), "nan"),
        (Float("lr", 0.0, 1.0), float("inf"), "inf"),
        (Float("lr", 0.0, 1.0), -float("inf"), "inf"),
        (Float("lr", 0.0, 1.0), 1.5, "1.5"),
        (Float("lr", 0.0, 1.0), "0.5", "'0.5'"),
        (Float("lr", 0.0, 1.0), True, "True"),
        (Float("lr", 0.0, 1.0), None, "None"),
        (Int("lr", 0, 10), float("nan"), "nan"),
        (Int("lr", 0, 10), float("inf"), "inf"),
        (Int("lr", 0, 10), 11, "11"),
        (Int("lr", 0, 10), -1, "-1"),
        (Int("lr", 0, 10), 2.5, "2.5"),
        (Categorical("lr", ["a", "b"]), "c", "'c'"),
        (Categorical("lr", ["a", 1.0]), float("nan"), "nan"),
        (Categorical("lr", ["a", "b"]), [1], r"\[1\]"),
    ],
)
def test_invalid_values_name_parameter_and_value(param: Parameter, value: Any, fragment: str) -> None:
    with pytest.raises(ValueError, match=f"'lr'.*{fragment}"):
        param.validate(value)
    space = Space([param, Float("other", 0, 1)])
    with pytest.raises(ValueError, match=f"'lr'.*{fragment}"):
        space.encode({"lr": value, "other": 0.5})


@pytest.mark.parametrize(
    ("factory", "fragment"),
    [
        (lambda: Float("lr", 1.0, 1.0), "'lr'.*1.0"),
        (lambda: Float("lr", 2.0, 1.0), "'lr'.*2.0"),
        (lambda: Float("lr", 0.0, float("nan")), "'lr'.*nan"),
        (lambda: Float("lr", -float("inf"), 1.0), "'lr'.*inf"),
        (lambda: Float("lr", -1e308, 1e308), "'lr'"),
        (lambda: Float("lr", 0.0, 1.0, log=True), "'lr'.*low=0.0"),
        (lambda: Float("lr", -1.0, 1.0, log=True), "'lr'.*low=-1.0"),
        (lambda: Float("lr", 0.0, 1.0, log=1), "'lr'.*log"),  # type: ignore[arg-type]
        (lambda: Float("", 0.0, 1.0), "''"),
        (lambda: Float(3, 0.0, 1.0), "3"),  # type: ignore[arg-type]
        (lambda: Int("lr", 5, 5), "'lr'.*5"),
        (lambda: Int("lr", 5, 2), "'lr'.*5"),
        (lambda: Int("lr", 0.5, 2), "'lr'.*0.5"),
        (lambda: Int("lr", 0, 10, log=True), "'lr'.*low=0"),
        (lambda: Categorical("lr", []), "'lr'.*empty"),
        (lambda: Categorical("lr", ["a", "b", "a"]), "'lr'.*'a'"),
        (lambda: Categorical("lr", [1, 1.0]), "'lr'.*1.0"),
        (lambda: Categorical("lr", "abc"), "'lr'.*'abc'"),
        (lambda: Categorical("lr", [None]), "'lr'.*None"),
        (lambda: Categorical("lr", [float("inf")]), "'lr'.*inf"),
    ],
)
def test_invalid_parameters(factory: Any, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        factory()


def test_space_validation_errors() -> None:
    s = mixed_space()
    good = {"lr": 0.01, "momentum": 0.9, "layers": 3, "width": 64, "act": "relu"}
    assert s.validate(good) == good
    with pytest.raises(SpaceError, match=r"unknown.*'dropout'.*'bogus'"):
        s.validate({**good, "dropout": 0.1, "bogus": 1})
    with pytest.raises(SpaceError, match=r"missing.*'layers'.*'act'"):
        s.validate({"lr": 0.01, "momentum": 0.9, "width": 64})
    with pytest.raises(SpaceError, match="mapping"):
        s.validate([0.01, 0.9, 3, 64, "relu"])  # type: ignore[arg-type]
    with pytest.raises(SpaceError, match="'width'.*2000"):
        s.encode([good, {**good, "width": 2000}])


def test_space_construction_errors() -> None:
    with pytest.raises(SpaceError, match="'x'"):
        Space([Float("x", 0, 1), Int("y", 0, 3), Categorical("x", ["a"])])
    with pytest.raises(SpaceError, match="empty"):
        Space([])
    with pytest.raises(SpaceError, match="not a parameter"):
        Space([Float("x", 0, 1), "y"])  # type: ignore[list-item]
    with pytest.raises(SpaceError, match="sequence"):
        Space(Float("x", 0, 1))  # type: ignore[arg-type]


def test_decode_errors() -> None:
    s = mixed_space()
    U = s.sample_encoded(4, seed=0)
    U[2, s.slice_of("layers")] = np.nan
    with pytest.raises(SpaceError, match="nan.*'layers'"):
        s.decode(U)
    with pytest.raises(SpaceError, match="shape"):
        s.decode(np.zeros((2, s.dim + 1)))
    with pytest.raises(SpaceError, match="shape"):
        s.decode(np.zeros(s.dim - 1))
    with pytest.raises(SpaceError, match="'act'.*nan"):
        Categorical("act", ["a", "b"]).decode(np.array([[np.nan, 1.0]]))


def test_space_grid_errors() -> None:
    with pytest.raises(SpaceError, match="'b'.*nan"):
        Space.grid([[0.0, 1.0], [1.0, np.nan]], names=["a", "b"])
    with pytest.raises(SpaceError, match="'x0'.*inf"):
        Space.grid([[np.inf, 1.0], [1.0, 2.0]])
    with pytest.raises(SpaceError, match="empty"):
        Space.grid(np.zeros((0, 3)))
    with pytest.raises(SpaceError, match="2-D"):
        Space.grid([1.0, 2.0, 3.0])
    with pytest.raises(SpaceError, match="names"):
        Space.grid([[1.0, 2.0]], names=["a"])
    with pytest.raises(SpaceError, match="'c'.*Float"):
        Space((Float("a", 0, 1), Categorical("c", ["u"])), candidate_points=[[0.5, "u"]])
    with pytest.raises(SpaceError, match="'a'.*2.0"):
        Space((Float("a", 0, 1),), candidate_points=[[0.5], [2.0]])


# ----------------------------------------------------------------------------------------------
# space behaviour
# ----------------------------------------------------------------------------------------------


def test_space_properties() -> None:
    s = mixed_space()
    assert s.names == ("lr", "momentum", "layers", "width", "act")
    assert isinstance(s.params, tuple) and len(s) == 5 and list(s) == list(s.params)
    assert s.dim == 7
    np.testing.assert_array_equal(s.bounds, np.tile([0.0, 1.0], (7, 1)))
    assert s.bounds.dtype == np.float64
    assert not s.is_finite and s.candidates is None
    assert s.slice_of("act") == slice(4, 7)
    r = repr(s)
    assert r.startswith("wb.Space([") and "wb.Float('lr'" in r and "wb.Categorical('act'" in r


def test_the_repr_shows_only_arguments_not_at_their_defaults_and_rebuilds_the_space() -> None:
    # before: Space([Float(name='x', low=0.0, high=1.0, log=False), ...]): every field of every
    # parameter, a 10-parameter space a wall of log=False
    import warmbo as wb

    s = Space(
        [
            Float("x", 0.0, 1.0),
            Float("lr", 1e-5, 0.1, log=True),
            Float("temp", 20, 40, step=5),
            Int("n", 1, 10),
            Int("units", 16, 128, step=16),
            Int("batch", 8, 512, log=True),
            Categorical("act", ["relu", "gelu", 3, True]),
        ]
    )
    r = repr(s)
    assert r == (
        "wb.Space([wb.Float('x', 0.0, 1.0), wb.Float('lr', 1e-05, 0.1, log=True), "
        "wb.Float('temp', 20.0, 40.0, step=5.0), wb.Int('n', 1, 10), wb.Int('units', 16, 128, step=16), "
        "wb.Int('batch', 8, 512, log=True), wb.Categorical('act', ['relu', 'gelu', 3, True])])"
    )
    again = eval(r, {"wb": wb})  # valid Python that rebuilds the same space
    assert again == s and repr(again) == r
    assert all(eval(repr(p), {"wb": wb}) == p for p in s)
    # a notebook cell ending with the space: one parameter a line when they do not fit on one
    printer = _Printer()
    s._repr_pretty_(printer, False)
    lines = printer.shown.splitlines()
    assert lines[:2] == ["wb.Space([", "    wb.Float('x', 0.0, 1.0),"] and len(lines) == len(s) + 2
    assert eval(printer.shown, {"wb": wb}) == s
    short = Space([Float("x", 0.0, 1.0)])
    printer = _Printer()
    short._repr_pretty_(printer, False)
    assert printer.shown == repr(short) == "wb.Space([wb.Float('x', 0.0, 1.0)])"


class _Printer:
    """IPython's pretty printer, as ``_repr_pretty_`` sees it."""

    def __init__(self):
        self.shown = ""

    def text(self, text):
        self.shown += text


def test_encode_single_point_and_decode_single_row() -> None:
    s = mixed_space()
    pt = {"act": "gelu", "width": 16, "layers": 8, "momentum": 0.0, "lr": 1.0}
    U = s.encode(pt)
    assert U.shape == (1, s.dim)
    np.testing.assert_array_equal(U[0, 4:], [0, 0, 1])
    assert U[0, 0] == 1.0 and U[0, 1] == 0.0
    back = s.decode(U[0])
    assert isinstance(back, list) and len(back) == 1
    assert back[0] == pt
    assert s.encode([]).shape == (0, s.dim)
    assert s.decode(np.zeros((0, s.dim))) == []


def test_decode_clips_out_of_range() -> None:
    s = Space([Float("x", 1.0, 100.0, log=True), Int("k", -3, 3)])
    assert s.decode([[-1.0, -5.0], [7.0, np.inf]]) == [{"x": 1.0, "k": -3}, {"x": 100.0, "k": 3}]


def test_sample_edge_cases_and_no_sobol_warning() -> None:
    s = mixed_space()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pts = s.sample(5, seed=1)
    assert len(pts) == 5
    assert s.sample(0, seed=1) == []
    assert s.sample_encoded(0).shape == (0, s.dim)
    with pytest.raises(SpaceError, match="-1"):
        s.sample(-1)
    # one Sobol column per parameter: categories and ints are balanced over 2**k samples
    c = Space([Categorical("c", ["a", "b", "c", "d"]), Int("k", 0, 7)])
    got = c.sample(64, seed=3)
    assert sorted({p["c"] for p in got}) == ["a", "b", "c", "d"]
    assert [sum(p["c"] == v for p in got) for v in "abcd"] == [16, 16, 16, 16]
    assert [sum(p["k"] == v for p in got) for v in range(8)] == [8] * 8


def test_box() -> None:
    s = Space.box([(0, 1), (-5.0, 5.0)])
    assert s.names == ("x0", "x1")
    assert s.params[1] == Float("x1", -5.0, 5.0)
    assert Space.box(np.array([[0.0, 1.0]]), names=["a"]).names == ("a",)
    with pytest.raises(SpaceError, match="shape"):
        Space.box([0.0, 1.0])
    with pytest.raises(SpaceError, match="'x1'.*3.0"):
        Space.box([(0, 1), (3, 3)])


# ----------------------------------------------------------------------------------------------
# grid spaces
# ----------------------------------------------------------------------------------------------


GRID = np.array([[0.0, 10.0, 3.0], [1.0, 20.0, 3.0], [0.5, 15.0, 3.0], [0.25, 12.0, 3.0], [0.75, 11.0, 3.0]])


def test_grid_candidates_roundtrip() -> None:
    g = Space.grid(GRID, names=["a", "b", "c"])
    assert g.is_finite
    assert g.params[0] == Float("a", 0.0, 1.0)
    assert g.params[2] == Float("c", 2.5, 3.5)  # constant column gets +-0.5
    C = g.candidates
    assert C is not None and C.shape == GRID.shape
    np.testing.assert_allclose(C[:, 0], GRID[:, 0])
    np.testing.assert_allclose(C[:, 2], 0.5)
    back = g.decode(C)
    assert back == [dict(zip(g.names, row, strict=True)) for row in GRID.tolist()]
    np.testing.assert_array_equal(g.encode(back), C)
    # candidates is a copy: mutating it does not change the space
    C[:] = 0
    assert g.candidates is not None and g.candidates[1, 0] == 1.0


def test_grid_snap_and_decode_go_to_nearest_candidate() -> None:
    g = Space.grid(GRID)
    C = g.candidates
    assert C is not None
    noise = np.random.default_rng(0).uniform(-0.02, 0.02, size=C.shape)
    np.testing.assert_array_equal(g.snap(C + noise), C)
    np.testing.assert_array_equal(g.snap(C[3] + noise[3]), C[3])
    assert g.decode(C[2] + noise[2]) == [dict(zip(g.names, GRID[2].tolist(), strict=True))]


def test_grid_validate_requires_candidate() -> None:
    g = Space.grid(GRID)
    ok = {"x0": 0.5 * (1 + 1e-12), "x1": 15.0, "x2": 3.0}
    assert g.validate(ok) == {"x0": 0.5, "x1": 15.0, "x2": 3.0}
    # (the nearest candidate named, in the encoding's distance: a user test's 190.2 for 190)
    with pytest.raises(
        SpaceError, match="not one of the 5 grid candidates; the nearest is {'x0': 0.75, 'x1': 11, 'x2': 3}"
    ):
        g.validate({"x0": 0.5, "x1": 10.0, "x2": 3.0})
    with pytest.raises(SpaceError, match="'x1'.*25"):
        g.validate({"x0": 0.5, "x1": 25.0, "x2": 3.0})


def test_grid_validate_never_matches_a_value_between_two_candidates() -> None:
    # before: the tolerance was relative to the value only, 2.4 on a column of 2.4e9 + k Hz, so
    # 2400000001.5 (no candidate) was recorded as the candidate 2400000001 without a word
    g = Space.grid(np.array([[2.4e9 + k, 0.1 * k] for k in range(10)]), names=["f_Hz", "w"])
    assert g.validate({"f_Hz": 2400000001.0, "w": 0.1}) == {"f_Hz": 2400000001.0, "w": 0.1}
    assert g.validate({"f_Hz": 2400000003.0, "w": 0.1 * 3 * (1 + 1e-15)})["w"] == 0.1 * 3  # round-off
    for bad in (2400000001.5, 2400000001.01):
        with pytest.raises(SpaceError, match="not one of the 10 grid candidates"):
            g.validate({"f_Hz": bad, "w": 0.1})


def test_grid_sample_returns_candidates() -> None:
    g = Space.grid(GRID)
    rows = {tuple(r) for r in GRID.tolist()}
    pts = g.sample(5, seed=0)
    assert {tuple(p.values()) for p in pts} == rows  # without replacement: a permutation
    assert g.sample(3, seed=0) == g.sample(3, seed=0)
    assert g.sample(5, seed=0) != g.sample(5, seed=1)
    many = g.sample(12, seed=4)
    assert len(many) == 12 and {tuple(p.values()) for p in many} <= rows
    E = g.sample_encoded(12, seed=4)
    np.testing.assert_array_equal(E, g.encode(many))


# ----------------------------------------------------------------------------------------------
# serialisation, equality, diff
# ----------------------------------------------------------------------------------------------


def test_to_dict_from_dict_roundtrip() -> None:
    for s in (mixed_space(), Space.grid(GRID, names=["a", "b", "c"])):
        text = json.dumps(s.to_dict())
        again = Space.from_dict(json.loads(text))
        assert again == s
        assert again.diff(s) == []
        assert repr(again) == repr(s)
    g2 = Space.from_dict(json.loads(json.dumps(Space.grid(GRID).to_dict())))
    np.testing.assert_array_equal(g2.candidate_points, GRID)
    with pytest.raises(SpaceError, match="params"):
        Space.from_dict({"parameters": []})


def test_diff_messages() -> None:
    a = Space([Float("lr", 1e-4, 1.0, log=True), Int("n", 1, 5), Categorical("c", ["x", "y"])])
    b = Space([Float("lr", 1e-4, 10.0, log=True), Int("n", 1, 5), Float("x", 0, 1)])
    assert a != b
    assert a.diff(b) == [
        "parameter 'c' only in this space",
        "parameter 'x' only in other space",
        "parameter 'lr': high 1.0 != 10.0",
    ]
    c = Space([Int("n", 1, 5, log=True), Float("lr", 1e-4, 1.0), Categorical("c", ["x", "z"])])
    assert a.diff(c) == [
        "parameter 'lr': log True != False",
        "parameter 'n': log False != True",
        "parameter 'c': choices ('x', 'y') != ('x', 'z')",
        "parameter order differs: ('lr', 'n', 'c') != ('n', 'lr', 'c')",
    ]
    d = Space([Int("lr", 1, 5), Int("n", 1, 5), Categorical("c", ["x", "y"])])
    assert a.diff(d) == ["parameter 'lr': type float != int"]
    assert a.diff(a) == [] and a == Space.from_dict(a.to_dict())


def test_diff_grid() -> None:
    g = Space.grid(GRID)
    box = Space(g.params)
    assert g != box
    assert g.diff(box) == ["this space is a grid of 5 candidates, other space is not a grid"]
    assert box.diff(g) == ["other space is a grid of 5 candidates, this space is not a grid"]
    moved = GRID.copy()
    moved[2, 0] = 0.6
    g2 = Space(g.params, candidate_points=moved)
    assert g.diff(g2) == ["grid candidates differ in 1 of 5 rows"]
    g3 = Space(g.params, candidate_points=GRID[:4])
    assert g.diff(g3) == ["grid candidates: shape (5, 3) != (4, 3)"]


def test_a_none_or_tuple_choice_is_refused_with_the_way_to_pass_it() -> None:
    # class_weight=None, max_features=None, hidden_layer_sizes=(64, 64): scikit-learn's usual choices;
    # the refusal said only "is not a str, int, float or bool", not what to write instead
    with pytest.raises(SpaceError, match=r"choice None .*name it with a str instead \(e.g. 'None'\)") as info:
        Categorical("class_weight", [None, "balanced"])
    expression = str(info.value).rsplit("objective (", 1)[1][:-1]
    for v in ("None", "balanced"):  # the expression it gives turns the name back into the value
        assert eval(expression, {"params": {"class_weight": v}}) == (None if v == "None" else v)
    with pytest.raises(SpaceError, match=r"choice \(64, 64\) of type tuple .*e.g. '\(64, 64\)'"):
        Categorical("hidden_layer_sizes", [(64,), (64, 64)][::-1])


def test_a_category_in_another_case_is_named_as_the_choice_meant():
    space = Space([Categorical("opt", ["adam", "sgd"]), Categorical("n", [16, 32])])
    with pytest.raises(SpaceError, match=r"unknown category 'Adam'; .*\(did you mean 'adam'\?"):
        space.validate({"opt": "Adam", "n": 16})
    with pytest.raises(SpaceError) as info:  # no near choice: no guess
        space.validate({"opt": "rmsprop", "n": 16})
    assert "did you mean" not in str(info.value)


@pytest.mark.parametrize(
    "make, said",
    [
        (lambda: Float("x", "0", 1), "low must be a real number, got '0' of type str"),
        (lambda: Int("x", 0, "4"), "high must be an integer, got '4' of type str"),
        (lambda: Float("x", 0, 1, log="true"), "log must be a bool, got 'true' of type str"),
        (
            lambda: Categorical("x", "ab"),
            "choices must be a sequence such as ['relu', 'tanh'], got 'ab' of type",
        ),
    ],
)
def test_a_setting_of_the_wrong_type_is_refused_in_one_wording(make, said) -> None:
    # three wordings before ("got '0'", "got '4' of type str", "got 'ab'"), found by a user test
    with pytest.raises(SpaceError) as refused:
        make()
    assert said in str(refused.value)


def test_a_non_positive_value_of_a_log_parameter_is_said_to_read_as_a_logarithm() -> None:
    # a prior CSV of log10 values: its negative rows were left out as merely "outside [0.01, 1000]" and
    # the others used as values (a user test); the message now says what the value reads as
    with pytest.raises(
        SpaceError, match=r"-0\.5 reads as a log10 value, 0\.316228; give the values themselves"
    ):
        Float("C", 1e-2, 1e3, log=True).validate(-0.5)
    with pytest.raises(
        SpaceError, match=r"value -2 is outside \[1, 300\] \(a log-scale parameter's values are"
    ):
        Int("m", 1, 300, log=True).validate(-2)
    with pytest.raises(SpaceError) as plain:
        Float("x", 0.5, 1.0).validate(-0.5)  # (not a log parameter: no hint)
    assert str(plain.value).endswith("is outside [0.5, 1.0]")


def test_choices_written_alike_are_refused() -> None:
    # (hostile-input user test) ["1", 1] was accepted: suggest and status printed 1, 1, the export
    # wrote both as 1, and reading it back stored the int's trial as "1" without a word
    for choices, written in (
        (["1", 1, True], "'1'"),
        (["a", "True", True], "'True'"),
        ([0.5, "0.5"], "'0.5'"),
    ):
        with pytest.raises(SpaceError, match=f"written alike \\({written}\\)"):
            Categorical("c", choices)
    assert Categorical("c", [True, 1, "one"]).choices == (True, 1, "one")  # (written apart: kept)


def test_a_stored_study_whose_choices_are_written_alike_still_opens(tmp_path) -> None:
    # (review) refusing ["1", 1] when a space is made also refused the stored space of a study made
    # before, and status, export and Optimizer.load all failed: it opens, with a warning
    import sqlite3

    import warmbo as wb

    url = str(tmp_path / "old.db")
    opt = wb.Optimizer(wb.Space([Categorical("c", ["1", "a", "b"])]), storage=url, seed=0)
    opt.tell({"c": "1"}, 1.0)
    opt.study.close()
    db = sqlite3.connect(url)  # (as an earlier version stored it: "b" was the int 1)
    db.execute("UPDATE meta SET value = replace(value, '\"b\"]', '1]') WHERE key = 'space'")
    db.commit()
    db.close()
    with pytest.warns(UserWarning, match="choices '1' and 1 are written alike"):
        again = wb.Optimizer.load(url)
    assert again.space.params[0].choices == ("1", "a", 1) and [t.value for t in again.history] == [1.0]
    with pytest.raises(SpaceError, match="written alike"):  # (a new space still refuses them)
        Categorical("c", ["1", "a", 1])


def test_a_pandas_frame_or_row_encodes_as_its_points() -> None:
    # (notebook user test) opt.predict(df) iterated the frame's column names: "a point must be a
    # mapping of parameter name to value, got 'x'"
    import pandas as pd

    space = Space([Float("x", 0.0, 1.0), Categorical("c", ["a", "b"])])
    frame = pd.DataFrame([{"x": 0.1, "c": "a"}, {"x": 0.3, "c": "b"}])
    expected = space.encode([{"x": 0.1, "c": "a"}, {"x": 0.3, "c": "b"}])
    np.testing.assert_array_equal(space.encode(frame), expected)
    np.testing.assert_array_equal(space.encode(frame.iloc[1]), expected[1:])
    with pytest.raises(SpaceError, match="'x'"):  # (an empty cell is a missing parameter)
        space.encode(pd.DataFrame([{"x": float("nan"), "c": "a"}]))
