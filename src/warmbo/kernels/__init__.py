"""Kernels: small immutable values with an algebra (``k1 + k2``, ``k1 * k2``, ``c * k``).

See :mod:`warmbo.kernels.base` for the contract. ``k(X, Y)`` is the Gram matrix, ``k(X)`` and
``k.diag(X)`` the diagonal, ``k.gram(X)`` the symmetric Gram matrix.
"""

from .base import Affine, Constant, Kernel, Product, Sum
from .dot_product import Linear, Polynomial
from .features import FeatureKernel, Features, Legendre, RandomFourier
from .multitask import ICM, LCM, Independent, MultiTaskKernel, UniformTask
from .stationary import RBF, Matern, Stationary

__all__ = [
    "Kernel",
    "Sum",
    "Product",
    "Constant",
    "Affine",
    "Stationary",
    "RBF",
    "Matern",
    "Linear",
    "Polynomial",
    "FeatureKernel",
    "Features",
    "Legendre",
    "RandomFourier",
    "MultiTaskKernel",
    "ICM",
    "UniformTask",
    "Independent",
    "LCM",
]
