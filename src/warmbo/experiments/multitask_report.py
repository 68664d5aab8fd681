"""Plots, the HTML report and the CLI headline of the MT-KB / MT-BKB reproduction (001).

Split from :mod:`warmbo.experiments.multitask`, which runs the experiment and returns its result (the
``result`` the functions here take); this module only draws and formats it and imports nothing from
the experiment module.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ._runner import figure

__all__ = ["plot_regret", "plot_timing", "summary"]


# ---------------------------------------------------------------------------------------------- plots
_COLORS = {
    "MT-KB": "tab:blue",
    "MT-BKB": "tab:cyan",
    "IT-KB": "tab:red",
    "IT-BKB": "tab:orange",
    "MOBO": "tab:green",
    "MOBO (GP-UCB beta)": "tab:olive",
}
_TITLES = {
    "rkhs-2": "RKHS function, n = 2",
    "rkhs-20": "RKHS function, n = 20",
    "sine": "Perturbed sine, n = 4",
    "branin": "Shifted Branin-Hoo, n = 9",
    "sensor": "Intel lab sensors, n = 2",
}


def plot_regret(studies: Sequence, path: Path):
    """Mean +/- sd over trials of ``R_C(T)/T`` against T, one panel per study (001 Figs. 1-3); returns
    the Figure."""
    fig, axes = figure(5.2 * len(studies), 4.0, len(studies))
    axes = np.atleast_1d(axes)
    for ax, study in zip(axes, studies, strict=True):
        t = np.arange(1, study.T + 1)
        for a in study.algorithms:
            mean, sd = np.asarray(study.mean[a]), np.asarray(study.sd[a])
            ax.plot(t, mean, label=a, color=_COLORS[a], ls="--" if a.endswith(("BKB", ")")) else "-")
            ax.fill_between(t, mean - sd, mean + sd, color=_COLORS[a], alpha=0.12)
        n_runs = len(study.runs) // max(1, len(study.algorithms))
        ax.set_title(
            f"{_TITLES[study.problem]}, {study.scalarization}\nmean, band +/- 1 sd over {n_runs} trials",
            fontsize=9,
        )
        ax.set_xlabel("T (rounds)")
        ax.set_ylabel("R_C(T) / T (cumulative regret / T)")
        ax.set_yscale("log")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return fig


def plot_timing(result, path: Path) -> None:
    """Per-step wall time against t (log-log) and the dictionary size m_t of MT-BKB."""
    fig, axes = figure(11, 4.2, 2)
    colors = {
        "MT-KB (dense)": "tab:purple",
        "MT-KB (ICM, paper)": "tab:red",
        "MT-KB (ICM)": "tab:blue",
        "MT-BKB": "tab:cyan",
    }
    for arm, run in result.runs.items():
        s = np.maximum(np.asarray(run["step_cpu_seconds"]), 1e-6)
        t = np.arange(1, s.size + 1)
        axes[0].plot(t, s, label=arm, color=colors[arm], lw=0.8)
        if run["dictionary_sizes"]:
            axes[1].plot(t, run["dictionary_sizes"], label=f"{arm}: m_t", color=colors[arm])
            axes[1].plot(
                t, run["distinct_dictionary_sizes"], label=f"{arm}: distinct points", color="k", ls=":"
            )
    st = result.settings
    axes[0].set_xscale("log")
    axes[0].set_yscale("log")
    axes[0].set_xlabel("t")
    axes[0].set_ylabel("CPU seconds per step (1 BLAS thread)")
    axes[0].set_title(f"Per-step time, RKHS n = {st['n_tasks']}, |X| = {st['domain_size']}", fontsize=9)
    axes[0].legend(fontsize=8)
    axes[1].set_xlabel("t")
    axes[1].set_ylabel("dictionary size")
    axes[1].set_title("MT-BKB dictionary size", fontsize=9)
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def summary(result, out) -> list:
    """The headline of ``warmbo reproduce multitask``: R_C(T)/T per problem and algorithm, the MT/IT
    ratios, the timing slopes and the notes (rich tables and text lines)."""
    from rich.table import Table

    head = result.headline()
    algorithms = list(dict.fromkeys(a for row in head["final_average_regret"].values() for a in row))
    table = Table(title="Multi-task BO (001): R_C(T)/T at the last T (mean ± sd over trials)")
    table.add_column("problem")
    for a in algorithms:
        table.add_column(a, justify="right")
    for key, row in head["final_average_regret"].items():
        cells = (f"{row[a]['mean']:.3g} ± {row[a]['sd']:.2g}" if a in row else "" for a in algorithms)
        table.add_row(key, *cells)
    items: list = [table]
    for key, ratio in head["ratios"].items():
        items.append(f"{key}: MT-KB / IT-KB of R_C(T)/T at T = {ratio['T']}: {ratio['MT-KB / IT-KB']:.3f}")
    for arm, entry in head.get("timing", {}).items():
        slope = entry["loglog_slope_second_half"]
        slope_text = "n/a" if slope is None else f"{slope:.2f}"
        items.append(f"timing {arm}: {entry['steps']} steps, log-log slope of step time vs t {slope_text}")
    items.extend(result.notes)
    items.append(f"wrote {out / 'results.json'} and the PNG plots in {result.seconds['total']:.1f} s")
    return items


def sign_tests(study, reference: str = "MOBO") -> dict[str, dict]:
    """Per arm of ``study``, the paired comparison with ``reference`` over its trials: wins (lower
    ``R_C(T)/T`` than the reference in the same trial), losses, ties (equal to 1e-9 relative), the mean
    ratio, and the two-sided sign test's p-value over the trials that differ (scipy's binomtest)."""
    from scipy.stats import binomtest

    final = {}
    for res in study.runs:
        final.setdefault(res["algorithm"], {})[res["run"]] = res["average_regret"][-1]
    base = final[reference]
    out = {}
    for arm, values in final.items():
        if arm == reference:
            continue
        pairs = [(values[r], base[r]) for r in sorted(values) if r in base]
        wins = sum(a < b - 1e-9 * abs(b) for a, b in pairs)
        losses = sum(a > b + 1e-9 * abs(b) for a, b in pairs)
        out[arm] = {
            "wins": int(wins),
            "losses": int(losses),
            "ties": len(pairs) - wins - losses,
            "mean_ratio": float(np.mean([a / b for a, b in pairs])),
            "p_value": float(binomtest(wins, wins + losses).pvalue) if wins + losses else 1.0,
        }
    return out


_LABELS = {
    "rkhs-2": "RKHS n = 2 (Fig. 1a)",
    "rkhs-20": "RKHS n = 20 (Fig. 1b)",
    "sine": "perturbed sine (Fig. 2a)",
    "branin": "shifted Branin (Fig. 2b)",
    "sensor-chebyshev": "sensors, Chebyshev (Fig. 3a)",
    "sensor-linear": "sensors, linear (Fig. 3b)",
}
_COLUMNS = ("MT-KB", "MT-BKB", "IT-KB", "IT-BKB", "MOBO", "MOBO (GP-UCB beta)")


def _final_per_run(study) -> dict[str, dict[int, float]]:
    final: dict[str, dict[int, float]] = {}
    for res in study.runs:
        final.setdefault(res["algorithm"], {})[res["run"]] = res["average_regret"][-1]
    return final


def _figure_tables(studies) -> dict[str, list[str]]:
    """The Figs. 1-3 table (``R_C(T)/T``, mean ± sd) and the paired MT / IT ratios."""
    rows = ["| problem | " + " | ".join(_COLUMNS) + " |", "|---|" + "---|" * len(_COLUMNS)]
    ratios = [
        "| problem | MT-KB / IT-KB (mean of the trial ratios; ratio of the means) "
        "| trials with MT-KB < IT-KB | MT-BKB / IT-BKB (mean ratio) | trials with MT-BKB < IT-BKB |",
        "|---|---|---|---|---|",
    ]
    for key, label in _LABELS.items():
        if key not in studies:
            continue
        study = studies[key]
        final = study.final()
        cells = [f"{final[a]['mean']:.3g} ± {final[a]['sd']:.2g}" if a in final else "" for a in _COLUMNS]
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
        per_run = _final_per_run(study)
        out = []
        for mt, it in (("MT-KB", "IT-KB"), ("MT-BKB", "IT-BKB")):
            runs = sorted(set(per_run.get(mt, {})) & set(per_run.get(it, {})))
            r = [per_run[mt][k] / per_run[it][k] for k in runs]
            below = sum(per_run[mt][k] < per_run[it][k] for k in runs)
            out.append((float(np.mean(r)) if r else float("nan"), below, len(runs)))
        means = final["MT-KB"]["mean"] / final["IT-KB"]["mean"]
        ratios.append(
            f"| {label} | {out[0][0]:.3f}; {means:.3f} | {out[0][1]} / {out[0][2]} | {out[1][0]:.3f} "
            f"| {out[1][1]} / {out[1][2]} |"
        )
    if len(rows) == 2:
        return {}
    return {"results": rows, "ratios": ratios}


def doc_tables(result) -> dict[str, list[str]]:
    """The generated tables of ``docs/reproductions/multitask.md``
    (:mod:`warmbo.experiments.doc_tables`): ``results`` and ``ratios`` (Figs. 1-3) and ``decide`` (the
    deciding arms against MOBO), ``horizon`` (MT-KB against IT-KB over a longer horizon) and
    ``timing`` (per-step CPU time against t), each when the run has its parts."""
    tables = _figure_tables(result.studies) | _horizon_table(result.studies)
    if result.timing is not None:
        tables["timing"] = _timing_table(result.timing)
    studies = {key: s for key, s in result.studies.items() if key.startswith("decide-")}
    if not studies:
        return tables
    rows = [
        "| problem | arm | R_C(T)/T (mean ± sd) | against MOBO, paired: wins / losses / ties "
        "| mean ratio to MOBO | sign test p |",
        "|---|---|---|---|---|---|",
    ]
    for key, study in studies.items():
        final = study.final()
        tests = sign_tests(study)
        problem = key.removeprefix("decide-")
        for arm in study.algorithms:
            cells = f"{final[arm]['mean']:.4g} ± {final[arm]['sd']:.2g}"
            if arm == "MOBO":
                rows.append(f"| {problem} (T = {study.T}) | {arm} | {cells} | (reference) | 1 | |")
                continue
            t = tests[arm]
            rows.append(
                f"| {problem} (T = {study.T}) | {arm} | {cells} | {t['wins']} / {t['losses']} / {t['ties']} "
                f"| {t['mean_ratio']:.3f} | {t['p_value']:.3g} |"
            )
    return tables | {"decide": rows}


_HORIZON_AT = (50, 100, 200, 400, 600)


def _horizon_table(studies) -> dict[str, list[str]]:
    study = studies.get("horizon-rkhs-20")
    if study is None:
        return {}
    at = sorted({t for t in _HORIZON_AT if t <= study.T} | {study.T})
    rows = ["| T | " + " | ".join(map(str, at)) + " |", "|---|" + "---|" * len(at)]
    for arm in ("MT-KB", "IT-KB"):
        rows.append(f"| {arm} | " + " | ".join(f"{study.at(arm, t):.3f}" for t in at) + " |")
    rows.append(
        "| ratio | " + " | ".join(f"{study.at('MT-KB', t) / study.at('IT-KB', t):.3f}" for t in at) + " |"
    )
    return {"horizon": rows}


def _timing_table(timing) -> list[str]:
    summary = timing.summary()
    checkpoints = ("10", "100", "300", "1000", "2000")
    rows = [
        "| arm | steps run | why it stopped | total CPU s | median CPU s per step at t = "
        + " / ".join(checkpoints)
        + " | log-log slope, 2nd half |",
        "|---|---|---|---|---|---|",
    ]
    for arm, entry in summary.items():
        at = entry["median_step_cpu_seconds_at_t"]
        cells = " / ".join(f"{at[c]:.3g}" if c in at else "-" for c in checkpoints)
        slope = entry["loglog_slope_second_half"]
        stopped = entry["stopped"] or "finished"
        rows.append(
            f"| {arm} | {entry['steps']} | {stopped} | {entry['total_cpu_seconds']:.0f} | {cells} "
            f"| {'-' if slope is None else f'{slope:.2f}'} |"
        )
    return rows
