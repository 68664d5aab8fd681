"""Live hyperparameter-tuning objectives with scikit-learn (003 Section 4.2), cheap enough for BO loops.

The three models of 003 Table 3, each a maximisation objective over a log-scaled
:class:`~warmbo.space.Space`:

- ``"svm"``: RBF support vector machine (``sklearn.svm.SVC``), ``C`` in 1e-3..1e3 and ``gamma`` (the
  kernel width) in 1e-5..1, value = accuracy on a held-out validation sample.
- ``"enet"``: elastic-net logistic regression (``sklearn.linear_model.SGDClassifier`` with
  ``loss="log_loss"``, ``penalty="elasticnet"``), L1 penalty ``l1`` and L2 penalty ``l2`` in
  1e-5..1e-1, value = validation AUC. The training loss is ``mean log-loss + l1 ||w||_1 + l2/2 ||w||^2``,
  i.e. SGD's ``alpha = l1 + l2`` and ``l1_ratio = l1 / (l1 + l2)``.
- ``"mlp"``: multi-layer perceptron (``sklearn.neural_network.MLPClassifier``, SGD with Nesterov
  momentum, ``MLP_EPOCHS`` = 15 epochs), six hyperparameters as 003 Table 3, scaled to the
  subsampled data: ``layers`` 1-3 (Table 3: 1-3), ``units`` per layer 16-128 (log; Table 3: 100-800
  neurons), ``learning_rate_init`` 1e-3..1 (log, as Table 3), ``batch_size`` 16-256 (log; Table 3:
  100-1000, for 60,000 MNIST rows; here 600 rows), ``momentum`` 1e-3..1 (log, as Table 3) and the L2
  penalty ``alpha`` 1e-6..1e-1 (log) in place of Table 3's drop-out weight 0.1-0.5, which
  scikit-learn's MLP does not have. Value = validation accuracy (10 classes); a run whose weights
  diverge (scikit-learn raises on non-finite weights, e.g. learning rate 1 with momentum 1) scores
  the majority-class accuracy, what a constant classifier gets.

Data sets (003 Table 2, from the shared data folder, see :func:`data_dir`):

- ``"mushrooms"``: ``libsvm/mushrooms`` (8124 x 112 binary features, svmlight).
- ``"madelon"``: ``libsvm/madelon_train_dense_goyalankit.txt`` (2000 x 500, header line, label first);
  features are standardised with the training sample's mean and standard deviation.
- ``"usps"``: ``usps/usps.npz`` (USPS digits, 7291 + 2007 = 9298 images of 16 x 16 pixels in [0, 1],
  the 9298 of 003 Table 2; train and test files are pooled and resampled by the seed), **resampled
  to 8 x 8** by averaging 2 x 2 pixel blocks, so that it shares the input space of ``"digits"``.
- ``"digits"``: scikit-learn's bundled ``load_digits`` (1797 images of 8 x 8 pixels, counts 0-16,
  divided by 16 into [0, 1]); no file needed. It stands in for 003's MNIST target (70,000 images of
  28 x 28), which is not in the shared data: USPS -> digits is a stand-in for 003's USPS -> MNIST.

Subsampling (so that one evaluation takes well under a second; 003 uses a 60/40 train/test split of
the full sets and LIBSVM): each objective draws, with its ``seed``, a random training sample of
``n_train`` rows and a disjoint validation sample of ``n_valid`` rows (defaults: SVM 800 / 800 on
mushrooms and 1000 / 1000 on madelon, half of its 2000 rows each; elastic net 1000 / 1000 on both;
measured 0.03-0.35 s per evaluation on one core; MLP 600 / 600 on digits and on USPS, measured
median 0.08 s and at most 0.2 s per evaluation over 30 random configurations on one core, 15 epochs
each). ``fraction`` < 1 keeps only that share of the training sample (003 Case 1: the source task is
the same model trained on 30% of the training data, validated on the same validation sample). A
different ``seed`` is a different train/validation draw, as in 003's "10 different samples of train
and test data". Evaluations are deterministic for fixed parameters and seed (SGD and the MLP's
initial weights use ``random_state=seed``). With ``fraction = 0.3`` the MLP trains on 180 rows, and
a ``batch_size`` above that is clipped to 180 by scikit-learn.

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

from ..space import Float, Int, Space

__all__ = [
    "BUNDLED",
    "DATASETS",
    "MLP_EPOCHS",
    "MODELS",
    "TASKS",
    "HPOObjective",
    "data_dir",
    "dataset_path",
    "hpo_objective",
    "hpo_space",
    "load_dataset",
]

#: Data sets read from the shared data folder: name -> path inside it.
DATASETS = {
    "mushrooms": "libsvm/mushrooms",
    "madelon": "libsvm/madelon_train_dense_goyalankit.txt",
    "usps": "usps/usps.npz",
}
#: Data sets shipped with scikit-learn (no file needed).
BUNDLED = ("digits",)
MODELS = ("svm", "enet", "mlp")
MLP_EPOCHS = 15
_SIZES = {  # (n_train, n_valid): one evaluation well under a second on one core
    ("svm", "mushrooms"): (800, 800),
    ("svm", "madelon"): (1000, 1000),
    ("enet", "mushrooms"): (1000, 1000),
    ("enet", "madelon"): (1000, 1000),
    ("mlp", "digits"): (600, 600),
    ("mlp", "usps"): (600, 600),
}
#: The (model, data set) pairs an :class:`HPOObjective` accepts (binary sets for SVM and elastic net,
#: the 10-class digit sets for the MLP).
TASKS = tuple(_SIZES)


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


def resample_8x8(X: np.ndarray) -> np.ndarray:
    """16 x 16 images (rows of 256 pixels) -> 8 x 8 (rows of 64) by averaging 2 x 2 pixel blocks."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != 256:
        raise ValueError(f"expected rows of 16 x 16 = 256 pixels, got an array of shape {X.shape}")
    return X.reshape(-1, 8, 2, 8, 2).mean(axis=(2, 4)).reshape(-1, 64)


@functools.lru_cache(maxsize=8)
def _load(file: str, name: str) -> tuple[np.ndarray, np.ndarray]:
    if name == "mushrooms":
        from sklearn.datasets import load_svmlight_file

        X, y = load_svmlight_file(file)
        X = np.asarray(X.todense(), dtype=np.float64)
        y = (y == np.max(y)).astype(np.int64)
    elif name == "usps":
        with np.load(file) as archive:
            missing = {"X_train", "y_train", "X_test", "y_test"} - set(archive.files)
            if missing:
                raise ValueError(f"{file} lacks the arrays {sorted(missing)}")
            X = resample_8x8(np.vstack([archive["X_train"], archive["X_test"]]))
            y = np.concatenate([archive["y_train"], archive["y_test"]]).astype(np.int64)
    elif name == "digits":
        from sklearn.datasets import load_digits

        bunch = load_digits()
        X, y = np.asarray(bunch.data, dtype=np.float64) / 16.0, bunch.target.astype(np.int64)
    else:
        raw = np.loadtxt(file, skiprows=1)
        X, y = raw[:, 1:], raw[:, 0]
        y = (y == np.max(y)).astype(np.int64)
    return X, y


def load_dataset(name: str, path: str | os.PathLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of data set ``name`` (float64; labels 0/1, or 0-9 for the digit sets).

    A missing file raises :class:`FileNotFoundError` naming it; ``"digits"`` needs no file.
    """
    if name in BUNDLED:
        return _load("", name)
    file = dataset_path(name, path)
    if not file.is_file():
        raise FileNotFoundError(
            f"data set {name!r} not found: {file} is missing (set WARMBO_DATA or pass data_dir= to point "
            f"at a folder holding {', '.join(DATASETS.values())})"
        )
    return _load(str(file), name)


def hpo_space(model: str) -> Space:
    """Search space of ``model`` (003 Table 3), all parameters log-scaled."""
    if model == "svm":
        return Space([Float("C", 1e-3, 1e3, log=True), Float("gamma", 1e-5, 1.0, log=True)])
    if model == "enet":
        return Space([Float("l1", 1e-5, 1e-1, log=True), Float("l2", 1e-5, 1e-1, log=True)])
    if model == "mlp":
        return Space(
            [
                Int("layers", 1, 3),
                Int("units", 16, 128, log=True),
                Float("learning_rate_init", 1e-3, 1.0, log=True),
                Int("batch_size", 16, 256, log=True),
                Float("momentum", 1e-3, 1.0, log=True),
                Float("alpha", 1e-6, 1e-1, log=True),
            ]
        )
    raise ValueError(f"unknown model {model!r}; choose one of {', '.join(MODELS)}")


class HPOObjective:
    """Picklable objective ``params -> validation score`` of one (model, data set, sample) task.

    Parameters
    ----------
    model : {"svm", "enet", "mlp"}
    dataset : {"mushrooms", "madelon"} for SVM and elastic net, {"digits", "usps"} for the MLP
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
        if dataset not in DATASETS and dataset not in BUNDLED:
            raise ValueError(
                f"unknown data set {dataset!r}; choose one of {', '.join([*DATASETS, *BUNDLED])}"
            )
        if (model, dataset) not in _SIZES:
            allowed = ", ".join(d for m, d in _SIZES if m == model)
            raise ValueError(f"model {model!r} is not set up on data set {dataset!r}; use one of {allowed}")
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
            if self.model == "mlp":
                return self._mlp(params, Xt, yt, Xv, yv)
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

    def _mlp(self, params: dict, Xt, yt, Xv, yv) -> float:
        from sklearn.neural_network import MLPClassifier

        clf = MLPClassifier(
            hidden_layer_sizes=(int(params["units"]),) * int(params["layers"]),
            solver="sgd",
            learning_rate_init=float(params["learning_rate_init"]),
            batch_size=int(params["batch_size"]),
            momentum=min(float(params["momentum"]), 1.0),
            alpha=float(params["alpha"]),
            max_iter=MLP_EPOCHS,
            random_state=self.seed,
        )
        try:
            clf.fit(Xt, yt)
        except ValueError as exc:  # diverged: scikit-learn refuses non-finite weights
            if "non-finite" not in str(exc):
                raise
            majority = np.bincount(yt).argmax()
            return float(np.mean(yv == majority))
        return float(np.mean(clf.predict(Xv) == yv))


def hpo_objective(model: str, dataset: str, seed: int = 0, **kwargs) -> HPOObjective:
    """Factory of :class:`HPOObjective` (same arguments)."""
    return HPOObjective(model, dataset, seed=seed, **kwargs)
