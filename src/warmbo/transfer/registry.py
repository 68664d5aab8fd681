"""Transfer methods by name: what ``Optimizer(space, prior=..., transfer=NAME)`` and the CLI's
``--method`` build from source data.

Every entry takes the source data in the maximisation convention and in the search space's encoded
coordinates (a :class:`~warmbo.data.TaskData` signed by the optimizer) and returns a model that
satisfies the optimizer's model protocol:

- ``envelope``: Envelope-BO (003), the sources as noisy observations of the target (eq. 17);
- ``rgpe``, ``diff``, ``efficient``, ``collaborative``, ``generic``: the baselines of
  :mod:`warmbo.transfer.baselines` (``generic`` ignores the sources: plain BO beside them).

``none`` is not a model: the optimizer tells the prior data as trials of its own study.
"""

from __future__ import annotations

__all__ = ["TRANSFER_METHODS", "transfer_model"]

#: names accepted by ``transfer=`` (``none``: the prior data are trials of this same objective)
TRANSFER_METHODS = ("none", "envelope", "rgpe", "diff", "efficient", "collaborative", "generic")


def _classes() -> dict:
    from .baselines import BASELINES
    from .envelope import Envelope

    return {"envelope": Envelope, **BASELINES}


def transfer_model(name: str, source, seed: int | None = None):
    """The transfer model ``name`` on ``source`` (encoded, maximisation convention)."""
    classes = _classes()
    if name not in classes:
        raise ValueError(f"unknown transfer method {name!r}; choose one of {', '.join(TRANSFER_METHODS)}")
    return classes[name](source=source, seed=seed)
