"""Posterior models: the exact GP / kernel ridge regression (:class:`GP`)."""

from .gp import GP

__all__ = ["GP"]
