"""Output transforms: the scale on which the optimizer's GP sees the objective (issue 15).

The default GP standardises the observations (mean 0, sd 1). A heavy-tailed objective (Rosenbrock,
Styblinski-Tang at d = 8, a loss that explodes for bad configurations) then puts most observations
in a narrow band while a few extreme ones set the scale, and a stationary GP fits neither. A power
transform of the standardised values makes them closer to normal before the GP sees them:

.. math::
    u = (y - \\bar y) / s_y, \\qquad
    \\psi_\\lambda(u) = \\begin{cases}
        ((u + 1)^\\lambda - 1) / \\lambda & u \\ge 0, \\lambda \\ne 0 \\\\
        \\log(u + 1) & u \\ge 0, \\lambda = 0 \\\\
        -((1 - u)^{2 - \\lambda} - 1) / (2 - \\lambda) & u < 0, \\lambda \\ne 2 \\\\
        -\\log(1 - u) & u < 0, \\lambda = 2
    \\end{cases}, \\qquad
    z = (\\psi_\\lambda(u) - m) / s

(Yeo & Johnson 2000), with lambda the maximum-likelihood value under normality (scipy's
``yeojohnson_llf``, maximised on an interval around [0, 2]) and ``(m, s)`` standardising the
result. Standardising first makes the transform invariant to the objective's units. lambda is
clipped to [0, 2]: there psi is a bijection of the real line, so every GP prediction (mean +/- any
number of sds) maps back to an objective value; outside it psi is bounded on one side and its
inverse is undefined beyond the bound.

The transform is monotone increasing, so the acquisition's argmax, the ranking of observations
and the coverage of a central interval are the same on both scales. :meth:`YeoJohnson.moments`
gives the mean and sd of the objective on its own scale under the GP's normal posterior on the
transformed scale, by Gauss-Hermite quadrature (32 nodes).

``output_transform="auto"`` chooses between the plain scale and this transform from the data, as a
warped GP chooses its warping (Snelson, Rasmussen & Ghahramani 2004; an equation number is not
cited because I could not check it against the paper here): by the density each
model gives the *raw* observations. A GP fitted to ``z = T(y)`` gives ``y`` the density

.. math::
    \\log p(y) = \\log p_{GP}(z) + \\sum_i \\log T'(y_i), \\qquad
    T'(y) = \\frac{\\psi_\\lambda'(u)}{s_y\\, s}, \\qquad
    \\psi_\\lambda'(u) = \\begin{cases} (1 + u)^{\\lambda - 1} & u \\ge 0 \\\\
                                       (1 - u)^{1 - \\lambda} & u < 0 \\end{cases}

and the GP's own standardisation ``(z - \\bar z) / s_z`` adds ``-n \\log s_z``
(:func:`log_evidence`). With the hyperparameters at their fitted values (MAP: plus the log
hyperprior, the same family on both scales), the plain GP is the special case T = identity, so the
two numbers are comparable and the larger wins (:meth:`warmbo.Optimizer.fit_model`).

Written here: psi, its inverse and its derivative (closed forms, a few lines) and the normal
log-likelihood that chooses lambda (scipy's bounded Brent search maximises it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._moments import mean_std

__all__ = [
    "OUTPUT_TRANSFORMS",
    "YeoJohnson",
    "log_evidence",
    "yeo_johnson",
    "yeo_johnson_inverse",
    "yeo_johnson_log_derivative",
]

#: the ``output_transform`` choices of :class:`~warmbo.Optimizer` ("auto": chosen by
#: :func:`log_evidence` between "none" and "yeo-johnson")
OUTPUT_TRANSFORMS = ("none", "yeo-johnson", "auto")
#: lambda is kept where psi maps the real line onto itself
LAMBDA_RANGE = (0.0, 2.0)
_GAUSS_HERMITE = np.polynomial.hermite_e.hermegauss(32)  # nodes and weights for N(0, 1)


def yeo_johnson(u: np.ndarray, lmbda: float) -> np.ndarray:
    """psi_lambda(u), the Yeo-Johnson transform (module docstring)."""
    u = np.asarray(u, dtype=np.float64)
    pos = u >= 0
    neg = ~pos
    return _psi_from_logs(np.empty_like(u), pos, neg, np.log1p(u[pos]), np.log1p(-u[neg]), lmbda)


def _psi_from_logs(out, pos, neg, log_pos, log_neg, lmbda: float) -> np.ndarray:
    """psi_lambda into ``out`` from ``log(1 + u)`` where u >= 0 (``pos``) and ``log(1 - u)`` where
    u < 0 (``neg``): the part of :func:`yeo_johnson` that depends on lambda (its search reuses the
    logarithms for every lambda it tries)."""
    if abs(lmbda) < 1e-12:
        out[pos] = log_pos
    else:
        out[pos] = np.expm1(lmbda * log_pos) / lmbda
    if abs(lmbda - 2.0) < 1e-12:
        out[neg] = -log_neg
    else:
        out[neg] = -np.expm1((2.0 - lmbda) * log_neg) / (2.0 - lmbda)
    return out


def yeo_johnson_inverse(v: np.ndarray, lmbda: float) -> np.ndarray:
    """The inverse of :func:`yeo_johnson` for lambda in [0, 2] (defined on the whole real line)."""
    v = np.asarray(v, dtype=np.float64)
    out = np.empty_like(v)
    pos = v >= 0
    if abs(lmbda) < 1e-12:
        out[pos] = np.expm1(v[pos])
    else:
        out[pos] = np.expm1(np.log1p(lmbda * v[pos]) / lmbda)
    if abs(lmbda - 2.0) < 1e-12:
        out[~pos] = -np.expm1(-v[~pos])
    else:
        out[~pos] = -np.expm1(np.log1p(-(2.0 - lmbda) * v[~pos]) / (2.0 - lmbda))
    return out


def yeo_johnson_log_derivative(u: np.ndarray, lmbda: float) -> np.ndarray:
    """log psi_lambda'(u) (module docstring): ``(lambda - 1) log(1 + u)`` for u >= 0,
    ``(1 - lambda) log(1 - u)`` for u < 0."""
    u = np.asarray(u, dtype=np.float64)
    return np.where(u >= 0, (lmbda - 1.0) * np.log1p(np.abs(u)), (1.0 - lmbda) * np.log1p(np.abs(u)))


def log_evidence(model, y, transform: YeoJohnson | None = None) -> float:
    """log density of the raw observations ``y`` under ``model``, fitted to ``transform.forward(y)``
    (or to ``y`` itself when ``transform`` is None), at its fitted hyperparameters (module docstring).

    ``model`` is a fitted GP: its ``log_marginal_likelihood()`` on its own standardised scale, plus
    ``log_hyperprior()`` when it has one (MAP), minus ``n log y_std_`` for that standardisation.
    """
    y = np.asarray(y, dtype=np.float64).ravel()
    value = float(model.log_marginal_likelihood())
    hook = getattr(model, "log_hyperprior", None)
    if callable(hook):
        value += float(hook())
    value -= y.size * float(np.log(getattr(model, "y_std_", 1.0)))
    if transform is not None:
        value += float(np.sum(transform.log_derivative(y)))
    return value


def _normmax(u: np.ndarray) -> float:
    """The maximum-likelihood lambda of the Yeo-Johnson transform under normality on [-1, 3]: the
    maximiser of scipy's ``yeojohnson_llf``,
    ``-n/2 log var(psi_lambda(u)) + (lambda - 1) sum_i sign(u_i) log(1 + |u_i|)``, found with
    scipy's bounded Brent search at ``yeojohnson_normmax``'s tolerance. This is scipy's
    ``yeojohnson_normmax`` restricted to an interval that contains [0, 2] (the result is clipped to
    it), with the log-likelihood in a few numpy lines: scipy's own costs ~1 ms per evaluation (22 ms
    per fit, +40% CPU on a 50-evaluation Branin run); on standardised u (|u| <= sqrt(n)) no power in
    [-1, 3] overflows."""
    from scipy.optimize import fminbound

    if not np.any(u):
        return 1.0
    n = u.size
    signed_log = float(np.sum(np.sign(u) * np.log1p(np.abs(u))))
    # psi_lambda(u) and its variance, as yeo_johnson and np.var compute them (the same operations
    # in the same order, so the same bits) without what does not depend on lambda: the masks and
    # the logarithms once per fit instead of once per evaluation (about 30 per fit)
    pos = u >= 0
    neg = ~pos
    log_pos, log_neg = np.log1p(u[pos]), np.log1p(-u[neg])
    v = np.empty_like(u)

    def negative_llf(lmbda: float) -> float:
        _psi_from_logs(v, pos, neg, log_pos, log_neg, lmbda)
        var = float(np.add.reduce(np.square(v - np.add.reduce(v) / n)) / n)
        return np.inf if not var > 0 else 0.5 * n * np.log(var) - (lmbda - 1.0) * signed_log

    with np.errstate(all="ignore"):
        lmbda = float(fminbound(negative_llf, -1.0, 3.0, xtol=1.48e-8))
    return lmbda if np.isfinite(lmbda) else 1.0


@dataclass(frozen=True)
class YeoJohnson:
    """A fitted Yeo-Johnson transform of standardised values (module docstring).

    Attributes
    ----------
    lmbda : float
        The power lambda, in [0, 2].
    y_mean, y_scale : float
        Standardisation of the raw values before psi.
    z_mean, z_scale : float
        Standardisation of psi's output.
    """

    lmbda: float
    y_mean: float
    y_scale: float
    z_mean: float
    z_scale: float

    @classmethod
    def fit(cls, y) -> YeoJohnson:
        """lambda by maximum likelihood on the standardised ``y`` (at least 2 finite values)."""
        y = np.asarray(y, dtype=np.float64).ravel()
        if y.size < 2 or not np.all(np.isfinite(y)):
            raise ValueError(f"an output transform needs at least 2 finite values, got {y.size}")
        mean, scale = mean_std(y)  # finite for any finite y (np.std overflows beyond |y| ~ 1e154)
        if not scale > 0:  # constant values: the identity (psi_1 is the identity)
            return cls(1.0, mean, 1.0, 0.0, 1.0)
        u = (y - mean) / scale
        lmbda = float(np.clip(_normmax(u), *LAMBDA_RANGE))
        v = yeo_johnson(u, lmbda)
        z_scale = float(v.std())
        return cls(lmbda, mean, scale, float(v.mean()), z_scale if z_scale > 0 else 1.0)

    def forward(self, y) -> np.ndarray:
        """Raw values -> the scale the GP sees."""
        u = (np.asarray(y, dtype=np.float64) - self.y_mean) / self.y_scale
        return (yeo_johnson(u, self.lmbda) - self.z_mean) / self.z_scale

    def log_derivative(self, y) -> np.ndarray:
        """log dT/dy of :meth:`forward` at raw values ``y``: ``log psi'(u) - log(y_scale z_scale)``."""
        u = (np.asarray(y, dtype=np.float64) - self.y_mean) / self.y_scale
        return yeo_johnson_log_derivative(u, self.lmbda) - np.log(self.y_scale * self.z_scale)

    def inverse(self, z) -> np.ndarray:
        """The GP's scale -> raw values (exact: psi is a bijection for lambda in [0, 2])."""
        v = np.asarray(z, dtype=np.float64) * self.z_scale + self.z_mean
        return yeo_johnson_inverse(v, self.lmbda) * self.y_scale + self.y_mean

    def moments(self, mean, sd) -> tuple[np.ndarray, np.ndarray]:
        """Mean and sd of ``inverse(Z)`` for ``Z ~ N(mean, sd^2)`` (elementwise), by Gauss-Hermite
        quadrature: the posterior mean and sd of the objective on its own scale."""
        mean = np.asarray(mean, dtype=np.float64)
        sd = np.asarray(sd, dtype=np.float64)
        nodes, weights = _GAUSS_HERMITE
        weights = weights / weights.sum()
        values = self.inverse(mean[..., None] + sd[..., None] * nodes)
        first = values @ weights
        # deviations in units of y_scale: their squares neither overflow (values beyond ~1e154) nor
        # underflow (below ~1e-154)
        var = (((values - first[..., None]) / self.y_scale) ** 2) @ weights
        return first, np.sqrt(np.maximum(var, 0.0)) * self.y_scale
