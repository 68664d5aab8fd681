"""warmbo: Bayesian optimization that does not start cold.

The data path: ``Space.encode -> model.fit -> acquisition.bind(model) -> maximize -> Space.decode``.
"""

from . import bounds, kernels, problems
from .acquisition import EI, PI, UCB, Acquisition, PosteriorMean, ScalarizedUCB
from .bounds import IGPUCB, MetaKeLBound, MultiTaskBound, Srinivas
from .data import TaskData
from .maximize import MaximizeResult, maximize
from .models import GP, BudgetedMultiTaskGP, MultiTaskGP
from .models.base import Model, NotFittedError
from .multitask_optimizer import MultiTaskOptimizer
from .optimizer import Optimizer, Suggestion
from .scalarization import Chebyshev, Linear
from .space import Categorical, Float, Int, Space
from .storage import Study
from .transfer.envelope import Envelope
from .transfer.metakel import MetaKeL
from .transfer.taf import TAF
from .transfer.tuned_prior import TunedPrior
from .trial import History, Trial

__version__ = "0.1.0"

__all__ = [
    "Acquisition",
    "BudgetedMultiTaskGP",
    "Chebyshev",
    "Linear",
    "MultiTaskBound",
    "MultiTaskGP",
    "MultiTaskOptimizer",
    "ScalarizedUCB",
    "Categorical",
    "EI",
    "TAF",
    "Envelope",
    "Float",
    "GP",
    "IGPUCB",
    "Int",
    "MaximizeResult",
    "MetaKeL",
    "MetaKeLBound",
    "Model",
    "NotFittedError",
    "Optimizer",
    "Suggestion",
    "Study",
    "History",
    "Trial",
    "TunedPrior",
    "TaskData",
    "PI",
    "PosteriorMean",
    "Space",
    "Srinivas",
    "UCB",
    "bounds",
    "kernels",
    "maximize",
    "problems",
]
