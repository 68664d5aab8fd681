"""Input validation shared by kernels, models and acquisitions.

Every public entry point converts user arrays here, so the rules are the same everywhere: float64,
finite, the expected shape, and an error (``ValueError``) that names the argument and says which
shape was expected and which was given.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["as_points", "as_values", "as_noise", "check_positive", "not_a_real_number"]


def as_points(X, name: str = "X", dim: int | None = None) -> np.ndarray:
    """Return ``X`` as a finite float64 array of shape (n, d).

    A 1-D array is read as n points of dimension 1 (convenient for 1-D problems), except when the
    expected ``dim`` is known and larger than 1: then a 1-D array of length ``dim`` is one point and
    any other length is an error rather than a guess.
    """
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array: {exc}") from None
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
        raise ValueError(f"{name} must have shape (n, {dim}), got {arr.shape}")
    if not np.isfinite(arr).all():  # the method: 1.5 us less than np.all, on every kernel call
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name} contains NaN or inf (first at row {bad[0]}, column {bad[1]})")
    return arr


def as_values(y, name: str = "y", n: int | None = None) -> np.ndarray:
    """Return ``y`` as a finite float64 vector of length n."""
    try:
        arr = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array: {exc}") from None
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
