"""Source tasks for transfer models: validation and per-task standardisation, shared by all of them.

A transfer model (:class:`~warmbo.transfer.envelope.Envelope` and the baselines) is given one or
several finished source tasks as ``source=``:

- an ``(X, y)`` pair, X in the same coordinates the model will be fitted in (the optimizer fits on
  the search space's encoded unit cube, so encode source points with ``space.encode``);
- a list of such pairs (several sources);
- a :class:`~warmbo.data.TaskData` (its encoded X; one source per task label).

Each source is standardised by its own mean and standard deviation (z-scores). Sources measured on
a different scale than the target (accuracy on another data set, an older instrument) therefore
enter only through their shape, which is what every method here transfers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._moments import mean_std
from .._validation import as_points, as_values

__all__ = ["SourceTask", "as_sources", "standardise"]


@dataclass(frozen=True)
class SourceTask:
    """One source task: inputs X (n, d), raw outputs y (n,), and its standardisation."""

    X: np.ndarray
    y: np.ndarray
    mean: float
    std: float
    name: str

    @property
    def z(self) -> np.ndarray:
        """Standardised outputs ``(y - mean) / std``."""
        return (self.y - self.mean) / self.std

    def __len__(self) -> int:
        return int(self.y.shape[0])


def standardise(y: np.ndarray) -> tuple[float, float]:
    """Mean and standard deviation used for z-scores (std 1 when y is constant or has one value).

    :func:`~warmbo._moments.mean_std`, so that any finite values have both: ``np.std``
    squares them and overflowed above |y| ~ 1.3e154, which a study accepts (values up to 1.8e308), and
    such a study, or a CSV of such values, given as ``prior=`` failed every ask (hostile-input user
    test)."""
    y = np.asarray(y, dtype=np.float64)
    if not np.all(np.isfinite(y)):
        raise ValueError("source values must be finite")
    mean, std = mean_std(y)
    std = std if y.size > 1 else 1.0
    return mean, (std if std > 0 else 1.0)


def _single_source_name(data) -> str:
    """The name of a TaskData's one source task (no task column): its file's name as the command line
    names it (``prior`` for ``runs/prior.csv``, ``old`` for a study ``old.db``), ``source`` for rows
    given in memory (a user test found a single ``--prior 2026-10.csv`` shown as ``source``)."""
    from ..prior import source_label

    text = str(getattr(data, "source", "") or "")
    if not text or text.startswith("<") or "," in text:
        return "source"
    return source_label(text) or "source"


def as_sources(source, dim: int | None = None) -> list[SourceTask]:
    """Validate ``source`` (a pair, a list of pairs, or a TaskData) into a list of :class:`SourceTask`."""
    if source is None:
        raise ValueError("source is required: an (X, y) pair, a list of pairs, or a TaskData")
    if hasattr(source, "by_task"):
        items = [
            (X, y, f"task {label}" if label is not None else _single_source_name(source))
            for label, (X, y) in source.by_task().items()
        ]
    elif isinstance(source, tuple) and len(source) == 2 and not isinstance(source[0], tuple):
        items = [(source[0], source[1], "source")]
    elif isinstance(source, list | tuple) and len(source) > 0:
        if len(source) == 2 and not any(isinstance(item, tuple | list) and len(item) == 2 for item in source):
            raise ValueError(
                "source looks like a single (X, y) pair given as a list; pass a list of (X, y) pairs, "
                "[(X, y)], or the tuple (X, y)"
            )
        items = []
        for i, pair in enumerate(source):
            if not isinstance(pair, tuple | list) or len(pair) != 2:
                raise ValueError(f"source[{i}] must be an (X, y) pair")
            items.append((pair[0], pair[1], f"source[{i}]"))
    else:
        raise ValueError("source must be an (X, y) pair, a non-empty list of pairs, or a TaskData")
    tasks = []
    for X, y, name in items:
        X = as_points(X, f"{name} X", dim)
        if X.shape[0] == 0:
            raise ValueError(f"{name} is empty")
        dim = X.shape[1] if dim is None else dim
        y = as_values(y, f"{name} y", X.shape[0])
        mean, std = standardise(y)
        tasks.append(SourceTask(X, y, mean, std, name))
    return tasks
