"""The default surrogate of the optimizer, and the plain ML-II GP the transfer models build on.

The default (session 9, issue 15) is chosen on the quality benchmark's twelve problems and three
problems with irrelevant coordinates (``bench/model_variants.py``, 10 seeds; ``docs/optimizer.md``,
"The default model"): a ``Constant * Matern-5/2`` ARD GP whose hyperparameters are MAP estimates under
BoTorch's dimension-scaled log-normal priors, read as BoTorch reads them (``DIMENSION_SCALED``), with
a fitted constant prior mean (``fit_mean=True``). Crossing warmbo's and BoTorch's model and search
(``bench/cross_loop.py``) showed the model, not the search, to be what set BoTorch ahead at d >= 10.
"""

from __future__ import annotations

from ..kernels import Kernel
from .gp import _FIT_FTOL, GP, SCIPY_FTOL, default_kernel
from .hyperprior import DIMENSION_SCALED

__all__ = ["default_model", "ml2_model"]


def default_model(dim: int, seed: int | None = None, kernel: Kernel | None = None) -> GP:
    """The optimizer's default model: GP with ``Constant * Matern-5/2`` ARD (or ``kernel``), MAP
    hyperparameters under :data:`~warmbo.models.hyperprior.DIMENSION_SCALED` (lengthscales and noise),
    a fitted constant prior mean, standardised y, a scalar noise fitted in 1e-6..1; its fits stop at
    a relative change of 1e-6 (``GP(fit_tolerance=...)``, cheap refits of long studies)."""
    return ml2_model(dim, seed, kernel).clone(
        hyperprior=DIMENSION_SCALED, fit_mean=True, fit_tolerance=_FIT_FTOL
    )


def ml2_model(dim: int, seed: int | None = None, kernel: Kernel | None = None) -> GP:
    """GP with ``Constant * Matern-5/2`` ARD (or ``kernel``), plain ML-II (no priors), the data's mean
    as the prior mean, standardised y: the optimizer's default before session 9, and the base of the
    transfer models (their benchmark, issue 14, was measured with it). Its fits run to scipy's own
    tolerance (:data:`~warmbo.models.gp.SCIPY_FTOL`): the transfer models fit each source once from
    one start and the target on a few points, where the looser default of ``GP`` cost them quality
    (``GP``'s ``fit_tolerance``)."""
    return GP(
        default_kernel(dim) if kernel is None else kernel,
        noise=1e-4,
        optimizer="ml2",
        normalize_y=True,
        n_restarts=2,
        fit_noise=True,
        noise_bounds=(1e-6, 1.0),
        seed=seed,
        fit_tolerance=SCIPY_FTOL,
    )
