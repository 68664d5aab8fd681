"""What a study's transfer does, in one immutable record: ``Optimizer.transfer_report()``.

It names the method, each source task with its rows and, once the model has been fitted to the
target's observations, the weight the model gives it: RGPE's / ``auto``'s ensemble weight (the
fraction of posterior draws in which that source ranks the target's observations best; the target
model's own weight is ``target_weight``, and a source dropped by ``rgpe``'s dilution guard has weight 0), or
Envelope-BO's learned source noise ``sigma_s^2`` (003 eq. 16: large means the source is judged
unrelated). It also lists the warm design the study started from, and, when the study's own
evaluations refuted the sources (:mod:`warmbo.transfer.verdict`), the verdict that set them aside.
``str()`` gives the lines ``warmbo status`` prints; :meth:`TransferReport.to_dict` the JSON stored
with the study.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["SourceSummary", "TransferReport", "transfer_report"]


@dataclass(frozen=True)
class SourceSummary:
    """One source task: its label, rows, and the fitted model's weight or learned noise (or None)."""

    name: str
    rows: int
    weight: float | None = None
    noise: float | None = None


@dataclass(frozen=True)
class TransferReport:
    method: str
    sources: tuple[SourceSummary, ...]
    target_weight: float | None
    n_target: int
    warm_design: tuple[dict, ...] = ()
    warm_scores: tuple[float, ...] = ()
    refuted: str | None = None  # the verdict that set the sources aside (warmbo.transfer.verdict)
    #: the weights of a model fitted to the study's complete trials for this report
    #: (``Optimizer.transfer_report()``), not those the last model ask stored (``warmbo status``):
    #: after a tell the two differ, and a user test read both as "the last model suggestion's"
    fitted_now: bool = False

    @property
    def fell_back(self) -> bool:
        """True when the model gives every source weight 0 (the plain GP on the target alone)."""
        weights = [s.weight for s in self.sources if s.weight is not None]
        return bool(weights) and all(w == 0 for w in weights)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TransferReport:
        sources = tuple(SourceSummary(**s) for s in data.get("sources", ()))
        return cls(
            data["method"],
            sources,
            data.get("target_weight"),
            int(data.get("n_target", 0)),
            tuple(data.get("warm_design", ())),
            tuple(data.get("warm_scores", ())),
            data.get("refuted"),
            bool(data.get("fitted_now", False)),
        )

    def __str__(self) -> str:
        rows = sum(s.rows for s in self.sources)
        lines = [f"transfer {self.method}: {len(self.sources)} source task(s), {rows} rows"]
        if self.warm_design:
            first = self.warm_design[0]
            if isinstance(first, dict):  # a parameter dict: short numbers, as `warmbo status` shows trials
                shown = (f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}" for k, v in first.items())
                first = ", ".join(shown)
            lines.append(f"warm design: {len(self.warm_design)} point(s) from the sources, first {first}")
        if self.refuted is not None:
            lines.append(self.refuted)
            return "\n".join(lines)
        weighted = [s for s in self.sources if s.weight is not None]
        if weighted:
            top = sorted(weighted, key=lambda s: -s.weight)[:5]
            shown = ", ".join(f"{s.name} {s.weight:.2f}" for s in top)
            more = f" (+{len(weighted) - len(top)} more)" if len(weighted) > len(top) else ""
            # (a chemist user test read "target 0.50, task lab.db 0.50" as two measured values)
            total = sum(s.weight for s in weighted) + (self.target_weight or 0.0)
            summing = ", summing to 1" if abs(total - 1.0) < 1e-6 else ""
            whose = "the model fitted to them" if self.fitted_now else "the last model suggestion's"
            head = (
                f"weights after {self.n_target} target trial(s) ({whose}: how much "
                f"the model leans on each{summing}): this study {self.target_weight:.2f}"
            )
            lines.append(f"{head}, {shown}{more}")
            if self.fell_back:
                # (a user test read "plain GP" as "the same as a cold start": the warm design's points
                # were the sources' picks all the same, and the run is not the cold run)
                # (no count: the design's size, not how many of its points were asked, a review)
                spent = (
                    "; the first trials were the warm design's, the sources' picks"
                    if self.warm_design
                    else ""
                )
                said = "no source ranks the target's trials better than its own model: plain GP from here"
                lines.append(said + spent)
        noisy = [s for s in self.sources if s.noise is not None]
        if not weighted and not noisy and self.method in ("auto", "rgpe", "envelope"):
            what = "learns each source's noise" if self.method == "envelope" else "weighs the sources"
            lines.append(f"the model {what} from its first ask after the warm design")
        if noisy:
            shown = ", ".join(f"{s.name} {s.noise:.3g}" for s in noisy[:5])
            lines.append(f"learned source noise sigma_s^2 (large = judged unrelated): {shown}")
        return "\n".join(lines)

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        """A notebook cell ending with ``opt.transfer_report()`` shows :meth:`__str__`, as ``print``
        does (the dataclass's repr is one line of every field)."""
        printer.text(str(self))


def transfer_report(method: str, model, n_target: int, warm=(), warm_scores=()) -> TransferReport:
    """The report of a transfer ``model`` (fitted or not) built by ``method``."""
    sources = list(getattr(model, "sources_", None) or ())
    weights = getattr(model, "weights_", None)
    noise = getattr(model, "source_noise_", None)
    summaries = []
    for i, task in enumerate(sources):
        w = None if weights is None else float(np.asarray(weights)[i])
        s2 = None if noise is None else float(np.ravel(noise)[i])
        summaries.append(SourceSummary(str(task.name), len(task), w, s2))
    target = None if weights is None else float(np.asarray(weights)[-1])
    return TransferReport(method, tuple(summaries), target, int(n_target), tuple(warm), tuple(warm_scores))
