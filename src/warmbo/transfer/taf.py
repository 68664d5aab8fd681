"""The transfer acquisition function (TAF) of an ensemble of per-task GPs, with RGPE's weights.

Wistuba, Schilling & Schmidt-Thieme (2018), "Scalable Gaussian process-based transfer surrogates for
hyperparameter optimization" (Machine Learning 107), combine the sources' knowledge in the
*acquisition* instead of the posterior: the target GP's expected improvement, plus each source's
predicted improvement over what that source predicts for the target's own observations,

.. math:: a(x) = w_T\\, \\mathrm{EI}_T(x) + \\sum_i w_i \\max\\bigl(\\mu_i(x) - \\max_j \\mu_i(x_j), 0\\bigr)

(maximisation convention; ``EI_T`` the target GP's EI over its incumbent, ``mu_i`` source i's GP
mean, ``x_j`` the target's observed points, the pending ones included, and the weights ``w`` RGPE's
ranking weights, summing to 1, the target's last). Feurer, Letham & Bakshy evaluate RGPE's weights
with this acquisition too ("Works both with TST-R and RGPE weighting" in their framework).

Why it is here. EI on RGPE's ensemble posterior ``mu = sum w_i mu_i``, ``sigma^2 = sum w_i^2
sigma_i^2`` (:class:`~warmbo.transfer.baselines.RGPE`) keeps each source's mean and variance at the
points the target evaluated (a source GP never sees the target's data), so (session 46) EI stayed
positive at the incumbent and the search repeated it a hair away, and (session 47) a study whose
sources favoured one model of a CASH space never left it: on cash-digits, seed 14, 30 asks of
logistic regression and random forests, never an SVM, ending at 49 errors against a cold start's 26.
Here a source adds nothing where it predicts no better than at some point the target has
evaluated, so once the target has tried the sources' optima the acquisition is the target GP's own
EI, scaled by its weight; and a region no source favours (an SVM the source judged poorly) keeps
the target GP's full prior uncertainty instead of ``w_T sigma_T``.

It is the acquisition :class:`TAF` (``Optimizer(space, prior=..., acquisition=wb.TAF())``),
which binds to an ensemble through :meth:`~warmbo.transfer.baselines.RGPE.transfer_acquisition` and
is EI on any other model. Not the default: it gives up the ensemble's refinement around a related
source's optimum (measured in docs/transfer.md, "TAF").

Written by hand: the two terms are one line each over the ensemble's members; no library offers
them over warmbo's models.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..acquisition import EI, Bound, _BoundEI, incumbent_value

__all__ = ["TAF", "TransferAcquisition"]


class TransferAcquisition(Bound):
    """TAF bound to a fitted RGPE ensemble (module docstring), on the ensemble's standardised scale.

    ``model`` is the ensemble (an :class:`~warmbo.transfer.baselines.RGPE`, fantasies included);
    ``incumbent`` and ``xi`` are EI's (``xi`` on the scale of the values the ensemble was fitted to,
    as for EI: the user's units, or the Yeo-Johnson scale with ``output_transform="yeo-johnson"``;
    divided here by the target's standard deviation). Values are in standardised units: the same
    argmax. The baselines ``max_j mu_i(x_j)`` run over the points the ensemble holds: the study's
    complete trials and the pending ones it was told (kriging believer); failed points too with
    ``failures="liar"`` (fantasised at the worst value), not with ``"classifier"``, where the
    probability of success weighs the whole acquisition instead.
    """

    def __init__(self, model, incumbent: str = "best", xi: float = 0.0, space=None):
        super().__init__(model)
        self.target_weight = float(model.weights_[-1])
        self.ei = _BoundEI(
            model.target_model_,
            incumbent_value(model.target_model_, incumbent, space),
            float(xi) / float(model.y_std_),
        )
        X = np.asarray(model.X_train_, dtype=np.float64)
        #: (index, weight, baseline): the sources with a weight, each with ``max_j mu_i(x_j)``
        weighted = [(i, float(w)) for i, w in enumerate(model.weights_[:-1]) if w > 0]
        means = model.source_means(X, [i for i, _ in weighted])
        self.sources = tuple(
            (i, w, float(np.max(mu))) for (i, w), (mu, _) in zip(weighted, means, strict=True)
        )

    def _with(self, ei: _BoundEI, sources) -> TransferAcquisition:
        out = object.__new__(type(self))
        out.model, out.target_weight, out.ei, out.sources = self.model, self.target_weight, ei, sources
        return out

    def on_slice(self, reference, space, fixed) -> TransferAcquisition:
        """This bound on the slice where ``fixed`` holds its parameters (:mod:`warmbo.fixed`): the
        target's EI over the slice's own best (:meth:`~warmbo.acquisition._BoundIncumbent.on_slice`,
        on the target GP of ``reference``, the real observations), and each source's improvement over
        the best it predicts at the slice's observed points; with none there, over the whole study's
        (a source then adds only where it predicts better than anywhere the target has been)."""
        ei = self.ei.on_slice(reference.target_model_, space, fixed)
        X = np.asarray(reference.X_train_, dtype=np.float64)
        on = fixed.holds(X) if X.shape[0] else np.zeros(0, dtype=bool)
        if not np.any(on):
            return self._with(ei, self.sources)
        means = self.model.source_means(X[on], [i for i, _, _ in self.sources])
        sources = tuple(
            (i, w, min(base, float(np.max(mu))))
            for (i, w, base), (mu, _) in zip(self.sources, means, strict=True)
        )
        return self._with(ei, sources)

    def __call__(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        out = self.target_weight * self.ei(X) if self.target_weight > 0 else np.zeros(X.shape[0])
        means = self.model.source_means(X, [i for i, _, _ in self.sources])
        for (_, w, base), (mu, _) in zip(self.sources, means, strict=True):
            out = out + w * np.maximum(mu - base, 0.0)
        return out

    def value_and_gradient(self, x) -> tuple[float, np.ndarray]:
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        value, grad = 0.0, np.zeros_like(x)
        if self.target_weight > 0:
            v, g = self.ei.value_and_gradient(x)
            value, grad = self.target_weight * float(v), self.target_weight * np.asarray(g, dtype=np.float64)
        for i, w, base in self.sources:
            mu, dmu = self.model.source_mean_gradient(i, x)
            if mu > base:  # (the gradient of max(., 0): 0 where the source predicts no improvement)
                value += w * (mu - base)
                grad = grad + w * dmu
        return float(value), grad


@dataclass(frozen=True)
class TAF(EI):
    """EI in the form of the transfer acquisition function (Wistuba, Schilling & Schmidt-Thieme
    2018) on a transfer ensemble of per-task GPs (``transfer="auto"`` or ``"rgpe"``):

    .. math::

        a(x) = w_T\\, \\mathrm{EI}_T(x)
            + \\sum_i w_i \\max\\bigl(\\mu_i(x) - \\max_j \\mu_i(x_j), 0\\bigr),

    the study's own GP's EI plus each source's predicted improvement over the best it predicts at
    the study's points ``x_j``, weighted by the ensemble's weights (:mod:`warmbo.transfer.taf`),
    instead of EI on the ensemble's posterior. On any other model (a study without sources, or one
    whose sources lost every weight) it is EI. ``incumbent`` and ``xi`` are EI's, for the study's
    own GP.
    """

    def bind(self, model, space=None, reference=None) -> Bound:
        own = getattr(model, "transfer_acquisition", None)
        if callable(own):
            return own(self.incumbent, float(self.xi), space)
        return super().bind(model, space, reference)
