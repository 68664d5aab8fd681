"""Input validation shared by kernels, models and acquisitions.

Every public entry point converts user arrays here, so the rules are the same everywhere: float64,
finite, the expected shape, and an error (``ValueError``) that names the argument and says which
shape was expected and which was given.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "NonNumericError",
    "is_dataframe",
    "as_points",
    "as_training_points",
    "as_values",
    "as_noise",
    "check_positive",
    "not_a_real_number",
]


class NonNumericError(ValueError, TypeError):
    """An array argument that is not numbers (a dict, text, None inside it). A ``ValueError``, as
    every validation error here, and a ``TypeError``, as numpy's own conversion error (and
    scikit-learn's, which comes from it) is: code that catches either keeps working."""


def is_dataframe(obj) -> bool:
    """A pandas-like DataFrame (duck-typed, as :meth:`warmbo.data.TaskData.from_dataframe` reads it)."""
    return hasattr(obj, "columns") and callable(getattr(obj, "to_dict", None))


def _is_sparse(X) -> bool:
    """A scipy.sparse matrix or array (read from its type's module: scipy is not imported here)."""
    return type(X).__module__.startswith("scipy.sparse")


def _is_complex(X) -> bool:
    """An array-like whose dtype (or one of a data frame's column dtypes) is complex."""
    dtype = getattr(X, "dtype", None)
    if dtype is not None:
        return getattr(dtype, "kind", "") == "c"
    dtypes = getattr(X, "dtypes", None)  # a pandas DataFrame: one dtype per column
    if dtypes is None:
        return False
    return any(getattr(d, "kind", "") == "c" for d in getattr(dtypes, "values", ()))


def _as_float64(X, name: str) -> np.ndarray:
    """``X`` as a float64 array, refusing what ``np.asarray`` would mangle or misread: complex values
    (numpy drops the imaginary part with a warning) and sparse matrices (read as one object)."""
    if type(X) is np.ndarray:
        if X.dtype.kind == "c":
            raise ValueError(f"{name} is complex: Complex data not supported, pass real numbers")
    elif _is_sparse(X):
        raise ValueError(
            f"{name} is a sparse matrix: sparse input is not supported, pass a dense array ({name}.toarray())"
        )
    elif _is_complex(X):
        raise ValueError(f"{name} is complex: Complex data not supported, pass real numbers")
    try:
        return np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        if "not 'complex'" in str(exc):  # a list of Python complex numbers
            raise ValueError(f"{name} is complex: Complex data not supported, pass real numbers") from None
        raise NonNumericError(f"{name} must be a numeric array: {exc}") from None


def as_points(X, name: str = "X", dim: int | None = None, *, owner: str | None = None) -> np.ndarray:
    """Return ``X`` as a finite float64 array of shape (n, d).

    A 1-D array is read as n points of dimension 1 (convenient for 1-D problems), except when the
    expected ``dim`` is known and larger than 1: then a 1-D array of length ``dim`` is one point and
    any other length is an error rather than a guess.

    ``owner``: the name of a fitted model that expects ``dim`` features; a wrong number of columns
    is then also said in scikit-learn's words ("X has 1 features, but GP is expecting 4 features as
    input").
    """
    arr = _as_float64(X, name)
    if arr.ndim == 1:
        if dim is not None and dim != 1:
            if arr.shape[0] == dim:
                arr = arr[None, :]
                return as_points(arr, name, dim)
            raise ValueError(f"{name} must have shape (n, {dim}), got a 1-D array of shape {arr.shape}")
        arr = arr[:, None]
    elif arr.ndim != 2:
        expected = f"(n, {dim})" if dim is not None else "(n, d)"
        raise ValueError(f"{name} must have shape {expected}, got an array of shape {arr.shape}")
    if dim is not None and arr.shape[1] != dim:
        if owner is not None:
            raise ValueError(
                f"{name} must have shape (n, {dim}), got {arr.shape}: {name} has {arr.shape[1]} features, "
                f"but {owner} is expecting {dim} features as input"
            )
        raise ValueError(f"{name} must have shape (n, {dim}), got {arr.shape}")
    if not np.isfinite(arr).all():  # the method: 1.5 us less than np.all, on every kernel call
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name} contains NaN or inf (first at row {bad[0]}, column {bad[1]})")
    return arr


def as_values(y, name: str = "y", n: int | None = None) -> np.ndarray:
    """Return ``y`` as a finite float64 vector of length n."""
    if y is None:  # (np.asarray reads None as NaN; scikit-learn's words, which its checks look for)
        which = "" if name == "y" else f"{name} is None: "
        raise ValueError(f"{which}this model requires y to be passed, but the target y is None")
    arr = _as_float64(y, name)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim == 0:
        arr = arr[None]
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} must have length {n} (one value per point), got {arr.shape[0]}")
    if not np.isfinite(arr).all():
        bad = int(np.argwhere(~np.isfinite(arr))[0, 0])
        raise ValueError(f"{name} contains NaN or inf (first at index {bad})")
    return arr


def as_training_points(X, name: str = "X", dim: int | None = None) -> np.ndarray:
    """:func:`as_points` for the data a model is fitted on: at least one point and one feature
    (scikit-learn's words for the second: "0 feature(s) (shape=(12, 0)) while a minimum of 1 is
    required")."""
    arr = as_points(X, name, dim)
    if arr.shape[0] == 0:
        raise ValueError(f"{name} must contain at least one point, got shape {arr.shape}")
    if arr.shape[1] == 0:
        raise ValueError(
            f"{name} has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required: "
            "a model needs at least one input coordinate"
        )
    return arr


def as_noise(noise, n: int, name: str = "noise") -> np.ndarray:
    """Noise variances as a length-n vector: a scalar is broadcast; all must be finite and >= 0."""
    try:
        arr = np.asarray(noise, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or one number per point, got {noise!r}") from None
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    arr = as_values(arr, name, n)
    if np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative (a variance), got {arr[arr < 0][0]:g}")
    return arr


def check_seconds(value, name: str, *, or_none: bool = False) -> float:
    """A positive finite number of seconds (an int or float, not a bool) as a float, or a ValueError
    naming ``name`` (``run(timeout=)``, ``heartbeat_grace``, the CLI's ``--timeout`` and ``--max-time``)."""
    try:  # (an int too large for a float: OverflowError from isfinite)
        finite = not isinstance(value, bool) and math.isfinite(value)
    except (TypeError, OverflowError):
        finite = False
    if not isinstance(value, int | float | np.integer | np.floating) or not (finite and value > 0):
        raise ValueError(
            f"{name} must be a positive number of seconds{' or None' if or_none else ''}, got {value!r}"
        )
    return float(value)


def check_positive(value, name: str) -> np.ndarray:
    """A positive finite scalar or vector parameter as a float64 array (0-d or 1-d)."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number or vector, got {value!r}") from None
    if arr.ndim > 1 or arr.size == 0:
        raise ValueError(f"{name} must be a positive number or a 1-D vector, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return arr


def check_int(value, name: str, minimum: int | None = 1) -> int:
    """``value`` as an ``int``: a Python or numpy integer (not a bool) ``>= minimum``.

    The error names the argument: "``name`` must be a positive integer" (``minimum`` 1), "a
    non-negative integer" (0), "an integer" (None) or "an integer >= minimum".
    """
    if (
        isinstance(value, bool | np.bool_)
        or not isinstance(value, numbers.Integral)
        or (minimum is not None and value < minimum)
    ):
        wanted = {1: "a positive integer", 0: "a non-negative integer", None: "an integer"}.get(
            minimum, f"an integer >= {minimum}"
        )
        raise ValueError(f"{name} must be {wanted}, got {value!r}")
    return int(value)


def not_a_real_number(value) -> bool:
    """Whether ``value`` is text, a bool or complex, which ``float()`` would take (``float("1.5")``,
    ``float(True)``, numpy's 0-d string and bool arrays) or truncate (complex, with only a warning),
    but which an objective value never is."""
    if isinstance(value, bool | np.bool_ | str | bytes | bytearray | complex | np.complexfloating):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind in "bUSc"
