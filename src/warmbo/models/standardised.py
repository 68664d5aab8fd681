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
from ..kernels.multitask import MultiTaskKernel
from .base import ModelBase
from .multitask import MultiTaskGP, as_task_values
from .nystrom import BudgetedMultiTaskGP
from .task_structure import learn_task_kernel

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
            return mean, float(np.max(self.scale_)) ** 2 * unc
        return mean, unc * self.scale_[None, :, None] * self.scale_[None, None, :]

    @blas_limited
    def add(self, X, Y) -> StandardisedMultiTaskGP:
        """Condition on more observations (on ``fit``'s scale) without re-standardising."""
        self.model_.add(X, (np.asarray(Y, dtype=np.float64) - self.mean_) / self.scale_)
        return self

    def __repr__(self) -> str:
        return f"StandardisedMultiTaskGP(kernel={self.kernel!r}, noise={self.noise!r})"
