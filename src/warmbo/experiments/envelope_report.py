"""Plots, the HTML report and the CLI headline of the Envelope-BO reproduction (003 Section 4).

Split from :mod:`warmbo.experiments.envelope`, which runs the experiment and summarises it into an
:class:`~warmbo.experiments.envelope.EnvelopeReproduction` (the ``result`` every function here takes);
this module only draws and formats it, and imports nothing from the experiment module.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._runner import figure

HPO_FIGURES = {"svm": "Figs. 10, 13", "enet": "Figs. 11, 14", "mlp": "Figs. 12, 15"}

__all__ = ["doc_tables", "hpo_sign_tests", "plot_all", "summary", "write_envelope_report"]


# ---------------------------------------------------------------------------------------------- plots
_COLORS = {
    "Envelope-BO": "tab:red",
    "Generic-BO": "tab:blue",
    "Efficient-BO": "tab:green",
    "Collaborative-BO": "tab:orange",
    "diff-GP": "tab:purple",
    "RGPE": "tab:brown",
}


def _curves(ax, by_method: dict, key: str, ylabel: str) -> None:
    for method, entry in by_method.items():
        if key not in entry:
            continue
        mean, se = np.asarray(entry[key]["mean"]), np.asarray(entry[key]["se"])
        t = np.arange(1, mean.size + 1)
        color = _COLORS.get(method)
        lw = 2.2 if method == "Envelope-BO" else 1.3
        ax.plot(t, mean, color=color, lw=lw, label=method)
        ax.fill_between(t, mean - se, mean + se, color=color, alpha=0.15)
    ax.set_xlabel("iteration (evaluations)")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)


def plot_all(result, out: Path) -> dict:
    pngs: dict = {"synthetic": [], "noise": [], "functions": [], "hpo": [], "tabular": []}
    for i, (case, by_acq) in enumerate(result.synthetic.items()):
        acqs = list(by_acq)
        fig, axes = figure(5.2 * len(acqs), 4.0, len(acqs))
        for ax, acq in zip(np.atleast_1d(axes), acqs, strict=True):
            _curves(ax, by_acq[acq], "percent_of_max", "% of the target's maximum (best so far)")
            ax.axhline(95.0, color="grey", ls=":", lw=1)
            ax.set_title(f"{acq}")
        _suptitle(fig, f"Synthetic, {case} target (003 Fig. {5 if i == 0 else 8}); mean ± s.e.")
        fig.tight_layout()
        path = out / f"synthetic_{case.replace(' ', '_')}.png"
        fig.savefig(path, dpi=100)
        pngs["synthetic"].append(path)
    if result.synthetic:
        fig, axes = figure(10.4, 4.0, 2)
        for ax, case in zip(axes, result.synthetic, strict=False):
            for acq, by_method in result.synthetic[case].items():
                noise = by_method.get("Envelope-BO", {}).get("source_noise")
                if noise is None:
                    continue
                mean, sd = np.asarray(noise["mean"]), np.asarray(noise["sd"])
                t = np.arange(1, mean.size + 1)
                (line,) = ax.plot(t, mean, label=acq)
                ax.fill_between(t, mean - sd, mean + sd, alpha=0.15, color=line.get_color())
            ax.set_title(f"{case} target (003 Fig. {6 if case == 'related' else 9})")
            ax.set_xlabel("iteration (evaluations)")
            ax.set_ylabel("learned source noise sigma_s^2 (in target variances)")
            ax.legend(fontsize=8)
        _suptitle(fig, "Envelope-BO's source noise after each ask, mean ± sd")
        fig.tight_layout()
        path = out / "source_noise.png"
        fig.savefig(path, dpi=100)
        pngs["noise"].append(path)
    for entry in result.functions.values():
        pngs["functions"].append(_plot_functions(entry, out))
    for problem, block in result.hpo.items():
        acqs = [a for a in block if a != "best_any"]  # the acquisitions run
        fig, axes = figure(5.2 * len(acqs), 4.0, len(acqs))
        model = result.settings["hpo_models"][problem]
        metric = "validation AUC" if model == "enet" else "validation accuracy"
        for ax, acq in zip(np.atleast_1d(axes), acqs, strict=True):
            _curves(ax, block[acq], "best_so_far", f"best {metric} so far")
            ax.set_title(acq)
        _suptitle(fig, f"{problem}; mean ± s.e. (003 {HPO_FIGURES[model]})")
        fig.tight_layout()
        path = out / f"hpo_{_slug(problem)}.png"
        fig.savefig(path, dpi=100)
        pngs["hpo"].append(path)
    if result.tabular:
        pngs["tabular"].extend(_plot_tabular(result.tabular, out))
    return pngs


def _suptitle(fig, text: str) -> None:
    """The figure's title, wrapped to the figure's width: one panel (quick, or one --acquisition) cut
    the longer titles off at both sides."""
    import textwrap

    chars = max(20, int(fig.get_figwidth() * 8))  # about 8 characters per inch at the default size
    fig.suptitle("\n".join(textwrap.wrap(text, chars)))


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text.lower()).strip("_")


def _plot_functions(entry: dict, out: Path) -> Path:
    """003 Fig. 4 (related) / Fig. 7 (mildly related), plus Envelope-BO's posterior mean."""
    axis = np.asarray(entry["axis"])
    G0, G1 = np.meshgrid(axis, axis, indexing="xy")
    src, tgt = np.asarray(entry["source"]), np.asarray(entry["target"])
    mean = np.asarray(entry["posterior_mean"])
    fig, axes = figure(10.4, 4.4, 2)
    ax = axes[0]
    ax.contour(G0, G1, src, levels=8, colors="tab:blue", linewidths=1.0)
    ax.contour(G0, G1, tgt, levels=8, colors="tab:red", linewidths=1.0)
    sp = np.array([[p["x0"], p["x1"]] for p in entry["source_points"]])
    ax.scatter(sp[:, 0], sp[:, 1], s=14, color="tab:blue", label="source points (25)")
    ax.plot([], [], color="tab:blue", label="source pdf, centre (0, 0)")
    ax.plot([], [], color="tab:red", label="target pdf")
    ax.set_title("source (blue) and target (red) functions")
    ax.legend(fontsize=7, loc="lower right")
    ax = axes[1]
    filled = ax.contourf(G0, G1, mean, levels=14, cmap="viridis")
    fig.colorbar(filled, ax=ax, shrink=0.85)
    ax.contour(G0, G1, tgt, levels=8, colors="tab:red", linewidths=0.8)
    tp = np.array([[p["x0"], p["x1"]] for p in entry["target_points"]])
    ax.scatter(tp[:, 0], tp[:, 1], s=16, marker="x", color="white", label=f"target evaluations ({len(tp)})")
    ax.set_title(f"Envelope-BO posterior mean, sigma_s^2 = {entry['source_noise']:.2f}")
    ax.legend(fontsize=7, loc="lower right")
    for a in axes:
        a.set_xlabel("x0")
        a.set_ylabel("x1")
        a.set_aspect("equal")
    figno = 4 if entry["case"] == "related" else 7
    _suptitle(
        fig,
        f"Synthetic, {entry['case']} target (003 Fig. {figno}; right: after {entry['T']} evaluations, EI)",
    )
    fig.tight_layout()
    path = out / f"functions_{entry['case'].replace(' ', '_')}.png"
    fig.savefig(path, dpi=100)
    return path


def _plot_tabular(tabular: dict, out: Path) -> list[Path]:
    paths = []
    pooled = tabular["all tasks"]
    acqs = list(pooled)
    fig, axes = figure(5.2 * len(acqs), 4.0, len(acqs))
    for ax, acq in zip(np.atleast_1d(axes), acqs, strict=True):
        _curves(ax, pooled[acq], "regret", "simple regret (accuracy)")
        ax.set_yscale("log")
        ax.set_title(acq)
    _suptitle(fig, "HPOBench MLP, each task with the other 7 as sources; mean ± s.e. over tasks and repeats")
    fig.tight_layout()
    path = out / "tabular_regret.png"
    fig.savefig(path, dpi=100)
    paths.append(path)
    tasks = [t for t in tabular if t != "all tasks"]
    for acq in acqs:
        ncols = min(4, len(tasks))
        nrows = int(np.ceil(len(tasks) / ncols))
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(3.6 * ncols, 3.0 * nrows))
        FigureCanvasAgg(fig)
        grid = fig.subplots(nrows, ncols, squeeze=False)
        for ax, task in zip(grid.ravel(), tasks, strict=False):
            _curves(ax, tabular[task][acq], "percent_of_range", "% of range (best so far)")
            ax.axhline(95.0, color="grey", ls=":", lw=1)
            ax.set_title(task, fontsize=9)
            ax.legend().set_visible(task == tasks[0])
        for ax in grid.ravel()[len(tasks) :]:
            ax.set_visible(False)
        _suptitle(fig, f"HPOBench MLP per task, {acq}: 100 (f - min f) / (max f - min f), mean ± s.e.")
        fig.tight_layout()
        path = out / f"tabular_tasks_{_slug(acq)}.png"
        fig.savefig(path, dpi=100)
        paths.append(path)
    return paths


def write_envelope_report(result, out: Path, pngs: dict) -> Path:
    """``report.html``: settings, iterations-to-95% and source-noise numbers, HPO table, plots."""
    from ..report import settings_text, write_experiment_report

    head = result.headline()
    setting = (
        "003 Section 4.1: source = N((0,0), I) pdf at 25 uniform points of [-3,3]^2; target centred at "
        "(0.1,0.1) (related) or (1.5,1.5) (mildly related). Methods share the initial design and the "
        "source sample of each repeat. "
        f"Settings: {settings_text(result.settings)}. Run time {result.seconds['total']:.0f} s "
        f"({', '.join(f'{k} {v:.0f} s' for k, v in result.seconds.items() if k != 'total')})."
    )
    syn_text = "\n\n".join(
        f"{key}: " + "; ".join(f"{m}: {v}" for m, v in row.items())
        for key, row in head["iterations_to_95"].items()
    )
    noise_text = "\n\n".join(
        f"{key}: final mean sigma_s^2 = {v:.3f} (prior mode nu0/(tau0+1) = 0.5)"
        for key, v in head["final_source_noise"].items()
    )
    hpo_text = "\n\n".join(
        f"{key}: " + "; ".join(f"{m}: {v}" for m, v in row.items())
        for key, row in head["iterations_to_best"].items()
    )
    if not result.hpo:
        hpo_text = "HPO part not run. " + " ".join(result.settings.get("notes", []))
    functions_text = "\n\n".join(
        f"{case}: posterior mean RMSE to the target {v['rmse_to_target']:.4f}, to the source "
        f"{v['rmse_to_source']:.4f}; argmax {_point(v['posterior_argmax'])}; "
        f"sigma_s^2 = {v['source_noise']:.3f}"
        for case, v in head["functions"].items()
    )
    tabular_text = "\n\n".join(
        f"{key}: "
        + "; ".join(
            f"{m}: {v} (final regret {head['tabular_final_regret'][key][m]:.4f})" for m, v in row.items()
        )
        for key, row in head["tabular_iterations_to_95"].items()
    )
    sections = [("Setting", setting, [])]
    if result.synthetic:
        sections += [
            (
                "Synthetic: iterations to 95% of the maximum (median [IQR], runs that reached)",
                syn_text,
                pngs["synthetic"],
            ),
            ("Learned source noise (Figs. 6, 9)", noise_text, pngs["noise"]),
        ]
    if result.functions:
        sections.append(("Source and target functions (Figs. 4, 7)", functions_text, pngs["functions"]))
    sections.append(
        (
            "HPO: iterations to within 1% of the best any method found (Table 4 analogue)",
            hpo_text,
            pngs["hpo"],
        )
    )
    if result.tabular:
        sections.append(
            (
                "Tabular HPOBench: iterations to 95% of each task's range (median [IQR], runs that reached)",
                tabular_text,
                pngs["tabular"],
            )
        )
    return write_experiment_report(out, "Envelope-BO reproduction (003 Section 4)", sections)


def _point(values) -> str:
    """A point for people: ``(0.15, 0.15)``, not the grid's float ``[0.1499999999999999, ...]``."""
    return "(" + ", ".join(f"{v:.2f}" for v in values) + ")"


def summary(result, out) -> list:
    """The headline of ``warmbo reproduce envelope``: iterations-to-target tables, the learned source
    noise and the notes (rich tables and text lines)."""
    from rich.table import Table

    head = result.headline()
    items: list = []
    tables = (
        (
            "iterations_to_95",
            "Envelope-BO (003 4.1): iterations to 95% of the target's maximum (median [IQR])",
        ),
        ("iterations_to_best", "Tuning (003 4.2): iterations to within 1% of the best any method found"),
        ("tabular_iterations_to_95", "HPOBench MLP: iterations to 95% of each task's range"),
    )
    for key, title in tables:
        if not head[key]:
            continue
        shown = [m for m in result.methods if any(m in row for row in head[key].values())]
        table = Table(title=title)
        table.add_column("problem / acquisition")
        for name in shown:
            table.add_column(name, justify="right")
        for label, row in head[key].items():
            table.add_row(label, *(row.get(m, "").split(",")[0] for m in shown))
        items.append(table)
    if head["final_source_noise"]:
        noise = ", ".join(f"{k}: {v:.3f}" for k, v in head["final_source_noise"].items())
        items.append(f"Envelope-BO's final learned source noise: {noise}")
    items.extend(result.settings.get("notes", []))
    items.append(f"Wrote {out / 'results.json'}, the PNG plots and {out / 'report.html'}")
    return items


# ------------------------------------------------------------------------------------ documentation
#: evaluations at which the source-noise and tabular tables read the curves
_NOISE_AT = (3, 5, 10, 20, 30)  # the first model is fitted at the 3rd ask (2-point design)
_TABULAR_AT = (1, 5, 10, 30)


def _at(points, length: int) -> list[int]:
    """The evaluations of ``points`` a curve of ``length`` has, and its last one."""
    return sorted({t for t in points if t <= length} | {length})


def _hit_cell(h: dict, digits: int = 0) -> str:
    if h["median"] is None:
        return f"not reached ({h['reached']}/{h['runs']})"
    q25 = "-" if h["q25"] is None else f"{h['q25']:.{digits}f}"
    q75 = ">T" if h["q75"] is None else f"{h['q75']:.{digits}f}"
    return f"{h['median']:.{digits}f} [{q25}-{q75}], {h['reached']}/{h['runs']}"


def _methods(result, blocks) -> list[str]:
    present = {m for block in blocks for m in block}
    return [m for m in result.methods if m in present]


def hpo_sign_tests(result, key: str, reference: str = "Envelope-BO", acq: str = "EI") -> dict:
    """``{problem: {method: {"wins", "losses", "ties", "p_value"}}}``: ``reference`` against each
    other method, paired by repeat (same source sample, design and train/validation draw), on
    ``key`` (``"iterations_to_best"`` or ``"seconds_to_best"``, CPU). A win is reaching within 1%
    of the best sooner; both not reaching, or the same value, is a tie (so are equal iteration
    counts); the two-sided sign test (scipy's binomtest) runs on wins and losses."""
    from scipy.stats import binomtest

    out: dict = {}
    for problem, block in result.hpo.items():
        by_method = block.get(acq, {})
        ref = by_method.get(reference, {})
        if key not in ref:
            continue
        mine = dict(zip(ref["repeats"], ref[key]["values"], strict=True))
        out[problem] = {}
        for method, entry in by_method.items():
            if method == reference or key not in entry:
                continue
            theirs = dict(zip(entry["repeats"], entry[key]["values"], strict=True))
            wins = losses = ties = 0
            for k in sorted(set(mine) & set(theirs)):
                a = np.inf if mine[k] is None else mine[k]
                b = np.inf if theirs[k] is None else theirs[k]
                if a == b:
                    ties += 1
                elif a < b:
                    wins += 1
                else:
                    losses += 1
            p = float(binomtest(wins, wins + losses).pvalue) if wins + losses else 1.0
            out[problem][method] = {"wins": wins, "losses": losses, "ties": ties, "p_value": p}
    return out


def doc_tables(result) -> dict[str, list[str]]:
    """The tables of ``docs/reproductions/envelope.md`` for the parts the run made
    (:mod:`warmbo.experiments.doc_tables`):

    - ``synthetic``: iterations to 95% of the target's maximum (Figs. 5, 8), median [IQR], reached;
    - ``source-noise``: Envelope-BO's learned sigma_s^2 (Figs. 6, 9), mean over repeats;
    - ``functions``: the posterior of Figs. 4, 7;
    - ``hpo-iterations``, ``hpo-cpu``: iterations and CPU seconds to within 1% of the best any
      method found (Table 4's measure), EI; ``hpo-final``: the mean best score after 5, 10 and T;
    - ``hpo-sign-iterations``, ``hpo-sign-cpu``: Envelope-BO against each method, paired by repeat;
    - ``tabular``: HPOBench, mean % of each task's range over tasks and repeats, iterations to 95%.
    """
    tables: dict[str, list[str]] = {}
    if result.synthetic:
        blocks = [b for by_acq in result.synthetic.values() for b in by_acq.values()]
        methods = _methods(result, blocks)
        rows = ["| case / acquisition | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
        noise_at = _at(_NOISE_AT, int(result.settings.get("T", 30)))
        noise = [
            "| case / acquisition | " + " | ".join(f"after {t}" for t in noise_at) + " |",
            "|---|" + "---|" * len(noise_at),
        ]
        for case, by_acq in result.synthetic.items():
            for acq, block in by_acq.items():
                cells = [
                    _hit_cell(block[m]["iterations_to_95"]) if "iterations_to_95" in block.get(m, {}) else "-"
                    for m in methods
                ]
                rows.append(f"| {case} / {acq} | " + " | ".join(cells) + " |")
                env = block.get("Envelope-BO", {}).get("source_noise")
                if env is not None:
                    mean = env["mean"]
                    at = [
                        f"{mean[t - 1]:.3f}" if t <= len(mean) and np.isfinite(mean[t - 1]) else "-"
                        for t in noise_at
                    ]
                    noise.append(f"| {case} / {acq} | " + " | ".join(at) + " |")
        tables["synthetic"] = rows
        if len(noise) > 2:
            tables["source-noise"] = noise
    if result.functions:
        rows = [
            "| case | learned sigma_s^2 (prior mode 0.5) | posterior argmax "
            "| posterior RMSE to target / to source |",
            "|---|---|---|---|",
        ]
        for case, entry in result.functions.items():
            rows.append(
                f"| {case} | {entry['source_noise']:.3f} | {_point(entry['posterior_argmax'])} | "
                f"{entry['rmse_to_target']:.4f} / {entry['rmse_to_source']:.4f} |"
            )
        tables["functions"] = rows
    hpo = {p: b for p, b in result.hpo.items() if "EI" in b}
    if hpo:
        methods = _methods(result, [b["EI"] for b in hpo.values()])
        head = ["| problem | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
        its, cpu = list(head), list(head)
        hpo_T = int(result.settings.get("hpo_T", 30))
        final_at = _at((5, 10), hpo_T)
        final = [
            f"| problem (best after {' / '.join(map(str, final_at))}) | " + " | ".join(methods) + " |",
            "|---|" + "---|" * len(methods),
        ]
        for problem, block in hpo.items():
            by = block["EI"]
            cell = lambda m, key, d, by=by: _hit_cell(by[m][key], d) if key in by.get(m, {}) else "-"  # noqa: E731
            its.append(
                f"| {problem} | " + " | ".join(cell(m, "iterations_to_best", 0) for m in methods) + " |"
            )
            cpu.append(f"| {problem} | " + " | ".join(cell(m, "seconds_to_best", 1) for m in methods) + " |")
            cells = []
            for m in methods:
                mean = by.get(m, {}).get("best_so_far", {}).get("mean")
                cells.append(
                    " / ".join(f"{mean[min(t, len(mean)) - 1]:.3f}" for t in final_at) if mean else "-"
                )
            final.append(f"| {problem} | " + " | ".join(cells) + " |")
        tables["hpo-iterations"], tables["hpo-cpu"], tables["hpo-final"] = its, cpu, final
        for key, name in (("iterations_to_best", "hpo-sign-iterations"), ("seconds_to_best", "hpo-sign-cpu")):
            tests = hpo_sign_tests(result, key)
            others = [m for m in methods if m != "Envelope-BO"]
            rows = ["| problem | " + " | ".join(others) + " |", "|---|" + "---|" * len(others)]
            for problem, row in tests.items():
                cells = [
                    f"{row[m]['wins']} / {row[m]['losses']} / {row[m]['ties']} (p {row[m]['p_value']:.2g})"
                    if m in row
                    else "-"
                    for m in others
                ]
                rows.append(f"| {problem} | " + " | ".join(cells) + " |")
            tables[name] = rows
    pooled = result.tabular.get("all tasks") if result.tabular else None
    if pooled:
        tab_at = _at(_TABULAR_AT, int(result.settings.get("tabular", {}).get("T", 30)))
        rows = [
            "| acquisition | method | "
            + " | ".join(f"% of range after {t}" for t in tab_at)
            + " | final regret | iterations to 95% |",
            "|---|---|" + "---|" * (len(tab_at) + 2),
        ]
        for acq, by_method in pooled.items():
            for m in _methods(result, [by_method]):
                e = by_method[m]
                if "percent_of_range" not in e:
                    continue
                mean = e["percent_of_range"]["mean"]
                at = [f"{mean[min(t, len(mean)) - 1]:.1f}" for t in tab_at]
                rows.append(
                    f"| {acq} | {m} | " + " | ".join(at) + f" | {e['final_regret']:.4f} | "
                    f"{_hit_cell(e['iterations_to_95'])} |"
                )
        tables["tabular"] = rows
    return tables
