"""What ``transfer="auto"`` is made of, on the transfer benchmark (issue 14).

``auto`` is RGPE's ranking-weighted ensemble without RGPE's dilution guard; ``rgpe`` is RGPE as
published, guard on. The arms, each run through the transfer section's own loop
(:func:`warmbo.benchmarks.transfer.run_one`: leave-one-task-out, every other task a source of 100
random rows, 30 evaluations, the section's seeds): ``none`` (no transfer, the optimizer's default),
``rgpe`` and ``auto``; and ``auto-mean6`` / ``auto-mean11``: ``auto`` asking for the ensemble's best
posterior mean instead of its best EI while the target has fewer than 6 / 11 points (session 14:
tried, not kept; docs/transfer.md).

Reported per suite: the median over targets of the normalised regret after 1, 5, 10, 20 and 30
evaluations, the median evaluations to the target's top 1%, and the largest amount by which an arm
ends behind ``none`` on one target after 30 (issue 14's bound: 0.02).

The stored bench/results/auto_variants.json was made at git b616b98, where the optimizer also had a
hedge (the cold design's points after a stall; ``Optimizer._hedge_point``, removed after it); that
version of this script had three more arms: ``guard+hedge-m``, ``guard+hedge-2m`` (the guard with
the hedge after a stall of m or 2m trials, m = max(3, 2d)) and ``no-guard`` (no guard, no hedge,
which is ``auto`` now); its ``auto`` arm was no guard with the hedge after 2m. docs/transfer.md
gives the figures and why neither the guard nor the hedge is in ``auto``.

    python bench/auto_variants.py [--suite hpobench --suite svm] [--arms none,rgpe,auto] [--tasks N]
                                  [--seeds N] [--out FILE]

``avg-rank`` is the model-free baseline of the transfer section (the sources' configurations in
order of their mean normalised regret); issue 14 asks ``auto`` to be better than it after 5 and 10
evaluations; ``--seeds 5`` measured that comparison in session 28, when the section still ran 2
seeds per target (``bench/results/auto_variants_seeds5.json``; the section runs 5 since).

Results: bench/results/auto_variants.json (or ``--out``) and a table on stdout.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np

import warmbo.optimizer as optimizer_module
from warmbo.benchmarks._common import git_commit
from warmbo.benchmarks.transfer import SIZES, _Suite, _suite_results

#: the arms made by :func:`_variant`
_VARIANTS = (
    "auto-old",
    "auto-nofallback",
    "auto-map-all",
    "auto-fallback2m",
    "auto-noprobe",
    "auto-gated",
    "auto-noverdict",
    "auto-repeats",
    "auto-apart-all",
    "auto-apart-ties",
    "auto-apart-stalled",
    "auto-apart-noise",
    "auto-restart-none",
    "auto-restart-half",
    "auto-restart-full",
    "auto-restart-fill",
    "auto-inc-best",
    "auto-inc-observed",
    "auto-inc-mean",
    "auto-aligned",
    "auto-aligned-m",
    "auto-taf",
    "auto-yj",
)

ARMS = ("none", "avg-rank", "rgpe", "auto", "auto-mean6", "auto-mean11", *_VARIANTS)

#: ``auto-gated``: the probe only while the sources' weight in the last model is below this
GATE = 0.5


def _variant(arm: str):
    """``(apply, undo)`` for the session-32 arms: ``auto-old`` is ``auto`` before session 32 (its
    target GP plain ML-II, :func:`warmbo.models.ml2_model`, and no cold fallback); ``auto-nofallback``
    is ``auto`` without :meth:`warmbo.Optimizer._sources_lost`'s rule (the cold design's next point
    while the sources have no weight); ``auto-map-all`` is ``auto`` with every source GP as the
    default model too; ``auto-fallback2m`` is ``auto`` whose fallback runs until the study holds the cold
    design's m points (within its first 2m trials), not until it holds m trials of any kind;
    ``auto-noprobe`` is ``auto`` without :meth:`warmbo.Optimizer._probe_due`'s probe (the cold
    design's first point after the warm design and 3 model asks; session 33), which ``auto-old``
    (before session 32) did not have either; the other arms keep it. ``auto-gated`` (session 34, a
    question for the product owner, not a shipped rule) asks the probe only while the sources'
    weight in the last fitted model is below :data:`GATE`: where every source is right (the SVM
    grids) the probe cost the top 1% 1.4 evaluations. ``auto-noverdict`` (session 36) is ``auto``
    without the probe's verdict (:mod:`warmbo.transfer.verdict`: sources a cold point refutes are set
    aside); ``auto-restart-none`` / ``-half`` / ``-full`` / ``-fill`` set them aside with no cold
    points first / the cold design's first ceil(m/2) points (as ``auto`` does since session 36;
    the session's runs had ``auto`` take all m) / all m / its points while the study holds fewer
    than m trials (the cold fallback's rule). Session 46's near-repeats
    (:meth:`warmbo.Optimizer._plateau`): ``auto-repeats`` is ``auto`` without the rule (before
    session 46), ``auto-apart-ties`` is ``auto`` as shipped, ``auto-apart-all`` avoids near-repeats
    of every complete trial, ``auto-apart-stalled`` of each pair of which the later did not improve
    on the best before it, ``auto-apart-noise`` of pairs within one noise sd of the target GP
    (docs/transfer.md, "Near-repeats": none of the three kept). Session 47: ``auto-taf`` is ``auto``
    with ``acquisition=wb.TAF()`` (the transfer acquisition function, :mod:`warmbo.transfer.taf`)
    instead of EI on the ensemble's posterior; ``auto-yj`` is ``auto`` with
    ``output_transform="yeo-johnson"`` (the ensemble sees the study's values on the Yeo-Johnson scale,
    as a cold study's GP does; patched here so that every bench script's optimizer gets it). The run
    stored in bench/results/auto_variants_map.json (git 8b37932) had the
    arms ``auto`` (= today's ``auto-old``), ``auto-map`` (= ``auto-nofallback``) and ``auto-map-all``
    (then without the fallback)."""
    from warmbo.models.defaults import default_model
    from warmbo.transfer import baselines

    target_gp, gp, fallback = baselines.RGPE._target_gp, baselines.RGPE._gp, optimizer_module.COLD_FALLBACK

    probe = optimizer_module.COLD_PROBE

    sources_lost = optimizer_module.Optimizer._sources_lost
    probe_due = optimizer_module.Optimizer._probe_due

    def gated(self, trials):
        if not probe_due(self, trials):
            return False
        weight = getattr(getattr(self, "model_", None), "sources_weight_", None)
        return weight is None or weight < GATE

    def sources_lost_2m(self, reference, n_complete):
        """``auto-fallback2m``: while the sources have no weight, the cold design's points until the
        study holds m of them (m = the cold design's size), within the first 2m trials, instead of
        until it holds m trials of any kind."""
        import math

        from warmbo.maximize import taken

        if self._source is None:
            return False
        weight = getattr(reference, "sources_weight_", None)
        m = optimizer_module.cold_design_size(self.space)
        if weight is None or weight != 0 or n_complete >= 2 * m:
            return False
        complete = [t for t in self.study.trials() if t.state == "complete"]
        sobol = self.space.sample_encoded(int(2 ** math.ceil(math.log2(4 * m))), self.seed)
        return int(taken(self._encode_trials(complete), sobol).sum()) < m

    fit_scaled = optimizer_module.Optimizer._fit_scaled

    def yeo_johnson(self, X, y, transform):
        """``auto-yj`` (session 47): ``output_transform="yeo-johnson"`` for the transfer model, for
        optimizers the bench scripts build without it (the transform fitted to the study's signed
        values at every ask, as :meth:`Optimizer.fit_model` does when it is given)."""
        if transform is None and self._source is not None:
            transform = optimizer_module.YeoJohnson.fit(y)
        return fit_scaled(self, X, y, transform)

    restart_size, restart_due = (
        optimizer_module.Optimizer._restart_size,
        optimizer_module.Optimizer._restart_due,
    )
    verdict, apart = optimizer_module.COLD_VERDICT, optimizer_module.ENSEMBLE_APART

    def restart_fill(self, trials):
        own = [t for t in trials if t.worker != optimizer_module.PRIOR_WORKER]
        return len(own) < optimizer_module.cold_design_size(self.space)

    acquisition_for = optimizer_module.Optimizer._acquisition_for
    plateau = optimizer_module.Optimizer._plateau

    def within_noise(self, reference, trials):
        """``auto-apart-noise`` (session 46): the shipped rule with "one value" read as values
        within one noise sd of the target GP (a tie on a noisy objective): pairs of the target GP's
        own points within the batch correlation whose values differ by at most that sd."""
        from warmbo.suggest import near_pairs

        if not self._sources_weigh(reference):
            return None
        target = getattr(reference, "target_model_", None)
        if target is None or target.noise_level_ is None or target.X_train_.shape[0] < 2:
            return None
        X, z = target.X_train_, np.asarray(target.y_train_, dtype=np.float64)
        pairs = near_pairs(reference, X)
        if pairs is None:
            return None
        sd = float(np.sqrt(target.noise_level_)) * float(target.y_std_)
        flat = (pairs & (np.abs(z[:, None] - z[None, :]) <= sd)).any(axis=1)
        return X[flat] if flat.any() else None

    def stalled(self, reference, trials):
        """``auto-apart-stalled`` (session 46, not kept): the search avoids near-repeats of a pair of
        the study's complete trials within the batch correlation of which the later did not improve
        on the best before it (a tie never does; nor does a noisy replicate, mostly), both of them."""
        from warmbo.suggest import near_pairs

        if not self._sources_weigh(reference):
            return None
        own = [t for t in trials if t.state == "complete" and t.worker != optimizer_module.PRIOR_WORKER]
        if len(own) < 2:
            return None
        X = self._encode_trials(own)
        pairs = near_pairs(reference, X)
        if pairs is None:
            return None
        signed = np.array([t.value for t in own], dtype=np.float64) * (1.0 if self.maximize else -1.0)
        best_before = np.concatenate([[-np.inf], np.maximum.accumulate(signed)[:-1]])
        earlier = np.tril(pairs, k=-1)  # (k, j): trial k beside an earlier trial j
        later = earlier.any(axis=1) & (signed <= best_before)
        flat = later | (earlier & later[:, None]).any(axis=0)
        return X[flat] if flat.any() else None

    alignment = baselines.RGPE._alignment

    def aligned(self, X, z):
        """``auto-aligned``: RGPE(align_sources=True), each source's mean mapped onto the target's
        scale by the least-squares line through the target's observations (session 42)."""
        saved = self.align_sources
        if arm == "auto-aligned-m" and X.shape[0] < min(max(3, 2 * X.shape[1]), 20):
            return alignment(self, X, z)  # ``auto-aligned-m``: from the cold design's size on
        self.align_sources = True
        try:
            return alignment(self, X, z)
        finally:
            self.align_sources = saved

    def apply():
        if arm.startswith("auto-aligned"):
            baselines.RGPE._alignment = aligned
        if arm.startswith("auto-inc-"):
            optimizer_module.Optimizer._acquisition_for = _incumbent(arm[len("auto-inc-") :])[1]
        if arm == "auto-noverdict":
            optimizer_module.COLD_VERDICT = False
        if arm == "auto-taf":
            optimizer_module.Optimizer._acquisition_for = _taf
        if arm == "auto-yj":
            optimizer_module.Optimizer._fit_scaled = yeo_johnson
        if arm == "auto-repeats":
            optimizer_module.ENSEMBLE_APART = None
        if arm in ("auto-apart-all", "auto-apart-ties"):
            optimizer_module.ENSEMBLE_APART = arm[len("auto-apart-") :]
        if arm == "auto-apart-stalled":
            optimizer_module.Optimizer._plateau = stalled
        if arm == "auto-apart-noise":
            optimizer_module.Optimizer._plateau = within_noise
        if arm == "auto-restart-none":
            optimizer_module.Optimizer._restart_size = lambda self: 0
        if arm == "auto-restart-half":
            optimizer_module.Optimizer._restart_size = lambda self: (
                (optimizer_module.cold_design_size(self.space) + 1) // 2
            )
        if arm == "auto-restart-full":
            optimizer_module.Optimizer._restart_size = lambda self: optimizer_module.cold_design_size(
                self.space
            )
        if arm == "auto-restart-fill":
            optimizer_module.Optimizer._restart_due = restart_fill
        if arm == "auto-gated":
            optimizer_module.Optimizer._probe_due = gated
        if arm == "auto-fallback2m":
            optimizer_module.Optimizer._sources_lost = sources_lost_2m
        if arm in ("auto-old", "auto-noprobe"):
            optimizer_module.COLD_PROBE = False
        if arm == "auto-old":
            baselines.RGPE._target_gp = lambda self, dim: self._gp(dim)
        if arm in ("auto-old", "auto-nofallback"):
            optimizer_module.COLD_FALLBACK = False
        if arm == "auto-map-all":
            baselines.RGPE._gp = lambda self, dim, base=None: gp(self, dim, default_model)

    def undo():
        baselines.RGPE._alignment = alignment
        optimizer_module.Optimizer._fit_scaled = fit_scaled
        optimizer_module.Optimizer._acquisition_for = acquisition_for
        optimizer_module.COLD_VERDICT = verdict
        optimizer_module.ENSEMBLE_APART = apart
        optimizer_module.Optimizer._plateau = plateau
        optimizer_module.Optimizer._restart_size, optimizer_module.Optimizer._restart_due = (
            restart_size,
            restart_due,
        )
        optimizer_module.Optimizer._sources_lost = sources_lost
        optimizer_module.Optimizer._probe_due = probe_due
        baselines.RGPE._target_gp, baselines.RGPE._gp = target_gp, gp
        optimizer_module.COLD_FALLBACK = fallback
        optimizer_module.COLD_PROBE = probe

    return apply, undo


def _mean_until(k: int):
    """``auto`` whose model asks maximise the ensemble's posterior mean (pure exploitation of the
    weighted sources) while the target has fewer than ``k`` complete points, then EI: the question
    is whether the asks after the warm design should follow the sources more closely than EI does,
    as the average-rank order does (issue 14's targets after 5 and 10 evaluations)."""
    from warmbo.acquisition import PosteriorMean

    original = optimizer_module.Optimizer._acquisition_for

    def acquisition_for(self, reference):
        if self._source is not None and reference.n_observations < k:
            return PosteriorMean()
        return original(self, reference)

    return original, acquisition_for


def _taf(self, reference):
    """``auto-taf``'s acquisition: TAF with the optimizer's EI settings (session 47)."""
    from warmbo.acquisition import EI
    from warmbo.transfer.taf import TAF

    acquisition = self.acquisition
    return TAF(incumbent=acquisition.incumbent, xi=acquisition.xi) if type(acquisition) is EI else acquisition


def _incumbent(incumbent: str):
    """``auto-inc-*``: ``auto`` whose EI takes ``incumbent`` (``"best"``: the best observed value,
    ``auto``'s until session 42; ``"observed"``: the ensemble's best mean at the target's observed
    points; ``"mean"``: its best mean anywhere, 003 eq. 11). The ensemble's mean carries the
    sources' scale: at a point observed many times it sat ~10 above the observations (session 42,
    bench/warm_categorical.py)."""
    from warmbo.acquisition import EI

    original = optimizer_module.Optimizer._acquisition_for

    def acquisition_for(self, reference):
        if self._source is not None:
            return EI(incumbent=incumbent)
        return original(self, reference)

    return original, acquisition_for


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", action="append", choices=["hpobench", "svm"])
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--tasks", type=int, default=None, help="only the first N targets of each suite")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per target (default: the section's)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "auto_variants.json"))
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    arms = args.arms.split(",")
    unknown = sorted(set(arms) - set(ARMS))
    if unknown:
        parser.error(f"unknown arm(s) {unknown}; choose from {ARMS}")
    if "none" not in arms:
        arms.insert(0, "none")  # the per-target bound is against it
    ctx = SimpleNamespace(seed=0, preset="full", log=lambda message: None)
    sizes = dict(SIZES["full"], hpobench_tasks=args.tasks, svm_tasks=args.tasks)
    if args.seeds is not None:
        sizes.update(hpobench_seeds=args.seeds, svm_seeds=args.seeds)
    out: dict = {"git_commit": git_commit(), "arms": arms, "sizes": sizes, "suites": {}}
    started = time.time()
    for name in args.suite or ["hpobench", "svm"]:
        suite = _Suite(name)
        results = {}
        for arm in arms:
            method, patch, undo = arm, None, None
            if arm.startswith("auto-mean"):
                method, patch = "auto", _mean_until(int(arm[len("auto-mean") :]))
                optimizer_module.Optimizer._acquisition_for = patch[1]
            elif arm in _VARIANTS:
                method = "auto"
                apply, undo = _variant(arm)
                apply()
            try:
                entry = _suite_results(suite, sizes, (method,), ctx, {}, lambda: None)
            finally:
                if patch is not None:
                    optimizer_module.Optimizer._acquisition_for = patch[0]
                if undo is not None:
                    undo()
            results[arm] = entry["methods"][method]
            tasks = entry["tasks"]
        none = np.array(results["none"]["final_regret_per_target"])
        print(f"\n{name} ({len(tasks)} targets x {sizes[f'{name}_seeds']} seeds)")
        header = " ".join(f"{'@' + c:>8s}" for c in results["none"]["regret"])
        print(f"{'arm':16s} {header}  top1%  worst")
        for arm, entry in results.items():
            worst = float(np.max(np.array(entry["final_regret_per_target"]) - none))
            entry["worst_behind_none"] = worst
            cells = " ".join(f"{v['median']:8.4g}" for v in entry["regret"].values())
            print(f"{arm:16s} {cells}  {entry['evals_to_top1pct']['median']:5.1f}  {worst:+.3f}")
        out["suites"][name] = {"tasks": tasks, "arms": results}
    out["runtime_s"] = round(time.time() - started, 1)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(f"\n{args.out} ({out['runtime_s']:.0f} s)")


if __name__ == "__main__":
    main()
