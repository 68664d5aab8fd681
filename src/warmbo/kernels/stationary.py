"""Stationary kernels: squared exponential (RBF) and Matern with nu in {1/2, 3/2, 5/2}.

Both are functions of the scaled distance

.. math:: r^2(x, y) = \\sum_d (x_d - y_d)^2 / \\ell_d^2,

with one lengthscale (isotropic) or one per input dimension (ARD). Unit signal variance; scale with
``c * k``. Formulas (Rasmussen & Williams 2006, eqs. 4.9 and 4.16-4.17):

- RBF: ``k = exp(-r^2 / 2)``;
- Matern-1/2: ``k = exp(-r)``;
- Matern-3/2: ``k = (1 + sqrt(3) r) exp(-sqrt(3) r)``;
- Matern-5/2: ``k = (1 + sqrt(5) r + 5 r^2 / 3) exp(-sqrt(5) r)``.

They match scikit-learn's ``RBF`` and ``Matern`` (tested). Gradients with respect to the inputs and
to the log-lengthscales use ``g = dk / d(r^2)``:
``dk(x, y)/dx = 2 g (x - y) / ell^2`` and ``dk/dlog ell_d = -2 g (x_d - y_d)^2 / ell_d^2``.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_points, check_positive
from .base import Kernel

__all__ = ["Stationary", "RBF", "Matern"]

_SQRT3 = np.sqrt(3.0)
_SQRT5 = np.sqrt(5.0)
#: Stationary.gram_at forms the squared coordinate differences (n^2 d doubles) up to this many: above
#: it, one evaluation of the default objective was cheaper with the per-step distances (n = 150, d = 6)
_PREPARED_MAX = 2**17


class Stationary(Kernel):
    """Base of kernels ``k(x, y) = kappa(r^2)`` of the scaled squared distance.

    Subclasses implement ``_kappa(r2)`` and ``_dkappa(r2)`` (the derivative with respect to r^2).

    ``groups`` (ARD only; one integer per coordinate, groups numbered 0..q-1) ties lengthscales:
    the coordinates of group g share ``ell_g``, so ``r^2 = sum_g S_g / ell_g^2`` with
    ``S_g = sum_{d in g} (x_d - y_d)^2``, and theta holds the q values ``log ell_g``
    (``dk/dlog ell_g = -2 g S_g / ell_g^2``, the sum of its coordinates' gradients). On a
    categorical's one-hot block this makes the distance between two different choices one value,
    ``sqrt(2) / ell_g`` (a Hamming distance, as Optuna's and BoTorch's mixed kernels treat a
    categorical) instead of one lengthscale per choice.
    """

    def __init__(self, lengthscale=1.0, bounds: tuple[float, float] = (1e-3, 1e3), groups=None):
        ell = check_positive(lengthscale, "lengthscale")
        lo, hi = check_positive(bounds, "bounds")
        if not lo < hi:
            raise ValueError(f"bounds must satisfy low < high, got {bounds}")
        ard = ell.ndim == 1
        self._set(
            lengthscale=ell if ard else float(ell),
            bounds=(float(lo), float(hi)),
            input_dim=int(ell.shape[0]) if ard else None,
        )
        self._set_groups(groups)

    def _set_groups(self, groups) -> None:
        """Check and keep ``groups`` (one lengthscale per group of coordinates), with the first
        coordinate of each group and the (d, q) indicator matrix that sums per-coordinate gradients."""
        if groups is None:
            self._set(groups=None)
            return
        if not self.ard:
            raise ValueError("groups needs one lengthscale per coordinate (an array), got one lengthscale")
        g = np.asarray(groups)
        if g.shape != (self.input_dim,) or not np.issubdtype(g.dtype, np.integer):
            raise ValueError(
                f"groups must hold one integer per coordinate ({self.input_dim}), got {groups!r}"
            )
        q = int(g.max()) + 1
        if g.min() < 0 or np.unique(g).size != q:
            raise ValueError(f"groups must number the groups 0, 1, ..., q - 1, none empty; got {groups!r}")
        first = np.array([int(np.flatnonzero(g == k)[0]) for k in range(q)])
        if not np.array_equal(self.lengthscale, self.lengthscale[first][g]):
            raise ValueError(
                f"the lengthscales of a group must be equal, got lengthscale {self.lengthscale!r} "
                f"with groups {groups!r}"
            )
        indicator = np.zeros((g.size, q))
        indicator[np.arange(g.size), g] = 1.0
        self._set(groups=g.astype(np.intp), _first=first, _indicator=indicator)

    def _parameters(self) -> dict:
        if self.groups is None:
            return {"lengthscale": self.lengthscale}
        return {"lengthscale": self.lengthscale, "groups": self.groups}

    @property
    def ard(self) -> bool:
        """Whether there is one lengthscale per input dimension."""
        return isinstance(self.lengthscale, np.ndarray)

    # ---------------------------------------------------------------- distances
    def _scaled_sqdist(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        # cdist forms the coordinate differences directly: exact 0 on the diagonal, unlike the
        # expansion |x|^2 + |y|^2 - 2 x.y whose round-off gives r ~ 1e-8 there (visible for Matern-1/2)
        from scipy.spatial.distance import cdist  # scipy.spatial costs ~0.3 s to import: on first use

        return cdist(X / self.lengthscale, Y / self.lengthscale, "sqeuclidean")

    def evaluate(self, X, Y):
        return self._kappa(self._scaled_sqdist(X, Y))

    def diag(self, X):
        X = as_points(X, "X", self.input_dim)
        return np.full(X.shape[0], float(self._kappa(np.zeros(1))[0]))

    def _kappa(self, r2: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _dkappa(self, r2: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    # ---------------------------------------------------------------- hyperparameters
    @property
    def theta(self):
        if self.groups is not None:
            return np.log(self.lengthscale[self._first])
        return np.log(np.atleast_1d(self.lengthscale)).astype(np.float64)

    @property
    def n_theta(self) -> int:
        if self.groups is not None:
            return int(self._first.shape[0])
        return int(self.lengthscale.shape[0]) if self.ard else 1

    @property
    def theta_bounds(self):
        return np.tile(np.log(np.array(self.bounds)), (self.n_theta, 1))

    @property
    def theta_names(self):
        if self.groups is not None:  # a group's coordinates, as i or i:j (consecutive) or i,j,...
            return [f"lengthscale[{_span(np.flatnonzero(self.groups == k))}]" for k in range(self.n_theta)]
        if self.ard:
            return [f"lengthscale[{i}]" for i in range(self.lengthscale.shape[0])]
        return ["lengthscale"]

    def with_theta(self, theta):
        theta = np.asarray(theta, dtype=np.float64).reshape(-1)
        if theta.shape != (self.n_theta,):
            raise ValueError(f"theta must have shape ({self.n_theta},), got {theta.shape}")
        if self.groups is not None:
            theta = theta[self.groups]
        ell = np.exp(theta) if self.ard else float(np.exp(theta[0]))
        low, high = (ell.min(), ell.max()) if self.ard else (ell, ell)  # methods: cheaper than np.min
        if not (0.0 < low and high < np.inf):
            raise ValueError(f"lengthscale must be positive and finite, got exp({theta!r}) = {ell!r}")
        return self._rebuild(ell)

    def _rebuild(self, lengthscale):
        """This kernel with another (checked) lengthscale of the same shape."""
        return self._evolve(lengthscale=lengthscale)

    def gram_gradient(self, X):
        X = as_points(X, "X", self.input_dim)
        r2 = self._scaled_sqdist(X, X)
        K = self._kappa(r2)
        g = self._dkappa(r2)
        if self.ard:
            diff2 = (X[:, None, :] - X[None, :, :]) ** 2 / self.lengthscale**2
            dK = -2.0 * g[..., None] * diff2
            if self.groups is not None:
                dK = dK @ self._indicator
        else:
            dK = (-2.0 * g * r2)[..., None]
        return K, dK

    def gram_gradient_dot(self, X, W):
        """``g_d = -2 / ell_d^2 sum_ij M_ij (x_id - x_jd)^2`` with ``M = W * dk/d(r^2)``, by matrix products.

        ``sum_ij M_ij (x_i - x_j)^2 = 2 sum_i (M 1)_i x_i^2 - 2 x^T M x`` per dimension (M symmetric), on
        centred inputs: O(n^2 d) time and O(n^2) memory instead of the (n, n, d) tensor.
        """
        return self.gram_with_gradient_dot(X)[1](np.asarray(W, dtype=np.float64))

    def gram_with_gradient_dot(self, X):
        """One scaled distance matrix and one exponential give both the Gram matrix and
        ``g = dk/d(r^2)``; the contraction of :meth:`gram_gradient_dot` is then computed in g's
        memory, so the returned function is for one call."""
        X = as_points(X, "X", self.input_dim)
        r2 = self._scaled_sqdist(X, X)
        if not self.ard:
            return self._isotropic_gram_with_gradient_dot(r2)
        K, g = self._kappa_dkappa(r2, overwrite=True)
        Xc = (X - X.mean(axis=0)) / self.lengthscale
        indicator = self._indicator if self.groups is not None else None

        def dot(W):
            M = np.multiply(W, g, out=g)  # g is not needed again: the function is called once
            pair_sums = 2.0 * (M.sum(axis=1) @ Xc**2) - 2.0 * np.einsum("id,id->d", Xc, M @ Xc)
            out = -2.0 * pair_sums
            return out if indicator is None else out @ indicator

        return K, dot

    def _isotropic_gram_with_gradient_dot(self, r2):
        """K and ``W -> [-2 sum_ij W_ij r2_ij dk/d(r^2)_ij]`` (d/dlog ell of one lengthscale) from r2."""
        K, g = self._kappa_dkappa(r2)
        g *= r2

        def dot(W):
            return np.array([-2.0 * float(np.einsum("ij,ij->", W, g))])

        return K, dot

    def gram_at(self, X):
        """``theta -> (K, W -> g)`` as :meth:`gram_with_gradient_dot` gives them, with the squared
        coordinate differences ``D2[(i, j), d] = (x_id - x_jd)^2`` formed once for all steps of the
        search: ``r^2 = D2 exp(-2 theta)`` is one matrix-vector product and the contraction
        ``g_d = -2 ell_d^-2 sum_ij M_ij D2[(i, j), d]`` another (``M = W * dk/d(r^2)``). This saves
        the kernel object, the scaling of X and the distance call at every step, which dominate at
        the sizes of a BO study (n of a few tens); the differences take n^2 d doubles, so larger data
        (over :data:`_PREPARED_MAX` of them) take the per-step path."""
        X = as_points(X, "X", self.input_dim)
        n, dim = X.shape
        own = type(self)
        if n * n * dim > _PREPARED_MAX or any(
            getattr(own, name) is not getattr(Stationary, name)
            for name in ("gram_with_gradient_dot", "_scaled_sqdist", "with_theta", "_rebuild")
        ):  # (a subclass that changes how the Gram matrix is built is fitted through its own code)
            return super().gram_at(X)
        D2 = X[:, None, :] - X[None, :, :]
        np.square(D2, out=D2)
        D2 = D2.reshape(n * n, dim)
        ard, q = self.ard, self.n_theta
        if not ard:
            D2 = D2.sum(axis=1)
        elif self.groups is not None:  # a group's squared differences summed: one lengthscale each
            D2 = D2 @ self._indicator

        def at(theta):
            theta = np.asarray(theta, dtype=np.float64)
            if theta.shape != (q,):
                raise ValueError(f"theta must have shape ({q},), got {theta.shape}")
            ell = np.exp(theta)
            # as with_theta checks it (over a list: two array reductions cost ~8 us per step; NaN fails)
            if not all(0.0 < value < np.inf for value in ell.tolist()):
                raise ValueError(f"lengthscale must be positive and finite, got exp({theta!r}) = {ell!r}")
            inverse_ell2 = np.exp(-2.0 * theta)
            r2 = (D2 @ inverse_ell2 if ard else D2 * inverse_ell2[0]).reshape(n, n)
            if not ard:
                return self._isotropic_gram_with_gradient_dot(r2)
            K, g = self._kappa_dkappa(r2, overwrite=True)

            def dot(W):
                M = np.multiply(W, g, out=g)  # g is not needed again: the function is called once
                out = M.reshape(-1) @ D2
                out *= inverse_ell2
                out *= -2.0
                return out

            return K, dot

        return at

    # ---------------------------------------------------------------- input gradients
    @property
    def stationary(self) -> bool:
        return True

    @property
    def has_gradient_x(self) -> bool:
        return True

    def gradient_x(self, x, X):
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        X = np.asarray(X, dtype=np.float64)
        r2 = self._scaled_sqdist(x[None, :], X)[0]
        g = self._dkappa(r2)
        return 2.0 * g[:, None] * (x[None, :] - X) / np.asarray(self.lengthscale) ** 2

    def diag_gradient_x(self, x):
        return np.zeros(np.asarray(x).shape[-1])

    def gradients_x(self, Xq, X):
        Xq = np.asarray(Xq, dtype=np.float64)
        X = np.asarray(X, dtype=np.float64)
        g = self._dkappa(self._scaled_sqdist(Xq, X))
        return 2.0 * g[..., None] * (Xq[:, None, :] - X[None, :, :]) / np.asarray(self.lengthscale) ** 2

    def evaluate_and_gradients_x(self, Xq, X):
        """``kappa(r^2)`` and ``2 kappa'(r^2) (x - y) / ell^2`` from one scaled difference tensor
        ``D = (x - y) / ell`` and one exponential (:meth:`_kappa_dkappa`)."""
        ell = np.asarray(self.lengthscale, dtype=np.float64)
        D = (
            np.asarray(Xq, dtype=np.float64)[:, None, :] / ell
            - np.asarray(X, dtype=np.float64)[None, :, :] / ell
        )
        r2 = np.einsum("mnd,mnd->mn", D, D)
        K, g = self._kappa_dkappa(r2, overwrite=True)
        g *= 2.0
        D *= g[..., None]
        D /= ell
        return K, D

    def cross_gradients_at(self, X):
        """:meth:`evaluate_and_gradients_x` against fixed X, with ``X / ell`` formed once (the same
        division, so the same numbers to the bit); subclasses that compute it otherwise keep theirs."""
        own = type(self)
        if any(
            getattr(own, name) is not getattr(Stationary, name)
            for name in ("evaluate_and_gradients_x", "_scaled_sqdist")
        ):
            return super().cross_gradients_at(X)
        ell = np.asarray(self.lengthscale, dtype=np.float64)
        scaled = np.asarray(X, dtype=np.float64)[None, :, :] / ell
        kappa_dkappa = self._kappa_dkappa

        def cross(Xq):
            D = Xq[:, None, :] / ell - scaled
            r2 = np.einsum("mnd,mnd->mn", D, D)
            K, g = kappa_dkappa(r2, overwrite=True)
            g *= 2.0
            D *= g[..., None]
            D /= ell
            return K, D

        return cross

    def _kappa_dkappa(self, r2: np.ndarray, overwrite: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``kappa(r2)`` and ``dkappa/d(r2)``; subclasses share the exponential between the two and,
        with ``overwrite``, reuse r2's memory."""
        return self._kappa(r2), self._dkappa(r2)

    def diag_gradients_x(self, Xq):
        return np.zeros(np.asarray(Xq).shape)


def _span(columns: np.ndarray) -> str:
    """Coordinates as ``i``, ``i:j`` (consecutive, j excluded) or ``i,j,...``."""
    values = [int(c) for c in columns]
    if len(values) == 1:
        return str(values[0])
    if values == list(range(values[0], values[-1] + 1)):
        return f"{values[0]}:{values[-1] + 1}"
    return ",".join(map(str, values))


class RBF(Stationary):
    """Squared exponential kernel ``k(x, y) = exp(-||x - y||^2 / (2 ell^2))`` (002; R&W eq. 4.9).

    Parameters
    ----------
    lengthscale : float or array of shape (d,)
        One lengthscale, or one per input dimension (ARD).
    bounds : (float, float)
        Range of each lengthscale for hyperparameter fitting.

    Examples
    --------
    >>> from warmbo.kernels import RBF
    >>> RBF(0.5)([[0.0], [1.0]], [[0.0]]).round(4).ravel().tolist()
    [1.0, 0.1353]
    """

    def _kappa(self, r2):
        K = np.multiply(r2, -0.5)  # in place from here on: fresh large temporaries cost page faults
        return np.exp(K, out=K)

    def evaluate(self, X, Y):
        r2 = self._scaled_sqdist(X, Y)
        r2 *= -0.5
        return np.exp(r2, out=r2)

    def _dkappa(self, r2):
        return -0.5 * self._kappa(r2)

    def _kappa_dkappa(self, r2, overwrite=False):
        K = np.multiply(r2, -0.5, out=r2 if overwrite else None)
        np.exp(K, out=K)
        return K, -0.5 * K


class Matern(Stationary):
    """Matern kernel with smoothness nu in {1/2, 3/2, 5/2} (R&W eqs. 4.14-4.17).

    .. math::
        k_{1/2} = e^{-r},\\quad k_{3/2} = (1 + \\sqrt3 r) e^{-\\sqrt3 r},\\quad
        k_{5/2} = (1 + \\sqrt5 r + 5 r^2/3) e^{-\\sqrt5 r}

    with ``r = ||(x - y) / ell||``.

    Parameters
    ----------
    nu : {0.5, 1.5, 2.5}
        Smoothness; sample paths are ceil(nu) - 1 times differentiable.
    lengthscale : float or array of shape (d,)
        One lengthscale, or one per input dimension (ARD).
    bounds : (float, float)
        Range of each lengthscale for hyperparameter fitting.
    groups : array of d integers, optional
        With ARD lengthscales: coordinates sharing one lengthscale (one hyperparameter per group;
        see :class:`Stationary`), as the optimizer's default kernel ties a categorical's one-hot columns.
    """

    def __init__(
        self, nu: float = 2.5, lengthscale=1.0, bounds: tuple[float, float] = (1e-3, 1e3), groups=None
    ):
        if nu not in (0.5, 1.5, 2.5):
            raise ValueError(f"nu must be one of 0.5, 1.5, 2.5, got {nu!r}")
        super().__init__(lengthscale, bounds, groups)
        self._set(nu=float(nu))

    def _parameters(self) -> dict:
        return {"nu": self.nu, **super()._parameters()}

    def _kappa(self, r2):
        return self._kappa_dkappa(r2, derivative=False)[0]

    def evaluate(self, X, Y):
        return self._kappa_dkappa(self._scaled_sqdist(X, Y), derivative=False, overwrite=True)[0]

    def _kappa_dkappa(self, r2, overwrite: bool = False, derivative: bool = True):
        """The kernel and (optionally) ``dk/d(r^2)`` from ``s = sqrt(2 nu) r`` and one ``exp(-s)``,
        computed in place (``overwrite``: r2 may be overwritten; fresh (n, m) temporaries cost page
        faults, and the textbook expression makes three of them):

        - nu = 1/2: ``k = e^-s``, ``dk/d(r^2) = -e^-s / (2 r)`` (0 at r = 0, see :meth:`_dkappa`);
        - nu = 3/2: ``k = (1 + s) e^-s``, ``dk/d(r^2) = -(3/2) e^-s``;
        - nu = 5/2: ``k = (1 + s + s^2/3) e^-s = ((s + 3/2)^2 + 3/4) e^-s / 3``,
          ``dk/d(r^2) = -(5/6) (1 + s) e^-s``.
        """
        s = np.sqrt(r2, out=r2 if overwrite else None)
        if self.nu == 0.5:
            if not derivative:
                np.negative(s, out=s)
                return np.exp(s, out=s), None
            E = np.exp(-s)
            with np.errstate(divide="ignore", invalid="ignore"):
                g = np.where(s > 0, -E / (2.0 * s), 0.0)
            return E, g
        s *= _SQRT3 if self.nu == 1.5 else _SQRT5
        E = np.negative(s)
        np.exp(E, out=E)
        if self.nu == 1.5:
            g = -1.5 * E if derivative else None
            s += 1.0
            s *= E
            return s, g
        g = None
        if derivative:
            g = s + 1.0
            g *= E
            g *= -5.0 / 6.0
        s += 1.5
        np.square(s, out=s)
        s += 0.75
        s *= E
        s /= 3.0
        return s, g

    def _dkappa(self, r2):
        r = np.sqrt(r2)
        if self.nu == 0.5:
            # dk/dr = -e^{-r}; dk/d(r^2) = -e^{-r} / (2 r). At r = 0 the kernel has a kink; every
            # caller multiplies by a squared coordinate difference that vanishes there, so return 0.
            with np.errstate(divide="ignore", invalid="ignore"):
                out = -np.exp(-r) / (2.0 * r)
            return np.where(r > 0, out, 0.0)
        if self.nu == 1.5:
            return -1.5 * np.exp(-_SQRT3 * r)
        return -(5.0 / 6.0) * (1.0 + _SQRT5 * r) * np.exp(-_SQRT5 * r)
