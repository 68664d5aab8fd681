"""The kernel base class and kernel algebra (sums, products, constants).

A kernel is a small immutable value holding only its parameters (modelled on tinygp's kernels):

- ``k(X, Y)`` is the Gram matrix ``[k(x_i, y_j)]`` of shape (n, m);
- ``k(X)`` and ``k.diag(X)`` are the diagonal ``[k(x_i, x_i)]`` of shape (n,);
- ``k.gram(X)`` is ``k(X, X)``;
- ``k1 + k2``, ``k1 * k2``, ``c * k`` build :class:`Sum`, :class:`Product` and :class:`Constant`
  kernels, so ``sum([k1, k2, k3])`` works. Sums and products of PSD kernels are PSD (002).

Hyperparameters are the positive parameters of the leaves (lengthscales, constants). They are
exposed in log space as ``theta`` with ``theta_bounds`` and ``with_theta(theta)``, and
``gram_gradient(X)`` returns ``dK/dtheta`` for ML-II and leave-one-out fitting (see
:mod:`warmbo.models.gp`). ``gradient_x(x, X)`` returns ``d k(x, X_j) / dx`` where the kernel supplies
it; the acquisition maximiser uses it.

Why this file is long: it is the whole kernel protocol (values, the Gram matrix, hyperparameter
gradients and their contractions, input gradients, and the prepared evaluations the two searches of
an ask repeat on the same data, ``gram_at`` and ``cross_gradients_at``) together with the algebra
that must implement each of them (``Sum``, ``Product``, ``Constant``): ``Product``'s prepared paths
for ``Constant * k`` give the base methods' numbers to the bit only because they sit beside them, and
a split by class would put every protocol method in one file and its overrides in another.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Callable

import numpy as np

from .._validation import as_points, check_positive

__all__ = ["Kernel", "Sum", "Product", "Constant", "Affine"]


class Kernel(ABC):
    """Base class of all kernels: subclasses implement :meth:`evaluate` and, ideally, :meth:`diag`.

    Subclasses set their attributes in ``__init__`` through ``self._set(name=value)``; afterwards the
    object is immutable (assignment raises ``AttributeError``).
    """

    #: Input dimension the kernel requires, or None if it works for any.
    input_dim: int | None = None

    # ------------------------------------------------------------------ immutability
    def _set(self, **attributes) -> None:
        for key, value in attributes.items():
            if isinstance(value, np.ndarray):
                value = value.copy()
                value.flags.writeable = False
            object.__setattr__(self, key, value)

    def _evolve(self, **changes) -> Kernel:
        """A copy with some attributes replaced, without running ``__init__``: for values the caller
        has already checked (``with_theta`` inside the hyperparameter search, where the constructors'
        validation was a fifth of an objective evaluation at n = 30)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._set(**changes)
        return new

    def __setattr__(self, key, value):
        raise AttributeError(f"{type(self).__name__} is immutable; build a new kernel instead")

    def __delattr__(self, key):
        raise AttributeError(f"{type(self).__name__} is immutable")

    # ------------------------------------------------------------------ parameters
    def _parameters(self) -> dict:
        """Constructor arguments, used by ``repr``, ``==`` and ``hash``."""
        return {}

    def __repr__(self) -> str:
        def fmt(value):
            if isinstance(value, np.ndarray):
                return np.array2string(value, precision=4, separator=", ")
            if isinstance(value, float):
                return f"{value:.6g}"
            return repr(value)

        args = ", ".join(f"{k}={fmt(v)}" for k, v in self._parameters().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other) -> bool:
        if type(self) is not type(other):
            return NotImplemented
        mine, theirs = self._parameters(), other._parameters()
        if mine.keys() != theirs.keys():
            return False
        for key, value in mine.items():
            other_value = theirs[key]
            if isinstance(value, np.ndarray) or isinstance(other_value, np.ndarray):
                a, b = np.asarray(value), np.asarray(other_value)
                if a.shape != b.shape or not np.array_equal(a, b):
                    return False
            elif value != other_value:
                return False
        return True

    def __hash__(self) -> int:
        items = []
        for key, value in self._parameters().items():
            if isinstance(value, np.ndarray):
                value = tuple(np.atleast_1d(value).tolist())
            elif isinstance(value, list):
                value = tuple(value)
            items.append((key, value))
        try:
            return hash((type(self).__name__, tuple(items)))
        except TypeError:
            return id(self)

    # ------------------------------------------------------------------ evaluation
    def __call__(self, X, Y=None) -> np.ndarray:
        """Gram matrix ``k(X, Y)`` (n, m), or the diagonal ``k(x_i, x_i)`` (n,) when Y is None."""
        X = as_points(X, "X", self.input_dim)
        if Y is None:
            return self.diag(X)
        Y = as_points(Y, "Y", X.shape[1])
        return self.evaluate(X, Y)

    def gram(self, X) -> np.ndarray:
        """The Gram matrix ``k(X, X)``, exactly symmetric.

        ``evaluate(X, X)`` can be off by an ulp between ``K[i, j]`` and ``K[j, i]`` (a feature kernel's
        ``Phi Phi^T`` is a general matrix product whose blocking order depends on the BLAS), so the
        result is symmetrised: ``(K + K^T) / 2`` is symmetric bit for bit, since floating-point
        addition commutes.
        """
        X = as_points(X, "X", self.input_dim)
        K = self.evaluate(X, X)
        K += K.T.copy()
        K *= 0.5
        return K

    @abstractmethod
    def evaluate(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """Gram matrix for validated float64 arrays X (n, d) and Y (m, d)."""

    def diag(self, X) -> np.ndarray:
        """Diagonal ``[k(x_i, x_i)]``; subclasses override with an O(n) formula."""
        X = as_points(X, "X", self.input_dim)
        return np.array([self.evaluate(x[None, :], x[None, :])[0, 0] for x in X])

    # ------------------------------------------------------------------ hyperparameters
    @property
    def n_theta(self) -> int:
        """Number of free hyperparameters."""
        return int(self.theta.shape[0])

    @property
    def theta(self) -> np.ndarray:
        """Log of the free positive hyperparameters (empty for kernels without any)."""
        return np.zeros(0)

    @property
    def theta_bounds(self) -> np.ndarray:
        """Bounds on ``theta`` (log space), shape (n_theta, 2)."""
        return np.zeros((0, 2))

    @property
    def theta_names(self) -> list[str]:
        """Names of the entries of ``theta``."""
        return []

    def with_theta(self, theta) -> Kernel:
        """A copy of the kernel with hyperparameters ``exp(theta)``."""
        theta = np.asarray(theta, dtype=np.float64)
        if theta.shape != (self.n_theta,):
            raise ValueError(f"theta must have shape ({self.n_theta},), got {theta.shape}")
        return self

    def gram_gradient(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Gram matrix K (n, n) and its derivatives ``dK/dtheta`` of shape (n, n, n_theta)."""
        K = self.gram(X)
        if self.n_theta:
            raise NotImplementedError(f"{type(self).__name__} does not implement gram_gradient")
        return K, np.zeros(K.shape + (0,))

    def gram_gradient_dot(self, X, W) -> np.ndarray:
        """Contractions ``g_k = sum_ij W_ij dK_ij / dtheta_k`` (n_theta,) with a symmetric W (n, n).

        What the ML-II gradient needs (``W = alpha alpha^T - K^{-1}``, R&W eq. 5.9). This default forms
        :meth:`gram_gradient`; kernels override it to avoid the (n, n, n_theta) tensor.
        """
        X = as_points(X, "X", self.input_dim)
        _, dK = self.gram_gradient(X)
        n = X.shape[0]
        return np.asarray(W, dtype=np.float64).reshape(-1) @ dK.reshape(n * n, -1)

    def gram_with_gradient_dot(self, X) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
        """The Gram matrix ``k(X, X)`` (a fresh array the caller may modify) and a function
        ``W -> gram_gradient_dot(X, W)``, for the ML-II objective, which needs both at every
        evaluation. This default makes the two calls; kernels override it to share the distances and
        the exponential between the value and the derivatives, and may reuse their memory in the
        contraction: call the function once."""
        X = as_points(X, "X", self.input_dim)
        return self.evaluate(X, X), lambda W: self.gram_gradient_dot(X, W)

    def gram_at(self, X) -> Callable[[np.ndarray], tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]]:
        """For fixed inputs X, the function ``theta -> self.with_theta(theta).gram_with_gradient_dot(X)``.

        What the hyperparameter search evaluates at each of its steps on the same data. This default
        builds the kernel and calls :meth:`gram_with_gradient_dot`; kernels override it to do once what
        does not depend on ``theta`` (:class:`~warmbo.kernels.Stationary`: the coordinate differences;
        ``Constant * k``: the scaling) and to skip building a kernel object at every step."""
        X = as_points(X, "X", self.input_dim)

        def at(theta):
            return self.with_theta(theta).gram_with_gradient_dot(X)

        return at

    # ------------------------------------------------------------------ input gradients
    @property
    def stationary(self) -> bool:
        """Whether ``k(x, y)`` depends on ``x - y`` only, so that ``k(x, x)`` is a constant and its
        gradient is zero (the posterior's gradients skip both)."""
        return False

    @property
    def has_gradient_x(self) -> bool:
        """Whether :meth:`gradient_x` is implemented."""
        return False

    def gradient_x(self, x: np.ndarray, X: np.ndarray) -> np.ndarray:
        """Derivatives ``d k(x, X_j) / dx`` of shape (m, d) for a single point x (d,)."""
        raise NotImplementedError(f"{type(self).__name__} does not supply input gradients")

    def diag_gradient_x(self, x: np.ndarray) -> np.ndarray:
        """Derivative of ``k(x, x)`` with respect to x, shape (d,)."""
        raise NotImplementedError(f"{type(self).__name__} does not supply input gradients")

    def gradients_x(self, Xq: np.ndarray, X: np.ndarray) -> np.ndarray:
        """:meth:`gradient_x` for a batch of points: ``d k(x_q, X_j) / dx_q`` of shape (m, n, d).

        This default loops over the points; kernels override it with one vectorised formula.
        """
        return np.stack([self.gradient_x(x, X) for x in np.asarray(Xq, dtype=np.float64)])

    def diag_gradients_x(self, Xq: np.ndarray) -> np.ndarray:
        """:meth:`diag_gradient_x` for a batch of points, shape (m, d)."""
        return np.stack([self.diag_gradient_x(x) for x in np.asarray(Xq, dtype=np.float64)])

    def evaluate_and_gradients_x(self, Xq: np.ndarray, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``k(Xq, X)`` (m, n) and :meth:`gradients_x` (m, n, d) together (what the acquisition's local
        search needs at every step). This default makes the two calls; kernels whose value and
        gradient share work (the distances, the exponential) override it."""
        return self.evaluate(Xq, X), self.gradients_x(Xq, X)

    def cross_gradients_at(self, X: np.ndarray) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
        """For fixed inputs X (n, d), the function ``Xq -> self.evaluate_and_gradients_x(Xq, X)``.

        What a posterior's gradients evaluate at every step of the acquisition's local search, on the
        same training inputs. This default calls :meth:`evaluate_and_gradients_x`; kernels override it
        to do once what depends on X alone (:class:`~warmbo.kernels.Stationary`: the scaled inputs;
        ``Constant * k``: finding the scale), with the same numbers to the bit. ``Xq`` is taken as
        given: a float64 array (m, d) of finite values, checked by the caller."""
        X = np.asarray(X, dtype=np.float64)

        def cross(Xq):
            return self.evaluate_and_gradients_x(Xq, X)

        return cross

    # ------------------------------------------------------------------ algebra
    def _scalar(self, c, operation: str) -> Constant:
        """``Constant(c)`` for ``c * k`` or ``k + c``, with an error that names the expression (the
        constructor's "value must be positive" names an argument the user never wrote)."""
        value = float(c)  # (numbers.Real such as Fraction, which np.isfinite refuses)
        if not (np.isfinite(value) and value > 0):
            what = "scaled by" if operation == "*" else "shifted by"
            raise ValueError(
                f"a kernel can only be {what} a positive finite number (a PSD constant kernel), "
                f"got {c!r} {operation} {self!r}"
            )
        return Constant(value)

    def __add__(self, other) -> Kernel:
        if isinstance(other, numbers.Real):
            return Sum(self, self._scalar(other, "+")) if other != 0 else self
        if not isinstance(other, Kernel):
            return NotImplemented
        return Sum(self, other)

    def __radd__(self, other) -> Kernel:
        if isinstance(other, numbers.Real):
            return self if other == 0 else Sum(self._scalar(other, "+"), self)
        return NotImplemented

    def __mul__(self, other) -> Kernel:
        if isinstance(other, numbers.Real):
            return Product(self._scalar(other, "*"), self)
        if not isinstance(other, Kernel):
            return NotImplemented
        return Product(self, other)

    def __rmul__(self, other) -> Kernel:
        if isinstance(other, numbers.Real):
            return Product(self._scalar(other, "*"), self)
        return NotImplemented


def _combined_input_dim(k1: Kernel, k2: Kernel) -> int | None:
    if k1.input_dim is not None and k2.input_dim is not None and k1.input_dim != k2.input_dim:
        raise ValueError(f"cannot combine kernels with input dimensions {k1.input_dim} and {k2.input_dim}")
    return k1.input_dim if k1.input_dim is not None else k2.input_dim


class _Binary(Kernel):
    def __init__(self, k1: Kernel, k2: Kernel):
        if not isinstance(k1, Kernel) or not isinstance(k2, Kernel):
            raise ValueError(f"{type(self).__name__} needs two kernels, got {k1!r} and {k2!r}")
        self._set(k1=k1, k2=k2, input_dim=_combined_input_dim(k1, k2))

    def _parameters(self) -> dict:
        return {"k1": self.k1, "k2": self.k2}

    @property
    def theta(self) -> np.ndarray:
        return np.concatenate([self.k1.theta, self.k2.theta])

    @property
    def n_theta(self) -> int:  # without forming theta: with_theta checks it at every likelihood evaluation
        return self.k1.n_theta + self.k2.n_theta

    @property
    def theta_bounds(self) -> np.ndarray:
        return np.concatenate([self.k1.theta_bounds, self.k2.theta_bounds])

    @property
    def theta_names(self) -> list[str]:
        return [f"k1.{n}" for n in self.k1.theta_names] + [f"k2.{n}" for n in self.k2.theta_names]

    def with_theta(self, theta) -> Kernel:
        theta = np.asarray(theta, dtype=np.float64)
        if theta.shape != (self.n_theta,):
            raise ValueError(f"theta must have shape ({self.n_theta},), got {theta.shape}")
        p = self.k1.n_theta
        return self._evolve(k1=self.k1.with_theta(theta[:p]), k2=self.k2.with_theta(theta[p:]))

    @property
    def has_gradient_x(self) -> bool:
        return self.k1.has_gradient_x and self.k2.has_gradient_x

    @property
    def stationary(self) -> bool:
        return self.k1.stationary and self.k2.stationary


class Sum(_Binary):
    """Sum of two kernels, ``k(x, y) = k1(x, y) + k2(x, y)``."""

    def __repr__(self) -> str:
        return f"{self.k1!r} + {self.k2!r}"

    def evaluate(self, X, Y):
        return self.k1.evaluate(X, Y) + self.k2.evaluate(X, Y)

    def diag(self, X):
        X = as_points(X, "X", self.input_dim)
        return self.k1.diag(X) + self.k2.diag(X)

    def gram_gradient(self, X):
        X = as_points(X, "X", self.input_dim)
        K1, dK1 = self.k1.gram_gradient(X)
        K2, dK2 = self.k2.gram_gradient(X)
        return K1 + K2, np.concatenate([dK1, dK2], axis=2)

    def gram_gradient_dot(self, X, W):
        X = as_points(X, "X", self.input_dim)
        return np.concatenate([self.k1.gram_gradient_dot(X, W), self.k2.gram_gradient_dot(X, W)])

    def gradient_x(self, x, X):
        return self.k1.gradient_x(x, X) + self.k2.gradient_x(x, X)

    def diag_gradient_x(self, x):
        return self.k1.diag_gradient_x(x) + self.k2.diag_gradient_x(x)

    def gradients_x(self, Xq, X):
        return self.k1.gradients_x(Xq, X) + self.k2.gradients_x(Xq, X)

    def evaluate_and_gradients_x(self, Xq, X):
        K1, G1 = self.k1.evaluate_and_gradients_x(Xq, X)
        K2, G2 = self.k2.evaluate_and_gradients_x(Xq, X)
        return K1 + K2, G1 + G2

    def gram_with_gradient_dot(self, X):
        X = as_points(X, "X", self.input_dim)
        K1, dot1 = self.k1.gram_with_gradient_dot(X)
        K2, dot2 = self.k2.gram_with_gradient_dot(X)
        return K1 + K2, lambda W: np.concatenate([dot1(W), dot2(W)])

    def diag_gradients_x(self, Xq):
        return self.k1.diag_gradients_x(Xq) + self.k2.diag_gradients_x(Xq)


class Product(_Binary):
    """Product of two kernels, ``k(x, y) = k1(x, y) k2(x, y)``."""

    def __repr__(self) -> str:
        def wrap(k):
            return f"({k!r})" if isinstance(k, Sum) else repr(k)

        return f"{wrap(self.k1)} * {wrap(self.k2)}"

    def _scaled(self) -> tuple[float, Kernel] | None:
        """``(c, k)`` when this product is ``Constant(c) * k`` or ``k * Constant(c)`` (a signal variance),
        which is evaluated as one kernel scaled in place instead of two matrices multiplied."""
        if isinstance(self.k1, Constant):
            return self.k1.value, self.k2
        if isinstance(self.k2, Constant):
            return self.k2.value, self.k1
        return None

    def evaluate(self, X, Y):
        scaled = self._scaled()
        if scaled is not None:
            K = scaled[1].evaluate(X, Y)
            K *= scaled[0]
            return K
        return self.k1.evaluate(X, Y) * self.k2.evaluate(X, Y)

    def diag(self, X):
        X = as_points(X, "X", self.input_dim)
        return self.k1.diag(X) * self.k2.diag(X)

    def gram_gradient(self, X):
        X = as_points(X, "X", self.input_dim)
        K1, dK1 = self.k1.gram_gradient(X)
        K2, dK2 = self.k2.gram_gradient(X)
        return K1 * K2, np.concatenate([dK1 * K2[..., None], K1[..., None] * dK2], axis=2)

    def gram_gradient_dot(self, X, W):
        # d(K1 K2) = dK1 K2 + K1 dK2, so the contractions are those of each factor with W * (the other)
        X = as_points(X, "X", self.input_dim)
        K1, K2 = self.k1.evaluate(X, X), self.k2.evaluate(X, X)
        return np.concatenate([self.k1.gram_gradient_dot(X, W * K2), self.k2.gram_gradient_dot(X, W * K1)])

    def gradient_x(self, x, X):
        x2 = np.asarray(x, dtype=np.float64)[None, :]
        k1 = self.k1.evaluate(x2, X)[0]
        k2 = self.k2.evaluate(x2, X)[0]
        return self.k1.gradient_x(x, X) * k2[:, None] + k1[:, None] * self.k2.gradient_x(x, X)

    def diag_gradient_x(self, x):
        x2 = np.asarray(x, dtype=np.float64)[None, :]
        return self.k1.diag_gradient_x(x) * self.k2.diag(x2)[0] + self.k1.diag(x2)[
            0
        ] * self.k2.diag_gradient_x(x)

    def gradients_x(self, Xq, X):
        scaled = self._scaled()
        if scaled is not None:
            G = scaled[1].gradients_x(Xq, X)
            G *= scaled[0]
            return G
        K1, K2 = self.k1.evaluate(Xq, X), self.k2.evaluate(Xq, X)
        return self.k1.gradients_x(Xq, X) * K2[..., None] + K1[..., None] * self.k2.gradients_x(Xq, X)

    def evaluate_and_gradients_x(self, Xq, X):
        scaled = self._scaled()
        if scaled is not None:
            K, G = scaled[1].evaluate_and_gradients_x(Xq, X)
            K *= scaled[0]
            G *= scaled[0]
            return K, G
        K1, G1 = self.k1.evaluate_and_gradients_x(Xq, X)
        K2, G2 = self.k2.evaluate_and_gradients_x(Xq, X)
        return K1 * K2, G1 * K2[..., None] + K1[..., None] * G2

    def gram_with_gradient_dot(self, X):
        X = as_points(X, "X", self.input_dim)
        scaled = self._scaled()
        if scaled is not None:
            # c k: d(c K)/d log c = c K, and the contraction is linear in W, so k's is scaled by c
            c, kernel = scaled
            K, dot = kernel.gram_with_gradient_dot(X)

            def scaled_dot(W):
                const = np.array([c * float(np.einsum("ij,ij->", W, K))])
                rest = c * dot(W)
                return np.concatenate([const, rest] if kernel is self.k2 else [rest, const])

            return c * K, scaled_dot
        K1, dot1 = self.k1.gram_with_gradient_dot(X)
        K2, dot2 = self.k2.gram_with_gradient_dot(X)
        return K1 * K2, lambda W: np.concatenate([dot1(W * K2), dot2(W * K1)])

    def gram_at(self, X):
        scaled = self._scaled()
        own = type(self)
        if scaled is None or own.gram_with_gradient_dot is not Product.gram_with_gradient_dot:
            return super().gram_at(X)
        # c k with theta = [log c, theta_k] (or [theta_k, log c]): k's prepared function, scaled
        X = as_points(X, "X", self.input_dim)
        inner, first, p = scaled[1].gram_at(X), scaled[1] is self.k2, scaled[1].n_theta

        def at(theta):
            theta = np.asarray(theta, dtype=np.float64)
            if theta.shape != (p + 1,):
                raise ValueError(f"theta must have shape ({p + 1},), got {theta.shape}")
            c = float(np.exp(theta[0] if first else theta[p]))
            if not 0.0 < c < np.inf:
                raise ValueError(f"value must be positive and finite, got {c!r}")
            K, dot = inner(theta[1:] if first else theta[:p])

            def scaled_dot(W):  # d(c K)/d log c = c K; the rest is linear in W, so k's scaled by c
                out = np.empty(p + 1)
                const = c * float(np.einsum("ij,ij->", W, K))
                if first:
                    out[0], out[1:] = const, dot(W)
                else:
                    out[p], out[:p] = const, dot(W)
                rest = out[1:] if first else out[:p]
                rest *= c
                return out

            return K * c, scaled_dot

        return at

    def cross_gradients_at(self, X):
        scaled = self._scaled()
        if scaled is None or type(self).evaluate_and_gradients_x is not Product.evaluate_and_gradients_x:
            return super().cross_gradients_at(X)
        c, inner = scaled[0], scaled[1].cross_gradients_at(X)

        def cross(Xq):  # as evaluate_and_gradients_x: k's value and gradients, scaled in place
            K, G = inner(Xq)
            K *= c
            G *= c
            return K, G

        return cross

    def diag_gradients_x(self, Xq):
        d1, d2 = self.k1.diag(Xq)[:, None], self.k2.diag(Xq)[:, None]
        return self.k1.diag_gradients_x(Xq) * d2 + d1 * self.k2.diag_gradients_x(Xq)


class Constant(Kernel):
    """Constant kernel ``k(x, y) = c`` with c > 0; ``c * k`` scales a kernel (signal variance).

    Parameters
    ----------
    value : float
        The constant c (a hyperparameter, fitted in log space within ``bounds``).
    bounds : (float, float)
        Range of c for hyperparameter fitting.
    """

    def __init__(self, value: float = 1.0, bounds: tuple[float, float] = (1e-5, 1e5)):
        check_positive(value, "value")
        lo, hi = check_positive(bounds, "bounds")
        if not lo < hi:
            raise ValueError(f"bounds must satisfy low < high, got {bounds}")
        self._set(value=float(value), bounds=(float(lo), float(hi)))

    def _parameters(self) -> dict:
        return {"value": self.value}

    def evaluate(self, X, Y):
        return np.full((X.shape[0], Y.shape[0]), self.value)

    def diag(self, X):
        X = as_points(X, "X")
        return np.full(X.shape[0], self.value)

    @property
    def theta(self):
        return np.array([np.log(self.value)])

    @property
    def n_theta(self) -> int:
        return 1

    @property
    def theta_bounds(self):
        return np.log(np.array([self.bounds]))

    @property
    def theta_names(self):
        return ["value"]

    def with_theta(self, theta):
        theta = np.asarray(theta, dtype=np.float64).reshape(-1)
        if theta.shape != (1,):
            raise ValueError(f"theta must have shape (1,), got {theta.shape}")
        value = float(np.exp(theta[0]))
        if not 0.0 < value < np.inf:
            raise ValueError(f"value must be positive and finite, got exp({theta[0]!r}) = {value!r}")
        return self._evolve(value=value)

    def gram_gradient(self, X):
        X = as_points(X, "X")
        K = np.full((X.shape[0], X.shape[0]), self.value)
        return K, K[..., None].copy()

    def gram_gradient_dot(self, X, W):
        return np.array([self.value * float(np.sum(W))])

    @property
    def stationary(self) -> bool:
        return True

    @property
    def has_gradient_x(self) -> bool:
        return True

    def gradient_x(self, x, X):
        return np.zeros((np.asarray(X).shape[0], np.asarray(x).shape[-1]))

    def diag_gradient_x(self, x):
        return np.zeros(np.asarray(x).shape[-1])

    def gradients_x(self, Xq, X):
        return np.zeros((np.asarray(Xq).shape[0], np.asarray(X).shape[0], np.asarray(Xq).shape[-1]))

    def diag_gradients_x(self, Xq):
        return np.zeros(np.asarray(Xq).shape)


class Affine(Kernel):
    """A kernel on affinely mapped inputs: ``k(scale * x + shift, scale * y + shift)``.

    Kernels that are not translation invariant (dot-product and free kernels, whose monomial
    features are centred at the origin) depend on where the origin is; 004 learns them on the domain
    centred to [-1, 1]. ``Affine(k, 2.0, -1.0)`` applies such a kernel to the optimizer's encoded
    unit cube. Hyperparameters are those of ``kernel``.
    """

    def __init__(self, kernel: Kernel, scale=1.0, shift=0.0):
        if not isinstance(kernel, Kernel):
            raise ValueError(f"kernel must be a warmbo Kernel, got {kernel!r}")
        scale = np.asarray(scale, dtype=np.float64)
        shift = np.asarray(shift, dtype=np.float64)
        if not np.all(np.isfinite(scale)) or np.any(scale == 0) or not np.all(np.isfinite(shift)):
            raise ValueError(f"scale must be finite and non-zero and shift finite, got {scale}, {shift}")
        self._set(kernel=kernel, scale=scale, shift=shift, input_dim=kernel.input_dim)

    def _parameters(self) -> dict:
        return {"kernel": self.kernel, "scale": self.scale, "shift": self.shift}

    def _map(self, X):
        return X * self.scale + self.shift

    def evaluate(self, X, Y):
        return self.kernel.evaluate(self._map(X), self._map(Y))

    def diag(self, X):
        return self.kernel.diag(self._map(as_points(X, "X", self.input_dim)))

    @property
    def theta(self):
        return self.kernel.theta

    @property
    def theta_bounds(self):
        return self.kernel.theta_bounds

    @property
    def theta_names(self):
        return self.kernel.theta_names

    def with_theta(self, theta):
        return Affine(self.kernel.with_theta(theta), self.scale, self.shift)

    def gram_gradient(self, X):
        return self.kernel.gram_gradient(self._map(as_points(X, "X", self.input_dim)))

    @property
    def stationary(self) -> bool:
        return self.kernel.stationary  # an affine map of the inputs keeps k a function of x - y

    @property
    def has_gradient_x(self) -> bool:
        return self.kernel.has_gradient_x

    def gradient_x(self, x, X):
        x = np.asarray(x, dtype=np.float64)
        return self.kernel.gradient_x(self._map(x), self._map(np.asarray(X, dtype=np.float64))) * self.scale

    def diag_gradient_x(self, x):
        x = np.asarray(x, dtype=np.float64)
        return self.kernel.diag_gradient_x(self._map(x)) * self.scale
