"""Benchmark problems: closed-form test functions with known optima, and regret measures.

This subpackage owns the objectives used in experiments and tests (:mod:`.functions`, definitions
from the Virtual Library of Simulation Experiments, Surjanovic & Bingham) and the regret curves
computed from them (:mod:`.regret`; maximisation convention by default).
"""

from warmbo.problems.functions import (
    FUNCTIONS,
    TestFunction,
    ackley,
    branin,
    easom,
    eggholder,
    get,
    griewank,
    hartmann3,
    hartmann6,
    himmelblau,
    holder_table,
    levy,
    levy13,
    rastrigin,
    rosenbrock,
    styblinski_tang,
)
from warmbo.problems.legendre import LegendreFunction, LegendreSetup
from warmbo.problems.regret import (
    cumulative_inference_regret,
    cumulative_regret,
    inference_regret,
    simple_regret,
)

__all__ = [
    "FUNCTIONS",
    "LegendreFunction",
    "LegendreSetup",
    "TestFunction",
    "ackley",
    "branin",
    "cumulative_inference_regret",
    "cumulative_regret",
    "easom",
    "griewank",
    "hartmann3",
    "eggholder",
    "get",
    "hartmann6",
    "himmelblau",
    "holder_table",
    "inference_regret",
    "levy",
    "levy13",
    "rosenbrock",
    "rastrigin",
    "simple_regret",
    "styblinski_tang",
]
