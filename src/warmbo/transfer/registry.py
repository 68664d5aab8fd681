"""Transfer methods by name: what ``Optimizer(space, prior=..., transfer=NAME)`` and the CLI's
``--method`` build from source data.

Every entry takes the source data in the maximisation convention and in the search space's encoded
coordinates (a :class:`~warmbo.data.TaskData` signed by the optimizer) and returns a model that
satisfies the optimizer's model protocol:

- ``auto`` (the default with ``prior=``): the guarded portfolio, RGPE's ranking-weighted ensemble
  of one GP per source and the target GP: a source gets weight only as far as it ranks the target's
  own observations better than the target model does (leave-one-out), so unrelated sources leave the
  plain GP; without RGPE's dilution guard (measured: it handed early asks to a target GP of a few
  points, docs/transfer.md). ``rgpe`` is RGPE as published, guard on;
- ``envelope``: Envelope-BO (003), the sources as noisy observations of the target (eq. 17);
- ``rgpe``, ``diff``, ``efficient``, ``collaborative``, ``generic``: the baselines of
  :mod:`warmbo.transfer.baselines` (``generic`` ignores the sources: plain BO beside them).

``none`` is not a model: the optimizer tells the prior data as trials of its own study.
"""

from __future__ import annotations

from .._registry import Registry

__all__ = ["TRANSFER_METHODS", "separate_sources", "transfer_model"]


def _factory(module: str, name: str, **settings):
    """A builder ``(source, seed) -> model`` that imports its class on first use (the optimizer
    imports this registry; the transfer models' modules load only when one is asked for);
    ``settings`` are passed to the class."""

    def model_class():
        from importlib import import_module

        return getattr(import_module(f"warmbo.transfer.{module}"), name)

    def build(source, seed=None):
        return model_class()(source=source, seed=seed, **settings)

    build.__qualname__ = f"{module}.{name}"
    build.model_class = model_class
    return build


#: ``transfer=`` names -> model builders (``none``: the prior data are trials of this same objective)
TRANSFER_METHODS: Registry = Registry("transfer")
TRANSFER_METHODS.register("none", None)
# auto: RGPE without the dilution guard, its target GP the optimizer's default model; measured in
# docs/transfer.md (bench/auto_variants.py, bench/useless_sources.py)
TRANSFER_METHODS.register("auto", _factory("baselines", "RGPE", prevent_dilution=False, map_target=True))
TRANSFER_METHODS.register("envelope", _factory("envelope", "Envelope"))
for _name, _cls in (
    ("rgpe", "RGPE"),
    ("diff", "DiffGP"),
    ("efficient", "EfficientBO"),
    ("collaborative", "CollaborativeBO"),
    ("generic", "GenericBO"),
):
    TRANSFER_METHODS.register(_name, _factory("baselines", _cls))


def separate_sources(name: str) -> bool:
    """True when method ``name`` models each source task on its own (one GP per source, as RGPE), so
    a cap on prior rows applies per source; False when it pools the sources into one model."""
    build = TRANSFER_METHODS.lookup(name)
    return build is not None and bool(getattr(build.model_class(), "separate_sources", False))


def transfer_model(name: str, source, seed: int | None = None):
    """The transfer model ``name`` on ``source`` (encoded, maximisation convention)."""
    build = TRANSFER_METHODS.lookup(name)
    if build is None:
        raise ValueError("transfer='none' builds no model: the prior data are told as trials")
    return build(source, seed)
