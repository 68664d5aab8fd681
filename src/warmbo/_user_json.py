"""The JSON a person writes for the command line (a space file, ``observe --params``), checked in
their words.

The library's own checks (:mod:`warmbo.parameters`, :mod:`warmbo.space`) speak to Python callers:
``missing parameter(s) ['conc_mM']``, ``expected a real number, got '1.0' of type str``. The
command line runs these first and says the same in the words of the JSON typed: parameter names
plainly, values as JSON (``"1.0"``, ``null``, ``true``), "a number", "a whole number", "one of
...". Whether a value is taken is still decided by the library (a value it takes is never refused
here); only the wording of a refusal is this module's.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from typing import Any

from .parameters import Parameter, SpaceError

__all__ = ["as_typed", "plainly", "point_problem", "space_problem", "value_problem"]

#: what the space file's parameters hold, by type (the keys a parameter of that type takes)
_KEYS = {
    "float": ("type", "name", "low", "high", "log", "step", "when"),
    "int": ("type", "name", "low", "high", "log", "step", "when"),
    "categorical": ("type", "name", "choices", "when"),
}
_REQUIRED = {
    "float": ("name", "low", "high"),
    "int": ("name", "low", "high"),
    "categorical": ("name", "choices"),
}
#: a number written as text ("1.0"): said to be written without quotes
_NUMERAL = re.compile(r"\s*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?\s*")
_EXAMPLE = '{"type": "float", "name": "temp_C", "low": 20, "high": 80}'


def as_typed(value: Any) -> str:
    """``value`` as JSON writes it (``"1.0"``, ``null``, ``true``, ``[1]``), as the person typed it."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        return str(value)


def _number(value: float | int) -> str:
    """A bound as people write it: ``10``, not ``10.0``."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e16 else repr(float(value))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _quotes_hint(value: Any) -> str:
    return " (written without quotes)" if isinstance(value, str) and _NUMERAL.fullmatch(value) else ""


def _names(names) -> str:
    return ", ".join(names)


def _unknown_names(unknown: list[str], known: tuple[str, ...], what: str) -> str:
    """``unknown`` names, each with the known name it looks like (another case, a typo) if any."""
    parts = []
    for name in unknown:
        close = [k for k in known if k.lower() == str(name).lower()] or difflib.get_close_matches(
            str(name), known, n=1
        )
        parts.append(f"{name} (did you mean {close[0]}?)" if close else str(name))
    return f"{what} {_names(parts)}"


def value_problem(p: Parameter, value: Any) -> str | None:
    """What is wrong with ``value`` for parameter ``p``, in the user's words; None if ``p`` takes it."""
    try:
        p.validate(value)
        return None
    except SpaceError as exc:
        library = str(exc)
    shown = as_typed(value)
    if p.kind == "categorical":
        choices = ", ".join(as_typed(c) for c in p.choices)  # type: ignore[attr-defined]
        hint = " (written without quotes)" if any(as_typed(c) == value for c in p.choices) else ""  # type: ignore[attr-defined]
        return f"{p.name} must be one of {choices}, got {shown}{hint}"
    number = "a whole number" if p.kind == "int" else "a number"
    if not _is_number(value):
        return f"{p.name} must be {number}, got {shown}{_quotes_hint(value)}"
    if not math.isfinite(value):
        # (JSON's 1e999 is read as infinity: it said "got Infinity" of a number never typed so)
        beyond = (
            " (a number beyond about 1.8e308, e.g. 1e999, reads as infinity)" if math.isinf(value) else ""
        )
        return f"{p.name} must be a finite number, got {shown}{beyond}"
    if p.kind == "int" and not float(value).is_integer():
        return f"{p.name} must be a whole number, got {shown}"
    low, high = p.low, p.high  # type: ignore[attr-defined]
    if not low <= value <= high:
        return f"{p.name} = {shown} is outside its range, {_number(low)} to {_number(high)}"
    return plainly(library).replace(f"parameter {p.name}: ", f"{p.name}: ")  # (off a step grid)


def plainly(message: str) -> str:
    """A library message with its parameter names as typed (``parameter 'a'`` reads ``parameter a``),
    and the Python keyword ``log=True`` in the file's words."""
    message = re.sub(
        r"log=True requires low > 0, got low=(\S+)", r'"log": true needs a "low" above 0, got \1', message
    )
    return re.sub(r"parameter '([^'\n]*)'", r"parameter \1", message)


def point_problem(point: dict, space, partial: bool = False) -> str | None:
    """What is wrong with ``point`` (a JSON object of parameter values) for ``space``; None if nothing.
    ``partial``: some of the parameters (``suggest --fixed``), not every one."""
    missing = [] if partial else space.missing(point)
    unknown = [name for name in point if name not in space.names]
    if unknown:
        said = _unknown_names(unknown, space.names, "the study has no parameter")
        return f"{said}; its parameters are {_names(space.names)}"
    if missing:
        if space.is_conditional:  # (the parameters active at the point: say why they are needed)
            return (
                f"give a value for {_names(missing)} too ({'; '.join(space._why_active(n) for n in missing)})"
            )
        return f"give a value for {_names(missing)} too (every parameter: {_names(space.names)})"
    if partial and not point:
        return f"give a value for one parameter at least (of {_names(space.names)})"
    for p in space.params:
        if p.name not in point:
            continue
        problem = value_problem(p, point[p.name])
        if problem is not None:
            return problem
    return None


def _entry_problem(i: int, entry: Any) -> str | None:
    """What is wrong with parameter number ``i`` (from 1) of a space file; None if nothing seen."""
    if not isinstance(entry, dict):
        return f"parameter {i} must be an object such as {_EXAMPLE}, got {as_typed(entry)}"
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        got = as_typed(name) if "name" in entry else "none"
        return f'parameter {i} needs a "name": a text such as "temp_C", got {got}'
    kind = entry.get("type")
    if not isinstance(kind, str) or kind not in _KEYS:  # (a list is no key of _KEYS: TypeError)
        got = as_typed(kind) if "type" in entry else "none"
        close = []
        if isinstance(kind, str):  # ("Float", "integer", "choice": what other tools write)
            words = {"integer": "int", "choice": "categorical", "real": "float", "double": "float"}
            named = words.get(kind.lower(), kind.lower())
            close = [named] if named in _KEYS else difflib.get_close_matches(named, list(_KEYS), n=1)
        hint = f' (did you mean "{close[0]}"?)' if close else ""
        return f'parameter {name}: "type" must be "float", "int" or "categorical", got {got}{hint}'
    unknown = [key for key in entry if key not in _KEYS[kind]]
    if unknown:
        said = _unknown_names(unknown, _KEYS[kind], f"a {kind} parameter has no key")
        return (
            f"parameter {name}: {said}; its keys are {_names(_KEYS[kind])} (notes such as units belong in "
            "the name, e.g. temp_C)"
        )
    missing = [key for key in _REQUIRED[kind] if key not in entry]
    if missing:
        needs = _names(_REQUIRED[kind])
        return f"parameter {name}: give {_names(missing)} too (a {kind} parameter needs {needs})"
    if kind == "categorical":
        choices = entry["choices"]
        if not isinstance(choices, list):
            return f'parameter {name}: choices must be a list such as ["Pd", "Pt"], got {as_typed(choices)}'
        if not choices:
            return f"parameter {name}: choices must list at least one choice"
        for c in choices:
            if not isinstance(c, str | int | float):
                return (
                    f"parameter {name}: choice {as_typed(c)} is not a text, number, true or false; write it "
                    f'as a text (e.g. "{as_typed(c)}") and turn it back into the value in your objective'
                )
        return None
    if "log" in entry and not isinstance(entry["log"], bool):
        return f"parameter {name}: log must be true or false, got {as_typed(entry['log'])}"
    number = "a whole number" if kind == "int" else "a number"
    for key in ("low", "high", "step"):
        if key not in entry or (key == "step" and entry[key] is None and kind == "float"):
            continue
        value = entry[key]
        if not _is_number(value):
            return f"parameter {name}: {key} must be {number}, got {as_typed(value)}{_quotes_hint(value)}"
        if not math.isfinite(value):
            return f"parameter {name}: {key} must be a finite number, got {as_typed(value)}"
        if kind == "int" and not float(value).is_integer():
            return (
                f"parameter {name}: {key} of an int parameter must be a whole number, got {as_typed(value)}"
            )
    low, high = entry["low"], entry["high"]
    if low > high:
        return f"parameter {name}: low {as_typed(low)} must be below high {as_typed(high)}"
    if low == high:
        return (
            f"parameter {name}: low and high are both {as_typed(low)}, a constant: leave it out of the space "
            f'and set it in your objective, or make it {{"type": "categorical", "name": "{name}", '
            f'"choices": [{as_typed(low)}]}}'
        )
    return None


def space_problem(data: dict) -> str | None:
    """What is wrong with a space file's JSON (``{"params": [...], "candidate_points": ...}``) in the
    user's words; None if nothing seen (the library still checks the rest: ranges, grids)."""
    unknown = [key for key in data if key not in ("params", "candidate_points")]
    if unknown:
        return f'unknown key(s) {_names(unknown)}; a space file holds "params" (and "candidate_points")'
    entries = data["params"]
    if not entries:
        return f"no parameter in it: list at least one, such as {_EXAMPLE}"
    for i, entry in enumerate(entries, start=1):
        problem = _entry_problem(i, entry)
        if problem is not None:
            return problem
    names = [entry["name"] for entry in entries]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        return f"two parameters are named {_names(twice)}: give each its own name"
    points = data.get("candidate_points")
    if points is not None:
        width = len(entries)
        shape = f"a list of points, each a list of {width} number(s) (one per parameter, in their order)"
        if not isinstance(points, list) or not points:
            return f"candidate_points must be {shape}, got {as_typed(points)}"
        for row in points:
            if not isinstance(row, list) or len(row) != width or not all(_is_number(v) for v in row):
                return f"candidate_points must be {shape}; one is {as_typed(row)}"
    return None
