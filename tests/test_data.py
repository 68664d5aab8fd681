"""Tests for warmbo.data: TaskData readers, validation messages, round trips and per-task views."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from warmbo.data import DataError, TaskData
from warmbo.space import Categorical, Float, Int, Space, SpaceError

SPACE = Space((Float("lr", 1e-4, 1.0, log=True), Int("layers", 1, 8), Categorical("act", ("relu", "tanh"))))
NUMERIC = Space((Float("a", -1.0, 1.0), Int("b", 0, 10)))


def write(tmp_path: Path, text: str, name: str = "prior.csv", encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def csv_error(tmp_path: Path, text: str, space: Space = NUMERIC, **kw: Any) -> str:
    path = write(tmp_path, text)
    with pytest.raises(DataError) as info:
        TaskData.from_csv(path, space, **kw)
    msg = str(info.value)
    assert "prior.csv" in msg
    return msg


class FakeFrame:
    """Minimal duck-typed DataFrame: ``columns``, ``index`` and ``to_dict("records")``."""

    def __init__(self, data: dict[str, list[Any]], index: list[Any] | None = None) -> None:
        self._data = data
        self.columns = list(data)
        n = len(next(iter(data.values())))
        self.index = list(range(n)) if index is None else index

    def to_dict(self, orient: str) -> list[dict[str, Any]]:
        assert orient == "records"
        n = len(self.index)
        return [{c: v[i] for c, v in self._data.items()} for i in range(n)]


def frames(data: dict[str, list[Any]], index: list[Any] | None = None) -> list[Any]:
    out: list[Any] = [FakeFrame(data, index)]
    if importlib.util.find_spec("pandas") is not None:
        import pandas as pd

        out.append(pd.DataFrame(data, index=index))
    return out


@pytest.fixture
def mixed() -> TaskData:
    params = [
        {"lr": 0.1, "layers": 2, "act": "relu"},
        {"lr": 0.001, "layers": 8, "act": "tanh"},
        {"lr": 1e-4, "layers": 1, "act": "relu"},
        {"lr": 1.0 / 3.0, "layers": 5, "act": "tanh"},
    ]
    return TaskData.from_records(params, [1.5, -2.0, 0.1 + 0.2, 1e-300], SPACE, task=["b", "a", "b", "c"])


# ----------------------------------------------------------------------------------------------
# construction, properties, round trips
# ----------------------------------------------------------------------------------------------


def test_from_csv_basic_properties(tmp_path: Path) -> None:
    path = write(tmp_path, "lr,layers,act,y,task\n0.01,3,relu,1.5,t2\n0.5,3.0,tanh,-2,t1\n1e-3,8,relu,0,t2\n")
    d = TaskData.from_csv(path, SPACE, task="task")
    assert d.n == len(d) == 3
    assert d.params[1] == {"lr": 0.5, "layers": 3, "act": "tanh"}
    assert type(d.params[1]["layers"]) is int
    assert d.y.dtype == np.float64 and d.y.tolist() == [1.5, -2.0, 0.0]
    assert d.task is not None and d.task.tolist() == ["t2", "t1", "t2"]
    assert d.tasks == ["t1", "t2"]
    assert d.source == str(path)
    assert d.X.shape == (3, SPACE.dim)
    np.testing.assert_array_equal(d.X, SPACE.encode(list(d.params)))


def test_from_csv_skip_incomplete_leaves_out_the_rows_of_another_branch(tmp_path: Path) -> None:
    # a conditional search space's trials: b only in some rows (before, only an error: "empty value")
    path = write(tmp_path, "a,b,c,y\n0.5,3,,1.0\n0.1,,7,2.0\n,,,\n-0.2,4,,3.0\n0.3,,1,\n")
    with pytest.raises(DataError, match="row 2 \\(line 3\\), column 'b': empty value"):
        TaskData.from_csv(path, NUMERIC)
    d = TaskData.from_csv(path, NUMERIC, skip_incomplete=True)  # (their y cells are not read)
    assert d.params == ({"a": 0.5, "b": 3}, {"a": -0.2, "b": 4}) and d.y.tolist() == [1.0, 3.0]
    # a file without one of the parameters: every row is another branch's
    other = TaskData.from_csv(path, Space((Float("a", -1.0, 1.0), Int("d", 0, 10))), skip_incomplete=True)
    assert len(other) == 0
    # errors still name the file's own row, counting the rows left out
    bad = write(tmp_path, "a,b,y\n0.1,,2.0\n0.5,30,1.0\n", name="bad.csv")
    with pytest.raises(DataError, match="row 2 \\(line 3\\), column 'b'"):
        TaskData.from_csv(bad, NUMERIC, skip_incomplete=True)
    with pytest.raises(DataError, match="missing column\\(s\\) 'y'"):  # y is still required
        TaskData.from_csv(write(tmp_path, "a,b\n0.1,2\n", name="noy.csv"), NUMERIC, skip_incomplete=True)


def test_arrays_are_read_only(mixed: TaskData) -> None:
    for arr in (mixed.y, mixed.X, mixed.task):
        assert arr is not None
        with pytest.raises(ValueError):
            arr[0] = arr[1]


def test_csv_round_trip_with_tasks(tmp_path: Path, mixed: TaskData) -> None:
    path = tmp_path / "out.csv"
    mixed.to_csv(path)
    back = TaskData.from_csv(path, SPACE, task="task")
    assert back == mixed
    assert back.y.tolist() == mixed.y.tolist()  # exact floats (repr)
    assert back.params == mixed.params
    np.testing.assert_array_equal(back.X, mixed.X)


def test_csv_round_trip_without_tasks_semicolon_custom_y(tmp_path: Path) -> None:
    d = TaskData.from_numpy([[0.1, 3], [-1.0, 10], [2.0 / 3.0, 0]], [3.0, 1e-17, -5.5], NUMERIC)
    path = tmp_path / "out.csv"
    d.to_csv(path, y="score", delimiter=";")
    assert path.read_text().splitlines()[0] == "a;b;score"
    back = TaskData.from_csv(path, NUMERIC, y="score", delimiter=";")
    assert back == d and back.task is None and back.tasks == []


def test_csv_round_trip_odd_categoricals(tmp_path: Path) -> None:
    space = Space(
        (
            Categorical("s", ("a,b", 'q"uote', " pad ", "")),
            Categorical("num", (16, 32, 0.5)),
            Categorical("flag", (True, False)),
        )
    )
    records = [
        {"s": "a,b", "num": 32, "flag": True},
        {"s": 'q"uote', "num": 0.5, "flag": False},
        {"s": " pad ", "num": 16, "flag": True},
        {"s": "", "num": 32, "flag": False},
    ]
    d = TaskData.from_records(records, [1, 2, 3, 4], space, task=["x y", "z", "x y", "z"])
    path = tmp_path / "odd.csv"
    d.to_csv(path)
    back = TaskData.from_csv(path, space, task="task")
    assert back == d
    assert [p["s"] for p in back.params] == ["a,b", 'q"uote', " pad ", ""]
    assert [type(p["flag"]) for p in back.params] == [bool] * 4


def test_from_numpy_round_trip_and_types() -> None:
    X = np.array([[0.25, 4.0], [-1.0, 0.0]])
    d = TaskData.from_numpy(X, np.array([1.0, 2.0]), NUMERIC, task=["u", "v"])
    assert d.params == ({"a": 0.25, "b": 4}, {"a": -1.0, "b": 0})
    assert type(d.params[0]["b"]) is int
    raw = np.array([[p[n] for n in NUMERIC.names] for p in d.params], dtype=float)
    np.testing.assert_array_equal(raw, X)
    np.testing.assert_array_equal(d.X, NUMERIC.encode(list(d.params)))
    one = TaskData.from_numpy([0.1, 0.2, 0.3], [1, 2, 3], Space((Float("x", 0, 1),)))
    assert [p["x"] for p in one.params] == [0.1, 0.2, 0.3]


def test_from_records_round_trip_ignores_extra_keys_and_parses_strings() -> None:
    records = [
        {"lr": 0.01, "layers": 2, "act": "relu", "note": "ignored"},
        {"lr": "0.5", "layers": "3", "act": "tanh"},
    ]
    d = TaskData.from_records(records, [0.0, 1.0], SPACE)
    assert d.params == ({"lr": 0.01, "layers": 2, "act": "relu"}, {"lr": 0.5, "layers": 3, "act": "tanh"})
    again = TaskData.from_records(list(d.params), d.y, SPACE)
    assert again == d


def test_from_dataframe_round_trip() -> None:
    data = {"lr": [0.01, 0.5], "layers": [2, 3], "act": ["relu", "tanh"], "y": [1.0, 2.0], "t": ["a", "b"]}
    ref = TaskData.from_records(
        [{"lr": 0.01, "layers": 2, "act": "relu"}, {"lr": 0.5, "layers": 3, "act": "tanh"}],
        [1.0, 2.0],
        SPACE,
        task=["a", "b"],
    )
    for df in frames(data):
        d = TaskData.from_dataframe(df, SPACE, task="t")
        assert d == ref
        assert d.source == "<DataFrame>"


def test_from_dataframe_renamed_columns_and_int_labels() -> None:
    data = {"rate": [0.01], "depth": [4], "activation": ["tanh"], "score": [3.0], "task": [7]}
    for df in frames(data):
        d = TaskData.from_dataframe(
            df, SPACE, x={"lr": "rate", "layers": "depth", "act": "activation"}, y="score", task="task"
        )
        assert d.params == ({"lr": 0.01, "layers": 4, "act": "tanh"},)
        assert d.tasks == ["7"]


def test_x_column_list_maps_in_space_order(tmp_path: Path) -> None:
    path = write(tmp_path, "B,A,score,other\n7,0.5,1.0,zzz\n")
    d = TaskData.from_csv(path, NUMERIC, x=["A", "B"], y="score")
    assert d.params == ({"a": 0.5, "b": 7},)


def test_equality_is_type_aware_and_ignores_source() -> None:
    space = Space((Categorical("c", (True, 1)),))
    a = TaskData.from_records([{"c": True}], [1.0], space, source="one")
    b = TaskData.from_records([{"c": 1}], [1.0], space, source="two")
    assert a != b
    assert a == TaskData.from_records([{"c": True}], [1.0], space, source="three")
    assert a != TaskData.from_records([{"c": True}], [2.0], space)
    assert a != TaskData.from_records([{"c": True}], [1.0], space, task=["t"])


def test_direct_constructor_validates() -> None:
    d = TaskData(({"a": 0, "b": 1},), [1], None, NUMERIC)
    assert d.params == ({"a": 0.0, "b": 1},) and d.y.dtype == np.float64
    with pytest.raises(DataError, match=r"<data>, row 1: parameter 'a'"):
        TaskData(({"a": 5.0, "b": 1},), [1.0], None, NUMERIC)
    with pytest.raises(DataError, match=r"y has 2 values for 1 points"):
        TaskData(({"a": 0.0, "b": 1},), [1.0, 2.0], None, NUMERIC)


# ----------------------------------------------------------------------------------------------
# by_task / split
# ----------------------------------------------------------------------------------------------


def test_by_task(mixed: TaskData) -> None:
    groups = mixed.by_task()
    assert list(groups) == ["a", "b", "c"]
    Xb, yb = groups["b"]
    assert yb.tolist() == [1.5, 0.1 + 0.2]
    np.testing.assert_array_equal(Xb, mixed.X[[0, 2]])
    assert sum(len(g[1]) for g in groups.values()) == mixed.n
    Xb[0, 0] = -1.0  # fresh arrays
    assert mixed.X[0, 0] != -1.0


def test_by_task_without_task_column() -> None:
    d = TaskData.from_numpy([[0.0, 1], [0.5, 2]], [1.0, 2.0], NUMERIC)
    groups = d.by_task()
    assert list(groups) == [None]
    np.testing.assert_array_equal(groups[None][0], d.X)
    assert groups[None][1].tolist() == [1.0, 2.0]


def test_split(mixed: TaskData) -> None:
    b = mixed.split("b")
    assert b.n == 2 and b.tasks == ["b"]
    assert b.params == (mixed.params[0], mixed.params[2])
    assert b.y.tolist() == [1.5, 0.1 + 0.2]
    assert b.space == mixed.space
    with pytest.raises(DataError, match=r"unknown task 'zz'; tasks are \['a', 'b', 'c'\]"):
        mixed.split("zz")
    d = TaskData.from_numpy([[0.0, 1]], [1.0], NUMERIC)
    assert d.split(None) is d
    with pytest.raises(DataError, match="no task column"):
        d.split("a")


# ----------------------------------------------------------------------------------------------
# CSV dialect details
# ----------------------------------------------------------------------------------------------


def test_bom_and_whitespace_in_headers(tmp_path: Path) -> None:
    path = write(tmp_path, "\ufeff a ;  b\t; y ; task \r\n0.5;2;1.0; t1 \r\n-0.5; 3 ;2.0;t2\r\n")
    d = TaskData.from_csv(path, NUMERIC, task="task", delimiter=";")
    assert d.params == ({"a": 0.5, "b": 2}, {"a": -0.5, "b": 3})
    assert d.task is not None and d.task.tolist() == ["t1", "t2"]


def test_semicolon_delimiter_with_decimal_commas_is_an_error(tmp_path: Path) -> None:
    msg = csv_error(tmp_path, "a;b;y\n0,5;2;1\n", delimiter=";")
    assert "row 1 (line 2), column 'a': value '0,5' is not a number" in msg


def test_blank_rows_are_skipped_and_row_numbers_count_data_rows(tmp_path: Path) -> None:
    msg = csv_error(tmp_path, "a,b,y\n\n0.5,2,1\n,,\n0.1,2,x\n")
    assert "row 2 (line 5), column 'y': value 'x' is not a number" in msg
    d = TaskData.from_csv(write(tmp_path, "a,b,y\n\n0.5,2,1\n,,\n0.1,2,3\n", "ok.csv"), NUMERIC)
    assert d.n == 2


def test_trailing_delimiter_and_extra_columns_are_ignored(tmp_path: Path) -> None:
    path = write(tmp_path, "note,a,b,y,\nhello,0.5,2,1,\n")
    assert TaskData.from_csv(path, NUMERIC).params == ({"a": 0.5, "b": 2},)


def test_int_cells_as_floats_and_categorical_numeric_choices(tmp_path: Path) -> None:
    space = Space((Int("n", 1, 100), Categorical("bs", (16, 32)), Categorical("w", (0.5, 1.5))))
    path = write(tmp_path, "n,bs,w,y\n3.0,32,0.5,1\n 4 ,16.0,1.50,2\n")
    d = TaskData.from_csv(path, space)
    assert d.params == ({"n": 3, "bs": 32, "w": 0.5}, {"n": 4, "bs": 16, "w": 1.5})
    assert [type(p["bs"]) for p in d.params] == [int, int]
    assert [type(p["n"]) for p in d.params] == [int, int]


def test_categorical_bool_and_string_digits(tmp_path: Path) -> None:
    space = Space((Categorical("f", (True, False)), Categorical("s", ("1", "2"))))
    d = TaskData.from_csv(write(tmp_path, "f,s,y\nTRUE,1,0\nfalse,2,0\n0, 2 ,0\n"), space)
    assert [p["f"] for p in d.params] == [True, False, False]
    assert [type(p["f"]) for p in d.params] == [bool] * 3
    assert [p["s"] for p in d.params] == ["1", "2", "2"]


def test_grid_space_candidates(tmp_path: Path) -> None:
    grid = Space.grid([[0.0, 1.0], [0.5, 2.0]], names=["u", "v"])
    d = TaskData.from_csv(write(tmp_path, "u,v,y\n0.5,2,1\n"), grid)
    assert d.params == ({"u": 0.5, "v": 2.0},)
    msg = csv_error(tmp_path, "u,v,y\n0,1,1\n0.5,1,2\n", space=grid)
    assert "row 2 (line 3)" in msg and "not one of the 2 grid candidates" in msg


# ----------------------------------------------------------------------------------------------
# CSV errors: file, row and column named
# ----------------------------------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope.csv"):
        TaskData.from_csv(tmp_path / "nope.csv", NUMERIC)
    with pytest.raises(DataError, match="nope.csv: does not exist"):  # the library's own error
        TaskData.from_csv(tmp_path / "nope.csv", NUMERIC)
    with pytest.raises(DataError, match="is a folder"):
        TaskData.from_csv(tmp_path, NUMERIC)


@pytest.mark.parametrize("text", ["", "\n\n", "\ufeff"])
def test_empty_file(tmp_path: Path, text: str) -> None:
    assert csv_error(tmp_path, text).endswith("prior.csv: empty file")


def test_no_data_rows(tmp_path: Path) -> None:
    assert csv_error(tmp_path, "a,b,y\n").endswith("prior.csv: no data rows")
    assert csv_error(tmp_path, "a,b,y\n,,\n").endswith("prior.csv: no data rows")


def test_missing_columns(tmp_path: Path) -> None:
    msg = csv_error(tmp_path, "a,c,x\n1,2,3\n")
    assert (
        "prior.csv: missing column(s) 'b', 'y' (found: a, c, x); name the column of the values 'y', or "
        "read the file with wb.TaskData.from_csv(path, space, y='COLUMN')" in msg
    )  # (prior="prior.csv" takes no y=: it advised one, a user test)
    msg = csv_error(tmp_path, "number,value,params_a,params_b\n0,2,0,1\n")  # Optuna's export
    assert "this looks like Optuna's trials_dataframe() saved as CSV" in msg
    assert "x={'NAME': 'params_NAME', ...}, y='value'" in msg
    msg = csv_error(tmp_path, "a,b,y\n0,1,2\n", task="task")
    assert "missing column(s) 'task'" in msg
    # a values column under another usual name is pointed at (a user test sliced warmbo's own
    # history frame, whose 'value' column is then no longer taken for the values)
    msg = csv_error(tmp_path, "a,b,Score\n0,1,2\n")
    assert "the values look like column 'Score': rename it to 'y'" in msg and "--prior-y Score" in msg


def test_not_a_number(tmp_path: Path) -> None:
    msg = csv_error(tmp_path, "a,b,y\n0.5,1,1\n0.5,1,2\nabc,1,3\n")
    assert msg.endswith("prior.csv, row 3 (line 4), column 'a': value 'abc' is not a number")


def test_int_not_integral(tmp_path: Path) -> None:
    msg = csv_error(tmp_path, "a,b,y\n0.5,2.5,1\n")
    assert "row 1 (line 2), column 'b': value 2.5 is not an integer" in msg


def test_out_of_bounds(tmp_path: Path) -> None:
    msg = csv_error(tmp_path, "a,b,y\n0.5,1,1\n2.0,1,1\n")
    assert msg.endswith("prior.csv, row 2 (line 3), column 'a': value 2.0 is outside [-1.0, 1.0]")
    msg = csv_error(tmp_path, "a,b,y\n0.5,11,1\n")
    assert "row 1 (line 2), column 'b': value 11 is outside [0, 10]" in msg


def test_out_of_bounds_names_the_renamed_column(tmp_path: Path) -> None:
    msg = csv_error(tmp_path, "A,B,y\n0.5,-1,1\n", x=["A", "B"])
    assert "row 1 (line 2), column 'B': value -1 is outside [0, 10]" in msg


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("nan", "value 'nan' is not finite"),
        ("inf", "value 'inf' is not finite"),
        ("-Infinity", "value '-Infinity' is not finite"),
        ("1.0.0", "value '1.0.0' is not a number"),
        # float() reads these as 42, 12 and 1e50 (a user test: a prior's '4_2' was stored as 42)
        ("4_2", "value '4_2' is not a number: write it without underscores (4_2 is not read as 42)"),
        ("\u0661\u0662", "value '\u0661\u0662' is not a number: write it with the digits 0-9"),
        ("1e5_0", "value '1e5_0' is not a number: write it without underscores (1e5_0 is not read as 1e50)"),
    ],
)
def test_bad_y(tmp_path: Path, cell: str, expected: str) -> None:
    msg = csv_error(tmp_path, f"a,b,y\n0,1,1\n0,1,{cell}\n")
    assert msg.endswith(f"prior.csv, row 2 (line 3), column 'y': {expected}")
    if "_" in cell or not cell.isascii():  # a parameter's cell is read by the same rule
        msg = csv_error(tmp_path, f"a,b,y\n0,1,1\n0,{cell},1\n")
        assert msg.endswith(f"prior.csv, row 2 (line 3), column 'b': {expected}"), msg


def test_nan_or_empty_parameter(tmp_path: Path) -> None:
    assert "row 1 (line 2), column 'a': value nan is not finite" in csv_error(tmp_path, "a,b,y\nnan,1,1\n")
    assert "row 1 (line 2), column 'b': empty value" in csv_error(tmp_path, "a,b,y\n0.5,,1\n")


def test_unknown_category(tmp_path: Path) -> None:
    msg = csv_error(tmp_path, "lr,layers,act,y\n0.1,2,relu,1\n0.1,2,gelu,1\n", space=SPACE)
    assert "prior.csv, row 2 (line 3), column 'act': unknown category 'gelu'" in msg
    assert "choices are ('relu', 'tanh')" in msg
    space = Space((Categorical("bs", (16, 32)),))
    msg = csv_error(tmp_path, "bs,y\n64,1\n", space=space)
    assert "row 1 (line 2), column 'bs': unknown category '64'; choices are (16, 32)" in msg


def test_short_and_long_rows(tmp_path: Path) -> None:
    msg = csv_error(tmp_path, "a,b,y\n0.5,1\n")
    assert "row 1 (line 2), column 'y': missing value" in msg
    msg = csv_error(tmp_path, "a,b,y\n0.5,1,1\n0.5,1,1,oops\n")
    assert "row 2 (line 3): 4 fields but the header has 3" in msg


def test_empty_task_label(tmp_path: Path) -> None:
    msg = csv_error(tmp_path, "a,b,y,t\n0.5,1,1,x\n0.5,1,1, \n", task="t")
    assert msg.endswith("prior.csv, row 2 (line 3), column 't': empty task label")


def test_line_numbers_follow_multiline_quoted_fields(tmp_path: Path) -> None:
    msg = csv_error(tmp_path, 'a,b,y,note\n0.5,1,1,"two\nlines"\n0.5,x,1,z\n')
    assert "row 2 (line 4), column 'b': value 'x' is not a number" in msg


def test_column_conflicts(tmp_path: Path) -> None:
    assert "duplicate column 'a'" in csv_error(tmp_path, "a,b,a,y\n0,1,0,1\n")
    assert "both a parameter column and the y column" in csv_error(tmp_path, "a,b\n0,1\n", y="a")
    assert "task column 'y' is also the y column" in csv_error(tmp_path, "a,b,y\n0,1,1\n", task="y")
    assert "x names 1 column(s)" in csv_error(tmp_path, "a,b,y\n0,1,1\n", x=["a"])


def test_not_utf8(tmp_path: Path) -> None:
    path = write(tmp_path, "a,b,y\n0,1,1\n", encoding="utf-16")
    with pytest.raises(DataError, match=r"prior\.csv: not a UTF-8 text file"):
        TaskData.from_csv(path, NUMERIC)


# ----------------------------------------------------------------------------------------------
# errors of the other constructors and of to_csv
# ----------------------------------------------------------------------------------------------


def test_dataframe_errors_name_row_index_and_column() -> None:
    data = {"a": [0.5, 3.0], "b": [1, 2], "y": [1.0, 2.0]}
    for df in frames(data, index=["first", "second"]):
        with pytest.raises(DataError) as info:
            TaskData.from_dataframe(df, NUMERIC)
        assert (
            str(info.value)
            == "<DataFrame>, row 2 (index 'second'), column 'a': value 3.0 is outside [-1.0, 1.0]"
        )
    for df in frames({"a": [0.5], "b": [1], "y": [float("inf")]}):
        with pytest.raises(
            DataError, match=r"<DataFrame>, row 1 \(index 0\), column 'y': value inf is not finite"
        ):
            TaskData.from_dataframe(df, NUMERIC)
    for df in frames({"a": [0.5], "y": [1.0]}):
        with pytest.raises(DataError, match=r"<DataFrame>: missing column\(s\) 'b' \(found: a, y\)"):
            TaskData.from_dataframe(df, NUMERIC)
    with pytest.raises(DataError, match="expected a DataFrame"):
        TaskData.from_dataframe([{"a": 0.5, "b": 1, "y": 1.0}], NUMERIC)


def test_a_dataframe_value_beyond_a_float_is_not_finite_rather_than_a_crash() -> None:
    class Frame:  # (duck-typed: pandas is not needed for this)
        columns = ["a", "b", "y"]

        def to_dict(self, orient):
            return [{"a": 0.5, "b": 1, "y": 10**400}]

    with pytest.raises(DataError, match=r"column 'y'.*not finite") as info:
        TaskData.from_dataframe(Frame(), NUMERIC)
    assert "(401 digits)" in str(info.value) and len(str(info.value)) < 200  # (was all 401 digits)


def test_from_numpy_errors() -> None:
    with pytest.raises(DataError, match=r"'act'.*categorical.*from_records"):
        TaskData.from_numpy([[0.1, 2, 0]], [1.0], SPACE)
    with pytest.raises(DataError, match=r"X must have shape \(n, 2\)"):
        TaskData.from_numpy([[0.1, 2, 0]], [1.0], NUMERIC)
    with pytest.raises(DataError, match=r"<array>, row 2, column 'b': value 11.0 is outside \[0, 10\]"):
        TaskData.from_numpy([[0.1, 2], [0.1, 11]], [1.0, 2.0], NUMERIC)
    with pytest.raises(DataError, match=r"<array>, row 2, y: value inf is not finite"):
        TaskData.from_numpy([[0.1, 2], [0.1, 1]], [1.0, np.inf], NUMERIC)
    with pytest.raises(DataError, match=r"y has 1 values for 2 points"):
        TaskData.from_numpy([[0.1, 2], [0.1, 1]], [1.0], NUMERIC)
    with pytest.raises(DataError, match=r"row 1, task: missing task label"):
        TaskData.from_numpy([[0.1, 2]], [1.0], NUMERIC, task=[None])
    with pytest.raises(DataError, match="no data rows"):
        TaskData.from_numpy(np.empty((0, 2)), [], NUMERIC)


def test_from_records_errors() -> None:
    with pytest.raises(DataError, match=r"<records>, row 2: missing parameter\(s\) \['act'\]"):
        TaskData.from_records(
            [{"lr": 0.1, "layers": 1, "act": "relu"}, {"lr": 0.1, "layers": 1}], [1, 2], SPACE
        )
    with pytest.raises(DataError, match=r"<records>, row 1, column 'act': unknown category 'gelu'"):
        TaskData.from_records([{"lr": 0.1, "layers": 1, "act": "gelu"}], [1], SPACE)
    with pytest.raises(DataError, match=r"<records>, row 1, column 'lr': value 'fast' is not a number"):
        TaskData.from_records([{"lr": "fast", "layers": 1, "act": "relu"}], [1], SPACE)
    with pytest.raises(DataError, match="no data rows"):
        TaskData.from_records([], [], SPACE)


def test_to_csv_refuses_what_would_not_read_back(tmp_path: Path) -> None:
    # (choices written alike, "1" and 1, whose value 1 read back as "1": refused by the space now)
    with pytest.raises(SpaceError, match="written alike"):
        Space((Categorical("c", ("1", 1)),))
    clash = TaskData.from_numpy([[0.0, 1]], [1.0], Space((Float("y", 0, 1), Int("b", 0, 2))))
    with pytest.raises(DataError, match="cannot write column 'y' twice"):
        clash.to_csv(tmp_path / "x.csv")
    clash.to_csv(tmp_path / "x.csv", y="value")
    assert TaskData.from_csv(tmp_path / "x.csv", clash.space, y="value") == clash
    padded = TaskData.from_numpy([[0.0, 1]], [1.0], NUMERIC, task=[" t "])
    with pytest.raises(DataError, match="surrounding whitespace"):
        padded.to_csv(tmp_path / "y.csv")


def test_subset_equals_the_validated_construction_and_checks_new_values():
    space = Space([Float("lr", 1e-4, 1.0, log=True), Int("depth", 1, 8), Categorical("kind", ["a", "b"])])
    rng = np.random.default_rng(0)
    records = [
        {
            "lr": float(10 ** rng.uniform(-4, 0)),
            "depth": int(rng.integers(1, 9)),
            "kind": str(rng.choice(["a", "b"])),
        }
        for _ in range(30)
    ]
    data = TaskData.from_records(
        records, rng.normal(size=30), space, task=np.repeat(["s", "t", "u"], 10), source="x"
    )
    rows = np.array([29, 3, 3, 10])
    fast = data.subset(rows, y=-data.y[rows])
    slow = TaskData([data.params[i] for i in rows], -data.y[rows], data.task[rows], space, source="x")
    assert fast == slow and fast.source == "x" and fast.tasks == slow.tasks
    np.testing.assert_array_equal(fast.X, slow.X)
    assert not fast.y.flags.writeable and not fast.X.flags.writeable
    assert data.subset(rows) == TaskData([data.params[i] for i in rows], data.y[rows], data.task[rows], space)
    assert data.subset([]).n == 0
    with pytest.raises(DataError, match="finite"):
        data.subset(rows, y=[1.0, np.nan, 0.0, 0.0])
    with pytest.raises(DataError, match="shape"):
        data.subset(rows, y=[1.0])
    with pytest.raises(DataError, match="indices below 30"):
        data.subset([30])
    with pytest.raises(DataError, match="integer indices"):
        data.subset([0.5])


def test_a_decimal_comma_and_a_file_that_is_not_utf8_say_what_to_do(tmp_path):
    # before: '"52,1" is not a number' and 'not a UTF-8 text file' without saying how to fix them
    space = Space([Float("x", 0.0, 100.0)])
    path = tmp_path / "eu.csv"
    path.write_text('x,y\n"1,5","52,1"\n')
    with pytest.raises(DataError, match=r"column 'x'.*decimal comma.*\(1\.5\)"):
        TaskData.from_csv(path, space)
    path.write_text('x,y\n1.5,"52,1"\n')
    with pytest.raises(DataError, match=r"column 'y'.*decimal comma.*\(52\.1\)"):
        TaskData.from_csv(path, space)
    path.write_bytes("x,y\n1.5,2\n# Temp\u00e9rature\n".encode("latin-1"))
    with pytest.raises(DataError, match='save it again as "CSV UTF-8"'):
        TaskData.from_csv(path, space)


def test_a_header_read_as_one_column_names_the_separator_and_a_missing_value_column_the_option(tmp_path):
    """A ';' or tab separated export read with ',' gave "missing column(s) ... (found: x;y)" and no way
    forward; the message now names the separator and the argument, and a values column named
    otherwise says how to name it."""
    space = Space([Float("x", 0.0, 100.0)])
    path = tmp_path / "eu.csv"
    path.write_text("x;yield\n1.5;52\n")
    with pytest.raises(DataError, match=r"one column with ';'.*delimiter=';'.*--prior-delimiter ';'"):
        TaskData.from_csv(path, space)
    with pytest.raises(DataError, match=r"missing column\(s\) 'y'.*from_csv\(path, space, y='COLUMN'\)") as e:
        TaskData.from_csv(path, space, delimiter=";")
    assert "--prior-y COLUMN" in e.value.shell  # (the command line's words, for the command line)
    assert TaskData.from_csv(path, space, y="yield", delimiter=";").y.tolist() == [52.0]
    path.write_text("x\ty\n1.5\t52\n")
    with pytest.raises(DataError, match=r"one column with '\\t'"):
        TaskData.from_csv(path, space)
    path.write_text("x,z\n1.5,52\n")  # an ordinary missing column: no separator hint
    with pytest.raises(DataError) as info:
        TaskData.from_csv(path, space)
    assert "delimiter" not in str(info.value) and "y='COLUMN'" in str(info.value)


def test_a_comma_that_may_separate_thousands_is_not_read_as_a_decimal_comma(tmp_path):
    # before: '1,234' was 'write it with a decimal point (1.234)', 1000 times off if it meant 1234
    space = Space([Float("x", 0.0, 5000.0)])
    path = tmp_path / "p.csv"
    path.write_text('x,y\n"1,234",1\n')
    with pytest.raises(DataError, match=r"decimal comma \(1\.234\) or a thousands separator \(1234\)"):
        TaskData.from_csv(path, space)
    path.write_text('x,y\n"1,5",1\n')  # only a decimal comma can mean this
    with pytest.raises(DataError, match=r"it has a decimal comma; write it with a decimal point \(1\.5\)"):
        TaskData.from_csv(path, space)


def test_a_column_named_like_a_parameter_but_for_case_or_spaces_is_named_in_the_error(tmp_path):
    # before: "missing column(s) 'lr' (found: LR, ...)", which reads as if the column were absent
    path = write(tmp_path, "LR,Layers,act,y\n0.01,2,relu,0.5\n")
    with pytest.raises(DataError) as err:
        TaskData.from_csv(path, SPACE)
    msg = str(err.value)
    assert "missing column(s) 'lr', 'layers'" in msg
    assert "rename column 'LR' to 'lr'" in msg and "rename column 'Layers' to 'layers'" in msg
    assert "act" not in msg.split("(found")[0]


def test_an_optuna_export_with_failed_and_running_trials_reads_the_complete_ones(tmp_path):
    # before: an Optuna study's trials_dataframe().to_csv() with a failed trial was refused ("column
    # 'value': empty value"); its FAIL and RUNNING rows are trials without a value, left out and said
    import optuna

    from warmbo.data import UnfinishedRowsWarning

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))

    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        if trial.number == 1:
            raise ValueError("diverged")
        return (x - 0.3) ** 2

    study.optimize(objective, n_trials=4, catch=(ValueError,))
    study.ask({"x": optuna.distributions.FloatDistribution(0.0, 1.0)})  # still running
    path = tmp_path / "optuna.csv"
    study.trials_dataframe().to_csv(path, index=False)
    space = Space([Float("x", 0.0, 1.0)])
    with pytest.warns(
        UnfinishedRowsWarning, match=r"left out 2 row\(s\) without a value whose 'state' is not "
    ):
        data = TaskData.from_csv(path, space, x={"x": "params_x"}, y="value")
    done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert [p["x"] for p in data.params] == [t.params["x"] for t in done]
    np.testing.assert_array_equal(data.y, [t.value for t in done])
    # an empty value in a complete row, or text, is still refused, naming row and column
    text = path.read_text().splitlines()
    header = text[0].split(",")
    for cell, said in (("", "empty"), ("oops", "oops")):
        row = text[1].split(",")
        row[header.index("value")] = cell
        bad = tmp_path / f"bad{len(cell)}.csv"
        bad.write_text("\n".join([text[0], ",".join(row)]) + "\n")
        with pytest.raises(DataError, match=rf"row 1 \(line 2\), column 'value': .*{said}"):
            TaskData.from_csv(bad, space, x={"x": "params_x"}, y="value")


def test_an_optuna_export_without_its_state_column_leaves_out_the_rows_without_a_value(tmp_path):
    # before: trials_dataframe(attrs=("number", "value", "params")) (no 'state' column) with a FAIL
    # trial was refused ("row 2 (line 3), column 'value': empty value"); a row without an objective
    # value is a failed or unfinished trial, left out and counted, with or without a state column
    import optuna

    from warmbo.data import UnfinishedRowsWarning

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))

    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        if trial.number in (1, 3):
            raise ValueError("diverged")
        return (x - 0.3) ** 2

    study.optimize(objective, n_trials=5, catch=(ValueError,))
    path = tmp_path / "optuna.csv"
    study.trials_dataframe(attrs=("number", "value", "params")).to_csv(path, index=False)
    assert "state" not in path.read_text().splitlines()[0]
    space = Space([Float("x", 0.0, 1.0)])
    with pytest.warns(UnfinishedRowsWarning) as record:
        data = TaskData.from_csv(path, space, x={"x": "params_x"}, y="value")
    said = [str(w.message) for w in record if issubclass(w.category, UnfinishedRowsWarning)]
    assert said == [
        f"{path}: left out 2 row(s) with no value in 'value' (an empty cell, or such as n/a or "
        "#DIV/0!): failed or unfinished trials"
    ]
    done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert [p["x"] for p in data.params] == [t.params["x"] for t in done]
    np.testing.assert_array_equal(data.y, [t.value for t in done])
    # a blank cell is empty too; text is still refused, naming row and column; no row with a value
    # is an error that says why
    blank = write(tmp_path, "a,b,y\n0,1,1\n0,1,  \n", "blank.csv")
    with pytest.warns(UnfinishedRowsWarning, match="left out 1 row"):
        assert list(TaskData.from_csv(blank, NUMERIC).y) == [1.0]
    assert csv_error(tmp_path, "a,b,y\n0,1,\n0,1,x1\n").endswith(
        "row 2 (line 3), column 'y': value 'x1' is not a number"
    )
    with pytest.warns(UnfinishedRowsWarning):
        message = csv_error(tmp_path, "a,b,y\n0,1,\n0,2,\n")
    assert message.endswith("no data rows (no row has an objective value: failed or unfinished trials)")
    # with a state column, the states are counted; an empty value in a complete row is still refused
    mixed = write(tmp_path, "a,b,y,state\n0,1,,FAIL\n0,1,,\n0,1,2,COMPLETE\n", "mixed.csv")
    with pytest.warns(UnfinishedRowsWarning, match=r"left out 2 row\(s\) .*\(FAIL 1, no state 1\)"):
        assert list(TaskData.from_csv(mixed, NUMERIC).y) == [2.0]
    assert "row 1 (line 2), column 'y': empty value" in csv_error(tmp_path, "a,b,y,state\n0,1,,COMPLETE\n")


def test_a_spreadsheets_no_number_markers_in_the_values_are_rows_without_a_value(tmp_path) -> None:
    # a user test: a lab file's one "n/a" and one "#DIV/0!" stopped the whole import, where an empty
    # cell was left out with a warning; pandas reads such cells as missing too. A marker among the
    # parameters stays an error, and so does text that is no marker (a unit typed with the number)
    import pandas as pd

    from warmbo.data import UnfinishedRowsWarning

    path = tmp_path / "lab.csv"
    path.write_text("a,b,y\n0.5,1,2.0\n0.1,2,n/a\n0.2,3, #DIV/0! \n0.3,4,NA\n0.4,5,#N/A\n-0.5,6,3.0\n")
    with pytest.warns(UnfinishedRowsWarning, match=r"left out 4 row\(s\) with no value in 'y'"):
        data = TaskData.from_csv(path, NUMERIC)
    assert list(data.y) == [2.0, 3.0] and [p["b"] for p in data.params] == [1, 6]
    with pytest.warns(UnfinishedRowsWarning, match="left out 1 row"):
        frame = TaskData.from_dataframe(
            pd.DataFrame({"a": [0.5, 0.1], "b": [1, 2], "y": ["#VALUE!", 3.0]}), NUMERIC
        )
    assert list(frame.y) == [3.0]
    path.write_text("a,b,y\n0.5,1,2.0\nn/a,2,1.0\n")
    with pytest.raises(DataError, match="row 2"):
        TaskData.from_csv(path, NUMERIC)
    path.write_text("a,b,y\n0.5,1,2.0\n0.1,2,70%\n")
    with pytest.raises(DataError, match="row 2"):
        TaskData.from_csv(path, NUMERIC)
    path.write_text("a,b,y,state\n0.5,1,2.0,complete\n0.1,2,n/a,complete\n")
    with pytest.raises(DataError, match="row 2.*'n/a'"):  # (a complete trial's value is needed)
        TaskData.from_csv(path, NUMERIC)


def test_a_dataframe_leaves_out_rows_without_a_value_whose_state_is_not_complete() -> None:
    # before: a NaN (or None) value was refused ("row 1 (index 0), column 'y': value nan is not
    # finite") where the same rows read from a CSV file were left out as failed or unfinished trials
    from warmbo.data import UnfinishedRowsWarning

    nan = float("nan")
    data = {"a": [0.5, 0.1, 0.2, 0.3], "b": [1, 2, 3, 4], "y": [1.0, nan, None, 2.0]}
    data["state"] = ["COMPLETE", "FAIL", "RUNNING", "COMPLETE"]
    for df in frames(data):
        with pytest.warns(UnfinishedRowsWarning) as record:
            read = TaskData.from_dataframe(df, NUMERIC)
        said = [str(w.message) for w in record if issubclass(w.category, UnfinishedRowsWarning)]
        assert said == [
            "<DataFrame>: left out 2 row(s) without a value whose 'state' is not complete (FAIL 1, "
            "RUNNING 1): failed or unfinished trials"
        ]
        assert [p["a"] for p in read.params] == [0.5, 0.3] and list(read.y) == [1.0, 2.0]
    # without a state column, as a CSV file without one
    for df in frames({"a": [0.5, 0.1], "b": [1, 2], "y": [nan, 3.0]}):
        with pytest.warns(
            UnfinishedRowsWarning, match=r"left out 1 row\(s\) with no value in 'y' \(an empty cell"
        ):
            assert list(TaskData.from_dataframe(df, NUMERIC).y) == [3.0]
    # a missing value in a complete row, and an infinite value in any row, are refused, row named
    for df in frames({"a": [0.5, 0.1], "b": [1, 2], "y": [1.0, nan], "state": ["COMPLETE", "COMPLETE"]}):
        with pytest.raises(
            DataError, match=r"row 2 \(index 1\), column 'y': missing value \(nan\) in a row whose 'state'"
        ):
            TaskData.from_dataframe(df, NUMERIC)
    for df in frames(
        {"a": [0.5, 0.1], "b": [1, 2], "y": [1.0, -float("inf")], "state": ["COMPLETE", "FAIL"]}
    ):
        with pytest.raises(DataError, match=r"row 2 \(index 1\), column 'y': value -inf is not finite"):
            TaskData.from_dataframe(df, NUMERIC)
    # no row with a value: said why
    for df in frames({"a": [0.5], "b": [1], "y": [nan], "state": ["PRUNED"]}):
        with pytest.warns(UnfinishedRowsWarning), pytest.raises(DataError) as info:
            TaskData.from_dataframe(df, NUMERIC)
        assert str(info.value) == (
            "<DataFrame>: no data rows (no row has an objective value: failed or unfinished trials)"
        )


def test_an_optuna_trials_dataframe_with_a_failed_trial_reads_the_complete_ones() -> None:
    # before: study.trials_dataframe() itself (NaN values for FAIL and RUNNING trials) was refused,
    # while its CSV export was read
    import optuna

    from warmbo.data import UnfinishedRowsWarning

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))

    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        if trial.number == 1:
            raise ValueError("diverged")
        return (x - 0.3) ** 2

    study.optimize(objective, n_trials=4, catch=(ValueError,))
    study.ask({"x": optuna.distributions.FloatDistribution(0.0, 1.0)})  # still running
    df = study.trials_dataframe()
    space = Space([Float("x", 0.0, 1.0)])
    with pytest.warns(UnfinishedRowsWarning, match=r"left out 2 row\(s\) .*\(FAIL 1, RUNNING 1\)"):
        data = TaskData.from_dataframe(df, space, x={"x": "params_x"}, y="value")
    done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert [p["x"] for p in data.params] == [t.params["x"] for t in done]
    np.testing.assert_array_equal(data.y, [t.value for t in done])
    # a complete trial without a value is refused
    df.loc[0, "value"] = float("nan")
    with pytest.raises(DataError, match=r"row 1 \(index 0\), column 'value': missing value \(nan\)"):
        TaskData.from_dataframe(df, space, x={"x": "params_x"}, y="value")


def test_a_dataframe_of_a_conditional_space_leaves_out_the_rows_of_another_branch() -> None:
    # skip_incomplete and outside, as from_csv takes them (the Optuna sampler reads each relative
    # search space's rows with them): before, a DataFrame had neither, and a NaN parameter was refused
    nan = float("nan")
    space = Space([Float("a", 0.0, 1.0)])
    data = {"a": [0.5, nan, 5.0, 0.25], "c": [nan, 3.0, nan, nan], "y": [1.0, 2.0, 3.0, 4.0]}
    for df in frames(data):
        outside: list[str] = []
        read = TaskData.from_dataframe(df, space, skip_incomplete=True, outside=outside)
        assert [p["a"] for p in read.params] == [0.5, 0.25] and list(read.y) == [1.0, 4.0]
        assert outside == ["<DataFrame>, row 3 (index 2), column 'a': value 5.0 is outside [0.0, 1.0]"]
        with pytest.raises(DataError, match=r"row 2 \(index 1\), column 'a': value nan is not finite"):
            TaskData.from_dataframe(df, space)
        # a parameter without a column: every row is another branch's
        other = TaskData.from_dataframe(df, Space([Float("d", 0.0, 1.0)]), skip_incomplete=True)
        assert len(other) == 0


def test_outside_leaves_out_rows_outside_the_ranges_and_still_refuses_text(tmp_path: Path) -> None:
    # before there was no way to read the rows of a conditional space's branch with another range
    # (x in [0, 10] where the space has [0, 1]): the first such row was refused
    space = Space((Float("x", 0.0, 1.0), Categorical("kind", ("a", "b")), Int("n", 0, 8, step=4)))
    path = write(tmp_path, "x,kind,n,y\n0.5,a,4,1.0\n5.0,a,4,2.0\n0.2,c,0,3.0\n0.1,b,3,4.0\n0.3,b,8,5.0\n")
    outside: list[str] = []
    data = TaskData.from_csv(path, space, outside=outside)
    assert data.params == ({"x": 0.5, "kind": "a", "n": 4}, {"x": 0.3, "kind": "b", "n": 8})
    assert list(data.y) == [1.0, 5.0]
    assert len(outside) == 3
    assert outside[0].startswith(f"{path}, row 2 (line 3), column 'x': ")
    assert "row 3 (line 4), column 'kind'" in outside[1] and "row 4 (line 5), column 'n'" in outside[2]
    records = [{"x": 0.5, "kind": "a", "n": 4}, {"x": 2.0, "kind": "a", "n": 0}]
    kept = TaskData.from_records(records, [1.0, 2.0], space, task=["s", "t"], outside=(left := []))
    assert kept.params == (records[0],) and list(kept.task) == ["s"] and len(left) == 1
    arrays = TaskData.from_numpy(
        [[0.5], [3.0]], [1.0, 2.0], Space((Float("x", 0.0, 1.0),)), outside=(left := [])
    )
    assert list(arrays.y) == [1.0] and "row 2, column 'x'" in left[0]
    for cell in ("abc", ""):  # not a value of the parameter at all: still refused, row and column named
        bad = write(tmp_path, f"x,kind,n,y\n0.5,a,4,1.0\n{cell},a,4,2.0\n", name=f"bad{len(cell)}.csv")
        with pytest.raises(DataError, match=r"row 2 \(line 3\), column 'x'"):
            TaskData.from_csv(bad, space, outside=[])
    every = write(tmp_path, "x,kind,n,y\n5.0,a,4,1.0\n", name="every.csv")
    assert len(TaskData.from_csv(every, space, outside=(left := []))) == 0 and len(left) == 1


def test_rows_after_an_unfinished_trial_keep_their_numbers(tmp_path: Path) -> None:
    # before: a failed trial's row, left out, was not counted, so the next row's error named row 1
    import warnings

    path = write(tmp_path, "x,y,state\n0.1,,FAIL\n0.2,oops,COMPLETE\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(DataError, match=r"row 2 \(line 3\), column 'y': value 'oops' is not a number"):
            TaskData.from_csv(path, Space((Float("x", 0.0, 1.0),)))


def test_the_readers_points_are_validated_once_and_equal_the_constructors(tmp_path: Path, mixed) -> None:
    # The readers make every point canonical as they read it and hand it on without validating it a
    # second time (1.7 s of 3.2 s for 100,000 CSV rows); the result must be the validating
    # constructor's: the same points (type-aware), values, labels and encoding.
    grid = Space(
        (Float("lr", 0.0, 1.0, step=0.25), Int("layers", 1, 8, step=1), Categorical("act", ("relu", 1)))
    )
    rows = [{"lr": 0.5, "layers": 3.0, "act": "relu"}, {"lr": 0.25000000000000006, "layers": 8, "act": 1.0}]
    for space, params, values, labels in (
        (SPACE, [dict(p) for p in mixed.params], list(mixed.y), list(mixed.task)),
        (grid, rows, [1.0, 2.0], None),
    ):
        read = TaskData.from_records(params, values, space, task=labels)
        built = TaskData(tuple(params), values, labels, space)
        assert read == built
        assert [[type(v) for v in p.values()] for p in read.params] == [
            [type(v) for v in p.values()] for p in built.params
        ]
        np.testing.assert_array_equal(read.X, built.X)
        np.testing.assert_array_equal(read.X, space.encode(list(built.params)))
    assert TaskData.from_records(rows, [1.0, 2.0], grid).params[1] == {"lr": 0.25, "layers": 8, "act": 1}
    path = write(tmp_path, "lr,layers,act,y\n0.01,3,relu,1.5\n0.5,3.0,tanh,-2\n")
    assert TaskData.from_csv(path, SPACE) == TaskData(
        ({"lr": 0.01, "layers": 3, "act": "relu"}, {"lr": 0.5, "layers": 3, "act": "tanh"}),
        [1.5, -2.0],
        None,
        SPACE,
    )
    # a float array of values is checked at once, and its first bad value is named as before
    points = ({"lr": 0.1, "layers": 2, "act": "relu"},) * 3
    with pytest.raises(DataError, match=r"<data>, row 2, y: value nan is not finite"):
        TaskData(points, np.array([1.0, np.nan, np.inf]), None, SPACE)
    with pytest.raises(DataError, match=r"y has 2 values for 3 points"):
        TaskData(points, np.array([1.0, 2.0]), None, SPACE)
    y = np.array([1.0, 2.0, 3.0])
    data = TaskData(points, y, None, SPACE)
    y[0] = 9.0  # the values are copied
    assert data.y[0] == 1.0 and not data.y.flags.writeable


def test_an_optuna_trials_dataframe_as_it_comes_says_how_to_read_it() -> None:
    # (user test, session 35) the missing-column error alone did not say what to rename
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(
        lambda t: (t.suggest_float("a", 0.0, 1.0) - 0.3) ** 2 + t.suggest_int("b", 1, 4), n_trials=5
    )
    df = study.trials_dataframe()
    with pytest.raises(DataError, match=r"missing column.*looks like Optuna's trials_dataframe\(\)") as info:
        TaskData.from_dataframe(df, NUMERIC)
    fix = "df.rename(columns=lambda c: c.removeprefix('params_')).rename(columns={'value': 'y'})"
    assert fix in str(info.value)
    renamed = eval(fix, {"df": df})  # the hint's own code reads it
    assert len(TaskData.from_dataframe(renamed, NUMERIC)) == 5


def test_a_parameter_named_y_says_how_to_give_the_values() -> None:
    import pandas as pd

    space = Space([Float("x", 0.0, 1.0), Float("y", 0.0, 1.0)])
    df = pd.DataFrame({"x": [0.1, 0.2], "y": [0.3, 0.4], "value": [1.0, 2.0]})
    with pytest.raises(DataError, match=r"both a parameter column and the y column; .*\(X, values\) pair"):
        TaskData.from_dataframe(df, space)
    assert list(TaskData.from_dataframe(df, space, y="value").y) == [1.0, 2.0]  # the way it names


def test_decimal_commas_are_read_with_decimal_comma_and_the_error_says_so(tmp_path) -> None:
    # a user test had to sed a German spreadsheet's CSV (";" between fields, "," in numbers)
    path = tmp_path / "de.csv"
    path.write_text("a;b;y\n0,25;3;1,5\n-0,5;4;2\n0;5;-1,25e2\n")
    data = TaskData.from_csv(path, NUMERIC, delimiter=";", decimal=",")
    assert [p["a"] for p in data.params] == [0.25, -0.5, 0.0] and list(data.y) == [1.5, 2.0, -125.0]
    with pytest.raises(
        DataError, match=r"decimal comma.*TaskData.from_csv\(path, space, delimiter=';', decimal=','\)"
    ):
        TaskData.from_csv(path, NUMERIC, delimiter=";")
    with pytest.raises(DataError, match="is also the field delimiter"):
        TaskData.from_csv(path, NUMERIC, decimal=",")
    with pytest.raises(DataError, match="decimal must be"):
        TaskData.from_csv(path, NUMERIC, delimiter=";", decimal="·")
    path.write_text("a;b;y\n0.25;3;1,5\n")  # (a point in a decimal-comma file stays a number)
    assert list(TaskData.from_csv(path, NUMERIC, delimiter=";", decimal=",").y) == [1.5]
    # a category's label keeps its comma (a review: "1,5" was read as the unknown category "1.5")
    labelled = Space((Float("a", -1.0, 1.0), Categorical("c", ["1,5", "3,0"])))
    path.write_text("a;c;y\n0,5;1,5;2,5\n")
    read = TaskData.from_csv(path, labelled, delimiter=";", decimal=",")
    assert read.params == ({"a": 0.5, "c": "1,5"},) and list(read.y) == [2.5]


def test_a_json_file_given_as_a_csv_prior_is_named_json(tmp_path: Path) -> None:
    # (hostile-input user test) the JSON list read as one mangled header: "missing column(s) 'lr', ...
    # (found: [{"lr":0.01, layers:2, act:"relu", y:0.3}])"
    path = tmp_path / "prior.csv"
    path.write_text('[{"lr": 0.01, "layers": 2, "y": 0.3}]\n')
    with pytest.raises(DataError, match=r"looks like JSON, not a CSV file \(it starts with '\['\)"):
        TaskData.from_csv(path, Space((Float("lr", 1e-4, 1.0), Int("layers", 1, 4))))
