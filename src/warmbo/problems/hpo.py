"""Live hyperparameter-tuning objectives with scikit-learn (003 Section 4.2), cheap enough for BO loops.

Two models of 003 Table 3, each a maximisation objective over a log-scaled :class:`~warmbo.space.Space`:

- ``"svm"``: RBF support vector machine (``sklearn.svm.SVC``), ``C`` in 1e-3..1e3 and ``gamma`` (the
  kernel width) in 1e-5..1, value = accuracy on a held-out validation sample.
- ``"enet"``: elastic-net logistic regression (``sklearn.linear_model.SGDClassifier`` with
  ``loss="log_loss"``, ``penalty="elasticnet"``), L1 penalty ``l1`` and L2 penalty ``l2`` in
  1e-5..1e-1, value = validation AUC. The training loss is ``mean log-loss + l1 ||w||_1 + l2/2 ||w||^2``,
  i.e. SGD's ``alpha = l1 + l2`` and ``l1_ratio = l1 / (l1 + l2)``.

Data sets (003 Table 2, from the shared data folder, see :func:`data_dir`):

- ``"mushrooms"``: ``libsvm/mushrooms`` (8124 x 112 binary features, svmlight).
- ``"madelon"``: ``libsvm/madelon_train_dense_goyalankit.txt`` (2000 x 500, header line, label first);
  features are standardised with the training sample's mean and standard deviation.

Subsampling (so that one evaluation takes well under a second; 003 uses a 60/40 train/test split of
the full sets and LIBSVM): each objective draws, with its ``seed``, a random training sample of
``n_train`` rows and a disjoint validation sample of ``n_valid`` rows (defaults: SVM 800 / 800 on
mushrooms and 600 / 600 on madelon; elastic net 1000 / 1000 on both; measured 0.02-0.2 s per
evaluation on one core). ``fraction`` < 1 keeps only that share of the training sample (003 Case 1:
the source task is the same model trained on 30% of the training data, validated on the same
validation sample). A different ``seed`` is a different train/validation draw,
as in 003's "10 different samples of train and test data". Evaluations are deterministic for fixed
parameters and seed (SGD uses ``random_state=seed``).

Examples
--------
>>> from warmbo.problems.hpo import hpo_objective  # doctest: +SKIP
>>> f = hpo_objective("svm", "mushrooms", seed=0)  # doctest: +SKIP
>>> 0.5 < f({"C": 10.0, "gamma": 0.01}) <= 1.0  # doctest: +SKIP
True
"""

from __future__ import annotations

import functools
import os
import warnings
from pathlib import Path

import numpy as np

from ..space import Float, Space

__all__ = ["DATASETS", "MODELS", "HPOObjective", "data_dir", "hpo_objective", "hpo_space", "load_dataset"]

DATASETS = {
    "mushrooms": "libsvm/mushrooms",
    "madelon": "libsvm/madelon_train_dense_goyalankit.txt",
}
MODELS = ("svm", "enet")
_SIZES = {  # (n_train, n_valid): one evaluation well under a second on one core
    ("svm", "mushrooms"): (800, 800),
    ("svm", "madelon"): (600, 600),
    ("enet", "mushrooms"): (1000, 1000),
    ("enet", "madelon"): (1000, 1000),
}


def data_dir(path: str | os.PathLike | None = None) -> Path:
    """The shared data folder: ``path``, else ``$WARMBO_DATA``, else ``../shared/data`` next to the repo.

    The repository root is the first parent of this file holding ``pyproject.toml`` (falling back to
    the current directory), so the default works from any working directory for an editable
    install. The folder is not checked here; :func:`load_dataset` says which file is missing.
    """
    if path is not None:
        return Path(path).expanduser()
    env = os.environ.get("WARMBO_DATA")
    if env:
        return Path(env).expanduser()
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").is_file():
            return (parent / ".." / "shared" / "data").resolve()
    return (Path.cwd() / ".." / "shared" / "data").resolve()


def dataset_path(name: str, path: str | os.PathLike | None = None) -> Path:
    """Path of data set ``name`` inside the data folder (not checked)."""
    if name not in DATASETS:
        raise ValueError(f"unknown data set {name!r}; choose one of {', '.join(DATASETS)}")
    return data_dir(path) / DATASETS[name]


@functools.lru_cache(maxsize=8)
def _load(file: str, name: str) -> tuple[np.ndarray, np.ndarray]:
    if name == "mushrooms":
        from sklearn.datasets import load_svmlight_file

        X, y = load_svmlight_file(file)
        X = np.asarray(X.todense(), dtype=np.float64)
        y = (y == np.max(y)).astype(np.int64)
    else:
        raw = np.loadtxt(file, skiprows=1)
        X, y = raw[:, 1:], raw[:, 0]
        y = (y == np.max(y)).astype(np.int64)
    return X, y


def load_dataset(name: str, path: str | os.PathLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of data set ``name`` with labels 0/1; a clear error names a missing file."""
    file = dataset_path(name, path)
    if not file.is_file():
        raise FileNotFoundError(
            f"data set {name!r} not found: {file} is missing (set WARMBO_DATA or pass data_dir= to point "
            "at a folder holding libsvm/mushrooms and libsvm/madelon_train_dense_goyalankit.txt)"
        )
    return _load(str(file), name)


def hpo_space(model: str) -> Space:
    """Search space of ``model`` (003 Table 3), all parameters log-scaled."""
    if model == "svm":
        return Space([Float("C", 1e-3, 1e3, log=True), Float("gamma", 1e-5, 1.0, log=True)])
    if model == "enet":
        return Space([Float("l1", 1e-5, 1e-1, log=True), Float("l2", 1e-5, 1e-1, log=True)])
    raise ValueError(f"unknown model {model!r}; choose one of {', '.join(MODELS)}")


class HPOObjective:
    """Picklable objective ``params -> validation score`` of one (model, data set, sample) task.

    Parameters
    ----------
    model : {"svm", "enet"}
    dataset : {"mushrooms", "madelon"}
    seed : int
        Seed of the train/validation draw (and of SGD).
    fraction : float
        Share of the training sample used for training (0.3 for 003's Case-1 source task).
    n_train, n_valid : int, optional
        Sizes of the training and validation samples (defaults in the module docstring).
    data_dir : path, optional
        Data folder (default :func:`data_dir`).
    """

    def __init__(
        self,
        model: str,
        dataset: str,
        seed: int = 0,
        fraction: float = 1.0,
        n_train: int | None = None,
        n_valid: int | None = None,
        data_dir: str | os.PathLike | None = None,
    ):
        if model not in MODELS:
            raise ValueError(f"unknown model {model!r}; choose one of {', '.join(MODELS)}")
        if dataset not in DATASETS:
            raise ValueError(f"unknown data set {dataset!r}; choose one of {', '.join(DATASETS)}")
        if not 0 < fraction <= 1:
            raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
        default_train, default_valid = _SIZES[(model, dataset)]
        self.model = model
        self.dataset = dataset
        self.seed = int(seed)
        self.fraction = float(fraction)
        self.n_train = int(n_train or default_train)
        self.n_valid = int(n_valid or default_valid)
        self.data_dir = None if data_dir is None else str(data_dir)
        self.space = hpo_space(model)
        self._data = None

    def __repr__(self) -> str:
        return (
            f"HPOObjective({self.model!r}, {self.dataset!r}, seed={self.seed}, fraction={self.fraction}, "
            f"n_train={self.n_train}, n_valid={self.n_valid})"
        )

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_data"] = None  # reloaded (and cached) in the receiving process
        return state

    def data(self):
        """``(X_train, y_train, X_valid, y_valid)`` of this task (drawn once, cached)."""
        if self._data is None:
            X, y = load_dataset(self.dataset, self.data_dir)
            rng = np.random.default_rng([self.seed, 7919])
            n_train = min(self.n_train, X.shape[0] // 2)
            n_valid = min(self.n_valid, X.shape[0] - n_train)
            order = rng.permutation(X.shape[0])
            train, valid = order[:n_train], order[n_train : n_train + n_valid]
            train = train[: max(10, int(round(self.fraction * train.size)))]
            Xt, Xv = X[train], X[valid]
            if self.dataset == "madelon":
                mean, std = Xt.mean(axis=0), Xt.std(axis=0)
                std[std == 0] = 1.0
                Xt, Xv = (Xt - mean) / std, (Xv - mean) / std
            self._data = (Xt, y[train], Xv, y[valid])
        return self._data

    def __call__(self, params: dict) -> float:
        Xt, yt, Xv, yv = self.data()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if self.model == "svm":
                from sklearn.svm import SVC

                clf = SVC(C=float(params["C"]), gamma=float(params["gamma"]), kernel="rbf", cache_size=200)
                clf.fit(Xt, yt)
                return float(np.mean(clf.predict(Xv) == yv))
            from sklearn.linear_model import SGDClassifier
            from sklearn.metrics import roc_auc_score

            l1, l2 = float(params["l1"]), float(params["l2"])
            clf = SGDClassifier(
                loss="log_loss",
                penalty="elasticnet",
                alpha=l1 + l2,
                l1_ratio=l1 / (l1 + l2),
                max_iter=30,
                tol=1e-4,
                random_state=self.seed,
            )
            clf.fit(Xt, yt)
            score = clf.decision_function(Xv)
            if not np.all(np.isfinite(score)):
                return 0.5
            return float(roc_auc_score(yv, score))


def hpo_objective(model: str, dataset: str, seed: int = 0, **kwargs) -> HPOObjective:
    """Factory of :class:`HPOObjective` (same arguments)."""
    return HPOObjective(model, dataset, seed=seed, **kwargs)
