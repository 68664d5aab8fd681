"""Prior data: observations from related tasks (or earlier runs of the same task).

This module owns the *import and validation of prior observations* before they reach a model:

* :class:`TaskData`, an immutable table of ``n`` observations -- validated parameter dicts, finite
  objective values ``y`` and optional task labels -- bound to the :class:`~warmbo.space.Space`
  it was validated against, with its encoding (:attr:`TaskData.X`) and per-task views
  (:meth:`TaskData.by_task`, :meth:`TaskData.split`);
* readers that turn CSV files (stdlib :mod:`csv`), DataFrames (duck-typed; pandas is not a
  dependency), numpy arrays and lists of dicts into :class:`TaskData`, and a CSV writer
  (:meth:`TaskData.to_csv`) whose output :meth:`TaskData.from_csv` reads back identically;
* :func:`trials_to_csv`, a study's trials as a CSV file (``warmbo export``) whose complete rows
  :meth:`TaskData.from_csv` reads as prior data;
* :func:`read_points`, configurations without values (a CSV or JSON file) for ``warmbo enqueue``;
* :class:`DataError` (a ``ValueError``), raised for every invalid input. Its message names the
  source (file path or ``<DataFrame>``, ``<array>``, ``<records>``), the row and the column, e.g.
  ``prior.csv, row 7 (line 8), column 'lr': value 'abc' is not a number``.

Row numbers
-----------
``row k`` is the 1-based number of the data row (the header and blank lines are not counted).
For CSV files the physical ``line`` of the file (1-based, header included) is given as well; for a
DataFrame with an ``index``, the index label of the row.

Conversion of cells
-------------------
Strings (CSV cells, or string values in a DataFrame / records) are converted per parameter type:
:class:`~warmbo.space.Float` and :class:`~warmbo.space.Int` cells are parsed as numbers (``"3"``
and ``"3.0"`` are both valid ints); :class:`~warmbo.space.Categorical` cells match a string choice
exactly (or after stripping whitespace), else a numeric choice by value (choices ``(16, 32)`` and
cell ``"32"`` give ``32``), else a bool choice (``"true"``/``"false"``, case-insensitive, or
``"1"``/``"0"``). Non-string values are passed to the space's validation unchanged. Task labels
are ``str``; integer labels are converted with ``str()``, CSV labels are stripped.

Why this file is long: TaskData's readers (CSV, arrays, studies) and their validation messages; every
reader reports bad input in the same words, which needs them side by side.
"""

from __future__ import annotations

import contextlib
import csv
import math
import numbers
import os
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._warnings import user_stacklevel
from .parameters import _is_bool, _is_real
from .space import Categorical, Float, Int, Parameter, Space, SpaceError
from .trial import amendment_note, task_columns

__all__ = ["DataError", "TaskData", "UnfinishedRowsWarning", "read_points", "trials_to_csv"]

FloatArray = NDArray[np.float64]
Label = str | None


class UnfinishedRowsWarning(UserWarning):
    """:meth:`TaskData.from_csv` left out rows with an empty value cell (an Optuna
    ``trials_dataframe()``, with or without its ``state`` column, or a ``warmbo export`` of every
    trial), or :meth:`TaskData.from_dataframe` rows with a missing value (None, NaN: the
    ``trials_dataframe()`` itself): failed or unfinished trials, not observations."""


class DataError(ValueError):
    """Invalid prior data; the message names the source, the row and the column. ``shell``, when
    given, is the same message in the command line's words (``--prior-y COLUMN``, not ``y=``), which
    ``warmbo`` prints instead."""

    def __init__(self, message: str = "", shell: str | None = None):
        super().__init__(message)
        self.shell = shell


class MissingFileError(DataError, FileNotFoundError):
    """A data file that does not exist (or is a folder): a :class:`DataError` naming the path, and a
    ``FileNotFoundError`` for code that catches that."""


class _CellError(Exception):
    """Internal: a cell could not be converted (message without location)."""


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------


def _at(where: str, column: Any = None) -> str:
    return where if column is None else f"{where}, column {column!r}"


def _strip_param_prefix(message: str, name: str) -> str:
    """Drop the ``parameter 'name': `` prefix of a SpaceError message (the column is named)."""
    prefix = f"parameter {name!r}: "
    return message[len(prefix) :] if message.startswith(prefix) else message


#: a plain decimal numeral, all a cell (and the CLI's --value) is read as: Python's int() and float()
#: also read "4_2" as 42 and "٤٢" (Arabic-Indic digits) as 42, so a typo became a stored value
NUMERAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_NOT_FINITE_WORDS = ("nan", "inf", "infinity")  # read, and then refused as not finite by the caller


def _parse_number(text: str) -> int | float:
    """``int`` if ``text`` is an integer literal, else ``float``; raise _CellError otherwise."""
    s = text.strip()
    if not s:
        raise _CellError("empty value")
    if not NUMERAL.fullmatch(s) and s.lower().lstrip("+-") not in _NOT_FINITE_WORDS:
        raise _CellError(_not_a_number(text))
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        raise _CellError(_not_a_number(text)) from None


def _not_a_number(text: str) -> str:
    """Why a cell is not a number, with a hint for a decimal comma (a European spreadsheet's)."""
    s = text.strip()
    if _DECIMAL_COMMA.fullmatch(s):
        point = s.replace(",", ".")
        if re.fullmatch(r"[+-]?[0-9]{1,3},[0-9]{3}", s):  # 1,234: a decimal comma or a thousands one
            return (
                f"value {text!r} is not a number: its comma is a decimal comma ({point}) or a thousands "
                f"separator ({s.replace(',', '')}); write the number plainly, e.g. set the spreadsheet's "
                "number format to use a decimal point and no thousands separator"
            )
        return (
            f"value {text!r} is not a number: it has a decimal comma; write it with a decimal point "
            f"({point}), e.g. set the spreadsheet's number format to use points"
        )
    if "_" in s:
        plain = s.replace("_", "")
        return f"value {text!r} is not a number: write it without underscores ({s} is not read as {plain})"
    if any(c.isdigit() and c not in "0123456789" for c in s):
        return f"value {text!r} is not a number: write it with the digits 0-9"
    return f"value {text!r} is not a number"


_DECIMAL_COMMA = re.compile(r"[+-]?[0-9]*,[0-9]+([eE][+-]?[0-9]+)?")


def _convert_categorical(p: Categorical, text: str) -> Any:
    """Map a string cell to the matching choice (see the module docstring); unknown -> as is."""
    strings = [c for c in p.choices if isinstance(c, str)]
    if text in strings:
        return text
    s = text.strip()
    if s in strings:
        return s
    if not s:
        raise _CellError("empty value")
    if any(_is_real(c) for c in p.choices):
        try:
            return p.validate(_parse_number(s))
        except (_CellError, SpaceError):
            pass
    if any(_is_bool(c) for c in p.choices):
        word = {"true": True, "false": False, "1": True, "0": False}.get(s.lower())
        if word is not None:
            try:
                return p.validate(word)
            except SpaceError:
                pass
    return s  # validation reports the unknown category


def _convert_value(p: Parameter, value: Any) -> Any:
    """Canonical value of ``p`` for a raw cell/value; raise _CellError or SpaceError."""
    if value is None:
        raise _CellError("missing value")
    if isinstance(value, str):
        if isinstance(p, Categorical):
            value = _convert_categorical(p, value)
        elif isinstance(p, (Float, Int)):
            value = _parse_number(value)
    return p.validate(value)


def _convert_y(value: Any) -> float:
    if value is None:
        raise _CellError("missing value")
    if isinstance(value, str):
        if not value.strip():
            raise _CellError("empty value")
        v = float(_parse_number(value))
    elif _is_real(value):
        try:
            v = float(value)
        except OverflowError:  # (an int beyond a float's range: named by its size, not its 400 digits)
            shown = (
                repr(value)
                if len(repr(value)) <= 40
                else f"{str(value)[:12]}... ({len(str(abs(value)))} digits)"
            )
            raise _CellError(f"value {shown} is not finite (beyond a float's range)") from None
    else:
        raise _CellError(f"value {value!r} of type {type(value).__name__} is not a number")
    if not math.isfinite(v):
        raise _CellError(f"value {value!r} is not finite")
    return v


def _missing(value: Any) -> bool:
    """Whether a cell holds no value: None, a blank string (an empty CSV cell), NaN, or pandas' NA or
    NaT (a DataFrame's missing value: Optuna's ``trials_dataframe()`` has NaN for a failed trial's
    value). An infinite number is a value (and not a finite one)."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if _is_real(value):
        try:
            return math.isnan(value)
        except OverflowError:  # (an int beyond a float's range: a value, refused as not finite later)
            return False
    return type(value).__name__ in ("NAType", "NaTType")


#: what a spreadsheet writes in a cell that holds no number (pandas' default ``na_values`` but the
#: spellings of NaN, which stay an error as a NaN value is, and Excel's error values): in the values'
#: column such a cell is a row without a value, left out with the empty ones (a user test's lab file
#: stopped on its one "n/a" and one "#DIV/0!")
NO_VALUE = frozenset(
    {"n/a", "na", "null", "none", "<na>", "#n/a", "#n/a n/a", "#na", "#div/0!", "#value!", "#ref!", "#name?",
     "#num!", "#null!", "#spill!", "#calc!"}
)  # fmt: skip


def _no_value(value: Any) -> bool:
    """Whether a cell of the values' column holds no value: :func:`_missing`, or a :data:`NO_VALUE`
    marker."""
    return _missing(value) or (isinstance(value, str) and value.strip().lower() in NO_VALUE)


def _absent(p: Parameter | None, cell: Any) -> bool:
    """Whether a parameter's cell holds no value: :func:`_missing`, or a :data:`NO_VALUE` marker
    (``NA``, ``null``, ...) that is not one of the parameter's own choices (a Categorical may offer
    ``"none"``: a value, not an absence)."""
    if _missing(cell):
        return True
    if not (isinstance(cell, str) and cell.strip().lower() in NO_VALUE):
        return False
    if isinstance(p, Categorical):
        try:
            _convert_categorical(p, cell)
        except (_CellError, SpaceError):
            return True
        return False
    return True


def _unfinished_state(row: Mapping[str, Any], y: Any) -> str | None:
    """The state of a row that is a trial without an objective value: a missing ``y`` (an empty CSV
    cell; None or NaN in a DataFrame), and a ``state`` column other than complete (Optuna's ``FAIL``,
    ``RUNNING``, ``PRUNED``; warmbo's ``failed``, ``pending``), or no state at all (``""``: a file
    without that column, such as ``trials_dataframe(attrs=("params", "value"))``, or an empty cell).
    None for any other row: one with a value to read, or a missing ``y`` in a row whose state says
    complete (an error)."""
    if not _no_value(row.get(y)):
        return None
    state = _state(row)
    return None if state.lower() == "complete" else state


def _state(row: Mapping[str, Any]) -> str:
    """A row's ``state`` cell as text (``""`` when missing)."""
    state = row.get("state")
    return "" if _missing(state) else str(state).strip()


def _warn_unfinished(source: str, unfinished: dict[str, int], y: Any) -> None:
    """Say which rows without a value (``unfinished``: their number by state) were left out."""
    if not unfinished:
        return
    total = sum(unfinished.values())
    if any(unfinished):  # (a state column says why)
        counts = ", ".join(f"{state or 'no state'} {n}" for state, n in unfinished.items())
        said = f"left out {total} row(s) without a value whose 'state' is not complete ({counts})"
    else:
        said = f"left out {total} row(s) with no value in {y!r} (an empty cell, or such as n/a or #DIV/0!)"
    warnings.warn(
        f"{source}: {said}: failed or unfinished trials", UnfinishedRowsWarning, stacklevel=user_stacklevel()
    )


def _no_rows(source: str, unfinished: dict[str, int]) -> DataError:
    left = " (no row has an objective value: failed or unfinished trials)" if unfinished else ""
    return DataError(f"{source}: no data rows{left}")


def _unfinished_hint(row: Mapping[str, Any]) -> str:
    """For a row without a usable value in a file written by ``warmbo export`` (a ``state`` column):
    a failed or pending trial has no value, and the way to leave such rows out."""
    state = _state(row)
    if state in ("", "complete"):
        return ""
    return (
        f"; the row is a {state} trial (column 'state'), which has no value: export the complete trials "
        "only (warmbo export --complete) or remove its row"
    )


def _convert_label(value: Any) -> str:
    if isinstance(value, str):
        if not value.strip():
            raise _CellError("empty task label")
        return str(value)
    if isinstance(value, numbers.Integral) and not _is_bool(value):
        return str(int(value))
    if value is None or (isinstance(value, float) and math.isnan(value)):
        raise _CellError("missing task label")
    raise _CellError(f"task label {value!r} of type {type(value).__name__} is not a str or int")


def _convert_point(
    space: Space, row: Mapping[Any, Any], cols: Sequence[Any], where: str, outside: list[str] | None = None
) -> dict[str, Any] | None:
    """Validated point from the columns ``cols`` (one per parameter, in space order) of ``row``.

    With ``outside`` (a list), a row whose value lies outside its parameter's range (a number out of
    bounds or off the grid, a choice the parameter does not have) is described in it and None is
    returned, instead of a DataError; a cell that is not a value at all is still refused.

    In a conditional space only the parameters active at the row are read (parents first): a cell of
    an inactive one is ignored, whatever it holds (empty, NaN, a value written anyway), and a row
    may lack its column altogether."""
    if space.is_conditional:
        return _convert_conditional(space, row, cols, where, outside)
    point: dict[str, Any] = {}
    for p, col in zip(space.params, cols, strict=True):
        try:
            point[p.name] = _convert_value(p, row[col])
        except _CellError as exc:
            raise DataError(f"{_at(where, col)}: {exc}") from None
        except SpaceError as exc:
            message = f"{_at(where, col)}: {_strip_param_prefix(str(exc), p.name)}"
            if outside is None or not _a_value_of_its_kind(p, row[col]):
                raise DataError(message) from None
            outside.append(message)
            return None
    if space.is_finite:  # grid spaces: the point must also be one of the candidates
        try:
            point = space.validate(point)
        except SpaceError as exc:
            raise DataError(f"{where}: {exc}") from None
    return point


def _convert_conditional(
    space: Space, row: Mapping[Any, Any], cols: Sequence[Any], where: str, outside: list[str] | None
) -> dict[str, Any] | None:
    """:func:`_convert_point` for a conditional space: each parameter read in an order that puts
    parents first, and only when the values read so far make it active."""
    conditions = space._conditions  # type: ignore[attr-defined]
    read: dict[str, Any] = {}
    for i in conditions.order:
        p, col = space.params[i], cols[i]
        if not conditions.settled(read, i):  # (what is read so far is active: inactive at this row)
            continue
        cell = row.get(col)
        if _absent(p, cell):
            raise DataError(f"{_at(where, col)}: missing value ({space._why_active(p.name)})")
        try:
            read[p.name] = _convert_value(p, cell)
        except _CellError as exc:
            raise DataError(f"{_at(where, col)}: {exc}") from None
        except SpaceError as exc:
            message = f"{_at(where, col)}: {_strip_param_prefix(str(exc), p.name)}"
            if outside is None or not _a_value_of_its_kind(p, cell):
                raise DataError(message) from None
            outside.append(message)
            return None
    return {n: read[n] for n in space.names if n in read}


def _lacks_active(space: Space, row: Mapping[Any, Any], cols: Sequence[Any]) -> bool:
    """Whether a row of a conditional space lacks a value of a parameter active at it (with
    ``skip_incomplete``: another branch's row, left out). Parents are read first; a cell of an
    inactive parameter does not count, and a parent's value that is not one of its values is left
    to :func:`_convert_point` to name."""
    conditions = space._conditions  # type: ignore[attr-defined]
    read: dict[str, Any] = {}
    for i in conditions.order:
        p, col = space.params[i], cols[i]
        if not conditions.settled(read, i):
            continue
        cell = row.get(col)
        if _absent(p, cell):  # (as _convert_conditional reads it: an empty cell, NaN, NA, null, ...)
            return True
        try:
            read[p.name] = _convert_value(p, cell)
        except (_CellError, SpaceError):
            return False
    return False


def _always(space: Space) -> set[str]:
    """The names of the parameters without ``when`` (active at every point)."""
    return {p.name for p in space.params if p.when is None}


def _optional_columns(space: Space | None, cols: Sequence[Any]) -> set[Any]:
    """The columns a data file may lack: those of a conditional space's conditional parameters
    (a file of linear SVMs has no ``gamma`` column)."""
    if space is None or not space.is_conditional:
        return set()
    return {col for p, col in zip(space.params, cols, strict=True) if p.when is not None}


def _a_value_of_its_kind(p: Parameter, value: Any) -> bool:
    """Whether a value the parameter refused is still a value of its kind (a finite number for a
    ``Float`` or ``Int``, anything for a ``Categorical``), i.e. outside its range, not malformed."""
    if isinstance(p, Categorical):
        return True
    try:
        number = _parse_number(value) if isinstance(value, str) else value
    except _CellError:
        return False
    return _is_real(number) and math.isfinite(number)


def _columns(
    names: Sequence[str], x: Sequence[Any] | Mapping[str, Any] | None, y: Any, task: Any, source: str
) -> list[Any]:
    """Column of each parameter ``names`` (space order; none for a check without a space); checks
    that x, y and task columns are distinct."""
    if x is None:
        cols = list(names)
    elif isinstance(x, Mapping):
        unknown = [k for k in x if k not in names]
        if unknown:
            raise DataError(f"{source}: x maps unknown parameter(s) {unknown!r}; space has {list(names)!r}")
        cols = [x.get(n, n) for n in names]
    elif isinstance(x, (str, bytes)) or not isinstance(x, Iterable):
        raise DataError(f"{source}: x must be a list of column names, got {x!r}")
    else:
        cols = list(x)
        if len(cols) != len(names):
            raise DataError(
                f"{source}: x names {len(cols)} column(s) {cols!r} for the {len(names)} parameter(s) "
                f"{list(names)!r} (one column per parameter, in the space's order)"
            )
    seen: set[Any] = set()
    for c in cols:
        if c in seen:
            raise DataError(f"{source}: column {c!r} is used for more than one parameter")
        seen.add(c)
    if y in seen:
        raise DataError(
            f"{source}: column {y!r} is both a parameter column and the y column; with a parameter "
            f"named {y!r}, give the values apart, as an (X, values) pair (X without them), or in a "
            "column of another name read with TaskData.from_dataframe(df, space, y='value')"
        )
    if task is not None and (task in seen or task == y):
        what = "the y column" if task == y else "a parameter column"
        raise DataError(f"{source}: task column {task!r} is also {what}")
    return cols


def _optuna_hint(found: Sequence[Any], y: Any) -> str:
    """For a frame shaped as Optuna's ``study.trials_dataframe()`` (``value``, ``params_<name>``), how
    to read it (a user test: the missing-column error alone did not say)."""
    names = [str(c) for c in found]
    if y in names or "value" not in names or not any(c.startswith("params_") for c in names):
        return ""
    return (
        "; this looks like Optuna's trials_dataframe(): rename its columns, "
        "df.rename(columns=lambda c: c.removeprefix('params_')).rename(columns={'value': 'y'}); the "
        "Optuna sampler (warmbo.integrations.optuna) also takes the studies themselves, prior=[study]"
    )


def _history_y(found: Sequence[Any], y: Any) -> Any:
    """The column of the values: ``y``, or for a frame shaped as warmbo's own
    ``history.to_dataframe()`` (``state``, ``value``, ``created``, ``completed``; no ``y``) given
    with the default ``y``, its ``value`` (``warmbo_value`` when a parameter is named ``value``: a
    user test gave last week's history as this week's prior and was told a 'y' column was missing)."""
    names = set(found)
    if y != "y" or "y" in names:
        return y
    value = "warmbo_value" if "warmbo_value" in names else "value"
    marks = {"state", "created", "completed"}
    if value in names and all(k in names or f"warmbo_{k}" in names for k in marks):
        return value
    return y


#: column names that hold a prior's values when no ``y`` column does (a hint, never a guess)
_VALUE_NAMES = ("value", "values", "objective", "score", "loss", "target", "result")


def _check_missing(source: str, needed: Sequence[Any], found: Sequence[Any]) -> None:
    have = set(found)
    missing = [c for c in needed if c not in have]
    if missing:
        names = ", ".join(repr(c) for c in missing)
        shown = ", ".join(str(c) for c in found if c != "") or "none"
        # a column that differs only in case or spaces ('LR', 'Learning Rate'): names are exact
        near = {}
        for c in missing:
            match = [f for f in found if f not in needed and _loose(f) == _loose(c)]
            if match:
                near[c] = match[0]
        hints = [f"rename column {f!r} to {c!r} (names match exactly, case too)" for c, f in near.items()]
        if any(f"config/{c}" in have for c in missing):
            # (a Ray Tune user gave a previous experiment's results table as the prior)
            hints.append(
                "this looks like a Ray Tune results table (ResultGrid.get_dataframe(), "
                "ExperimentAnalysis.dataframe()), whose parameters are config/<name>: "
                "df.rename(columns=lambda c: c.removeprefix('config/')), and the metric's column "
                "renamed to 'y'"
            )
        if "y" in missing and "y" not in near:
            # (a user test: warmbo's own history frame, sliced to some columns, lost the marks that
            # tell it as such, and 'value' was not taken for the values)
            values = [f for f in found if str(f).lower() in _VALUE_NAMES and f not in needed]
            if values:
                hints.append(
                    f"the values look like column {values[0]!r}: rename it to 'y' "
                    f"(df.rename(columns={{{values[0]!r}: 'y'}}); warmbo optimize: --prior-y {values[0]})"
                )
        first = str(found[0]).lstrip("\ufeff ").lstrip() if found else ""
        if first[:1] in ("[", "{"):
            # (a hostile-input user test: a JSON list of objects given as a CSV prior read as one
            # mangled header, "found: [{"lr":0.01, layers:2, ...")
            raise DataError(
                f"{source}: this looks like JSON, not a CSV file (it starts with {first[:1]!r}): a prior "
                "file is CSV, one header row of parameter names and 'y', one row per evaluation; "
                "in Python, read the JSON and give the rows as dicts with their value under 'y', "
                "prior=[{'x': 1.0, 'y': 3.0}, ...]"
            )
        hint = "; ".join(hints)
        raise DataError(
            f"{source}: missing column(s) {names} (found: {shown})" + (f"; {hint}" if hint else "")
        )


def _loose(name: Any) -> str:
    """A column name without case, spaces, dashes and underscores, to spot a near miss."""
    return "".join(ch for ch in str(name).lower() if ch.isalnum())


def _delimiter_hint(
    names: Sequence[str], delimiter: str, shell: bool = False, option: str = "--prior-delimiter"
) -> str:
    """When a header read as one column holds another common separator (a European spreadsheet's
    ``;``, a tab), the way to read it: the ``delimiter`` argument, ``option`` in the CLI
    (``shell``: the CLI's words alone)."""
    if len(names) != 1:
        return ""
    for other, shown in ((";", "';'"), ("\t", "'\\t'"), (",", "','"), ("|", "'|'")):
        if other != delimiter and other in names[0]:
            if shell:
                return f"; the header is one column with {shown} in it: give {option} {shown}"
            return (
                f"; the header is one column with {shown} in it: read the file with delimiter={shown} "
                f"(in a prior list: TaskData.from_csv(path, space, delimiter={shown}); warmbo optimize: "
                f"--prior-delimiter {shown})"
            )
    return ""


def _as_rows(data: Any, what: str, source: str) -> list[Any]:
    if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Iterable):
        raise DataError(f"{source}: {what} must be a sequence, got {data!r}")
    return list(data)


def _canonical(value: Any) -> tuple[str, Any]:
    """Type-aware identity of a canonical value (``True`` and ``1`` differ)."""
    return ("bool" if _is_bool(value) else type(value).__name__, value)


# ----------------------------------------------------------------------------------------------
# TaskData
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class TaskData:
    """Observations ``(params, y)``, optionally labelled by task, validated against a space.

    Construct it with :meth:`from_csv`, :meth:`from_dataframe`, :meth:`from_numpy` or
    :meth:`from_records`; the constructor itself validates too (every point with
    ``space.validate``, ``y`` finite, labels ``str``/``int``) and raises :class:`DataError`
    naming the row. Instances compare equal when the space, the points (type-aware), ``y`` and
    the labels are equal; ``source`` is not compared.

    Attributes
    ----------
    params : tuple of dict
        ``n`` canonical points (keys in the order of ``space.names``). Do not mutate them: the
        encoding :attr:`X` is computed once, at construction.
    y : numpy.ndarray
        Read-only float64 array of shape ``(n,)``, finite.
    task : numpy.ndarray or None
        Read-only array of shape ``(n,)`` of ``str`` task labels, or None without a task column.
    space : Space
        The space the points were validated against.
    source : str
        Where the data came from (file path, ``<DataFrame>``, ...), used in messages.
    """

    params: tuple[dict[str, Any], ...]
    y: FloatArray
    task: NDArray[np.str_] | None
    space: Space
    source: str = "<data>"

    def __post_init__(self) -> None:
        self._set_up(canonical=False)

    @classmethod
    def _of_canonical(
        cls, params: Sequence[dict[str, Any]], y: Any, task: Any, space: Space, source: str
    ) -> TaskData:
        """The TaskData of points the readers already made canonical (``_convert_point``, which
        validates every value): they are not validated a second time, which took 1.7 s of the 3.2 s
        that reading 100,000 CSV rows of 4 parameters took. ``y`` and ``task`` are checked as the
        constructor checks them."""
        out = object.__new__(cls)
        for name, value in (
            ("params", params),
            ("y", y),
            ("task", task),
            ("space", space),
            ("source", source),
        ):
            object.__setattr__(out, name, value)
        out._set_up(canonical=True)
        return out

    def _set_up(self, canonical: bool) -> None:
        """Validate the fields (the points only when not ``canonical``) and store them read-only,
        with the encoding ``X`` (computed once, here)."""
        source = str(self.source)
        space = self.space
        if not isinstance(space, Space):
            raise DataError(f"{source}: space must be a Space, got {space!r}")
        points = _as_rows(self.params, "params", source)
        if canonical:
            params = points
        else:
            params = []
            for i, pt in enumerate(points, start=1):
                try:
                    params.append(space.validate(pt))
                except SpaceError as exc:
                    raise DataError(f"{source}, row {i}: {exc}") from None
        n = len(params)
        yv = self._values(self.y, n, source)
        task = None
        if self.task is not None:
            raw = self._vector(self.task, n, "task", source)
            labels = []
            for i, v in enumerate(raw, start=1):
                try:
                    labels.append(_convert_label(v))
                except _CellError as exc:
                    raise DataError(f"{source}, row {i}, task: {exc}") from None
            task = np.array(labels, dtype=str).reshape(n)
            task.setflags(write=False)
        yv.setflags(write=False)
        # (the points are canonical here: encoded without validating them again)
        X = space._encode_valid(params) if n else np.empty((0, space.dim), dtype=np.float64)
        X.setflags(write=False)
        object.__setattr__(self, "params", tuple(params))
        object.__setattr__(self, "y", yv)
        object.__setattr__(self, "task", task)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "_X", X)

    @classmethod
    def _values(cls, values: Any, n: int, source: str) -> FloatArray:
        """``y`` as a fresh float64 array of shape ``(n,)``, every value a finite real number (a
        float array is checked at once; anything else value by value, naming the first bad row)."""
        if isinstance(values, np.ndarray) and values.dtype == np.float64 and values.ndim == 1:
            if values.shape[0] != n:
                raise DataError(f"{source}: y has {values.shape[0]} values for {n} points")
            finite = np.isfinite(values)
            if finite.all():
                return values.copy()
            i = int(np.flatnonzero(~finite)[0])
            raise DataError(f"{source}, row {i + 1}, y: value {float(values[i])!r} is not finite")
        out = []
        for i, v in enumerate(cls._vector(values, n, "y", source), start=1):
            try:
                out.append(_convert_y(v))
            except _CellError as exc:
                raise DataError(f"{source}, row {i}, y: {exc}") from None
        return np.array(out, dtype=np.float64).reshape(n)

    @staticmethod
    def _vector(values: Any, n: int, what: str, source: str) -> list[Any]:
        if isinstance(values, np.ndarray):
            if values.ndim != 1:
                raise DataError(f"{source}: {what} must be 1-D with {n} values, got shape {values.shape}")
            rows = values.tolist()
        else:
            rows = _as_rows(values, what, source)
        if len(rows) != n:
            raise DataError(f"{source}: {what} has {len(rows)} values for {n} points")
        return rows

    # -- basic properties ----------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of observations."""
        return len(self.params)

    def __len__(self) -> int:
        return len(self.params)

    @property
    def tasks(self) -> list[str]:
        """Sorted unique task labels; ``[]`` without a task column."""
        return [] if self.task is None else sorted({str(t) for t in self.task})

    @property
    def X(self) -> FloatArray:
        """Encoded points, read-only float64 array of shape ``(n, space.dim)`` (``space.encode``)."""
        return self._X  # type: ignore[attr-defined,no-any-return]

    def by_task(self) -> dict[Label, tuple[FloatArray, FloatArray]]:
        """Encoded points and values per task.

        Returns
        -------
        dict
            ``{label: (X, y)}`` in sorted label order, ``X`` of shape ``(n_label, dim)`` and ``y``
            of shape ``(n_label,)`` (fresh arrays); a single key ``None`` without a task column.
        """
        if self.task is None:
            return {None: (np.array(self.X), np.array(self.y))}
        return {t: (self.X[self.task == t], self.y[self.task == t]) for t in self.tasks}

    def subset(self, rows, y=None) -> TaskData:
        """The observations at ``rows`` (integer indices, in that order), with values ``y`` instead
        of their own if given (``(len(rows),)`` finite floats, e.g. the values signed for a
        maximisation). The points were validated when this object was made, so they are not
        validated again (for 15,000 rows that took 0.35 s of every new transfer optimizer's set-up);
        ``y`` is checked for shape and finiteness."""
        idx = np.asarray(rows)
        if idx.ndim == 1 and idx.size == 0:
            idx = idx.astype(np.intp)
        if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
            raise DataError(f"{self.source}: rows must be a 1-D array of integer indices, got {rows!r}")
        if idx.size and (idx.min() < -self.n or idx.max() >= self.n):
            raise DataError(f"{self.source}: rows must be indices below {self.n}")
        if y is None:
            values = self.y[idx]
        else:
            values = np.array(y, dtype=np.float64)
            if values.shape != idx.shape:
                raise DataError(f"{self.source}: y has shape {values.shape} for {idx.size} rows")
            if not np.all(np.isfinite(values)):
                raise DataError(f"{self.source}: y must be finite (NaN or inf given)")
        values.setflags(write=False)
        out = object.__new__(TaskData)
        task = None
        if self.task is not None:
            task = self.task[idx]
            task.setflags(write=False)
        X = self.X[idx]
        X.setflags(write=False)
        for name, value in (
            ("params", tuple(self.params[i] for i in idx.tolist())),
            ("y", values),
            ("task", task),
            ("space", self.space),
            ("source", self.source),
            ("_X", X),
        ):
            object.__setattr__(out, name, value)
        return out

    def split(self, label: Label) -> TaskData:
        """The observations of one task (with their labels).

        Parameters
        ----------
        label : str or None
            One of :attr:`tasks`; ``None`` only when there is no task column (returns ``self``).

        Raises
        ------
        DataError
            Unknown label, or ``None`` for data with a task column.
        """
        if self.task is None:
            if label is None:
                return self
            raise DataError(f"{self.source}: no task column, cannot split on task {label!r}")
        if label is None or str(label) not in self.tasks:
            raise DataError(f"{self.source}: unknown task {label!r}; tasks are {self.tasks!r}")
        return self.subset(np.flatnonzero(self.task == str(label)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TaskData):
            return NotImplemented
        if self.space != other.space or self.n != other.n:
            return False
        mine = [[_canonical(v) for v in p.values()] for p in self.params]
        theirs = [[_canonical(v) for v in p.values()] for p in other.params]
        if mine != theirs or not np.array_equal(self.y, other.y):
            return False
        if self.task is None or other.task is None:
            return self.task is None and other.task is None
        return bool(np.array_equal(self.task, other.task))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        tasks = f", tasks={self.tasks!r}" if self.task is not None else ""
        return f"TaskData(n={self.n}, names={list(self.space.names)!r}{tasks}, source={self.source!r})"

    # -- constructors --------------------------------------------------------------------------
    @classmethod
    def from_csv(
        cls,
        path: str | os.PathLike[str],
        space: Space,
        x: Sequence[str] | Mapping[str, str] | None = None,
        y: str = "y",
        task: str | None = None,
        delimiter: str = ",",
        skip_incomplete: bool = False,
        outside: list[str] | None = None,
        decimal: str = ".",
    ) -> TaskData:
        """Read observations from a CSV file with a header row.

        Parameters
        ----------
        path : str or path-like
            UTF-8 file (a BOM is accepted). Header names are stripped of whitespace.
        space : Space
            Space to validate the points against.
        x : list of str or dict, optional
            Column of each parameter, in the order of ``space.names`` (default: the names
            themselves); or a dict ``{parameter name: column}`` for the renamed ones.
        y : str, default "y"
            Column of the objective values.
        task : str, optional
            Column of the task labels (stripped; read as ``str``).
        delimiter : str, default ","
            Field delimiter, e.g. ``";"``.
        decimal : {".", ","}, default "."
            The decimal mark of the file's numbers: ``","`` reads ``52,1`` as 52.1 (a spreadsheet
            in a European locale writes ``;`` between fields and ``,`` in numbers).
        skip_incomplete : bool, default False
            Leave out the rows without a value for every parameter (an empty cell, ``NA`` or
            ``null`` in a parameter column, or a parameter without a column; in a conditional
            ``space``, every parameter active at the row), instead of refusing them: the rows of a
            conditional search space (an Optuna study's ``trials_dataframe()``) that belong to
            another branch than ``space``. Their ``y`` and ``task`` cells are not read. The result
            holds no row when every row is left out.
        outside : list, optional
            When given, rows with a value outside the range of its parameter (out of its bounds, off
            its grid, not one of its choices) are left out instead of refused, and described in this
            list (``"file, row 3 (line 4), column 'x': ..."``), for the caller to report: the rows of
            a conditional search space whose branches give a parameter other ranges
            (:func:`warmbo.prior.subspace_prior`). A cell that is not a number is still refused. The
            result holds no row when every row is left out.

        Returns
        -------
        TaskData
            ``source`` is ``str(path)``.

        Raises
        ------
        DataError
            The file does not exist or is a folder (:class:`MissingFileError`, also a
            ``FileNotFoundError``); empty file, no data rows, missing or ambiguous columns, rows
            with more non-empty fields than the header, and any invalid cell (non-number, empty
            parameter cell, NaN/inf ``y``, out of bounds, unknown category, ...). Messages name the
            file, the row (1-based data row and line of the file) and the column. Rows whose fields
            are all empty are skipped.

        Warns
        -----
        UnfinishedRowsWarning
            Rows with an empty ``y`` are trials without a value (failed or unfinished), left out and
            counted (by state, when a ``state`` column gives it: Optuna's ``FAIL``, ``RUNNING``;
            warmbo's ``failed``, ``pending``). An empty ``y`` in a row whose ``state`` says complete
            is refused, as is any ``y`` that is not a number.
        """
        source, params, ys, labels = _read_csv(
            path, space, x, y, task, delimiter, skip_incomplete, outside, decimal=decimal
        )
        labels_or_none = np.array(labels) if task is not None else None
        return cls._of_canonical(tuple(params), np.array(ys, dtype=np.float64), labels_or_none, space, source)

    @classmethod
    def from_dataframe(
        cls,
        df: Any,
        space: Space,
        x: Sequence[Any] | Mapping[str, Any] | None = None,
        y: Any = "y",
        task: Any = None,
        source: str = "<DataFrame>",
        skip_incomplete: bool = False,
        outside: list[str] | None = None,
    ) -> TaskData:
        """Read observations from a DataFrame (pandas is not required).

        ``df`` is used duck-typed: its ``columns`` and ``to_dict("records")`` (one dict per row),
        and, if present, an ``index`` of the same length whose labels are shown in messages.
        Column labels are matched exactly (not stripped). Parameters as in :meth:`from_csv`;
        string cells are converted the same way, other values are validated as they are. A missing
        value (None, NaN, pandas' NA, a blank string) is what an empty cell is in a CSV file: in a
        parameter column, an error (or, with ``skip_incomplete``, the row left out, as are ``NA``,
        ``null`` and the other markers of :data:`NO_VALUE` that are not a choice); in ``y``, a
        trial without a value (see Warns). Rows are numbered from 1 in messages.

        Raises
        ------
        DataError
            As :meth:`from_csv`; ``df`` without ``columns``/``to_dict`` is an error too. An infinite
            ``y`` is refused (not finite), as is a missing one in a row whose ``state`` says complete.

        Warns
        -----
        UnfinishedRowsWarning
            As :meth:`from_csv`: rows whose ``y`` is missing and whose ``state`` column is not
            complete (Optuna's ``trials_dataframe()``: NaN values of ``FAIL``, ``RUNNING`` and
            ``PRUNED`` trials), or that have no ``state`` column, are trials without a value, left
            out and counted.
        """
        params, ys, labels = _read_dataframe(df, space, x, y, task, source, skip_incomplete, outside)
        return cls._of_canonical(
            tuple(params), np.array(ys, dtype=np.float64), labels if task is not None else None, space, source
        )

    @classmethod
    def from_numpy(
        cls,
        X: ArrayLike,
        y: ArrayLike,
        space: Space,
        task: ArrayLike | None = None,
        source: str = "<array>",
        outside: list[str] | None = None,
    ) -> TaskData:
        """Observations from raw (not encoded) numeric arrays.

        Parameters
        ----------
        X : array_like
            ``(n, len(space))`` raw values, columns in the order of ``space.names`` (a 1-D array
            is ``n`` values of a one-parameter space). Only :class:`~warmbo.space.Float` and
            :class:`~warmbo.space.Int` parameters; use :meth:`from_records` with categoricals.
        y : array_like
            ``(n,)`` finite values.
        space : Space
        task : array_like, optional
            ``(n,)`` task labels (``str`` or ``int``).
        source : str, default "<array>"
            Name used in messages.
        outside : list, optional
            Rows with a value outside its parameter's range are left out and described in this
            list, as :meth:`from_csv` does.

        Raises
        ------
        DataError
            Categorical parameters, wrong shapes, no rows, or invalid values (row and column named).
        """
        cat = [p.name for p in space.params if not isinstance(p, (Float, Int))]
        if cat:
            raise DataError(
                f"{source}: from_numpy supports only Float and Int parameters; {cat!r} are categorical, "
                "use TaskData.from_records with a list of dicts instead"
            )
        A = np.asarray(X)
        if A.ndim == 1 and len(space) == 1:
            A = A.reshape(-1, 1)
        if A.ndim != 2 or A.shape[1] != len(space):
            raise DataError(
                f"{source}: X must have shape (n, {len(space)}) (columns {list(space.names)!r}), "
                f"got shape {A.shape}"
            )
        if A.shape[0] == 0:
            raise DataError(f"{source}: no data rows")
        names = space.names
        params = [
            _convert_point(
                space, dict(zip(names, row, strict=True)), names, f"{source}, row {i + 1}", outside
            )
            for i, row in enumerate(A.tolist())
        ]
        return cls._kept(params, y, task, space, source)

    @classmethod
    def from_records(
        cls,
        records: Iterable[Mapping[str, Any]],
        y: ArrayLike,
        space: Space,
        task: ArrayLike | None = None,
        source: str = "<records>",
        outside: list[str] | None = None,
    ) -> TaskData:
        """Observations from a list of parameter dicts (e.g. ``[t.params for t in trials]``).

        Each record must hold every name of the space; other keys are ignored (as extra CSV
        columns are). String values are converted as CSV cells are (``"32"`` for a choice ``32``).

        Parameters
        ----------
        records : iterable of Mapping
            ``n`` points.
        y : array_like
            ``(n,)`` finite values.
        space : Space
        task : array_like, optional
            ``(n,)`` task labels (``str`` or ``int``).
        source : str, default "<records>"
            Name used in messages.
        outside : list, optional
            Records with a value outside its parameter's range are left out and described in this
            list, as :meth:`from_csv` does.
        """
        rows = _as_rows(records, "records", source)
        if not rows:
            raise DataError(f"{source}: no data rows")
        names = space.names
        # the names a record must hold: every one, or in a conditional space those active everywhere
        needed = _always(space) if space.is_conditional else set(names)
        params = []
        for i, rec in enumerate(rows, start=1):
            where = f"{source}, row {i}"
            if not isinstance(rec, Mapping):
                raise DataError(
                    f"{where}: a record must be a mapping of parameter name to value, got {rec!r}"
                )
            missing = [n for n in names if n not in rec and n in needed]
            if missing:
                raise DataError(f"{where}: missing parameter(s) {missing!r}")
            params.append(_convert_point(space, rec, names, where, outside))
        return cls._kept(params, y, task, space, source)

    @classmethod
    def _kept(
        cls,
        params: list[dict[str, Any] | None],
        y: ArrayLike,
        task: ArrayLike | None,
        space: Space,
        source: str,
    ) -> TaskData:
        """The TaskData of the rows whose point is not None (None: left out, outside the space)."""
        if all(p is not None for p in params):
            return cls._of_canonical(tuple(params), y, task, space, source)  # type: ignore[arg-type]
        keep = [k for k, p in enumerate(params) if p is not None]
        ys = [cls._vector(y, len(params), "y", source)[k] for k in keep]
        labels = None if task is None else [cls._vector(task, len(params), "task", source)[k] for k in keep]
        return cls._of_canonical(tuple(params[k] for k in keep), ys, labels, space, source)  # type: ignore[arg-type]

    # -- writing -------------------------------------------------------------------------------
    def to_csv(
        self, path: str | os.PathLike[str], y: str = "y", task: str = "task", delimiter: str = ","
    ) -> None:
        """Write a CSV file that :meth:`from_csv` reads back equal to ``self``.

        Columns: the space's names, then ``y``, then ``task`` (only with a task column). Floats
        are written with ``repr`` (exact round trip). Read it back with
        ``TaskData.from_csv(path, space, y=y, task=task, delimiter=delimiter)``
        (``task=None`` when there is no task column).

        Raises
        ------
        DataError
            Column names that collide, or values whose text would read back differently (a task
            label with surrounding whitespace; a categorical's choices written alike, ``"1"`` and
            ``1``, are refused by the space itself).
        """
        names = list(self.space.names)
        header = [*names, y] + ([task] if self.task is not None else [])
        for c in header:
            if header.count(c) > 1:
                raise DataError(f"{self.source}: cannot write column {c!r} twice; choose another y/task name")
        for p in self.space.params:
            if isinstance(p, Categorical):
                for v in {_canonical(pt[p.name]): pt[p.name] for pt in self.params if p.name in pt}.values():
                    try:
                        back = _convert_value(p, _text(v))
                    except (_CellError, SpaceError):
                        back = None
                    if back is None or _canonical(back) != _canonical(v):
                        raise DataError(
                            f"{self.source}: parameter {p.name!r}: value {v!r} would be read back as "
                            f"{back!r} from its text {_text(v)!r}"
                        )
        if self.task is not None:
            for t in self.tasks:
                if t != t.strip():
                    raise DataError(f"{self.source}: task label {t!r} has surrounding whitespace")
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f, delimiter=delimiter)
            writer.writerow(header)
            for i, pt in enumerate(self.params):
                row = [_text(pt[n]) if n in pt else "" for n in names] + [repr(float(self.y[i]))]
                if self.task is not None:
                    row.append(str(self.task[i]))
                writer.writerow(row)


#: the columns of :func:`trials_to_csv` around the parameters and the value
TRIAL_COLUMNS = ("trial", "state")
TRIAL_TAIL = ("worker", "created", "completed", "error", "amended", "note")


def _read_csv(
    path: str | os.PathLike[str],
    space: Space | None,
    x: Sequence[str] | Mapping[str, str] | None = None,
    y: str = "y",
    task: str | None = None,
    delimiter: str = ",",
    skip_incomplete: bool = False,
    outside: list[str] | None = None,
    warn: bool = True,
    decimal: str = ".",
) -> tuple[str, list[dict[str, Any]], list[float], list[str]]:
    """:meth:`TaskData.from_csv`'s reading: the file's name as a source, and the points, values and
    labels of its rows (``warn``: the rows left out without a value said in an
    :class:`UnfinishedRowsWarning`). Without a ``space``, only what needs none is checked (the
    file, its header, its ``y`` and ``task`` columns, the shape of its rows: :func:`_check_csv`)."""
    source = os.fspath(path)
    source = source.decode() if isinstance(source, bytes) else source
    if not os.path.isfile(source):
        what = "is a folder, not a CSV file" if os.path.isdir(source) else "does not exist"
        raise MissingFileError(f"{source}: {what}")
    if decimal not in (".", ","):
        raise DataError(f"{source}: decimal must be '.' or ',', got {decimal!r}")
    if decimal == delimiter:
        raise DataError(
            f"{source}: the decimal mark {decimal!r} is also the field delimiter: give delimiter=';'"
        )
    cols = _columns(() if space is None else space.names, x, y, task, source)
    optional = _optional_columns(space, cols)
    kinds = [] if space is None else [p.kind for p in space.params]
    params: list[dict[str, Any]] = []
    ys: list[float] = []
    labels: list[str] = []
    incomplete = 0  # rows left out (skip_incomplete)
    unfinished: dict[str, int] = {}  # rows of trials that did not complete, by state
    left_out = 0  # rows outside the space's ranges (outside)
    number = 0  # data rows read so far (blank rows are not counted)
    reader: csv.DictReader[str] | None = None
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f, delimiter=delimiter)
            header = None
            for raw in reader.reader:
                if any(c.strip() for c in raw):
                    header = raw
                    break
            if header is None:
                raise DataError(f"{source}: empty file")
            names = [h.strip().lstrip("\ufeff").strip() for h in header]
            # warmbo's own history.to_dataframe() saved as CSV: its 'value', as the DataFrame itself
            # is read (a user test: the frame worked as a prior, its CSV did not)
            y = _history_y(names, y)
            needed = [*(c for c in cols if c not in optional), y] + ([task] if task is not None else [])
            numeric = [c for c, kind in zip(cols, kinds, strict=False) if kind in ("float", "int")] + [y]
            for c in needed:
                if names.count(c) > 1:
                    raise DataError(f"{source}: duplicate column {c!r} in the header")
            absent = [c for c in cols if c not in names] if skip_incomplete else []
            pairs = list(zip(space.params if space is not None else [None] * len(cols), cols, strict=True))
            try:
                _check_missing(source, [c for c in needed if c not in absent], names)
            except DataError as exc:
                hint, shell = _delimiter_hint(names, delimiter), _delimiter_hint(names, delimiter, True)
                if not hint and y not in names:
                    # (y= is TaskData.from_csv's: prior="file.csv" takes none, a user test tried)
                    optuna_like = "value" in names and any(c.startswith("params_") for c in names)
                    hint = (
                        "; this looks like Optuna's trials_dataframe() saved as CSV: read it with "
                        "wb.TaskData.from_csv(path, space, x={'NAME': 'params_NAME', ...}, y='value'), or "
                        "rename its columns ('params_' off the parameters, 'value' to 'y')"
                        if optuna_like
                        else "; name the column of the values 'y', or read the file with "
                        "wb.TaskData.from_csv(path, space, y='COLUMN') and give that"
                    )
                    shell = "; name the column of the values with --prior-y COLUMN" + (
                        " (--prior-y value --prior-rename params_NAME=NAME for Optuna's export)"
                        if optuna_like
                        else ""
                    )
                raise DataError(f"{exc}{hint}", shell=f"{exc}{shell}") from None
            reader.fieldnames = names
            for row in reader:
                extra = row.get(None) or []  # type: ignore[call-overload]
                values = [v for k, v in row.items() if k is not None and v is not None]
                if not any(v.strip() for v in [*values, *extra]):
                    continue  # blank row such as ",,,"
                number += 1
                where = f"{source}, row {number} (line {reader.line_num})"
                if any(v.strip() for v in extra):
                    nfields = len(names) + len(extra)
                    raise DataError(f"{where}: {nfields} fields but the header has {len(names)}")
                if decimal == ",":  # (52,1 as 52.1: in the numbers' columns, not a category "1,5")
                    for c in numeric:
                        cell = row.get(c)
                        if isinstance(cell, str) and _DECIMAL_COMMA.fullmatch(cell.strip()):
                            row[c] = cell.strip().replace(",", ".")
                if skip_incomplete and (
                    _lacks_active(space, row, cols)
                    if space is not None and space.is_conditional
                    else absent or any(row.get(c) is not None and _absent(q, row[c]) for q, c in pairs)
                ):
                    incomplete += 1
                    continue
                for c in needed:
                    if row[c] is None:
                        raise DataError(f"{_at(where, c)}: missing value (fewer fields than the header)")
                state = _unfinished_state(row, y)
                if state is not None:  # a failed or running trial: no observation to read
                    unfinished[state] = unfinished.get(state, 0) + 1
                    continue
                point = {} if space is None else _convert_point(space, row, cols, where, outside)
                if point is None:  # (outside the space's ranges: described in ``outside``)
                    left_out += 1
                    continue
                params.append(point)
                try:
                    ys.append(_convert_y(row[y]))
                except _CellError as exc:
                    raise DataError(f"{_at(where, y)}: {exc}{_unfinished_hint(row)}") from None
                if task is not None:
                    try:
                        labels.append(_convert_label(row[task].strip()))
                    except _CellError as exc:
                        raise DataError(f"{_at(where, task)}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{source}: not a UTF-8 text file ({exc}); if a spreadsheet wrote it, save it again "
            'as "CSV UTF-8" (Excel: File > Save As > CSV UTF-8)'
        ) from None
    except csv.Error as exc:
        line = f", line {reader.line_num}" if reader is not None else ""
        raise DataError(f"{source}{line}: malformed CSV ({exc})") from None
    except DataError as exc:
        if decimal == "," or "decimal comma" not in str(exc) or type(exc) is not DataError:
            raise
        # (a user test had to sed a lab file's decimal commas away: the reading can take them)
        raise DataError(
            f"{exc}; or read the file's decimal commas as they are: TaskData.from_csv(path, space, "
            f"delimiter={delimiter!r}, decimal=',')",
            shell=f"{exc.shell or exc}; or read the file's decimal commas as they are: --prior-decimal ','",
        ) from None
    if warn:
        _warn_unfinished(source, unfinished, y)
    if not ys and not incomplete and not left_out:
        raise _no_rows(source, unfinished)
    return source, params, ys, labels


def _read_dataframe(
    df: Any,
    space: Space | None,
    x: Sequence[Any] | Mapping[str, Any] | None = None,
    y: Any = "y",
    task: Any = None,
    source: str = "<DataFrame>",
    skip_incomplete: bool = False,
    outside: list[str] | None = None,
    warn: bool = True,
) -> tuple[list[dict[str, Any]], list[float], list[str]]:
    """:meth:`TaskData.from_dataframe`'s reading, as :func:`_read_csv` reads a file (without a
    ``space``, only what needs none is checked: :func:`_check_dataframe`)."""
    if not hasattr(df, "columns") or not callable(getattr(df, "to_dict", None)):
        raise DataError(f"{source}: expected a DataFrame (with .columns and .to_dict), got {type(df)!r}")
    found = list(df.columns)
    y = _history_y(found, y)
    cols = _columns(() if space is None else space.names, x, y, task, source)
    optional = _optional_columns(space, cols)
    needed = [*(c for c in cols if c not in optional), y] + ([task] if task is not None else [])
    for c in needed:
        if found.count(c) > 1:
            raise DataError(f"{source}: duplicate column {c!r}")
    absent = [c for c in cols if c not in found] if skip_incomplete else []
    pairs = list(zip(space.params if space is not None else [None] * len(cols), cols, strict=True))
    try:
        _check_missing(source, [c for c in needed if c not in absent], found)
    except DataError as exc:
        raise DataError(f"{exc}{_optuna_hint(found, y)}") from None
    rows = list(df.to_dict("records"))
    if not rows:
        raise DataError(f"{source}: no data rows")
    index = getattr(df, "index", None)
    try:
        index = list(index) if index is not None else None
    except TypeError:
        index = None
    if index is not None and len(index) != len(rows):
        index = None
    params: list[dict[str, Any]] = []
    ys: list[float] = []
    labels: list[str] = []
    incomplete = 0  # rows left out (skip_incomplete)
    unfinished: dict[str, int] = {}  # rows of trials that did not complete, by state
    left_out = 0  # rows outside the space's ranges (outside)
    for i, row in enumerate(rows):
        where = f"{source}, row {i + 1}" + (f" (index {index[i]!r})" if index is not None else "")
        if skip_incomplete and (
            _lacks_active(space, row, cols)
            if space is not None and space.is_conditional
            else absent or any(_absent(q, row.get(c)) for q, c in pairs)
        ):
            incomplete += 1
            continue
        state = _unfinished_state(row, y)
        if state is not None:  # a failed or running trial: no observation to read
            unfinished[state] = unfinished.get(state, 0) + 1
            continue
        point = {} if space is None else _convert_point(space, row, cols, where, outside)
        if point is None:  # (outside the space's ranges: described in ``outside``)
            left_out += 1
            continue
        params.append(point)
        if _no_value(row[y]):  # (the row's state says complete)
            raise DataError(f"{_at(where, y)}: missing value ({row[y]!r}) in a row whose 'state' is complete")
        try:
            ys.append(_convert_y(row[y]))
        except _CellError as exc:
            raise DataError(f"{_at(where, y)}: {exc}{_unfinished_hint(row)}") from None
        if task is not None:
            value = row[task]
            try:
                labels.append(_convert_label(value.strip() if isinstance(value, str) else value))
            except _CellError as exc:
                raise DataError(f"{_at(where, task)}: {exc}") from None
    if warn:
        _warn_unfinished(source, unfinished, y)
    if not ys and not incomplete and not left_out:
        raise _no_rows(source, unfinished)
    return params, ys, labels


def _check_csv(
    path: str | os.PathLike[str], y: str = "y", task: str | None = None, delimiter: str = ","
) -> None:
    """Refuse, without a space, a CSV file that :meth:`TaskData.from_csv` refuses in any space, with
    its message: a missing, empty or malformed file, no ``y`` column, a ``y`` that is not a finite
    number (a missing one left out as a trial without a value), an empty task label, no row with a
    value. Nothing is warned (the reading that follows warns)."""
    _read_csv(path, None, None, y, task, delimiter, warn=False)


def _check_dataframe(df: Any, y: Any = "y", task: Any = None, source: str = "<DataFrame>") -> None:
    """:func:`_check_csv` for a DataFrame (:meth:`TaskData.from_dataframe`)."""
    _read_dataframe(df, None, None, y, task, source, warn=False)


def read_points(path: str | os.PathLike[str], space: Space, delimiter: str = ",") -> list[dict[str, Any]]:
    """Configurations to evaluate, without values: a CSV file whose header names every parameter of
    ``space`` (other columns, a ``y`` or ``trial`` of an exported study, are ignored, its ``state``
    too: every row is a configuration; cells converted as the readers' are: module docstring), or a
    ``.json`` file holding one object or a list of objects (parameter name to value; other keys are
    ignored). Returns the validated points in the file's order; raises
    :class:`DataError` naming the file, row and column of a bad value, or an empty file."""
    import json

    source = os.fspath(path)
    if not os.path.isfile(source):
        what = "is a folder, not a file" if os.path.isdir(source) else "does not exist"
        raise MissingFileError(f"{source}: {what}")
    if source.lower().endswith(".json"):
        try:
            with open(source, encoding="utf-8-sig") as f:
                data = json.load(f)
        except UnicodeDecodeError as exc:
            raise DataError(f"{source}: not a UTF-8 text file ({exc}); save it again as UTF-8") from None
        except ValueError as exc:
            raise DataError(f"{source}: not JSON ({exc})") from None
        records = [data] if isinstance(data, Mapping) else data
        if not isinstance(records, list) or not all(isinstance(r, Mapping) for r in records):
            raise DataError(
                f"{source}: expected a JSON object or a list of objects (parameter name to value)"
            )
        if not records:
            raise DataError(f"{source}: the list holds no configuration")
        points = []
        # (a conditional parameter may be absent: validate says whether it is active)
        always = _always(space) if space.is_conditional else set(space.names)
        needed = [n for n in space.names if n in always]
        for i, record in enumerate(records, start=1):
            # keys that are no parameter (a "y", a "trial") are ignored, as a CSV file's other columns
            missing = [name for name in needed if name not in record]
            if missing:
                others = [key for key in record if key not in space.names]
                raise DataError(
                    f"{source}, configuration {i}: no value for {', '.join(map(repr, missing))}"
                    + (f" (it has {', '.join(map(repr, others))})" if others else "")
                )
            try:
                points.append(space.validate({name: record[name] for name in space.names if name in record}))
            except SpaceError as exc:
                raise DataError(f"{source}, configuration {i}: {exc}") from None
        return points
    points = []
    try:
        with open(source, newline="", encoding="utf-8-sig") as f:
            reader = csv.reader(f, delimiter=delimiter)
            rows = [(reader.line_num, row) for row in reader if any(c.strip() for c in row)]
    except UnicodeDecodeError as exc:  # (a user test: the codec's words alone, naming no file)
        raise DataError(
            f"{source}: not a UTF-8 text file ({exc}); if a spreadsheet wrote it, save it again "
            'as "CSV UTF-8" (Excel: File > Save As > CSV UTF-8)'
        ) from None
    except csv.Error as exc:
        raise DataError(f"{source}: malformed CSV ({exc})") from None
    if not rows:
        raise DataError(f"{source}: empty file")
    names = [h.strip() for h in rows[0][1]]
    try:
        optional = _optional_columns(space, space.names)
        _check_missing(source, [n for n in space.names if n not in optional], names)
    except DataError as exc:
        # (the CLI's enqueue --file: its option is --delimiter; a user test was told --prior-delimiter)
        hint = _delimiter_hint(names, delimiter, shell=True, option="--delimiter")
        raise DataError(f"{exc}{hint}") from None
    for c in space.names:
        if names.count(c) > 1:
            raise DataError(f"{source}: duplicate column {c!r} in the header")
    for number, (line, raw) in enumerate(rows[1:], start=1):
        where = f"{source}, row {number} (line {line})"
        if len(raw) != len(names):
            raise DataError(f"{where}: {len(raw)} cells under a header of {len(names)}")
        row = dict(zip(names, (c.strip() for c in raw), strict=True))
        points.append(_convert_point(space, row, space.names, where))
    if not points:
        raise DataError(f"{source}: a header and no configuration")
    return points


def trials_to_csv(
    path: str | os.PathLike[str] | TextIO,
    trials: Sequence[Any],
    space: Space,
    task_names: Sequence[str] = (),
    amendments: Mapping[int, list[dict]] | None = None,
    notes: Mapping[int, str] | None = None,
) -> str:
    """Write trials as CSV, one row per trial: ``trial``, ``state``, one column per parameter (the
    space's names), ``y`` (the value; a multi-task trial's scalarised utility, then one column per
    task), ``worker``, ``created`` and ``completed`` (local ISO 8601 times with their UTC offset),
    ``error`` and ``amended`` (what an amended trial held before, from ``amendments``:
    :meth:`warmbo.storage.Study.amendments`, worded by :func:`warmbo.trial.amendment_note`) and
    ``note`` (a note kept with the trial, from ``notes``: :meth:`warmbo.storage.Study.notes`). Floats
    are written with ``repr`` (exact round trip); a pending or failed trial's ``y`` is empty. The
    complete rows read back as prior data: ``TaskData.from_csv(path, space, y=...)`` with the
    returned name of the value column.

    A task named like a parameter has the column ``value_<name>``. A fixed column whose name a
    parameter or task already has is renamed: the value column becomes ``value`` (then
    ``warmbo_y``), the others ``warmbo_<name>``. The file is written next to ``path``
    and renamed into place, so an interrupted export leaves any earlier file whole. ``path`` may also
    be an open text stream (``sys.stdout``): the rows are written to it as they are made.

    Returns
    -------
    str
        The name of the value column (``"y"`` unless a parameter or task is named so).
    """
    from datetime import datetime

    # a task named like a parameter: its column is value_<name>, as in History.to_dataframe (export
    # refused the whole study, which a MultiTaskOptimizer had accepted: a multi-task user test)
    columns = task_columns(task_names, space.names)
    taken = {*space.names, *columns}

    def free(*names: str) -> str:
        name = next((n for n in names if n not in taken), None)
        name = name if name is not None else "warmbo_" + names[0]
        taken.add(name)
        return name

    head = [free(c, f"warmbo_{c}") for c in TRIAL_COLUMNS]
    value = free("y", "value", "warmbo_y")
    tail = [free(c, f"warmbo_{c}") for c in TRIAL_TAIL]
    header = [*head, *space.names, value, *columns, *tail]

    def when(t: float | None) -> str:
        return "" if t is None else datetime.fromtimestamp(t).astimezone().isoformat(timespec="seconds")

    amended = amendments or {}
    kept = notes or {}

    def write(f: TextIO) -> None:
        writer = csv.writer(f)
        writer.writerow(header)
        for t in trials:
            values = list(t.values) if t.values is not None else [None] * len(task_names)
            writer.writerow(
                [
                    t.id,
                    t.state,
                    *(_text(t.params[n]) if n in t.params else "" for n in space.names),
                    "" if t.value is None else repr(float(t.value)),
                    *("" if v is None else repr(float(v)) for v in values),
                    t.worker or "",
                    when(t.created),
                    when(t.completed),
                    t.error or "",
                    amendment_note(amended[t.id], task_names) if t.id in amended else "",
                    kept.get(t.id, ""),
                ]
            )

    if hasattr(path, "write"):
        write(path)
        return value
    target = os.fspath(path)
    partial = f"{target}.partial"
    try:
        with open(partial, "w", newline="", encoding="utf-8") as f:
            write(f)
        os.replace(partial, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.remove(partial)
        raise DataError(f"cannot write {target}: {exc.strerror or exc}") from None
    return value


def _text(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)
