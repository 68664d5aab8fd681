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

Because the hyperparameters are optimised in log space, ``theta = log ell``, a log-normal prior is a
normal prior on ``theta``: the MAP objective adds ``sum_j (theta_j - mu)^2 / (2 s^2)`` (the Jacobian of
the log transform cancels against the log-normal density's ``1/ell``) and its gradient
``(theta_j - mu) / s^2``. Written by hand: a few lines, no library offers it for this GP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["LogNormalHyperprior", "DIMENSION_SCALED"]


@dataclass(frozen=True)
class LogNormalHyperprior:
    """Log-normal priors on lengthscales (centre ``sqrt(2) + lengthscale_log_d * log(d)``, scale
    ``lengthscale_scale``) and on the noise variance (``noise_loc``, ``noise_scale``), in log space."""

    lengthscale_loc: float = math.sqrt(2.0)
    lengthscale_log_d: float = 0.5
    lengthscale_scale: float = math.sqrt(3.0)
    noise_loc: float = -4.0
    noise_scale: float = 1.0

    def penalty(self, names, params: np.ndarray, fit_noise: bool, dim: int) -> tuple[float, np.ndarray]:
        """Minus the log prior density (up to a constant) of ``params`` = [theta, log noise] and its
        gradient. ``names`` are the kernel's theta names; entries named ``...lengthscale...`` get the
        lengthscale prior, the last entry the noise prior when ``fit_noise``."""
        params = np.asarray(params, dtype=np.float64)
        grad = np.zeros_like(params)
        value = 0.0
        mu = self.lengthscale_loc + self.lengthscale_log_d * math.log(max(int(dim), 1))
        s2 = self.lengthscale_scale**2
        for j, name in enumerate(names):
            if "lengthscale" in name:
                r = params[j] - mu
                value += 0.5 * r * r / s2
                grad[j] = r / s2
        if fit_noise:
            r = params[len(names)] - self.noise_loc
            value += 0.5 * r * r / self.noise_scale**2
            grad[len(names)] = r / self.noise_scale**2
        return float(value), grad

    def log_density(self, kernel, noise_level: float | None, dim: int) -> float:
        """The log prior (up to the same constant) at a fitted kernel and noise level."""
        names = kernel.theta_names
        params = list(kernel.theta)
        fit_noise = noise_level is not None
        if fit_noise:
            params.append(math.log(noise_level))
        return -self.penalty(names, np.array(params), fit_noise, dim)[0]


#: The default prior: BoTorch's dimension-scaled lengthscale prior and its noise prior.
DIMENSION_SCALED = LogNormalHyperprior()
