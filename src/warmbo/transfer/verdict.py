"""The probe's verdict: whether a study's own evaluations refute its transfer sources.

``transfer="auto"`` starts a study at the points its sources rank best (the warm design,
:mod:`warmbo.transfer.warm_design`), asks the ensemble (RGPE, 003 eq. 6-7) a few times, then asks one
point no source chose: the cold design's first point, the probe (:meth:`warmbo.Optimizer._probe_due`).
The sources claim that the points they chose are among the target's best. Under that claim a point
of a space-filling design seldom beats every one of them; were the sources' points no better than
the design's, it would beat all k of them with probability 1/(k + 1); where the sources point at the
target's worst region, it nearly always does. The verdict: with

- S the study's own complete trials made before its first cold-design point (the points the
  sources chose: the warm design and the model asks that weighed them), and
- C its complete trials at the cold design's first points (the probe, or the cold fallback's points
  when the ensemble dropped every source first),

the sources are **refuted** when :math:`\\max_{c \\in C} y_c \\ge \\max_{s \\in S} y_s` (maximisation
convention): the cold design did at least as well as everything the sources chose. The study then
sets its sources aside and continues as the cold optimizer would (its GP alone, the cold design's
points first: :class:`warmbo.Optimizer` does that part).

Why not leave it to RGPE's weights: the ranking loss judges a source only on how it orders the
target's observations; when the target is flat where the sources pointed (every source negated: its
best points the target's worst), no ordering of those points is worse than another, and five
negated sources kept 40-70% of the weight for ten asks after the probe on Hartmann-6 (the run ended
at regret 1.77 where the cold run ended at 0.14; docs/transfer.md, "Several misleading sources").
The verdict compares values, not orderings: it needs no model and cannot be argued out of.

Why the best of S and not its median: the rule must almost never fire where the sources are right
(on the transfer benchmark's related meta-data it never did; docs/transfer.md), and where they are
merely uninformative the ensemble already gives them little weight; the median fired in about half
of the runs with a pure-noise source.

Written by hand (a comparison of two maxima: no library offers the rule itself).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["Refutation", "refutation"]


@dataclass(frozen=True)
class Refutation:
    """The verdict against a study's sources: which cold-design trial did at least as well as every
    trial the sources chose.

    ``trial`` and ``value``: the cold point's trial id and value (as measured, in the study's
    direction); ``sources_best``: the best value among the ``n_source_trials`` trials the sources
    chose; ``n_trials``: the study's own trials (any state) when the verdict was reached."""

    trial: int
    value: float
    sources_best: float
    n_source_trials: int
    n_trials: int

    def __str__(self) -> str:
        k = self.n_source_trials
        chose = "the trial the sources chose" if k == 1 else f"all {k} trials the sources chose"
        return (
            f"sources set aside after {self.n_trials} trials: trial {self.trial}, a point of the cold design "
            f"({self.value:.6g}), did at least as well as {chose} (best {self.sources_best:.6g}); the "
            "study continues as without sources"
        )

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Refutation:
        return cls(
            int(data["trial"]),
            float(data["value"]),
            float(data["sources_best"]),
            int(data["n_source_trials"]),
            int(data["n_trials"]),
        )


def refutation(
    ids: list[int],
    values: np.ndarray,
    signed: np.ndarray,
    complete: np.ndarray,
    cold: np.ndarray,
) -> Refutation | None:
    """The verdict on a study's own trials, in the order they were made (see the module docstring).

    Parameters
    ----------
    ids : list of int
        The trials' ids.
    values, signed : ndarray (n,)
        Their values as measured and in the maximisation convention (anything where not complete).
    complete : ndarray of bool (n,)
        Which trials are complete.
    cold : ndarray of bool (n,)
        Which trials are at one of the cold design's first points.

    Returns
    -------
    Refutation or None
        None while no cold point is complete, while no trial before the first cold point is
        complete, or when some trial the sources chose is better than every cold point.
    """
    n = len(ids)
    complete = np.asarray(complete, dtype=bool)
    cold = np.asarray(cold, dtype=bool)
    if not (complete.shape == cold.shape == (n,) and np.shape(values) == np.shape(signed) == (n,)):
        raise ValueError(f"ids, values, signed, complete and cold must all have length {n}")
    if not cold.any():
        return None
    first = int(np.argmax(cold))
    chosen = complete[:first]
    tried = complete & cold
    if not chosen.any() or not tried.any():
        return None
    signed = np.asarray(signed, dtype=np.float64)
    best_chosen = int(np.flatnonzero(chosen)[np.argmax(signed[:first][chosen])])
    best_cold = int(np.flatnonzero(tried)[np.argmax(signed[tried])])
    if signed[best_cold] < signed[best_chosen]:
        return None
    return Refutation(
        trial=int(ids[best_cold]),
        value=float(values[best_cold]),
        sources_best=float(values[best_chosen]),
        n_source_trials=int(chosen.sum()),
        n_trials=n,
    )
