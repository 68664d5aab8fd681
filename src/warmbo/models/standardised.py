"""The multi-task posterior on per-task standardised values, with its task structure learned or given.

This is the model :class:`~warmbo.MultiTaskOptimizer` fits at every ask (001's MT-KB / MT-BKB
posterior, eqs. 1-2, on standardised outputs):

- **Scale.** ``fit(X, Y)`` standardises each task by the mean ``m_i`` and sd ``s_i`` of its
  observations, so one regulariser eta and one task matrix fit tasks measured in different units;
  predictions are mapped back. ``predict(X, "norm")`` returns ``max_i s_i^2 ||Gamma_t(x, x)||``, so
  that its square root is a valid width on the original scale (``||S (f - mu)||_2 <= max_i s_i
  ||f - mu||_2``); ``"full"`` returns ``S Gamma_t S``.
- **Task structure.** A :class:`~warmbo.kernels.multitask.MultiTaskKernel` describes the values as
  given to ``fit``; the model sees ``D y`` with ``D = diag(1/s)`` and so uses ``kernel.rescaled(1/s)``
  (each kernel keeps its own structure). A scalar kernel k gets its task structure from the data:
  :func:`~warmbo.models.task_structure.learn_task_kernel` (B estimated and shrunk, or omega fitted).
- **Budget.** ``budget_eps`` set: the Nystrom-budgeted MT-BKB posterior
  (:class:`~warmbo.models.BudgetedMultiTaskGP`); otherwise the exact :class:`~warmbo.models.MultiTaskGP`.

Everything else (information gain, the dictionary of a budgeted model, the noise) is the inner
model's, read through attribute access, so confidence bounds read it unchanged.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._threads import blas_limited
from ..kernels.multitask import ICM, MultiTaskKernel, as_task_matrix
from .base import ModelBase
from .multitask import MultiTaskGP, MultiTaskPrediction, as_task_values
from .nystrom import BudgetedMultiTaskGP
from .task_structure import learn_task_kernel, shrunk_B

__all__ = ["StandardisedMultiTaskGP"]


class StandardisedMultiTaskGP(ModelBase):
    """MT-GP on per-task standardised outputs (see the module docstring).

    Parameters
    ----------
    kernel : MultiTaskKernel or Kernel
        Multi-task kernel of the values given to ``fit``, or a scalar kernel whose task structure is
        learned (``task_similarity``).
    noise : float
        The regulariser eta in standardised units (001 uses 0.1).
    task_similarity : {"estimate", "uniform"}
        How a scalar kernel's task structure is learned.
    budget_eps : float, optional
        MT-BKB's accuracy eps (001 Thm 3); None: the exact posterior.
    horizon : int
        MT-BKB's horizon T (its dictionary's sampling parameter q depends on it).
    seed : int, optional
        Seed of MT-BKB's dictionary resampling.

    Attributes
    ----------
    mean_, scale_ : (n,) arrays
        Per-task standardisation.
    kernel_ : MultiTaskKernel
        The kernel of the standardised values.
    model_ : MultiTaskGP or BudgetedMultiTaskGP
        The posterior on standardised values.
    b_ : float
        ``max_s ||y_s||_2`` over the standardised observations: 001 Section 5's norm bound when f is
        not drawn from the RKHS.
    """

    def __init__(
        self,
        kernel,
        noise: float = 0.1,
        task_similarity: str = "estimate",
        budget_eps: float | None = None,
        horizon: int = 1000,
        seed: int | None = None,
    ):
        self.kernel = kernel
        self.noise = noise
        self.task_similarity = task_similarity
        self.budget_eps = budget_eps
        self.horizon = horizon
        self.seed = seed

    #: scikit-learn's conventions for a regressor of vector outputs (Y of shape (t, n_tasks))
    _estimator_type = "regressor"
    _multi_output_only = True

    def score(self, X, Y, sample_weight=None) -> float:
        """R^2 of the posterior mean (on ``fit``'s scale) at X against Y, averaged over the tasks, as
        scikit-learn's multi-output regressors score: what ``cross_val_score`` maximises when given
        no ``scoring``."""
        from sklearn.metrics import r2_score

        return float(r2_score(Y, self.predict(X, cov="none"), sample_weight=sample_weight))

    def __getattr__(self, name):
        if name.startswith("__"):  # copy/pickle probing
            raise AttributeError(name)
        if name == "model_":
            raise self._not_fitted()
        return getattr(self.model_, name)

    @property
    def n_observations(self) -> int:
        return 0 if "model_" not in self.__dict__ else self.model_.n_observations

    @property
    def X_train_(self) -> np.ndarray:
        return self.model_.X_train_

    @property
    def y_train_(self) -> np.ndarray:
        """The observed values on ``fit``'s scale (t, n)."""
        return self.mean_ + self.scale_ * self.model_.Y_train_

    @blas_limited
    def fit(self, X, Y) -> StandardisedMultiTaskGP:
        """Standardise each task, choose the kernel of the standardised values, fit the posterior."""
        X = np.asarray(X, dtype=np.float64)
        if isinstance(self.kernel, MultiTaskKernel):
            n_tasks = self.kernel.n_tasks
        elif np.ndim(Y) == 2:
            n_tasks = int(np.shape(Y)[1])
        else:
            raise ValueError(f"Y must have shape (t, n_tasks), got {np.shape(Y)}")
        Y = as_task_values(Y, n_tasks, X.shape[0], "Y")
        mean = Y.mean(axis=0)
        scale = Y.std(axis=0)
        scale = np.where(scale > 0, scale, 1.0)
        Ys = (Y - mean) / scale
        if isinstance(self.kernel, MultiTaskKernel):
            kernel = self.kernel.rescaled(1.0 / scale)
        else:
            kernel = learn_task_kernel(self.kernel, X, Ys, self.noise, self.task_similarity)
        if self.budget_eps is None:
            model = MultiTaskGP(kernel, self.noise)
        else:
            model = BudgetedMultiTaskGP(
                kernel, self.noise, eps=self.budget_eps, horizon=self.horizon, seed=self.seed
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            model.fit(X, Ys)
        self.mean_, self.scale_, self.kernel_, self.model_ = mean, scale, kernel, model
        self.b_ = float(np.max(np.linalg.norm(Ys, axis=1)))
        return self

    @blas_limited
    def predict(self, X, cov: str = "norm"):
        """Posterior mean (N, n) on the scale of ``fit``'s values, and the uncertainty ``cov`` asks
        for (``"norm"``: ``max_i s_i^2 ||Gamma_t(x, x)||``; ``"full"``: ``S Gamma_t S``; ``"none"``:
        the mean only)."""
        out = self.model_.predict(X, cov=cov)
        if cov == "none":
            return self.mean_ + self.scale_ * out
        mean, unc = out
        mean = self.mean_ + self.scale_ * mean
        if cov == "norm":
            return MultiTaskPrediction(mean, float(np.max(self.scale_)) ** 2 * unc)
        return mean, unc * self.scale_[None, :, None] * self.scale_[None, None, :]

    @property
    def loo_closed_form(self) -> bool:
        """Whether :meth:`loo` applies: the exact posterior (no ``budget_eps``) with an ICM kernel
        given (``UniformTask`` included), or with a scalar kernel and ``task_similarity="estimate"``.
        Not with a fitted omega (``"uniform"``: a likelihood search per refit), MT-BKB's random
        dictionary, or Independent / LCM kernels."""
        if self.budget_eps is not None:
            return False
        if isinstance(self.kernel, MultiTaskKernel):
            return isinstance(self.kernel, ICM)
        return self.task_similarity == "estimate"

    @blas_limited
    def loo(self, index=None):
        """Leave-one-out predictions at the training points, equal to refitting without each one.

        For point i it returns what ``self.clone().fit(X_{-i}, Y_{-i})`` predicts at x_i (the
        standardisation and the estimated task matrix B refitted on the other points too), from the
        fitted model's decomposition of the scalar Gram matrix of all t points, ``K = R diag(s) R^T``
        plus a null space where points repeat (``G = (K + eta I)^{-1}`` and
        ``(xi K + eta I)^{-1}`` below are formed from it exactly):

        - the other points' mean ``m_i`` and sd ``s_i`` per task, and so their kernel: given ICM
          ``k D B D`` with ``D = diag(1/s_i)``, or estimated ``B_i = Y_i^T (K_{-i} + eta I)^{-1} Y_i /
          (t - 1)`` (then shrunk; Y_i the other points' values so standardised), where the rank-one
          downdate ``Z_{-i}^T (K_{-i} + eta I)^{-1} Z_{-i} = Z^T G Z - (G Z)_i^T (G Z)_i / G_ii``
          gives it for ``Z = [Y, 1]``;
        - the block form of Rasmussen & Williams eq. 5.12 for the joint Gaussian of all t points' task
          vectors, ``A = K (x) B_i + eta I`` (standardised units): with ``W = [A^{-1}]_{ii}`` (n x n),
          ``mu_{-i} = y_i - W^{-1} [A^{-1} y]_i`` and ``Gamma_{-i}(x_i, x_i) = W^{-1} - eta I``. With
          ``B_i = U diag(xi) U^T``, ``W = U diag(w) U^T``, ``w_a = [(xi_a K + eta I)^{-1}]_ii``, so
          ``Gamma_{-i} = U diag(1/w - eta) U^T``, the ICM posterior's ``c_a(x_i)``.

        No factorisation beyond the fit's, then O(t n^2) per point, against O(t^3) per refit. Raises
        ``NotImplementedError`` when :attr:`loo_closed_form` is False.

        Parameters
        ----------
        index : array of int, optional
            Training points to leave out (default: all).

        Returns
        -------
        mean : (m, n)
            LOO means on ``fit``'s scale.
        Gamma : (m, n, n)
            ``predict(x_i, cov="full")`` of the refitted model: ``S_i Gamma_{-i}(x_i, x_i) S_i``.
        noise : (m, n)
            The refitted model's noise variance per task, ``eta s_i^2``.
        norm : (m,)
            ``predict(x_i, cov="norm")`` of the refitted model: ``max_k s_ik^2 ||Gamma_{-i}(x_i, x_i)||``.
        """
        if not self.loo_closed_form:
            raise NotImplementedError(
                f"{self!r} has no closed-form leave-one-out (budget_eps, task_similarity='uniform' or a "
                "non-ICM multi-task kernel): refit without each point instead"
            )
        Ys = self.model_.Y_train_  # standardised by the fit on all t points
        t, n = Ys.shape
        if t < 2:
            raise ValueError("leave-one-out needs at least 2 observations")
        index = np.arange(t) if index is None else np.asarray(index, dtype=np.intp).reshape(-1)
        eta = float(self.noise)
        given = isinstance(self.kernel, MultiTaskKernel)
        k = self.kernel.kernel if given else self.kernel
        s, R, group = self.model_._gram_basis()  # the fit's own eigendecomposition: no other one
        counts = np.bincount(group).astype(np.float64)

        def group_mean(V):  # R R^T V: the mean over each point's repeats
            sums = np.zeros((counts.size,) + V.shape[1:])
            np.add.at(sums, group, V)
            return (sums / counts.reshape((-1,) + (1,) * (V.ndim - 1)))[group]

        Z = np.column_stack([Ys, np.ones(t)])
        RtZ = R.T @ Z  # (u, n + 1)
        null_y = Ys - group_mean(Ys)  # the component of Y in K's null space (repeats)
        null_ii = 1.0 - 1.0 / counts[group]  # [I - R R^T]_ii
        if not given:  # G = R diag(1 / (s + eta)) R^T + (I - R R^T) / eta
            GZ = R @ (RtZ / (s + eta)[:, None]) + (Z - group_mean(Z)) / eta
            H = Z.T @ GZ
            G_diag = (R * R) @ (1.0 / (s + eta)) + null_ii / eta
        mean = np.empty((index.size, n))
        cov = np.empty((index.size, n, n))
        noise = np.empty((index.size, n))
        norm = np.empty(index.size)
        for row, i in enumerate(index):
            rest = np.delete(Ys, i, axis=0)
            delta, sd = rest.mean(axis=0), rest.std(axis=0)
            scale = self.scale_ * sd  # the other points' sd per task, on fit's scale
            scale = np.where(scale > 0, scale, 1.0)
            ratio = self.scale_ / scale  # the refit's standardised values are (Ys - delta) * ratio
            if given:
                kernel = self.kernel.rescaled(1.0 / scale)
            else:
                W = H - np.outer(GZ[i], GZ[i]) / G_diag[i]  # Z_{-i}^T (K_{-i} + eta I)^{-1} Z_{-i}
                C = np.vstack([np.eye(n), -delta])  # Z_{-i} C = Ys_{-i} - delta
                quad = ratio[:, None] * (C.T @ W @ C) * ratio[None, :]
                B = as_task_matrix((quad + quad.T) / (2 * (t - 1)))
                kernel = ICM(k, shrunk_B(B, t - 1))
            xi, U = kernel.eig
            denom = s[:, None] * xi[None, :] + eta  # eigenvalues of xi_a K + eta I on R's columns
            P = ((RtZ[:, :n] - np.outer(RtZ[:, n], delta)) * ratio) @ U  # R^T y U
            q = R[i]
            w = (q * q) @ (1.0 / denom) + null_ii[i] / eta  # [(xi_a K + eta I)^{-1}]_ii
            v = q @ (P / denom) + (null_y[i] * ratio) @ U / eta  # [(xi_a K + eta I)^{-1} y U]_i
            coord = ((Ys[i] - delta) * ratio) @ U - v / w
            c = np.maximum(1.0 / w - eta, 0.0)
            mean[row] = self.mean_ + self.scale_ * delta + scale * (U @ coord)
            cov[row] = (U * c) @ U.T * scale[:, None] * scale[None, :]
            noise[row] = eta * scale**2
            norm[row] = float(np.max(scale)) ** 2 * float(np.max(c))
        return mean, cov, noise, norm

    @blas_limited
    def add(self, X, Y) -> StandardisedMultiTaskGP:
        """Condition on more observations (on ``fit``'s scale) without re-standardising."""
        self.model_.add(X, (np.asarray(Y, dtype=np.float64) - self.mean_) / self.scale_)
        return self

    def __repr__(self) -> str:
        return f"StandardisedMultiTaskGP(kernel={self.kernel!r}, noise={self.noise!r})"
