"""Where evaluations fail: a classifier of success, and an acquisition weighed by it.

Gelbart, Snoek & Adams, "Bayesian optimization with unknown constraints" (UAI 2014), eq. 4: with an
objective that fails at some settings, the expected improvement is weighed by the probability that
an evaluation succeeds, ``a(x) = EI(x) Pr[success at x]``, EI taken over the complete trials only.
The probability comes from a Gaussian-process classifier of the trials' outcomes (complete = 1,
failed = 0), scikit-learn's :class:`~sklearn.gaussian_process.GaussianProcessClassifier` (Laplace
approximation, Rasmussen & Williams alg. 3.1-3.2) with a ``Constant * Matern-5/2`` ARD kernel on the
encoded unit cube, its hyperparameters by ML-II at every fit. The probability is the logistic of the
latent posterior mean, ``Pr[success at u] = sigma(k(u, X)^T (y - pi))`` (R&W eq. 3.21), not the
approximation's average of the logistic over the latent variance: where the failures are separable
(a cliff) the Laplace posterior's variance hardly shrinks at the training points (its weights
``pi (1 - pi)`` vanish there), so the averaged probability stayed at 0.3 at points that had failed
and the search went back to them (a review; measured in docs/optimizer.md). Away from every trial the
latent mean returns to 0 and the probability to 1/2. Where failures have no place (transient ones)
the lengthscales grow and the probability is about the same everywhere, which leaves EI's ranking
nearly as it is.

Written here: the latent mean's probability, from the fitted classifier's own arrays, and the
weighting of a bound acquisition (:class:`SuccessWeighted`, with the probability's gradient by
central differences). The classifier is scikit-learn's.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["MAX_TRIALS", "SuccessClassifier", "SuccessWeighted"]

#: the classifier sees at most this many trials: the failed ones and the complete ones, each kept
#: whole while the other leaves room, else drawn at random (an ML-II fit of 1000 trials took 13 s on
#: one core at d = 6, of 200 about 0.2 s)
MAX_TRIALS = 200
#: central-difference step (in the unit cube) of the probability's gradient
_STEP = 1e-5
#: the probability is never taken below this (its log stays finite, and a point the classifier
#: rules out still ranks by EI among other ruled-out points)
_FLOOR = 1e-12


class SuccessClassifier:
    """``Pr[success at u]`` from the encoded points ``U`` (n, d) of a study's finished trials and
    whether each succeeded (``ok``, n booleans: complete or failed); at most :data:`MAX_TRIALS` of
    them, drawn with ``seed`` (any non-negative int). ``U`` and ``ok`` keep what it was fitted on."""

    def __init__(self, U, ok, seed: int = 0):
        from sklearn.gaussian_process import GaussianProcessClassifier
        from sklearn.gaussian_process.kernels import ConstantKernel, Matern

        U = np.array(U, dtype=np.float64)
        ok = np.array(ok, dtype=bool)
        if U.ndim != 2 or ok.shape != (U.shape[0],):
            raise ValueError(f"SuccessClassifier needs U (n, d) and ok (n,), got {U.shape} and {ok.shape}")
        if ok.all() or not ok.any():
            raise ValueError("SuccessClassifier needs both complete and failed trials")
        d = U.shape[1]
        if U.shape[0] > MAX_TRIALS:
            rng = np.random.default_rng(seed)
            failed, complete = np.flatnonzero(~ok), np.flatnonzero(ok)
            n_complete = min(len(complete), max(MAX_TRIALS // 2, MAX_TRIALS - len(failed)))
            n_failed = min(len(failed), MAX_TRIALS - n_complete)
            keep = np.sort(
                np.concatenate(
                    [
                        rng.choice(failed, n_failed, replace=False),
                        rng.choice(complete, n_complete, replace=False),
                    ]
                )
            )
            U, ok = U[keep], ok[keep]
        U.setflags(write=False)
        ok.setflags(write=False)
        self.U, self.ok = U, ok
        kernel = ConstantKernel(1.0, (1e-2, 1e3)) * Matern(
            length_scale=np.full(d, 0.5), length_scale_bounds=(1e-2, 1e2), nu=2.5
        )
        # (scikit-learn takes seeds below 2**32; the optimizer's may be up to 2**63)
        self._classifier = GaussianProcessClassifier(kernel, random_state=int(seed) % 2**32)
        with warnings.catch_warnings():  # (a lengthscale at its bound: no place to failures, as meant)
            warnings.simplefilter("ignore")
            self._classifier.fit(U, ok.astype(int))
        fitted = self._classifier.base_estimator_
        self._alpha = np.asarray(fitted.y_train_ - fitted.pi_, dtype=np.float64)  # (y - pi), R&W eq. 3.21

    @property
    def kernel_(self):
        """The fitted kernel (its hyperparameters)."""
        return self._classifier.kernel_

    def latent_mean(self, U) -> np.ndarray:
        """The latent posterior mean ``k(u, X)^T (y - pi)`` at the encoded points ``U`` (m, d)."""
        U = np.atleast_2d(np.asarray(U, dtype=np.float64))
        return self.kernel_(U, self.U) @ self._alpha

    def probability(self, U) -> np.ndarray:
        """``Pr[success]``, the logistic of :meth:`latent_mean`, at ``U`` (m, d); at least :data:`_FLOOR`."""
        f = self.latent_mean(U)
        return np.maximum(0.5 * (1.0 + np.tanh(0.5 * f)), _FLOOR)  # (the logistic, without overflow)

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
