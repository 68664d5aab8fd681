"""Tuned-prior BO: a GP prior shaped by auxiliary data through free m-kernels (004, Shilton et al.).

004 Algorithm 1: given auxiliary data A = {(a_i, y_i)} that share the objective's features but not
its values (a flipped or older device, a different setting), train a kernel learner on A with the
2-kernel K_2 of a free kernel, keep its dual weights alpha, and optimise with the Mercer kernel of
004 Thm 1 (eq. 14),

.. math:: K^A_2(x, x') = \\sum_{i,j} \\alpha_i \\alpha_j K_4(a_i, a_j, x, x'),

which has the free kernel's feature map theta and feature weights ``tau_A = tau * sum_i alpha_i
theta(a_i)``: the learner's weight on each feature becomes the prior's (eq. 15).

Learners: ``"svm"`` (scikit-learn's SVC for two-class data, as in 004's XOR example, SVR
otherwise), ``"krr"`` (kernel ridge regression, ``alpha = (K + I/C)^-1 y``) and ``"lssvm"`` (KRR on
centred outputs: an LS-SVM's bias absorbs the mean). Hyperparameters not given (C, and the free
kernel's scale for SE / Sinh / Exponential) are chosen on a grid by leave-one-out error on A, as 004
does (closed form for KRR/LS-SVM; refits for the SVM, leave-one-out up to 30 points and 10-fold
beyond). If A is flat, alpha vanishes and so does K^A_2 (for the SVM and the LS-SVM; plain KRR has
no bias, so flat non-zero data keep alpha != 0): the base kernel K_2 is then used, with a warning.

Cost: K^A_2 needs O(|A|^2 d) per pair of points (measured for a 50 x 256 Gram matrix in 2-D:
0.5 s at |A| = 50, 5.1 s at 200, 17 s at 400). Points with alpha_i = 0 (non-support vectors of the
SVM) drop out. ``max_aux`` caps |A|: the learner is fitted on a well-spread subset of that size
(greedy farthest-point sampling in input space), so K^A_2 is exact for the subset; the relative
difference to the kernel of the full data on probe points is reported as ``truncation_error_``.
(Keeping the largest |alpha| of the full fit instead fails for ridge-type duals, which are dense
and cancel: relative kernel errors of 7 to 25 in the same test.)
"""

from __future__ import annotations

import inspect
import numbers
import warnings

import numpy as np

from .._threads import blas_limited
from .._validation import as_training_points, as_values, check_int
from .._warnings import user_stacklevel
from ..kernels.base import Affine
from ..kernels.free import FreeKernel, TunedKernel
from ..models.base import ModelBase

__all__ = ["TunedPrior"]

_LEARNERS = ("svm", "krr", "lssvm")


class TunedPrior(ModelBase):
    """Learn a weight prior from auxiliary data and expose the kernel K^A_2 it induces (004 Thm 1).

    Parameters
    ----------
    free_kernel : FreeKernel
        A free kernel from :mod:`warmbo.kernels.free` (e.g. ``free.SE(0.5)``, ``free.Polynomial(2)``).
    C : float, optional
        Regularisation of the learner (None: chosen by leave-one-out error on A).
    learner : {"svm", "krr", "lssvm"}
        The kernel machine trained on A.
    normalize : bool
        Cosine-normalise K^A_2 (unit prior variance).
    tune_scale : bool
        Also choose the free kernel's scale (SE lengthscale, Sinh/Exponential scale) by LOO.
    max_aux : int, optional
        Fit on at most this many auxiliary points (a farthest-point subset, at least 2) to bound the cost.
    centre : bool
        Inputs are in the unit cube (the optimizer's encoding): learn on ``2x - 1`` in [-1, 1], as
        004 normalises its domains, and return ``kernel_`` on the cube (``Affine(K^A_2, 2, -1)``).
        Free kernels are not translation invariant (their monomial features are centred at the
        origin): on the flipped functions of 004, learning on [0, 1] instead of [-1, 1] lost to plain
        BO on ackley (final regret 0.67 vs 0.13) where the centred kernel won (0.01).

    Attributes
    ----------
    alpha_ : ndarray (|A|,)
        Dual weights (signed: y_i times the multipliers for the SVM).
    bias_ : float
        The learner's bias b (004 footnote 2): the SVM's intercept, the LS-SVM's mean of y, 0 for
        KRR. It enters the leave-one-out predictions, not K^A_2.
    free_ : FreeKernel
        The free kernel after tuning.
    C_ : float
    kernel_ : Kernel
        K^A_2 (a :class:`~warmbo.kernels.free.TunedKernel`), or K_2 when alpha vanishes.
    vanished_ : bool
    loo_error_ : float
        Leave-one-out error of the chosen learner on A.

    Examples
    --------
    >>> import numpy as np
    >>> from warmbo import TunedPrior
    >>> from warmbo.kernels import free
    >>> A = np.array([[-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0], [1.0, 1.0]])
    >>> tp = TunedPrior(free.Polynomial(2, 1.0), C=1.0, normalize=False).fit(A, [-1, 1, 1, -1])
    >>> np.round(tp.alpha_, 6).tolist()
    [-0.125, 0.125, 0.125, -0.125]
    """

    def __init__(
        self,
        free_kernel: FreeKernel,
        C: float | None = None,
        learner: str = "svm",
        normalize: bool = True,
        tune_scale: bool = True,
        max_aux: int | None = None,
        centre: bool = False,
    ):
        self.free_kernel = free_kernel
        self.C = C
        self.learner = learner
        self.normalize = normalize
        self.tune_scale = tune_scale
        self.max_aux = max_aux
        self.centre = centre

    # ------------------------------------------------------------------ learners
    @staticmethod
    def _is_classification(y: np.ndarray) -> bool:
        return np.unique(y).size == 2

    def _dual(self, K: np.ndarray, y: np.ndarray, C: float, tol: float = 1e-8) -> tuple[np.ndarray, float]:
        """Dual weights alpha and bias b of the learner trained on the Gram matrix K (|A| x |A|).

        The learner predicts ``g_A(x) = sum_i alpha_i K_2(a_i, x) + b`` (004 footnote 2: the SVM's bias
        adds the constraint sum(alpha) = 0). KRR has no bias (b = 0); the LS-SVM's bias is the mean of
        y. K^A_2 uses alpha only (eq. 14); the bias matters for the leave-one-out choice of C."""
        n = y.size
        if self.learner in ("krr", "lssvm"):
            bias = float(y.mean()) if self.learner == "lssvm" else 0.0
            return np.linalg.solve(K + np.eye(n) / C, y - bias), bias
        alpha = np.zeros(n)
        if self._is_classification(y):
            from sklearn.svm import SVC

            labels = np.where(y == np.max(y), 1, -1)
            model = SVC(C=C, kernel="precomputed", tol=tol).fit(K, labels)
        else:
            from sklearn.svm import SVR

            epsilon = 0.01 * float(np.std(y) or 1.0)
            model = SVR(C=C, kernel="precomputed", tol=tol, epsilon=epsilon).fit(K, y)
        alpha[model.support_] = model.dual_coef_[0]
        return alpha, float(model.intercept_[0])

    def _loo_error(self, K: np.ndarray, y: np.ndarray, C: float) -> float:
        n = y.size
        if self.learner in ("krr", "lssvm"):
            target = y - y.mean() if self.learner == "lssvm" else y
            Ginv = np.linalg.inv(K + np.eye(n) / C)
            residual = (Ginv @ target) / np.diag(Ginv)
            return float(np.mean(residual**2))
        # SVMs have no closed-form LOO: refit per fold (LOO up to 30 points, 10 folds beyond), with a
        # looser solver tolerance than the final fit (the error, not the weights, is compared here)
        folds = np.array_split(np.random.default_rng(0).permutation(n), n if n <= 30 else 10)
        errors = []
        classify = self._is_classification(y)
        for held in folds:
            train = np.setdiff1d(np.arange(n), held)
            if classify and np.unique(y[train]).size < 2:
                errors.append(1.0)
                continue
            alpha, bias = self._dual(K[np.ix_(train, train)], y[train], C, tol=1e-4)
            pred = K[np.ix_(held, train)] @ alpha + bias
            if classify:
                labels = np.where(y[held] == np.max(y), 1, -1)
                errors.append(float(np.mean(np.sign(pred) != labels)))
            else:
                errors.append(float(np.mean((pred - y[held]) ** 2)))
        return float(np.mean(errors))

    # ------------------------------------------------------------------ fit
    @blas_limited
    def fit(self, X_aux, y_aux) -> TunedPrior:
        """Train the learner on the auxiliary data A and build K^A_2."""
        if not isinstance(self.free_kernel, FreeKernel):
            raise ValueError(
                f"free_kernel must be a free kernel from warmbo.kernels.free, got {self.free_kernel!r}"
            )
        if self.learner not in _LEARNERS:
            raise ValueError(f"learner must be one of {_LEARNERS}, got {self.learner!r}")
        if self.C is not None and (not isinstance(self.C, numbers.Real) or not self.C > 0):
            raise ValueError(f"C must be a positive number or None, got {self.C!r}")
        if self.max_aux is not None:  # the learner needs two points (as the data do)
            check_int(self.max_aux, "max_aux (or None)", 2)
        A = as_training_points(X_aux, "X_aux")
        y = as_values(y_aux, "y_aux", A.shape[0])
        if self.centre:
            A = 2.0 * A - 1.0
        if A.shape[0] < 2:
            raise ValueError(f"auxiliary data need at least 2 points, got {A.shape[0]} sample(s)")
        full = (A, y)
        if self.max_aux is not None and A.shape[0] > self.max_aux:
            keep = _farthest_points(A, int(self.max_aux))
            A, y = A[keep], y[keep]
        candidates = [self.free_kernel]
        if self.tune_scale and self.free_kernel.scale_value is not None:
            base = self.free_kernel.scale_value
            candidates = [self.free_kernel.rescaled(base * f) for f in (0.25, 0.5, 1.0, 2.0, 4.0)]
        Cs = [float(self.C)] if self.C is not None else list(np.logspace(-2, 3, 6))
        best = None
        for free in candidates:
            K = free.order(2).gram(A)
            for C in Cs:
                error = self._loo_error(K, y, C) if len(candidates) * len(Cs) > 1 else float("nan")
                if best is None or error < best[0]:
                    best = (error, free, C, K)
        self.loo_error_, self.free_, self.C_, K = best
        self.alpha_, self.bias_ = self._dual(K, y, self.C_)
        self.X_aux_ = A
        self._build_kernel(A, float(np.max(np.abs(y - np.mean(y)))))
        self.truncation_error_ = 0.0
        if A.shape[0] < full[0].shape[0] and not self.vanished_:
            self.truncation_error_ = self._reduction_error(full[0], full[1])
        return self

    def _reduction_error(self, A_full: np.ndarray, y_full: np.ndarray) -> float:
        """Largest difference between K^A_2 of the subset and of all data on 20 probe points (normalised)."""
        alpha, _ = self._dual(self.free_.order(2).gram(A_full), y_full, self.C_)
        full = TunedKernel(self.free_, A_full, alpha, normalize=True)
        reduced = TunedKernel(self.free_, self.X_aux_, self.alpha_, normalize=True)
        probe = A_full[_farthest_points(A_full, min(20, A_full.shape[0]))]
        return float(np.max(np.abs(full(probe, probe) - reduced(probe, probe))))

    def _build_kernel(self, A: np.ndarray, spread: float) -> None:
        """``spread``: the largest deviation of y from its mean. The dual weights are in y's units, so
        they are "all zero" relative to it (an absolute 1e-10 called the data flat once y was
        scaled by 1e-6: hostile-input user test)."""
        alpha = self.alpha_
        scale = float(np.max(np.abs(alpha))) if alpha.size else 0.0
        base = self.free_.order(2)
        if scale <= 1e-10 * spread or spread == 0.0:
            self._vanish(base, "the learner's dual weights are all zero (flat auxiliary data?)")
            return
        raw = TunedKernel(self.free_, A, alpha / scale, normalize=False)  # (quadratic in alpha: unit-free)
        if float(np.max(raw(A))) <= 1e-12 * max(float(np.max(np.abs(base(A)))), 1e-300):
            self._vanish(base, "K^A_2 vanishes on the auxiliary points")
            return
        self.vanished_ = False
        self.kernel_ = self._on_inputs(TunedKernel(self.free_, A, alpha, normalize=self.normalize))

    def _on_inputs(self, kernel):
        """The kernel on the caller's inputs (undoing the centring of ``centre=True``)."""
        return Affine(kernel, 2.0, -1.0) if self.centre else kernel

    def _vanish(self, base, why: str) -> None:
        warnings.warn(
            f"{why}; falling back to the free kernel's K_2", RuntimeWarning, stacklevel=user_stacklevel()
        )
        self.vanished_ = True
        self.kernel_ = self._on_inputs(base)

    def tau_A(self) -> np.ndarray:
        """Feature weights of K^A_2 by Thm 1, ``tau * sum_i alpha_i theta(a_i)`` (finite feature maps)."""
        A = self.X_aux_
        return self.free_.tau_for(A.shape[1]) * (self.alpha_ @ self.free_.theta(A))

    def __repr__(self) -> str:
        # every setting changed from its default (a user test's normalize=False went unshown), as
        # scikit-learn's repr does; C and learner always, as before
        parts = [repr(self.free_kernel), f"C={self.C!r}", f"learner={self.learner!r}"]
        defaults = inspect.signature(type(self).__init__).parameters
        for name in ("normalize", "tune_scale", "max_aux", "centre"):
            value = getattr(self, name)
            if value != defaults[name].default:
                parts.append(f"{name}={value!r}")
        return f"TunedPrior({', '.join(parts)})"

    def __sklearn_is_fitted__(self) -> bool:
        return "kernel_" in self.__dict__

    @property
    def n_features_in_(self) -> int:
        """Number of input coordinates of the auxiliary data (an AttributeError before :meth:`fit`)."""
        if "X_aux_" not in self.__dict__:
            raise AttributeError("this TunedPrior is not fitted yet: it has no n_features_in_")
        return int(self.X_aux_.shape[1])


def _farthest_points(X: np.ndarray, k: int) -> np.ndarray:
    """Indices of k well-spread rows of X: greedy farthest-point sampling from the first row."""
    chosen = [0]
    distance = np.linalg.norm(X - X[0], axis=1)
    for _ in range(1, k):
        nxt = int(np.argmax(distance))
        chosen.append(nxt)
        distance = np.minimum(distance, np.linalg.norm(X - X[nxt], axis=1))
    return np.array(chosen)
