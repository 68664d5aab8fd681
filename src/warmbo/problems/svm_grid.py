"""An SVM meta-data set built by this project: one fixed grid of an RBF SVC on 25 real data sets.

Issue 14's second transfer benchmark, next to HPOBench's MLP grids (:mod:`.hpobench`). The table was
made by ``bench/metadata/make_svm_grid.py`` (its docstring lists the data sets, the preprocessing and
the grid) and is stored in ``bench/metadata/svm_grid.npz`` (tens of kB): for every task, the 3-fold
cross-validated balanced accuracy of 288 configurations of ``StandardScaler -> SVC(kernel="rbf")``,

- ``C`` in ``10**linspace(-2, 3, 12)`` (log scale),
- ``gamma_scale`` ``g`` in ``10**linspace(-3, 2, 12)`` (log scale), the SVC's ``gamma = g / p`` for
  ``p`` standardised features (``g = 1`` is scikit-learn's ``gamma="scale"``),
- ``balanced`` in {0, 1}: ``class_weight`` None or ``"balanced"``.

As with HPOBench, an evaluation returns one fold's score, the fold drawn from ``(seed,
configuration)``; the *truth* for regrets is the mean over the 3 folds; the search space is the
finite grid (every task shares it). :func:`svm_grid_sources` makes every other task a finished random
search of ``n_source`` configurations.

The file is found at ``$WARMBO_SVM_GRID`` or in the source checkout's ``bench/metadata/``.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np

from .._validation import check_int
from ..space import Float, Space

__all__ = [
    "SVMGridObjective",
    "SVMGridTable",
    "load_svm_grid",
    "svm_grid_path",
    "svm_grid_sources",
    "svm_grid_tasks",
]

_DEFAULT = Path(__file__).resolve().parents[3] / "bench" / "metadata" / "svm_grid.npz"


def svm_grid_path() -> Path:
    """Where the table is read from: ``$WARMBO_SVM_GRID`` or ``bench/metadata/svm_grid.npz``."""
    return Path(os.environ.get("WARMBO_SVM_GRID", _DEFAULT))


class SVMGridTable:
    """Every task's scores: ``configs`` (288, 3) native values, ``values`` (tasks, 288, 3 folds).

    Attributes
    ----------
    tasks : tuple of str
    configs : ndarray (m, 3)
        ``C``, ``gamma_scale``, ``balanced`` of each configuration (native values).
    values : ndarray (tasks, m, folds)
    truth : ndarray (tasks, m)
        Mean over folds: the function whose regret is reported.
    origins : tuple of str
        Where each task's data came from.
    """

    def __init__(self, tasks, configs, values, origins):
        self.tasks = tuple(str(t) for t in tasks)
        self.configs = np.asarray(configs, dtype=np.float64)
        self.values = np.asarray(values, dtype=np.float64)
        self.truth = self.values.mean(axis=2)
        self.origins = tuple(str(o) for o in origins)
        self.space = Space(
            (
                Float("C", float(self.configs[:, 0].min()), float(self.configs[:, 0].max()), log=True),
                Float(
                    "gamma_scale", float(self.configs[:, 1].min()), float(self.configs[:, 1].max()), log=True
                ),
                Float("balanced", 0.0, 1.0),
            ),
            candidate_points=self.configs,
        )

    def row(self, task: str) -> int:
        if task not in self.tasks:
            raise ValueError(f"unknown SVM-grid task {task!r}; choose one of {', '.join(self.tasks)}")
        return self.tasks.index(task)


@functools.lru_cache(maxsize=2)
def load_svm_grid(path: str | None = None) -> SVMGridTable:
    """The table (read once per process per path); a missing or malformed file raises a clear error."""
    file = Path(path) if path is not None else svm_grid_path()
    if not file.is_file():
        raise FileNotFoundError(
            f"the SVM meta-data file {file} is missing: it ships in the source checkout's bench/metadata/ "
            "(rebuild it with bench/metadata/make_svm_grid.py) or set WARMBO_SVM_GRID to its path"
        )
    with np.load(file) as data:
        missing = {"tasks", "configs", "scores", "sources"} - set(data.files)
        if missing:
            raise ValueError(f"{file} is not an SVM meta-data file: missing {sorted(missing)}")
        tasks, configs, scores, origins = data["tasks"], data["configs"], data["scores"], data["sources"]
    if scores.ndim != 3 or scores.shape[:2] != (len(tasks), configs.shape[0]) or configs.shape[1:] != (3,):
        raise ValueError(
            f"{file}: scores {scores.shape} do not match {len(tasks)} tasks x {configs.shape} configs"
        )
    if not np.all(np.isfinite(scores)):
        raise ValueError(f"{file}: scores hold NaN or infinite values")
    configs = np.column_stack([10.0 ** configs[:, 0], 10.0 ** configs[:, 1], configs[:, 2]])
    return SVMGridTable(tasks, configs, scores, origins)


def svm_grid_tasks() -> tuple[str, ...]:
    """The tasks of the stored table."""
    return load_svm_grid().tasks


class SVMGridObjective:
    """Picklable objective ``params -> balanced accuracy`` of one task, one fold's score per evaluation.

    Examples
    --------
    >>> from warmbo.problems.svm_grid import SVMGridObjective  # doctest: +SKIP
    >>> f = SVMGridObjective("iris", seed=0)  # doctest: +SKIP
    >>> 0.0 <= f(f.space.decode(f.space.candidates[0])) <= 1.0  # doctest: +SKIP
    True
    """

    def __init__(self, task: str, seed: int = 0):
        self.table = load_svm_grid()
        self.task = task
        self.k = self.table.row(task)
        self.seed = int(seed)
        self.space = self.table.space
        self.truths = self.table.truth[self.k]

    def __getstate__(self):
        return {"task": self.task, "seed": self.seed}

    def __setstate__(self, state):
        self.__init__(state["task"], state["seed"])

    def __repr__(self) -> str:
        return f"SVMGridObjective({self.task!r}, seed={self.seed})"

    def index(self, params: dict) -> int:
        """Row of ``params`` in the grid (it must be one of the grid's configurations)."""
        x = self.space.encode([params])[0]
        d = np.sum((self.space.candidates - x) ** 2, axis=1)
        i = int(np.argmin(d))
        if d[i] > 1e-12:
            raise ValueError(f"{params!r} is not a configuration of the SVM grid")
        return i

    def noisy(self, i: int) -> float:
        """The observation of row ``i``: one fold's score, the fold drawn from ``(seed, i)``."""
        folds = self.table.values.shape[2]
        s = int(np.random.default_rng([self.seed, int(i), 7]).integers(folds))
        return float(self.table.values[self.k, i, s])

    def truth(self, params: dict) -> float:
        """Mean score over the folds (the noise-free objective)."""
        return float(self.truths[self.index(params)])

    def __call__(self, params: dict) -> float:
        return self.noisy(self.index(params))


def svm_grid_sources(target: str, seed: int = 0, n_source: int = 30) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every task but ``target`` as a finished random search of ``n_source`` distinct configurations:
    ``(X_encoded, y)`` pairs, one noisy score per point, in the table's task order."""
    table = load_svm_grid()
    table.row(target)
    check_int(n_source, "n_source", 1)
    n = min(int(n_source), table.configs.shape[0])
    out = []
    for k, task in enumerate(table.tasks):
        if task == target:
            continue
        f = SVMGridObjective(task, seed=seed)
        rows = np.random.default_rng([seed, k, 17]).choice(table.configs.shape[0], size=n, replace=False)
        out.append(
            (np.asarray(table.space.candidates[rows], dtype=np.float64), np.array([f.noisy(i) for i in rows]))
        )
    return out
