"""A conditional test function with a known optimum: Jenatton et al.'s tree-structured function.

Jenatton, Archambeau, Gonzalez & Seeger, "Bayesian optimization with tree-structured dependencies"
(ICML 2017), as Ax defines it for its hierarchical-search-space benchmark
(``ax/benchmark/metrics/jenatton.py``, ranges from ``ax/benchmark/problems/synthetic/hss/jenatton.py``):
binary choices ``x1``, ``x2``, ``x3`` and floats on ``[0, 1]``,

.. math::
    f = \\begin{cases}
        x_4^2 + 0.1 + r_8 & x_1 = 0, x_2 = 0 \\\\
        x_5^2 + 0.2 + r_8 & x_1 = 0, x_2 = 1 \\\\
        x_6^2 + 0.3 + r_9 & x_1 = 1, x_3 = 0 \\\\
        x_7^2 + 0.4 + r_9 & x_1 = 1, x_3 = 1
    \\end{cases}

minimised; the minimum 0.1 is at ``x1 = x2 = 0, x4 = r8 = 0``. ``x2`` and ``r8`` are active when
``x1 = 0``, ``x3`` and ``r9`` when ``x1 = 1``, and ``x4`` .. ``x7`` under their branch of ``x2`` or
``x3``: at most 4 of the 9 parameters are active at a point. :func:`jenatton` builds the space with
these conditions (``when=``), or without them (``conditional=False``: the same 9 parameters always
present, the function reading the active ones only), to compare the two on one function.

Written by hand: the definition is six lines.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..parameters import Categorical, Float
from ..space import Space
from .mixed import MixedFunction

__all__ = ["JENATTON_MINIMUM", "jenatton"]

JENATTON_MINIMUM = 0.1


def _jenatton(p: Mapping[str, Any]) -> float:
    if p["x1"] == 0:
        return (p["x4"] ** 2 + 0.1 if p["x2"] == 0 else p["x5"] ** 2 + 0.2) + p["r8"]
    return (p["x6"] ** 2 + 0.3 if p["x3"] == 0 else p["x7"] ** 2 + 0.4) + p["r9"]


def jenatton(conditional: bool = True) -> MixedFunction:
    """The tree-structured function on its space, with the conditions declared or (``False``) not."""

    def when(**parents: int) -> dict[str, Any]:
        return {"when": parents} if conditional else {}

    space = Space(
        [
            Categorical("x1", [0, 1]),
            Categorical("x2", [0, 1], **when(x1=0)),
            Categorical("x3", [0, 1], **when(x1=1)),
            Float("x4", 0.0, 1.0, **when(x2=0)),
            Float("x5", 0.0, 1.0, **when(x2=1)),
            Float("x6", 0.0, 1.0, **when(x3=0)),
            Float("x7", 0.0, 1.0, **when(x3=1)),
            Float("r8", 0.0, 1.0, **when(x1=0)),
            Float("r9", 0.0, 1.0, **when(x1=1)),
        ]
    )
    best = {"x1": 0, "x2": 0, "x4": 0.0, "r8": 0.0}
    if not conditional:
        best = {**best, "x3": 0, "x5": 0.0, "x6": 0.0, "x7": 0.0, "r9": 0.0}
    name = "jenatton" if conditional else "jenatton-flat"
    return MixedFunction(name, space, JENATTON_MINIMUM, (best,), _jenatton)
