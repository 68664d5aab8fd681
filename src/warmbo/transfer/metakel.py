"""Meta-KeL: meta-learn a sparse kernel from offline tasks (000, Kassraie, Rothfuss & Krause).

Given m tasks ``(X_s, y_s)`` and p base kernels ``k_j(x, x') = phi_j(x)^T phi_j(x')`` with finite
feature maps, Meta-KeL solves the joint problem 000 eq. 5 over the kernel weights eta and the task
functions. By Prop. 2 this is the group lasso 000 eq. 6 over per-task coefficients ``beta_s`` with
one group per base kernel across all tasks, and ``eta_hat_j = ||beta_hat^(j)||_2``. The
meta-learned kernel (000 eq. 7) is

.. math:: \\hat k(x, x') = \\sum_j \\frac{\\hat\\eta_j}{c_1} \\phi_j(x)^T \\phi_j(x'),

with support ``J_hat = {j : eta_hat_j > 0}``.

Choices where the text leaves room (documented on :class:`MetaKeL`):

- Tasks of different sizes: each task weighs ``1/(m n_s)`` in the data fit (the average over tasks
  of each task's mean squared error, as in eq. 5); with equal sizes this is eq. 6 exactly.
- ``c_1`` (the scale of eq. 7; it changes the RKHS norm, not the hypothesis space): by default
  ``c_1 = min_{j in J_hat} eta_hat_j``, the estimate of the group beta-min constant of
  Assumption 1 (``||beta*^(j)|| >= c_1``, and ``eta_hat_j ~ ||beta*^(j)||`` by Lemma 10). Every
  active weight of k_hat is then >= 1, so ``||f||_k_hat <= ||f||_k*`` for any k* with
  ``||eta*||_1 <= 1`` supported on J_hat: the norm bound B stays valid. ``normalize="sum"`` gives
  weights summing to 1 (the normalisation of k* in 000 Section 2) and ``"max"`` a largest weight 1.
- lambda: the value of Thm 4 / Lemma 8 when the noise sd is known (``N = sum_s n_s`` replaces mn),
  otherwise leave-tasks-out cross-validation (see :meth:`MetaKeL.fit`).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence

import numpy as np

from .._threads import blas_limited
from .._validation import as_points, as_values, check_int
from .._warnings import user_stacklevel
from ..bounds import MetaKeLBound
from ..kernels.base import Kernel
from ..kernels.features import FeatureKernel
from ..models.base import ModelBase
from .group_lasso import lambda_max, solve_group_lasso

__all__ = ["MetaKeL", "full_kernel", "theory_lambda"]


def full_kernel(base: Sequence[FeatureKernel]) -> Kernel:
    """The conservative hand-picked kernel ``k_full = 1/p sum_j k_j`` (000 eq. A.1)."""
    base = _check_base(base)
    return (1.0 / len(base)) * sum(base[1:], base[0])


def theory_lambda(sigma: float, n_total: int, m: int, p: int, d_max: int, delta: float) -> float:
    """Lambda of 000 Thm 4 / Lemma 8 (with ``mn`` replaced by the total sample size N):

    ``4 sigma / sqrt(N) * sqrt(1 + 2/m (log(2p/delta) + sqrt(m d_max log(2p/delta))))``.
    """
    log_term = np.log(2 * p / delta)
    return float(
        4 * sigma / np.sqrt(n_total) * np.sqrt(1 + 2 / m * (log_term + np.sqrt(m * d_max * log_term)))
    )


def _check_base(base) -> list[FeatureKernel]:
    if isinstance(base, Kernel) or not isinstance(base, Sequence) or len(base) == 0:
        raise ValueError(
            "base must be a non-empty list of feature-map kernels (Legendre, Features, RandomFourier)"
        )
    for j, kernel in enumerate(base):
        if not isinstance(kernel, FeatureKernel):
            raise ValueError(
                f"base[{j}] = {kernel!r} has no finite feature map; Meta-KeL needs Legendre, Features or "
                "RandomFourier kernels (approximate a stationary kernel with RandomFourier)"
            )
    return list(base)


def _warn_outside_domains(base, points: list[np.ndarray]) -> None:
    """Warn once when the tasks' inputs leave a base kernel's ``domain`` (Legendre features): there
    the features are no longer orthonormal and grow like ``|x|^j``, so the group lasso's groups are
    on wildly different scales (on x in [-5, 5] with the default (-1, 1) every kernel was selected,
    with only the solver's tolerance warning)."""
    for kernel in base:
        domain, v = getattr(kernel, "domain", None), getattr(kernel, "variable", 0)
        if domain is None:
            continue
        a, b = domain
        slack = 1e-9 * (b - a)
        for s, X in enumerate(points):  # (each task's inputs as validated, (n, d))
            low, high = float(X[:, v].min()), float(X[:, v].max())
            if low < a - slack or high > b + slack:
                warnings.warn(
                    f"tasks[{s}]: input {v} spans [{low:.4g}, {high:.4g}], outside the domain ({a:g}, {b:g}) "
                    f"of {kernel!r}; its features are orthonormal only there and grow fast outside it: "
                    f"rescale the inputs into ({a:g}, {b:g}) or give the kernels "
                    f"domain=({low:.4g}, {high:.4g})",
                    UserWarning,
                    stacklevel=user_stacklevel(),
                )
                return


class MetaKeL(ModelBase):
    """Meta-learn a sparse combination of base kernels from m offline tasks (000).

    Parameters
    ----------
    base : list of FeatureKernel
        Candidate kernels k_1..k_p with finite feature maps (``Legendre(j)``, ``Features``,
        ``RandomFourier`` of RBF/Matern kernels with several lengthscales, ...).
    lam : float, optional
        Regularisation lambda of eq. 6. None: the Thm 4 value when ``noise`` is given, otherwise
        leave-tasks-out cross-validation.
    delta : float
        Failure probability used by the theory-backed lambda.
    noise : float, optional
        Noise standard deviation sigma of the meta-data, if known.
    normalize : {"min", "sum", "max"} or float
        How eta_hat is scaled in ``kernel_`` (the c_1 of eq. 7); a float is c_1 itself.
    n_folds : int
        Folds of tasks for cross-validation (an integer >= 2; checked when fit starts).
    n_lambdas : int
        Size of the lambda grid for cross-validation (log-spaced from lambda_max down by 1e-4).
    tol : float
        Optimality certificate at which the solver stops (relative to lambda_max).

    Attributes
    ----------
    coef_ : list of ndarray
        beta_hat_s, one (d,) vector per task (features ordered as ``base``).
    weights_ : ndarray (p,)
        eta_hat_j = ||beta_hat^(j)||_2 (Prop. 2), unnormalised.
    support_ : ndarray of int
        J_hat, indices of the active base kernels.
    c1_ : float
        The normalisation constant of eq. 7 used in ``kernel_``.
    kernel_ : Kernel
        k_hat = sum_{j in J_hat} (eta_hat_j / c1) k_j (eq. 7).
    lam_ : float
        The lambda used; ``cv_scores_`` holds (lambda grid, scores) when it was cross-validated.
    certificate_ : float
        Optimality certificate of the group-lasso solution (max subdifferential distance).
    d_hat_ : int
        sum of d_j over J_hat.

    Examples
    --------
    >>> import numpy as np
    >>> from warmbo import MetaKeL
    >>> from warmbo.kernels import Legendre
    >>> rng = np.random.default_rng(0)
    >>> tasks = []
    >>> for s in range(20):
    ...     x = rng.uniform(-1, 1, 30)
    ...     a, b = rng.uniform(0.5, 1.0, 2)
    ...     tasks.append((x, a * Legendre(2).features(x)[:, 0] + b * Legendre(5).features(x)[:, 0]))
    >>> meta = MetaKeL([Legendre(j) for j in range(1, 9)], lam=0.01).fit(tasks)
    >>> meta.support_.tolist()
    [1, 4]
    """

    def __init__(
        self,
        base: Sequence[FeatureKernel],
        lam: float | None = None,
        delta: float = 0.1,
        noise: float | None = None,
        normalize: str | float = "min",
        n_folds: int = 5,
        n_lambdas: int = 20,
        tol: float = 1e-9,
    ):
        self.base = base
        self.lam = lam
        self.delta = delta
        self.noise = noise
        self.normalize = normalize
        self.n_folds = n_folds
        self.n_lambdas = n_lambdas
        self.tol = tol

    # ------------------------------------------------------------------ data
    def _prepare(self, tasks):
        base = _check_base(self.base)
        if hasattr(tasks, "by_task"):
            tasks = list(tasks.by_task().values())
        if not isinstance(tasks, Sequence) or isinstance(tasks, (str, bytes)) or len(tasks) == 0:
            raise ValueError("tasks must be a non-empty list of (X, y) pairs")
        if len(tasks) == 2 and not any(_is_pair(task) for task in tasks):
            raise ValueError(
                "tasks looks like a single (X, y) pair; pass a list of (X, y) pairs, one per task "
                "(for one task: [(X, y)])"
            )
        dim = None
        features, ys, points = [], [], []
        for s, task in enumerate(tasks):
            if not _is_pair(task):
                raise ValueError(f"tasks[{s}] must be an (X, y) pair")
            X = as_points(task[0], f"tasks[{s}] X", dim)
            if X.shape[0] == 0:
                raise ValueError(f"tasks[{s}] is empty")
            if dim is None:
                dim = X.shape[1]
            y = as_values(task[1], f"tasks[{s}] y", X.shape[0])
            blocks = []
            for j, kernel in enumerate(base):
                try:
                    F = kernel.features(X)
                except ValueError as exc:
                    raise ValueError(f"base[{j}] ({kernel!r}) on tasks[{s}]: {exc}") from None
                if not np.all(np.isfinite(F)):
                    raise ValueError(f"base[{j}] ({kernel!r}) returned non-finite features on tasks[{s}]")
                blocks.append(F)
            features.append(np.hstack(blocks))
            points.append(X)
            ys.append(y)
        _warn_outside_domains(base, points)
        widths = [int(kernel.dim) for kernel in base]
        edges = np.concatenate([[0], np.cumsum(widths)])
        groups = [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]
        return base, features, ys, groups, widths

    @staticmethod
    def _statistics(features, ys):
        m = len(features)
        G = np.stack([F.T @ F for F in features])
        c = np.stack([F.T @ y for F, y in zip(features, ys, strict=True)])
        yy = np.array([y @ y for y in ys])
        w = np.array([1.0 / (m * F.shape[0]) for F in features])
        return G, c, yy, w

    # ------------------------------------------------------------------ fitting
    @blas_limited
    def fit(self, tasks) -> MetaKeL:
        """Meta-learn the kernel from ``tasks`` (a list of (X, y) pairs, or a TaskData with a task column).

        Cross-validation (when ``lam`` and ``noise`` are both None): the tasks are split into
        ``n_folds`` folds; for each lambda on a log grid, the group lasso is fitted on the other folds
        and k_hat scored on each held-out task by the leave-one-out squared error of kernel ridge
        regression with k_hat at unit largest weight (regulariser: the training residual variance over
        the mean of y^2, so that the chosen lambda scales with y and the support does not depend on
        y's units). This scores what k_hat
        is for, fitting new tasks, and needs no coefficients of the held-out tasks.
        """
        check_int(self.n_folds, "n_folds (folds of tasks for cross-validation)", 2)
        check_int(self.n_lambdas, "n_lambdas (size of the cross-validation grid)", 1)
        base, features, ys, groups, widths = self._prepare(tasks)
        for name, value in (("delta", self.delta),):
            if not (isinstance(value, numbers.Real) and 0 < value < 1):
                raise ValueError(f"{name} must be in (0, 1), got {value!r}")
        G, c, yy, w = self._statistics(features, ys)
        m, p = len(features), len(base)
        n_total = sum(F.shape[0] for F in features)
        scale = lambda_max(c, w, groups)
        self.lambda_max_ = scale
        self.cv_scores_ = None
        if self.lam is not None:
            if not isinstance(self.lam, numbers.Real) or not np.isfinite(self.lam) or self.lam < 0:
                raise ValueError(f"lam must be a finite non-negative number, got {self.lam!r}")
            lam = float(self.lam)
        elif self.noise is not None:
            if not isinstance(self.noise, numbers.Real) or not self.noise > 0:
                raise ValueError(
                    f"noise must be a positive number (a standard deviation), got {self.noise!r}"
                )
            lam = theory_lambda(float(self.noise), n_total, m, p, max(widths), float(self.delta))
        else:
            lam = self._cross_validate(features, ys, groups, scale)
        result = solve_group_lasso(G, c, w, groups, lam, yy=yy, tol=self.tol * max(scale, 1e-300))
        if not result.converged:
            warnings.warn(
                f"group lasso stopped before reaching its tolerance (certificate {result.certificate:.2e})",
                RuntimeWarning,
                stacklevel=user_stacklevel(),
            )
        self.lam_ = lam
        self.n_tasks_ = m
        self.groups_ = groups
        self.coef_ = [row.copy() for row in result.beta]
        self.certificate_ = result.certificate
        self.objective_ = result.objective
        self.n_iter_ = result.n_iter
        self.weights_ = np.array([np.linalg.norm(result.beta[:, g]) for g in groups])
        self.support_ = np.flatnonzero(self.weights_ > 0)
        self.d_hat_ = int(sum(widths[j] for j in self.support_))
        self.base_ = base
        self._set_kernel()
        return self

    def _normaliser(self) -> float:
        active = self.weights_[self.support_]
        if isinstance(self.normalize, numbers.Real) and not isinstance(self.normalize, bool):
            if not self.normalize > 0:
                raise ValueError(f"normalize as a number is c_1 and must be positive, got {self.normalize!r}")
            return float(self.normalize)
        if self.normalize == "min":
            return float(active.min())
        if self.normalize == "sum":
            return float(active.sum())
        if self.normalize == "max":
            return float(active.max())
        raise ValueError(
            f"normalize must be 'min', 'sum', 'max' or a positive number, got {self.normalize!r}"
        )

    def _set_kernel(self) -> None:
        if self.support_.size == 0:
            warnings.warn(
                "Meta-KeL selected no base kernel (lambda too large for these data); kernel_ falls back "
                "to k_full = 1/p sum_j k_j (bound() then gives k_full's schedule, norm bound sqrt(p) B)",
                RuntimeWarning,
                stacklevel=user_stacklevel(),
            )
            self.c1_ = float("nan")
            self.kernel_ = full_kernel(self.base_)
            return
        self.c1_ = self._normaliser()
        terms = [(float(self.weights_[j]) / self.c1_) * self.base_[j] for j in self.support_]
        self.kernel_ = sum(terms[1:], terms[0])

    def _cross_validate(self, features, ys, groups, scale) -> float:
        m = len(features)
        if m < 2:
            raise ValueError("cross-validating lambda over tasks needs at least 2 tasks; give lam or noise")
        folds = np.array_split(np.random.default_rng(0).permutation(m), min(int(self.n_folds), m))
        grid = scale * np.logspace(0, -4, int(self.n_lambdas))
        scores = np.zeros(grid.size)
        # the kernel ridge regression that scores k_hat has k_hat at a fixed amplitude (its largest
        # weight 1); its regulariser, the residual variance, is in y's units squared. Taken relative
        # to y's second moment, the pair is unit-free: lambda scales with y and the support does not
        # move (hostile-input user test: y x 100 picked all 7 kernels where y x 1 picked the 2 true)
        moment = float(np.mean(np.concatenate([np.ravel(y) for y in ys]) ** 2))
        for held in folds:
            train = np.setdiff1d(np.arange(m), held)
            G, c, yy, w = self._statistics([features[i] for i in train], [ys[i] for i in train])
            beta = None
            for i, lam in enumerate(grid):
                result = solve_group_lasso(G, c, w, groups, lam, yy=yy, beta0=beta, tol=self.tol * scale)
                beta = result.beta
                weights = np.array([np.linalg.norm(beta[:, g]) for g in groups])
                residual = sum(
                    float(np.sum((ys[t] - features[t] @ beta[k]) ** 2)) for k, t in enumerate(train)
                ) / sum(features[t].shape[0] for t in train)
                ridge = residual / moment if moment > 0 else residual
                scores[i] += sum(_loo_error(features[t], ys[t], weights, groups, ridge) for t in held)
        scores /= m
        self.cv_scores_ = (grid, scores)
        return float(grid[int(np.argmin(scores))])

    # ------------------------------------------------------------------ confidence bounds
    def bound(
        self,
        B: float,
        sigma: float,
        T: int,
        delta: float | None = None,
        eps: float = 0.0,
    ) -> MetaKeLBound:
        """The confidence schedule of 000 Thm 5 / Cor. 7 for GP-UCB with ``kernel_``.

        ``nu_t = B (1 + eps/(2 c1)) + sigma sqrt(d_hat log(1 + sbar^-2 t w) + 2 + 2 log(1/delta))``,
        ``sbar = 1 + 2/T`` (use ``GP(meta.kernel_, noise=sbar**2)`` as Eq. 2 does), with ``w`` the
        largest weight of ``kernel_``, ``max_j eta_hat_j / c1``: the information gain bound of the
        last line of Lemma 13's proof. Cor. 7 prints ``t / c1`` there, which assumes
        ``max_j ||beta_hat^(j)|| = 1``; here the group norms grow with the number of tasks (about
        ``sqrt(m)``) and ``c1`` is the smallest of them, so ``t / c1`` would shrink as tasks are added
        while the kernel (every weight >= 1) does not change. ``eps`` is epsilon(n, m) of Thm 4,
        which depends on the unknown compatibility constant kappa; it defaults to 0 (its value in the
        limit of much meta-data).

        When Meta-KeL selected no kernel, ``kernel_`` is ``k_full = 1/p sum_j k_j`` (000 eq. A.1) and
        the schedule describes it: Thm 5's argument needs only a kernel of the form of eq. 7 whose
        RKHS contains f with a known norm bound, and k_full is that form with every weight 1 and
        ``c1 = p`` (so ``w = 1/p``), feature dimension ``d = sum_j d_j`` over all p base kernels. Its
        RKHS contains H_{k*} with no meta-data (000 App. A.2), and for
        ``f = sum_j sqrt(eta*_j) beta_j^T phi_j``,
        ``||f||_{k_full}^2 = p sum_j eta*_j ||beta_j||^2 <= p ||f||_{k*}^2`` since ``||eta*||_1 <= 1``
        (000 Section 2): the norm bound is ``sqrt(p) B`` (``B`` stays the bound on ``||f||_{k*}``),
        and ``eps``, the meta-learning error of Thm 4, does not enter (it is set to 0).
        """
        self._check_fitted()
        if self.support_.size == 0:  # kernel_ is k_full (see _set_kernel)
            p = len(self.base_)
            return MetaKeLBound(
                B=float(np.sqrt(p)) * B,
                sigma=sigma,
                d_hat=int(sum(int(kernel.dim) for kernel in self.base_)),
                c1=float(p),
                T=T,
                delta=self.delta if delta is None else delta,
                eps=0.0,
            )
        c1 = self.c1_
        weight = float(np.max(self.weights_[self.support_])) / c1
        return MetaKeLBound(
            B=B,
            sigma=sigma,
            d_hat=self.d_hat_,
            c1=c1,
            T=T,
            delta=self.delta if delta is None else delta,
            eps=eps,
            weight=weight,
        )

    @property
    def k_full(self) -> Kernel:
        """k_full of eq. A.1 for the same base kernels."""
        return full_kernel(self.base)

    def _check_fitted(self) -> None:
        if not hasattr(self, "weights_"):
            raise self._not_fitted("fit(tasks)")

    def __sklearn_is_fitted__(self) -> bool:
        return "weights_" in self.__dict__

    def __repr__(self) -> str:
        state = f", support={self.support_.tolist()}" if hasattr(self, "support_") else ""
        return f"MetaKeL(p={len(self.base)}, lam={self.lam!r}{state})"


def _is_pair(task) -> bool:
    """Whether ``task`` can be an (X, y) pair (a sequence of two; an array is not)."""
    return isinstance(task, Sequence) and len(task) == 2


def _loo_error(F: np.ndarray, y: np.ndarray, weights: np.ndarray, groups, noise_var: float) -> float:
    """Sum of leave-one-out squared errors of kernel ridge regression with k = sum_j w_j phi_j phi_j^T."""
    active = [g for j, g in enumerate(groups) if weights[j] > 0]
    if not active:
        return float(np.sum(y**2))
    scale = weights[weights > 0].max()
    Z = np.hstack([F[:, g] * np.sqrt(weights[j] / scale) for j, g in enumerate(groups) if weights[j] > 0])
    A = Z @ Z.T + max(noise_var, 1e-12) * np.eye(F.shape[0])
    try:
        Ainv = np.linalg.inv(A)
    except np.linalg.LinAlgError:
        return float(np.sum(y**2))
    residual = (Ainv @ y) / np.diag(Ainv)
    return float(np.sum(residual**2))
