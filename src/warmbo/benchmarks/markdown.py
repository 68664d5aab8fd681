"""The Markdown summary of the benchmark suite (``bench/README.md``), regenerated from the results files.

Nothing in the summary is typed by hand: every number comes from a ``<section>[-peers].json`` file in
the results folder, and the targets table from each section's ``targets`` check of those numbers.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["overhead_markdown", "quality_markdown", "write_readme"]

_MODE_TITLES = {
    "fixed": "fixed hyperparameters",
    "ml2": "hyperparameters refitted at every ask (warmbo: its default MAP fit)",
    "first": "first ask of a new Optimizer object on a stored study (refit; warmbo only)",
}


def _ms(seconds: float) -> str:
    ms = seconds * 1e3
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    return f"{ms:.2f}"


def _mib(n_bytes: float | None) -> str:
    return "-" if n_bytes is None else f"{n_bytes / 2**20:.1f}"


def _g(value: float) -> str:
    return f"{value:.3g}"


def overhead_markdown(results: dict) -> list[str]:
    """Tables of the overhead section: ask time (ms) per mode, d and n, and the ratios to warmbo."""
    lines = []
    rows = results["rows"]
    for mode in _MODE_TITLES:
        mode_rows = [r for r in rows if r["mode"] == mode]
        if not mode_rows:
            continue
        peers = list(dict.fromkeys(p for r in mode_rows for p in r["methods"] if p != "warmbo"))
        head = ["d", "n", "warmbo ms: median [min, max]"]
        for p in peers:
            head += [f"{p} ms", f"{p} / warmbo"]
        head += ["warmbo peak MiB (traced / RSS)", *[f"{p} peak RSS MiB" for p in peers]]
        lines += [f"**{_MODE_TITLES[mode]}** (time of one ask, milliseconds)", ""]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in mode_rows:
            w = r["methods"]["warmbo"]
            t = w["time_s"]
            cells = [str(r["d"]), str(r["n"]), f"{_ms(t['median'])} [{_ms(t['min'])}, {_ms(t['max'])}]"]
            for p in peers:
                if p in r["methods"]:
                    cells += [_ms(r["methods"][p]["time_s"]["median"]), f"{r['peer_over_warmbo'][p]:.1f}x"]
                else:
                    cells += ["-", "-"]
            mem = w.get("memory") or {}
            cells.append(f"{_mib(mem.get('tracemalloc_bytes'))} / {_mib(mem.get('rss_bytes'))}")
            for p in peers:
                pmem = (r["methods"].get(p) or {}).get("memory") or {}
                cells.append(_mib(pmem.get("rss_bytes")))
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    lines += _run_markdown(results.get("run"))
    settings = results["settings"]
    lines.append(
        f"Repeats: {settings['repeats']} per cell (median [min, max]); peers up to n = "
        f"{settings['peer_max_n']}. Data: {settings['data']}. `peer / warmbo` is the ratio of medians "
        "(how many times cheaper warmbo's ask is). Peak memory: one extra untimed ask; traced = "
        "tracemalloc (Python and NumPy), RSS = growth of the resident set (sees torch too)."
    )
    return lines


def _run_markdown(loop: dict | None) -> list[str]:
    """The overhead section's running loop (mode ``"run"``): first, median and worst ask, the n of the
    worst, worst / median, and the asks at the powers of two the loop crossed."""
    if not loop:
        return []
    powers = [
        f"{n}: {_ms(seconds)}"
        for n, seconds in zip(loop["n"], loop["ask_s"], strict=True)
        if n & (n - 1) == 0
    ]
    head = ["d", "asks (n)", "first ask ms", "median ms", "worst ms", "n of worst", "worst / median"]
    head.append("ask at a power of two (n: ms)")
    cells = [
        str(loop["d"]),
        f"{len(loop['n'])} ({loop['n_start']}..{loop['n_end'] - 1})",
        _ms(loop["first_s"]),
        _ms(loop["median_s"]),
        _ms(loop["worst_s"]),
        str(loop["worst_n"]),
        f"{loop['worst_over_median']:.2f}x",
        ", ".join(powers) or "-",
    ]
    return [
        f"**a running loop from {loop['n_start']} to {loop['n_end']} trials (warmbo only)**: every ask "
        "timed (milliseconds), each point evaluated and told (untimed); default model, refitted at "
        "every ask (n: the complete trials an ask fits on)",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        "| " + " | ".join(cells) + " |",
        "",
    ]


def quality_markdown(results: dict) -> list[str]:
    """Table of the quality section: median simple regret [95% interval of the median] per budget."""
    lines = []
    budgets = results["settings"]["budgets"]
    methods = list(dict.fromkeys(m for e in results["problems"].values() for m in e["methods"]))
    head = ["problem", "evals", *methods]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, entry in results["problems"].items():
        for b in budgets:
            cells = [f"{name} (d={entry['dim']})", str(b)]
            for m in methods:
                stats = entry["methods"].get(m, {}).get("regret", {}).get(str(b))
                if stats is None:
                    cells.append("-")
                    continue
                low, high = stats["ci95_median"]
                cells.append(f"{_g(stats['median'])} [{_g(low)}, {_g(high)}]")
            lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    head = ["problem", *[f"{m} s/run" for m in methods]]
    lines += ["Wall time of one run of the largest budget (median over runs, seconds):", ""]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, entry in results["problems"].items():
        cells = [name]
        for m in methods:
            stats = entry["methods"].get(m, {}).get("run_time_s")
            cells.append("-" if stats is None else f"{stats['median']:.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    s = results["settings"]
    lines.append(
        f"Median simple regret [95% bootstrap interval of the median] over {s['runs']} seeded runs "
        f"(seeds {s['seeds'][0]}..{s['seeds'][-1]}); {s['regret']}."
    )
    return lines


def _machine_line(report: dict) -> str:
    m = report["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v)
    return (
        f"{m['cpu_model']}, {m['cpu_count']} cores ({m['cpu_affinity']} usable), {m['memory_gib']} GiB, "
        f"{m['platform']}, Python {m['python']}; {versions}; threads per method: {report['threads']}; "
        f"git {m['git_commit']}; load average {m['load_average']} -> {report['load_average_end']}"
    )


def _load(out_dir: Path, sections) -> list[tuple[Path, dict]]:
    found = []
    for name in sections:
        for suffix in ("-peers", ""):
            path = out_dir / f"{name}{suffix}.json"
            if path.is_file():
                found.append((path, json.loads(path.read_text())))
    return found


def write_readme(out_dir: Path, readme: Path, sections: dict, pending: dict[str, list[str]]) -> Path:
    """Regenerate the summary at ``readme`` from the results files of ``sections`` in ``out_dir``."""
    reports = _load(out_dir, sections)
    readme.parent.mkdir(parents=True, exist_ok=True)

    def rel(path: Path) -> str:
        return os.path.relpath(path.resolve(), readme.parent.resolve())

    lines = [
        "# warmbo benchmarks",
        "",
        "Generated by the benchmark suite (`warmbo.benchmarks`) from the results files beside it; do "
        "not edit by hand, rerun the suite.",
        "",
        "## Reproduce",
        "",
        "```bash",
        "make bench         # warmbo only (core install), full sizes, under 10 minutes",
        "make bench-peers   # installs the optional extra 'peers' (torch 2.13.0, BoTorch, Optuna) and",
        "                   # runs BoTorch and Optuna alternating with warmbo in the same process",
        "warmbo bench --quick                      # a few minutes",
        "warmbo bench --peers --section overhead   # one section, with every peer installed",
        "```",
        "",
        "Results: `<section>.json` (warmbo alone) and `<section>-peers.json` (with peers) in "
        f"`{rel(out_dir)}`, each with the machine, the package versions, the settings of every method, "
        "and the median, min and max over the repeats. Fixed seeds: every run does the same work. "
        "With the peers the quality section takes about an hour on 2 cores, the transfer section "
        "about two hours alone; each keeps its finished runs in `<section>[-peers].partial.json`, and the "
        "same command, run again, continues from there (the results name every git commit whose runs "
        "they hold).",
        "",
        "## Targets (issues 8, 14 and 15)",
        "",
        "| target | measured | met | results |",
        "|---|---|---|---|",
    ]
    # a target measured in several files (warmbo alone and with peers) is listed once per measurement;
    # 'not measured' rows are kept only for targets no file measures (the ratios need the peers' file)
    measured = {t["target"] for _, report in reports for t in report["targets"] if t["met"] is not None}
    for path, report in reports:
        for t in report["targets"]:
            if t["met"] is None and t["target"] in measured:
                continue
            met = {True: "yes", False: "**no**", None: "not measured"}[t["met"]]
            lines.append(f"| {t['target']} | {t['measured'] or '-'} | {met} | `{path.name}` |")
    for name, texts in pending.items():
        if name not in sections:
            for text in texts:
                lines.append(f"| {text} | - | pending: section `{name}` not registered yet | - |")
    lines.append("")
    for path, report in reports:
        section = sections[report["section"]]
        lines += [
            f"## {section.title} (`{path.name}`, {report['preset']} sizes, {report['timestamp']})",
            "",
            f"Machine: {_machine_line(report)}. Run time {report['runtime_s']:.0f} s.",
            "",
        ]
        if report["skipped_peers"]:
            lines += ["Skipped: " + "; ".join(report["skipped_peers"]), ""]
        lines += section.markdown(report["results"])
        lines += ["", "<details><summary>Settings of the methods</summary>", ""]
        for method, settings in report["methods"].items():
            lines.append(f"- **{method}**: " + "; ".join(f"{k}: {v}" for k, v in settings.items()))
        lines += ["", "</details>", ""]
    if not reports:
        lines += ["No results yet: run `make bench`.", ""]
    lines += [
        "## Micro-benchmarks of the numerical core",
        "",
        "`bench/core.py` (`make bench-core`) times the GP rank-one update, prediction and acquisition "
        "maximisation against scikit-learn; results in `bench/results/core.json`.",
        "",
    ]
    readme.write_text("\n".join(lines))
    return readme
