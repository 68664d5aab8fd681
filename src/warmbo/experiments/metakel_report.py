"""Plots, the HTML report and the CLI headline of the Meta-KeL reproduction (000).

Split from :mod:`warmbo.experiments.metakel`, which runs the experiment and returns its result (the
``result`` the functions here take); this module only draws and formats it and imports nothing from
the experiment module.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._runner import figure

__all__ = ["plot_calibration", "plot_regret", "plot_support", "summary", "write_metakel_report"]


#: Suffix of the calibration kernels multiplied by B^2/s.
MATCHED_SUFFIX = " x B^2/s"

# ---------------------------------------------------------------------------------------------- plots
_COLORS = {
    "k*": "tab:green",
    "k_hat": "tab:blue",
    "k_hat (sum=1)": "tab:cyan",
    "k_full": "tab:red",
    "k_full (sqrt(p) B)": "tab:orange",
}


def _style(name: str) -> dict:
    """Colour per kernel; the B^2/s-scaled variants are dashed in their kernel's colour."""
    scaled = name.endswith(MATCHED_SUFFIX)
    return {"color": _COLORS.get(name.removesuffix(MATCHED_SUFFIX)), "ls": "--" if scaled else "-"}


def plot_calibration(cal, path: Path) -> None:
    """Coverage vs alpha with the diagonal (mean +/- sd over runs), for the kernels at their own scale
    (left) and scaled by B^2/s (middle); sharpness bars (right)."""
    fig, axes = figure(16, 4.6, 3)
    alphas = np.asarray(cal.alphas)
    panels = (
        (axes[0], [k for k in cal.kernels if not k.endswith(MATCHED_SUFFIX)], "kernels at their own scale"),
        (
            axes[1],
            [k for k in cal.kernels if k.endswith(MATCHED_SUFFIX)],
            "kernels x B^2/s (prior norm matches B)",
        ),
    )
    for ax, names, title in panels:
        ax.plot([0, 1], [0, 1], color="k", lw=0.8, ls=":", label="x = y")
        for name in names:
            mean, sd = np.asarray(cal.coverage_mean[name]), np.asarray(cal.coverage_sd[name])
            ax.plot(alphas, mean, marker=".", label=name, **_style(name))
            lower, upper = np.clip(mean - sd, 0, 1), np.clip(mean + sd, 0, 1)
            ax.fill_between(alphas, lower, upper, color=_style(name)["color"], alpha=0.1)
        ax.set_xlabel("confidence level alpha")
        ax.set_ylabel("empirical coverage")
        ax.set_title(f"Calibration, {title} ({len(cal.runs)} runs)", fontsize=9)
        ax.legend(fontsize=8)
    names = cal.kernels
    means = np.array([cal.sharpness_mean[k] for k in names])
    sds = np.array([cal.sharpness_sd[k] for k in names])
    bars = axes[2].bar(range(len(names)), means, yerr=[np.minimum(sds, 0.9 * means), sds], capsize=3)
    for bar, name in zip(bars, names, strict=True):
        bar.set_color(_style(name)["color"])
        if name.endswith(" x B^2/s"):
            bar.set_alpha(0.55)
    axes[2].set_xticks(range(len(names)), names, fontsize=7, rotation=30, ha="right")
    axes[2].set_yscale("log")
    axes[2].set_ylabel("mean posterior variance")
    axes[2].set_title("Sharpness (lower is sharper)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def plot_regret(reg, path: Path, title: str):
    """Simple regret and cumulative inference regret, mean with +/- sd bands, log y; returns the Figure.

    ``reg`` is a :class:`Regret` (one curve per kernel) or a dict ``label -> Regret`` with one kernel
    each (one curve per entry, for the lambda sweep).
    """
    if not isinstance(reg, dict):  # one Regret
        curves = {k: (reg, k) for k in reg.kernels}
    else:
        curves = {label: (res, res.kernels[0]) for label, res in reg.items()}
    fig, axes = figure(11, 4.2, 2)
    scale = max(max(res.simple_mean[k][0], res.cumulative_mean[k][-1]) for res, k in curves.values())
    cmap = list(_COLORS.values()) + ["tab:purple", "tab:brown"]
    for i, (label, (res, k)) in enumerate(curves.items()):
        color = _COLORS.get(label, cmap[i % len(cmap)])
        for ax, mean, sd in (
            (axes[0], res.simple_mean[k], res.simple_sd[k]),
            (axes[1], res.cumulative_mean[k], res.cumulative_sd[k]),
        ):
            mean, sd = np.asarray(mean), np.asarray(sd)
            t = np.arange(1, mean.size + 1)
            floor = 1e-4 * scale
            ax.plot(t, np.maximum(mean, floor), color=color, label=label)
            ax.fill_between(
                t, np.maximum(mean - sd, floor), np.maximum(mean + sd, floor), color=color, alpha=0.15
            )
    axes[0].set_ylabel("simple regret r_t (raw, target minimised)")
    axes[1].set_ylabel("cumulative inference regret R_t")
    for ax in axes:
        ax.set_yscale("log")
        ax.set_xlabel("round t")
        ax.legend(fontsize=8)
    sizes = sorted({len(res.runs) for res, _ in curves.values()})
    runs = "/".join(str(n) for n in sizes)
    fig.suptitle(f"{title}: mean, band +/- 1 sd over {runs} instances")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return fig


def plot_support(support, path: Path) -> None:
    """Heat maps of P(J_hat ⊇ J*) and P(J_hat == J*) over (m, n), one row per lambda rule."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.6 * len(support.rules)))
    FigureCanvasAgg(fig)
    axes = np.atleast_2d(fig.subplots(len(support.rules), 2))
    for row, rule in zip(axes, support.rules, strict=True):
        for ax, what, label in ((row[0], "superset", "P(J_hat ⊇ J*)"), (row[1], "exact", "P(J_hat = J*)")):
            table = np.asarray(support.table(rule, what))
            ax.imshow(table, vmin=0, vmax=1, cmap="viridis", origin="lower")
            for i in range(table.shape[0]):
                for j in range(table.shape[1]):
                    ax.text(
                        j,
                        i,
                        f"{table[i, j]:.2f}",
                        ha="center",
                        va="center",
                        color="w" if table[i, j] < 0.6 else "k",
                    )
            ax.set_xticks(range(len(support.ns)), [str(n) for n in support.ns])
            ax.set_yticks(range(len(support.ms)), [str(m) for m in support.ms])
            ax.set_xlabel("n (points per task)")
            ax.set_ylabel("m (tasks)")
            ax.set_title(f"{label}, lambda: {rule}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


# ---------------------------------------------------------------------------------------------- report
def _support_text(support) -> str:
    paragraphs = []
    for rule in support.rules:
        lam = np.asarray(support.table(rule, "lam"))
        head = (
            f"lambda = {rule}"
            + (
                f" (Thm 4 value, from {lam.min():.2g} to {lam.max():.2g} across m, n)"
                if rule == "theory"
                else ""
            )
            + f": fraction of {support.settings['seeds']} seeds with J_hat = J* / J_hat ⊇ J* / mean |J_hat|."
        )
        lines = [head]
        for m in support.ms:
            cells = []
            for r in support.rows:
                if r.rule == rule and r.m == m:
                    cells.append(f"n={r.n}: {r.exact:.2f} / {r.superset:.2f} / {r.mean_size:.1f}")
            lines.append(f"m={m}: " + "; ".join(cells))
        paragraphs.append("\n\n".join(lines))
    ident = {(r.m, r.n): r.identifiable for r in support.rows if r.rule == support.rules[0]}
    low = [f"m={m}, n={n}: {v:.2f}" for (m, n), v in ident.items() if v < 1]
    paragraphs.append(
        "Runs in which every kernel of J* is used by some meta-task (otherwise J* cannot be recovered): "
        + ("all" if not low else "; ".join(low) + " (all others: 1.00)")
    )
    return "\n\n".join(paragraphs)


def _captions(result, out: Path) -> list[tuple[str, str]]:
    """What each figure plots, for the report: the quantity, over how many runs, what the bands are
    and where it departs from 000's figure."""
    cal, reg, support = result.calibration, result.regret, result.support
    T, instances = reg.settings["T"], reg.settings["instances"]
    lam_runs = sorted({len(res.runs) for res in result.lambdas.results.values()})
    regret_quantity = (
        "Left: simple regret r_t = min_{tau<=t} f(x_tau) - min_x f(x) (the target is minimised, as 000 "
        "Fig. 7 does: GP-UCB maximises -f); right: cumulative inference regret "
        "R_t = sum_{tau<=t} (f(x_hat_tau) - min_x f), x_hat_tau the maximiser of the posterior mean of -f "
        "after tau - 1 rounds (000 App. E writes the mean's own value, which is no point's regret). "
        "Raw values of the target (||f||_k* = 10), not normalised; log scale, values below 1e-4 of the "
        "largest drawn at that floor."
    )
    return [
        (
            "calibration",
            "Left and middle (000 Fig. 4, left): empirical coverage, the fraction of the "
            f"{cal.settings.get('n_test', 'test')} test points inside the central alpha-interval "
            "mu +/- z_{(1+alpha)/2} sd of the GP posterior from 4 noisy points; mean over "
            f"{len(cal.runs)} runs, band +/- 1 sd over runs; on or above the dotted diagonal is "
            "calibrated. Left: the kernels at their own scale; middle: multiplied by B^2/|J*| = 20, so that "
            "a draw of GP(0, k*) has the targets' norm B = 10. Right (000 Fig. 4, right): sharpness, the "
            "posterior variance averaged over the test points; mean and sd over runs, log scale.",
        ),
        (
            "regret",
            f"GP-UCB for T = {T} rounds on a grid, with k*, k_hat, k_full and k_full with its valid norm "
            f"bound sqrt(p) B (000 Fig. 5); mean over {instances} instances (fresh meta-data and target on "
            f"one fixed k*), band +/- 1 sd. {regret_quantity}",
        ),
        (
            "lambda",
            f"The regret of GP-UCB with k_hat learned at each group-lasso lambda (000 Fig. 8), mean over "
            f"{'/'.join(map(str, lam_runs))} instances (the same for every lambda), band +/- 1 sd. "
            f"{regret_quantity} Curves that coincide hide one another: see the numbers above.",
        ),
        (
            "support",
            f"Not a figure of 000: a check of Thm 4 / Prop. 6. Fraction of {support.settings['seeds']} "
            "seeds per cell (m meta-tasks, n points per task) in which the group lasso's active set J_hat "
            "contains J* (left) or equals it (right); one row per lambda rule (theory: Thm 4's lambda "
            "for that m, n).",
        ),
    ]


def write_metakel_report(result, out: Path) -> Path:
    """``report.html``: the setting, the headline numbers, the four figures and the support tables."""
    from ..report import settings_text, write_experiment_report

    head = result.headline()
    cal, reg = result.calibration, result.regret
    setting = (
        "Synthetic setup of 000 Appendix E: p = 20 orthonormal Legendre features on [-1, 1], |J*| = 5, "
        "eta* ~ U(0, 1) normalised, task functions from random subsets of J* with ||f||_k* = B = 10, "
        "noise sd 0.01, meta-data m = n = 50, lambda = 0.03. Kernels: the oracle k*, the meta-learned "
        "k_hat (MetaKeL, c1 = smallest active weight; 'k_hat (sum=1)' rescales its weights to sum to 1 "
        "like k*) and k_full = 1/p sum_j k_j. "
        f"Settings: {settings_text(result.settings)}. Run time {result.seconds['total']:.0f} s."
    )
    cal_text = "\n\n".join(
        f"{name}: coverage at alpha = 0.5/0.8/0.9/0.95: "
        + " / ".join(f"{v:.3f}" for v in head["coverage"][name].values())
        + f"; largest shortfall below the diagonal {max(0.0, -cal.worst_gap[name]):.3f}; "
        f"sharpness {cal.sharpness_mean[name]:.3g} (sd {cal.sharpness_sd[name]:.2g})"
        for name in cal.kernels
    )
    cal_text += (
        f"\n\nk_hat recovered J* exactly in {cal.support_exact:.0%} of the runs and contained it in "
        f"{cal.support_superset:.0%}."
    )
    reg_text = "\n\n".join(
        f"{name}: r_T = {row['simple']:.3g} (sd {row['simple_sd']:.2g}), R_T = {row['cumulative']:.3g} "
        f"(sd {row['cumulative_sd']:.2g}), nu_1 = {reg.nu_1[name]:.3g}"
        for name, row in head["regret_final"].items()
    )
    reg_text += (
        f"\n\nT = {reg.settings['T']}, {reg.settings['instances']} instances on the fixed setup with "
        f"J* = {reg.setup['support']} (0-based). GP regulariser sbar^2 = (1 + 2/T)^2; beta_t = nu_t^2 "
        "(000 Cor. 7) with B = 10, sigma = 0.01, delta = 0.1: k* with d = |J*|, c1 = 1; k_hat with "
        "MetaKeL.bound; k_full with d = p, c1 = p and B = 10, or the valid sqrt(p) B."
    )
    lam_text = "\n\n".join(
        f"lambda = {key}: r_T = {row['simple']:.3g} (sd {row['simple_sd']:.2g}), "
        f"R_T = {row['cumulative']:.3g} (sd {row['cumulative_sd']:.2g}), "
        f"mean |J_hat| = {row['support_size']:.1f}, J_hat ⊇ J* in {row['support_superset']:.0%}"
        for key, row in head["lambda_final"].items()
    )
    captions = dict(_captions(result, out))
    sections = [
        ("Setting", setting, []),
        (
            "Calibration and sharpness (Fig. 4)",
            cal_text,
            [(out / "calibration.png", captions["calibration"])],
        ),
        ("GP-UCB regret (Fig. 5)", reg_text, [(out / "regret.png", captions["regret"])]),
        ("Effect of lambda (Fig. 8)", lam_text, [(out / "lambda.png", captions["lambda"])]),
        (
            "Support recovery (Thm 4, Prop. 6)",
            _support_text(result.support),
            [(out / "support.png", captions["support"])],
        ),
    ]
    return write_experiment_report(out, "Meta-KeL reproduction (000 Appendix E)", sections)


def summary(result, out) -> list:
    """The headline of ``warmbo reproduce metakel``: calibration and regret per kernel, R_T by lambda
    and support recovery (rich tables and text lines)."""
    from rich.table import Table

    head = result.headline()
    cal = result.calibration
    table = Table(title="Meta-KeL (000): calibration over runs, GP-UCB regret over instances (means)")
    for column in ("kernel", "coverage a=.5/.8/.9/.95", "sharpness", "r_T", "R_T"):
        table.add_column(column, justify="left" if column == "kernel" else "right")
    for name in dict.fromkeys([*cal.kernels, *result.regret.kernels]):
        coverage = head["coverage"].get(name)
        final = head["regret_final"].get(name)
        table.add_row(
            name,
            " ".join(f"{v:.2f}" for v in coverage.values()) if coverage else "",
            f"{cal.sharpness_mean[name]:.3g}" if coverage else "",
            f"{final['simple']:.3g}" if final else "",
            f"{final['cumulative']:.3g}" if final else "",
        )
    lambdas = ", ".join(f"{k}: {row['cumulative']:.3g}" for k, row in head["lambda_final"].items())
    recovery = "; ".join(
        f"lambda {rule}: J_hat = J* in {row['exact']:.0%}, J_hat ⊇ J* in {row['superset']:.0%}"
        for rule, row in head["support_at_largest_mn"].items()
    )
    largest = f"m = {max(result.support.ms)}, n = {max(result.support.ns)}"
    seconds = result.seconds["total"]
    return [
        table,
        f"R_T of k_hat by lambda (Fig. 8): {lambdas}",
        f"support recovery at {largest}: {recovery}",
        f"wrote {out / 'report.html'}, {out / 'results.json'} and 4 PNG plots in {seconds:.1f} s",
    ]


def doc_tables(result) -> dict[str, list[str]]:
    """The tables of ``docs/reproductions/metakel.md``, as Markdown lines, by block name
    (:mod:`warmbo.experiments.doc_tables`)."""
    import numpy as np

    cal, reg = result.calibration, result.regret
    levels = (0.5, 0.8, 0.9, 0.95, 0.99)
    tables: dict[str, list[str]] = {}
    rows = [
        "| kernel | "
        + " | ".join(f"alpha = {a:g}" for a in levels)
        + " | largest shortfall below the diagonal | sharpness (mean variance) |",
        "|---|" + "---|" * (len(levels) + 2),
    ]
    for name in cal.kernels:
        shortfall = max(0.0, -cal.worst_gap[name])
        cells = " | ".join(f"{cal.coverage_at(name, a):.3f}" for a in levels)
        rows.append(f"| {name} | {cells} | {shortfall:.2f} | {cal.sharpness_mean[name]:.3g} |")
    tables["calibration"] = rows
    T = len(next(iter(reg.simple_mean.values())))
    early = min(10, T) - 1
    rows = [
        f"| kernel | r_{early + 1} (mean) | r_T (mean, sd) | r_T median | R_{early + 1} | R_T (mean, sd) |",
        "|---|---|---|---|---|---|",
    ]
    for name in reg.kernels:
        median = float(np.median([run.simple[name][-1] for run in reg.runs]))
        rows.append(
            f"| {name} | {reg.simple_mean[name][early]:.2f} | {reg.simple_mean[name][-1]:.3f} "
            f"({reg.simple_sd[name][-1]:.3f}) | {median:.2g} | {reg.cumulative_mean[name][early]:.1f} | "
            f"{reg.cumulative_mean[name][-1]:.1f} ({reg.cumulative_sd[name][-1]:.1f}) |"
        )
    tables["regret"] = rows
    rows = [
        "| lambda | r_T (mean, sd) | R_T (mean, sd) | mean size of J_hat | J_hat contains J* |",
        "|---|---|---|---|---|",
    ]
    for key, row in result.lambdas.final().items():
        rows.append(
            f"| {key} | {row['simple']:.3f} ({row['simple_sd']:.3f}) | {row['cumulative']:.1f} "
            f"({row['cumulative_sd']:.1f}) | {row['support_size']:.1f} | {row['support_superset']:.0%} |"
        )
    tables["lambda"] = rows
    support = result.support
    for rule in support.rules:
        exact, superset, size = (support.table(rule, what) for what in ("exact", "superset", "mean_size"))
        rows = [
            "| m \\ n | " + " | ".join(str(n) for n in support.ns) + " |",
            "|---|" + "---|" * len(support.ns),
        ]
        for i, m in enumerate(support.ms):
            cells = " | ".join(
                f"{exact[i][j]:.2f} / {superset[i][j]:.2f} / {size[i][j]:.1f}" for j in range(len(support.ns))
            )
            rows.append(f"| {m} | {cells} |")
        tables[f"support-{'theory' if rule == 'theory' else 'fixed'}"] = rows
    return tables
