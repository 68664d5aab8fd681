"""Priors on a GP's hyperparameters: MAP fitting instead of plain ML-II (issue 15).

:class:`LogNormalHyperprior` puts independent log-normal priors on the lengthscales and the noise
variance, the form BoTorch's standard GP uses since 2024 (Hvarfner, Hellsten & Nardi, "Vanilla
Bayesian optimization performs great in high dimensions", ICML 2024):

.. math:: \\ell_j \\sim \\mathrm{LogNormal}\\big(\\sqrt{2} + \\tfrac12 \\log d,\\ \\sqrt{3}\\big), \\qquad
          \\sigma_n^2 \\sim \\mathrm{LogNormal}(-4, 1),

for inputs on the unit cube (the optimizer's encoding) and standardised outputs. The prior's median
lengthscale grows like ``sqrt(d)``, which keeps the model from reading a few points in many
dimensions as a wiggly function, and its mass keeps lengthscales away from the upper bound that
ML-II runs to on flat or heavy-tailed objectives. The amplitude gets no prior.

MAP depends on the parametrisation, and the two readings differ by a factor ``exp(s^2) = e^3 = 20``
in where they pull the lengthscales (``density_of``):

- ``"value"`` (the default, what BoTorch optimises): the log density of ``ell`` itself is added to
  the log marginal likelihood, ``log p(ell) = -log ell - (log ell - mu)^2 / (2 s^2) + c``, as GPyTorch
  adds ``prior.log_prob(lengthscale)`` while it optimises an unconstrained raw parameter (no
  Jacobian). In ``theta = log ell`` the penalty is ``sum_j theta_j + (theta_j - mu)^2 / (2 s^2)``,
  gradient ``1 + (theta_j - mu) / s^2``; its minimum is the log-normal's mode ``exp(mu - s^2)``, 0.65
  at d = 10 on the unit cube (BoTorch also starts its fit there).
- ``"log"``: the density of ``theta = log ell``, a normal prior on ``theta``: the penalty is
  ``sum_j (theta_j - mu)^2 / (2 s^2)`` (the Jacobian cancels against the density's ``1/ell``),
  gradient ``(theta_j - mu) / s^2``, minimum at the median ``exp(mu)``, 13 at d = 10: a much smoother
  model than BoTorch's (this was the only reading before session 9; measured in ``docs/optimizer.md``).

The noise prior is read the same way (mode ``exp(-4 - 1) = 0.0067`` for ``"value"``).
Written by hand: a few lines, no library offers it for this GP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["LogNormalHyperprior", "DIMENSION_SCALED", "DIMENSION_SCALED_LOG"]


@dataclass(frozen=True)
class LogNormalHyperprior:
    """Log-normal priors on lengthscales (centre ``sqrt(2) + lengthscale_log_d * log(d)``, scale
    ``lengthscale_scale``) and on the noise variance (``noise_loc``, ``noise_scale``); ``density_of``
    says whether MAP maximises the density of the values (``"value"``, BoTorch's reading) or of their
    logarithms (``"log"``); see the module docstring."""

    lengthscale_loc: float = math.sqrt(2.0)
    lengthscale_log_d: float = 0.5
    lengthscale_scale: float = math.sqrt(3.0)
    noise_loc: float = -4.0
    noise_scale: float = 1.0
    density_of: str = "value"

    def __post_init__(self):
        if self.density_of not in ("value", "log"):
            raise ValueError(f"density_of must be 'value' or 'log', got {self.density_of!r}")

    def penalty(self, names, params: np.ndarray, fit_noise: bool, dim: int) -> tuple[float, np.ndarray]:
        """Minus the log prior density (up to a constant) of ``params`` = [theta, log noise] and its
        gradient. ``names`` are the kernel's theta names; entries named ``...lengthscale...`` get the
        lengthscale prior, the last entry the noise prior when ``fit_noise``."""
        return self.penalty_function(names, fit_noise, dim)(np.asarray(params, dtype=np.float64))

    def penalty_function(self, names, fit_noise: bool, dim: int):
        """:meth:`penalty` as a function of ``params`` alone, its constants worked out once (the
        hyperparameter search evaluates it at every step): with ``loc``, ``w = 1 / s^2`` (0 for
        entries without a prior) and ``j`` (1 for entries with a prior under ``"value"``),
        ``penalty = sum_k w_k (params_k - loc_k)^2 / 2 + j_k params_k``, gradient
        ``w_k (params_k - loc_k) + j_k``."""
        names = list(names)
        size = len(names) + bool(fit_noise)
        loc, weight, has_prior = np.zeros(size), np.zeros(size), np.zeros(size, dtype=bool)
        mu = self.lengthscale_loc + self.lengthscale_log_d * math.log(max(int(dim), 1))
        for j, name in enumerate(names):
            if "lengthscale" in name:
                loc[j], weight[j], has_prior[j] = mu, 1.0 / self.lengthscale_scale**2, True
        if fit_noise:
            loc[-1], weight[-1], has_prior[-1] = self.noise_loc, 1.0 / self.noise_scale**2, True
        # -log p(ell) has +log ell = +theta under "value" (see the module docstring)
        jacobian = has_prior * (1.0 if self.density_of == "value" else 0.0)

        def penalty(params: np.ndarray) -> tuple[float, np.ndarray]:
            if params.shape != (size,):
                raise ValueError(f"params must have shape ({size},), got {params.shape}")
            r = params - loc
            grad = r * weight
            value = 0.5 * float(r @ grad) + float(jacobian @ params)
            grad += jacobian
            return value, grad

        return penalty

    def lengthscale_mode(self, dim: int) -> float:
        """Where the penalty is least for a lengthscale: ``exp(mu - s^2)`` (``"value"``) or
        ``exp(mu)`` (``"log"``), ``mu = lengthscale_loc + lengthscale_log_d * log(dim)``."""
        mu = self.lengthscale_loc + self.lengthscale_log_d * math.log(max(int(dim), 1))
        return math.exp(mu - (self.lengthscale_scale**2 if self.density_of == "value" else 0.0))

    def log_density(self, kernel, noise_level: float | None, dim: int) -> float:
        """The log prior (up to the same constant) at a fitted kernel and noise level."""
        names = kernel.theta_names
        params = list(kernel.theta)
        fit_noise = noise_level is not None
        if fit_noise:
            params.append(math.log(noise_level))
        return -self.penalty(names, np.array(params), fit_noise, dim)[0]


#: The default prior: BoTorch's dimension-scaled lengthscale prior and its noise prior, as BoTorch
#: optimises them (density of the values).
DIMENSION_SCALED = LogNormalHyperprior()
#: The same priors read as densities of the log values (mode at the median; the pre-session-9 reading).
DIMENSION_SCALED_LOG = LogNormalHyperprior(density_of="log")
