"""The benchmark suite: what one suggestion costs and how many evaluations it takes, next to peers.

This package owns the suite behind ``make bench``, ``make bench-peers`` and ``warmbo bench`` (issue 8):

- a registry of *sections* (:data:`SECTIONS`, :func:`register`): each section runs the methods,
  returns a JSON-serialisable dict, and knows how to check its targets; the suite writes one results
  file per section and regenerates a Markdown summary from every results file it finds;
- :mod:`.overhead`: the cost of one ``ask`` against n, d, fixed hyperparameters or refits, and
  peak memory; :mod:`.quality`: simple regret after 10, 25, 50 evaluations over 10 seeds;
- :mod:`.methods`: warmbo and the peers (BoTorch, Optuna; optional extra ``peers``) behind one
  interface; :mod:`.markdown`: the summary ``bench/README.md``.

- :mod:`.mt`: MT-KB / MT-BKB per-step time against t with 20 tasks (001).
- :mod:`.transfer`: leave-one-task-out transfer on HPOBench's and the project's SVM meta-data, and
  seconds per ask with 50 sources (issue 14); not in a default run (``make bench-transfer``).

Extension point: a section is a module with ``run(ctx) -> dict``, ``targets(results) -> list`` and
``markdown(results) -> list[str]``, registered here with :func:`register` (``mt`` was added this way);
the suite, the CLI (``--section NAME``) and the summary pick it up without further changes. Targets
of a section without results yet are listed as pending (:data:`PENDING_TARGETS`).

Example
-------
>>> from warmbo.benchmarks import run_suite
>>> paths = run_suite(out_dir="results", readme="results/README.md", preset="tiny")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from .._registry import Registry
from .._validation import check_int
from . import mt, overhead, quality, transfer
from ._common import machine_info, utc_now
from .markdown import overhead_markdown, quality_markdown, write_readme
from .methods import PEERS, Method, Warmbo, resolve_peers

__all__ = [
    "DEFAULT_PEERS",
    "PENDING_TARGETS",
    "PRESETS",
    "SECTIONS",
    "Context",
    "Section",
    "register",
    "run_suite",
]

PRESETS = ("full", "quick", "tiny")
DEFAULT_PEERS = tuple(PEERS)


@dataclass(frozen=True)
class Section:
    """A part of the suite.

    Attributes
    ----------
    name : str
        Short name (results file ``<name>.json``, CLI ``--section <name>``).
    title : str
        Heading in the summary.
    run : callable
        ``run(ctx: Context) -> dict``, JSON-serialisable results.
    targets : callable
        ``targets(results) -> list of {"target", "measured", "met"}`` (met None: not measured).
    markdown : callable
        ``markdown(results) -> list of lines`` for the summary.
    default : bool
        Part of a run that names no section (``make bench``); False for a section too long for it,
        run with ``--section NAME`` (its own make target).
    """

    name: str
    title: str
    run: Callable[[Context], dict]
    targets: Callable[[dict], list[dict]]
    markdown: Callable[[dict], list[str]]
    default: bool = True


@dataclass
class Context:
    """What a section gets: the preset, the methods (warmbo first), a seed and a logger."""

    preset: str
    methods: list[Method]
    seed: int = 0
    log: Callable[[str], None] = field(default=lambda message: None)
    runs: int | None = None  # quality runs (seeds) instead of the preset's, when given
    #: a file where a long section keeps its finished runs, so that a run cut off (a session's end,
    #: a crash) resumes where it stopped; run_suite removes it once the results file is written
    checkpoint: Path | None = None


SECTIONS: Registry[Section] = Registry("benchmark section")

# Targets of issue 8 that no registered section measures yet, keyed by the section that will.
PENDING_TARGETS: dict[str, list[str]] = {
    "mt": [
        "MT-BKB per-step time at t = 10,000 with 20 tasks: under 0.5 s",
        "MT-KB (ICM fast path) per-step time at t = 2000 with 20 tasks: under 1 s",
    ]
}


def register(section: Section) -> Section:
    """Add a section to the suite (the extension point; a name may be registered once)."""
    return SECTIONS.register(section.name, section)


register(Section("overhead", "Overhead of one ask", overhead.run, overhead.targets, overhead_markdown))
register(Section("quality", "Simple regret", quality.run, quality.targets, quality_markdown))
register(Section("mt", "Multi-task step time (MT-KB / MT-BKB, 20 tasks)", mt.run, mt.targets, mt.markdown))
register(
    Section(
        "transfer",
        "Transfer from earlier tasks (leave one task out)",
        transfer.run,
        transfer.targets,
        transfer.markdown,
        default=False,  # about two hours at full size: `make bench-transfer`
    )
)


def _limit_threads(stack: ExitStack, threads: int) -> None:
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - scikit-learn depends on threadpoolctl
        return
    stack.enter_context(threadpool_limits(limits=threads))
    try:
        import torch
    except ImportError:
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    stack.callback(torch.set_num_threads, previous)


def run_suite(
    out_dir: str | Path = "bench/results",
    readme: str | Path | None = "bench/README.md",
    sections: list[str] | tuple[str, ...] | None = None,
    preset: str = "full",
    peers: list[str] | tuple[str, ...] = (),
    threads: int = 1,
    seed: int = 0,
    log: Callable[[str], None] = print,
    runs: int | None = None,
) -> dict[str, Path]:
    """Run sections of the suite, write their results and regenerate the Markdown summary.

    Parameters
    ----------
    out_dir : path
        Folder of the results files: ``<section>.json`` without peers, ``<section>-peers.json`` with.
    readme : path or None
        Markdown summary regenerated from every results file in ``out_dir`` (None: not written).
    sections : sequence of str, optional
        Names from :data:`SECTIONS` (default: every section whose ``default`` is true, in
        registration order).
    preset : {"full", "quick", "tiny"}
        Sizes: the issue's (``full``), a few minutes (``quick``), seconds (``tiny``, for tests).
    peers : sequence of str
        Peers to run next to warmbo (names from :data:`~warmbo.benchmarks.methods.PEERS`); a peer whose
        library is missing is skipped with a message.
    threads : int
        BLAS (threadpoolctl) and torch threads during the run, the same for every method.
    seed : int
        Base seed of the data and of the runs.
    log : callable
        Receives progress messages.
    runs : int, optional
        Seeded runs of the quality section instead of the preset's (fewer: a shorter, coarser run).

    Returns
    -------
    dict
        Section name -> results file written (and ``"readme"`` -> the summary, if written).
    """
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {PRESETS}, got {preset!r}")
    check_int(threads, "threads", 1)
    if runs is not None:
        check_int(runs, "runs", 2)
    names = [n for n in SECTIONS if SECTIONS[n].default] if sections is None else list(sections)
    for name in names:
        SECTIONS.lookup(name)  # a clear error for an unknown name, before anything runs
    peer_methods, skipped = resolve_peers(list(peers))
    for message in skipped:
        log(message)
    methods: list[Method] = [Warmbo(), *peer_methods]
    suffix = "-peers" if peer_methods else ""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    with ExitStack() as stack:
        _limit_threads(stack, threads)
        for name in names:
            section = SECTIONS[name]
            log(f"section {name} ({preset}), methods: {', '.join(m.name for m in methods)}")
            machine = machine_info()
            start = time.perf_counter()
            checkpoint = out_dir / f"{name}{suffix}.partial.json"
            ctx = Context(
                preset=preset, methods=methods, seed=seed, log=log, runs=runs, checkpoint=checkpoint
            )
            results = section.run(ctx)
            report = {
                "section": name,
                "title": section.title,
                "timestamp": utc_now(),
                "preset": preset,
                "machine": machine,
                "threads": threads,
                "methods": {m.name: m.settings() for m in methods},
                "skipped_peers": skipped,
                "results": results,
                "targets": section.targets(results),
                "runtime_s": time.perf_counter() - start,
                "load_average_end": machine_info()["load_average"],
            }
            path = out_dir / f"{name}{suffix}.json"
            path.write_text(json.dumps(report, indent=2) + "\n")
            checkpoint.unlink(missing_ok=True)
            written[name] = path
            log(f"wrote {path} ({report['runtime_s']:.1f} s)")
    if readme is not None:
        written["readme"] = write_readme(out_dir, Path(readme), SECTIONS, PENDING_TARGETS)
        log(f"wrote {written['readme']}")
    return written
