"""The documentation tables of the tuned-prior reproduction (004): final simple regret per function
and method for each acquisition, and paired sign tests of every method against plain BO
(:mod:`warmbo.experiments.doc_tables`)."""

from __future__ import annotations

import numpy as np

__all__ = ["doc_tables", "paired_sign_tests", "NEAR_ZERO"]

#: regrets (normalised to [0, 1]) that differ by less than this, or that are both below it, are a tie
NEAR_ZERO = 1e-3


def paired_sign_tests(result, acq: str, reference: str = "plain") -> dict[str, dict[str, dict]]:
    """``{function: {method: {"wins", "losses", "ties", "p_value"}}}``: each method against
    ``reference`` run by run (the same run index shares the auxiliary data and the initial design)
    on the final simple regret. A pair closer than :data:`NEAR_ZERO`, or with both regrets below
    it, is a tie and is counted apart; the two-sided sign test runs on the wins and losses."""
    from scipy.stats import binomtest

    out: dict[str, dict[str, dict]] = {}
    base_arm = f"{reference}-{acq}"
    for fn in result.functions:
        runs = sorted((r for r in result.runs if r.function == fn), key=lambda r: r.index)
        out[fn] = {}
        for arm in result.arms:
            if not arm.endswith(f"-{acq}") or arm == base_arm:
                continue
            wins = losses = ties = 0
            for r in runs:
                a, b = r.regret[arm][-1], r.regret[base_arm][-1]
                if abs(a - b) < NEAR_ZERO or (a < NEAR_ZERO and b < NEAR_ZERO):
                    ties += 1
                elif a < b:
                    wins += 1
                else:
                    losses += 1
            p = float(binomtest(wins, wins + losses).pvalue) if wins + losses else 1.0
            out[fn][arm.removesuffix(f"-{acq}")] = {
                "wins": wins,
                "losses": losses,
                "ties": ties,
                "p_value": p,
            }
    return out


def doc_tables(result) -> dict[str, list[str]]:
    """Tables ``regret-EI``, ``regret-UCB`` (mean (sd) over runs, best mean in bold) and ``sign-EI``,
    ``sign-UCB`` (wins / losses / ties against plain BO, p) of ``docs/reproductions/tuned-prior.md``."""
    tables: dict[str, list[str]] = {}
    for acq in result.settings["acquisitions"]:
        methods = [arm.removesuffix(f"-{acq}") for arm in result.arms if arm.endswith(f"-{acq}")]
        rows = ["| function | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
        for fn in result.functions:
            finals = [result.final(fn, f"{m}-{acq}") for m in methods]
            best = int(np.argmin([mean for mean, _ in finals]))
            cells = [
                (f"**{mean:.3f} ({sd:.3f})**" if k == best else f"{mean:.3f} ({sd:.3f})")
                for k, (mean, sd) in enumerate(finals)
            ]
            rows.append(f"| {fn} | " + " | ".join(cells) + " |")
        tables[f"regret-{acq}"] = rows
        tests = paired_sign_tests(result, acq)
        others = [m for m in methods if m != "plain"]
        rows = ["| function | " + " | ".join(others) + " |", "|---|" + "---|" * len(others)]
        for fn in result.functions:
            cells = []
            for m in others:
                t = tests[fn][m]
                cells.append(f"{t['wins']} / {t['losses']} / {t['ties']} (p {t['p_value']:.2g})")
            rows.append(f"| {fn} | " + " | ".join(cells) + " |")
        tables[f"sign-{acq}"] = rows
    return tables
