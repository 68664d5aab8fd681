"""The benchmark suite of issue 8: ask overhead and simple regret, warmbo next to BoTorch and Optuna.

A thin script over :mod:`warmbo.benchmarks` (the same code as ``warmbo bench``):

    python bench/suite.py             # warmbo alone (make bench), full sizes, under 10 minutes
    python bench/suite.py --peers     # with every peer installed (make bench-peers)
    python bench/suite.py --quick --section overhead

Writes ``bench/results/<section>[-peers].json`` and regenerates ``bench/README.md``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from warmbo.benchmarks import DEFAULT_PEERS, SECTIONS, run_suite

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers", action="store_true", help=f"run the peers too: {', '.join(DEFAULT_PEERS)}")
    parser.add_argument("--peer", action="append", default=[], help="run this peer (repeatable)")
    parser.add_argument("--section", action="append", choices=list(SECTIONS), help="run only this section")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="smaller sizes (a few minutes)")
    group.add_argument("--tiny", action="store_true", help="smallest sizes (seconds; a smoke test)")
    parser.add_argument("--runs", type=int, default=None, help="quality runs (seeds) instead of the preset's")
    parser.add_argument("--threads", type=int, default=1, help="BLAS and torch threads (default 1)")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="results folder")
    parser.add_argument("--readme", type=Path, default=HERE / "README.md", help="Markdown summary")
    args = parser.parse_args(argv)
    peers = list(DEFAULT_PEERS) if args.peers else args.peer
    preset = "tiny" if args.tiny else "quick" if args.quick else "full"
    run_suite(
        args.out, args.readme, args.section, preset=preset, peers=peers, threads=args.threads, runs=args.runs
    )


if __name__ == "__main__":
    main()
