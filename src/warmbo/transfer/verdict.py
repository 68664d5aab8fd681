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

a cold point **beats** the sources when :math:`y_c > \\max_{s \\in S} y_s` (maximisation
convention): it did better than everything they chose (a tie does not count: on a grid of accuracies
many settings share a value). The sources are **refuted** when two cold points beat them, and no
trial of S is still pending (a batch's model asks told after the probe may yet beat it). When one
has and no other cold point is in the study (the probe alone), the next ask is the cold design's
next point, the **confirmation** (:func:`confirmation_due`). The study then sets its sources aside
and continues as the cold optimizer would (its GP alone, the cold design's points first:
:class:`warmbo.Optimizer` does that part).

Why two: were the sources' points no better than the design's, one cold point would beat all k of
them with probability 1/(k + 1) (1/6 after the 5 points a study has chosen from its sources when
the probe comes), two with probability 2/((k + 1)(k + 2)) (1/21). On the transfer benchmark's
related meta-data one cold point beat the sources in 8 of 165 runs (HPOBench's credit_g and
vehicle, the SVM grids' titanic, chile and cowles), and setting those sources aside cost the SVM
median after 10 evaluations 0.0062 -> 0.0072; the confirmation beat them again in at most one of
the 8 (session 36, docs/transfer.md). Where the sources point at the target's worst region the
confirmation nearly always beats them too, and it is the first point the cold restart would have
asked anyway.

Why not leave it to RGPE's weights: the ranking loss judges a source only on how it orders the
target's observations; when the target is flat where the sources pointed (every source negated: its
best points the target's worst), no ordering of those points is worse than another, and five
negated sources kept 40-70% of the weight for ten asks after the probe on Hartmann-6 (the run ended
at regret 1.77 where the cold run ended at 0.14; docs/transfer.md, "Several misleading sources").
The verdict compares values, not orderings: it needs no model and cannot be argued out of.

Why the best of S and not its median: the rule must seldom fire where the sources are right, and
where they are merely uninformative the ensemble already gives them little weight; with one cold
point, the median fired in 9-12 of 20 runs with a pure-noise source, the best in about as many on
the 6-dimensional problems and fewer on the others (bench/useless_sources.py, session 36).

Which trials are cold points is the caller's to say (:meth:`warmbo.Optimizer._verdict`: trials at one
of the cold design's first points, past the warm design, and not at a point of the warm design: on a
grid the sources' own choice can be a cold-design point).

Written by hand (a comparison of two maxima: no library offers the rule itself).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["Refutation", "confirmation_due", "refutation"]


@dataclass(frozen=True)
class Refutation:
    """The verdict against a study's sources: which cold-design trials did better than every trial the
    sources chose.

    ``trials``: the ids of the cold points that beat the sources (two or more), ``value`` the best of
    their values (as measured, in the study's direction); ``sources_best``: the best value among the
    ``n_source_trials`` trials the sources chose; ``n_trials``: the study's own trials (any state,
    in the window the verdict reads) when it was reached."""

    trials: tuple[int, ...]
    value: float
    sources_best: float
    n_source_trials: int
    n_trials: int

    def __str__(self) -> str:
        k = self.n_source_trials
        chose = "the trial the sources chose" if k == 1 else f"all {k} trials the sources chose"
        ids = [str(i) for i in self.trials]
        named = " and ".join(ids) if len(ids) <= 2 else ", ".join(ids[:-1]) + f" and {ids[-1]}"
        return (
            f"sources set aside after {self.n_trials} trials: trials {named}, points of the cold design "
            f"(best {self.value:.6g}), each did better than {chose} (best {self.sources_best:.6g}); "
            "the study continues as without sources"
        )

    def to_dict(self) -> dict:
        record = asdict(self)
        record["trials"] = list(self.trials)
        return record

    @classmethod
    def from_dict(cls, data: dict) -> Refutation:
        return cls(
            tuple(int(i) for i in data["trials"]),
            float(data["value"]),
            float(data["sources_best"]),
            int(data["n_source_trials"]),
            int(data["n_trials"]),
        )


def _beating(signed, complete, cold) -> tuple[np.ndarray, int, int] | None:
    """``(beats, best_chosen, first)``: which complete cold trials beat the sources, the index of
    the sources' best trial, and the index of the first cold trial; None while there is nothing to
    compare (no cold point, or no complete trial before the first one, or no complete cold point)."""
    if not cold.any():
        return None
    first = int(np.argmax(cold))
    chosen = complete[:first]
    tried = complete & cold
    if not chosen.any() or not tried.any():
        return None
    best_chosen = int(np.flatnonzero(chosen)[np.argmax(signed[:first][chosen])])
    return tried & (signed > signed[best_chosen]), best_chosen, first


def _checked(ids, values, signed, complete, cold):
    n = len(ids)
    complete = np.asarray(complete, dtype=bool)
    cold = np.asarray(cold, dtype=bool)
    if not (complete.shape == cold.shape == (n,) and np.shape(values) == np.shape(signed) == (n,)):
        raise ValueError(f"ids, values, signed, complete and cold must all have length {n}")
    return np.asarray(signed, dtype=np.float64), complete, cold


def refutation(
    ids: list[int],
    values: np.ndarray,
    signed: np.ndarray,
    complete: np.ndarray,
    cold: np.ndarray,
    pending: np.ndarray | None = None,
    n_trials: int | None = None,
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
        Which trials are cold points (see the module docstring).
    pending : ndarray of bool (n,), optional
        Which trials are pending: no verdict while one of the sources' is.
    n_trials : int, optional
        The study's own trials, for the record (default ``n``).

    Returns
    -------
    Refutation or None
        The verdict when two complete cold points beat the sources; None otherwise.
    """
    signed, complete, cold = _checked(ids, values, signed, complete, cold)
    found = _beating(signed, complete, cold)
    if found is None or found[0].sum() < 2:
        return None
    beats, best_chosen, first = found
    if pending is not None and np.asarray(pending, dtype=bool)[:first].any():
        return None
    winners = np.flatnonzero(beats)
    best = int(winners[np.argmax(signed[winners])])
    return Refutation(
        trials=tuple(int(ids[i]) for i in winners),
        value=float(values[best]),
        sources_best=float(values[best_chosen]),
        n_source_trials=int(complete[:first].sum()),
        n_trials=len(ids) if n_trials is None else int(n_trials),
    )


def confirmation_due(
    ids: list[int],
    values: np.ndarray,
    signed: np.ndarray,
    complete: np.ndarray,
    cold: np.ndarray,
    failed: np.ndarray,
) -> bool:
    """Whether the next ask is the confirmation: one complete cold point beat the sources and it is
    the study's only cold point (none pending, none that did not beat them; a failed one does not
    count, so a failed confirmation is asked again at the cold design's next point). Arguments as
    :func:`refutation`'s, and ``failed``: which trials failed."""
    signed, complete, cold = _checked(ids, values, signed, complete, cold)
    found = _beating(signed, complete, cold)
    if found is None or found[0].sum() != 1:
        return False
    shown = cold & ~np.asarray(failed, dtype=bool)
    return int(shown.sum()) == 1
