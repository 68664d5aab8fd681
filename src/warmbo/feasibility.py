"""Where evaluations fail: a classifier of success, and an acquisition weighed by it.

Gelbart, Snoek & Adams, "Bayesian optimization with unknown constraints" (UAI 2014), eq. 4: with an
objective that fails at some settings, the expected improvement is weighed by the probability that
an evaluation succeeds, ``a(x) = EI(x) Pr[success at x]``, EI taken over the complete trials only.
The probability comes from a Gaussian-process classifier of the trials' outcomes (complete = 1,
failed = 0), scikit-learn's :class:`~sklearn.gaussian_process.GaussianProcessClassifier` (Laplace
approximation, Rasmussen & Williams alg. 3.1-3.2) with a ``Constant * Matern-5/2`` ARD kernel on the
encoded unit cube, its hyperparameters by ML-II. Where failures have no place (transient ones), the
classifier's lengthscales grow and the probability is about the success rate everywhere, which leaves
EI's ranking as it is; where they have a region, the probability falls there.

Written here: only the weighting of a bound acquisition (:class:`SuccessWeighted`, with the gradient
of the probability by central differences, since scikit-learn gives none). The classifier is
scikit-learn's.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["SuccessClassifier", "SuccessWeighted"]

#: central-difference step (in the unit cube) of the probability's gradient
_STEP = 1e-5
#: the probability is never taken below this (its log stays finite, and a point the classifier
#: rules out still ranks by EI among other ruled-out points)
_FLOOR = 1e-12


#: the classifier sees at most this many trials: every failed one up to half of it, then complete
#: ones drawn at random (a fit of 1000 trials took 13 s, of 300 about 0.5 s, and with the
#: hyperparameters held 0.6 s and 0.03 s: ``bench``-free figures of one core, d = 6)
MAX_TRIALS = 300


class SuccessClassifier:
    """``Pr[success at u]`` from the encoded points ``U`` (n, d) of a study's finished trials and
    whether each succeeded (``ok``, n booleans: complete or failed). ``kernel``: a fitted kernel
    (:attr:`kernel_` of an earlier classifier) to use as it is, without the ML-II fit of its
    hyperparameters (the optimizer refits them when the failures change, or the trials reach a
    power of two). At most :data:`MAX_TRIALS` trials are used (chosen with ``seed``)."""

    def __init__(self, U, ok, seed: int = 0, kernel=None):
        from sklearn.gaussian_process import GaussianProcessClassifier
        from sklearn.gaussian_process.kernels import ConstantKernel, Matern

        U = np.asarray(U, dtype=np.float64)
        ok = np.asarray(ok, dtype=bool)
        if U.ndim != 2 or ok.shape != (U.shape[0],):
            raise ValueError(f"SuccessClassifier needs U (n, d) and ok (n,), got {U.shape} and {ok.shape}")
        if ok.all() or not ok.any():
            raise ValueError("SuccessClassifier needs both complete and failed trials")
        d = U.shape[1]
        if U.shape[0] > MAX_TRIALS:
            rng = np.random.default_rng(seed)
            failed, complete = np.flatnonzero(~ok), np.flatnonzero(ok)
            failed = rng.choice(failed, min(len(failed), MAX_TRIALS // 2), replace=False)
            complete = rng.choice(complete, min(len(complete), MAX_TRIALS - len(failed)), replace=False)
            keep = np.sort(np.concatenate([failed, complete]))
            U, ok = U[keep], ok[keep]
        self.U, self.ok = U, ok  # (what it was fitted on)
        if kernel is None:
            kernel = ConstantKernel(1.0, (1e-2, 1e3)) * Matern(
                length_scale=np.full(d, 0.5), length_scale_bounds=(1e-2, 1e2), nu=2.5
            )
            self.classifier = GaussianProcessClassifier(kernel, random_state=seed)
        else:
            self.classifier = GaussianProcessClassifier(kernel, optimizer=None)
        with warnings.catch_warnings():  # (a lengthscale at its bound: no place to failures, as meant)
            warnings.simplefilter("ignore")
            self.classifier.fit(U, ok.astype(int))

    @property
    def kernel_(self):
        """The fitted kernel (its hyperparameters), to give a later classifier as ``kernel``."""
        return self.classifier.kernel_

    def probability(self, U) -> np.ndarray:
        """``Pr[success]`` at the encoded points ``U`` (m, d), at least :data:`_FLOOR`."""
        U = np.atleast_2d(np.asarray(U, dtype=np.float64))
        return np.maximum(self.classifier.predict_proba(U)[:, 1], _FLOOR)

    def probability_and_gradient(self, U) -> tuple[np.ndarray, np.ndarray]:
        """``Pr[success]`` (m,) and its gradient (m, d) by central differences, one batched call."""
        U = np.atleast_2d(np.asarray(U, dtype=np.float64))
        m, d = U.shape
        shifts = np.eye(d) * _STEP
        stacked = np.vstack(
            [U, (U[:, None, :] + shifts).reshape(-1, d), (U[:, None, :] - shifts).reshape(-1, d)]
        )
        p = self.probability(stacked)
        up, down = p[m : m + m * d].reshape(m, d), p[m + m * d :].reshape(m, d)
        return p[:m], (up - down) / (2 * _STEP)


class SuccessWeighted:
    """A bound acquisition (EI or PI: non-negative) times ``Pr[success]`` (Gelbart et al. 2014 eq. 4),
    with the bound's interface: values, gradients, and its log form (``log a + log Pr``) when it
    has one."""

    def __init__(self, bound, success: SuccessClassifier):
        self.bound = bound
        self.success = success
        self.model = bound.model

    @property
    def has_gradient(self) -> bool:
        return bool(self.bound.has_gradient)

    @property
    def has_log(self) -> bool:
        return bool(getattr(self.bound, "has_log", False))

    def __call__(self, X) -> np.ndarray:
        return self.bound(X) * self.success.probability(X)

    def value_and_gradient(self, x) -> tuple[float, np.ndarray]:
        value, gradient = self.bound.value_and_gradient(x)
        p, dp = self.success.probability_and_gradient(np.asarray(x, dtype=np.float64)[None, :])
        return float(value * p[0]), np.asarray(gradient) * p[0] + value * dp[0]

    def values_and_gradients(self, U) -> tuple[np.ndarray, np.ndarray]:
        values, gradients = self.bound.values_and_gradients(U)
        p, dp = self.success.probability_and_gradient(U)
        return values * p, gradients * p[:, None] + values[:, None] * dp

    def log_values(self, U) -> np.ndarray:
        return self.bound.log_values(U) + np.log(self.success.probability(U))

    def log_values_and_gradients(self, U) -> tuple[np.ndarray, np.ndarray]:
        values, gradients = self.bound.log_values_and_gradients(U)
        p, dp = self.success.probability_and_gradient(U)
        return values + np.log(p), gradients + dp / p[:, None]

    def on_slice(self, reference, space, fixed) -> SuccessWeighted:
        on_slice = getattr(self.bound, "on_slice", None)
        return self if on_slice is None else SuccessWeighted(on_slice(reference, space, fixed), self.success)
