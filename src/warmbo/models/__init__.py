"""Posterior models: the exact GP / kernel ridge regression (:class:`GP`), its vector-valued version
(:class:`MultiTaskGP`) and the Nystrom-budgeted BKB / MT-BKB posterior (:class:`BudgetedMultiTaskGP`)."""

from .defaults import default_model, ml2_model
from .gp import GP, Prediction
from .multitask import MultiTaskGP, MultiTaskPrediction
from .nystrom import BKB, BudgetedMultiTaskGP

__all__ = [
    "GP",
    "Prediction",
    "MultiTaskPrediction",
    "MultiTaskGP",
    "BudgetedMultiTaskGP",
    "BKB",
    "default_model",
    "ml2_model",
]
