"""The reproductions, declared once: what ``warmbo reproduce NAME`` runs, which options it takes, and
how its headline is summarised.

Each entry names the paper, the run function of its experiment module (``run(out, workers=,
quick=, progress=, seed=, **sizes, **options) -> result``), how ``--runs`` maps to that module's
sizes, the extra CLI options it accepts, and the module's ``summary(result, out)``, which returns the
rich tables and lines to print; a ``NAME_report`` module's ``doc_tables(result)`` gives the tables of
the documentation page (``--update-docs``). The CLI only looks entries up; adding a reproduction touches this
registry and its own module.

The parts of the reproductions that have them (``--part``) are declared here too, as
:data:`MULTITASK_PARTS` and :data:`ENVELOPE_PARTS`: the experiment modules take their ``PARTS`` from
them and the CLI's help lists them, without importing the experiment modules (their imports would
slow every ``warmbo`` command). ``report_html`` says whether the run writes a ``report.html``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .._registry import Registry

__all__ = ["Reproduction", "REPRODUCTIONS", "reproduction", "MULTITASK_PARTS", "ENVELOPE_PARTS"]

#: Parts of 001's reproduction (:mod:`warmbo.experiments.multitask`).
MULTITASK_PARTS = ("rkhs", "sine", "branin", "sensor", "timing", "decide", "horizon")
#: Parts of 003's reproduction: Section 4.1's curves, Figs. 4/7's functions, Section 4.2's SVM and
#: elastic net, its MLP, and the tabular HPOBench benchmark (:mod:`warmbo.experiments.envelope`).
ENVELOPE_PARTS = ("synthetic", "functions", "hpo", "mlp", "tabular")


@dataclass(frozen=True)
class Reproduction:
    """One paper's reproduction (see the module docstring)."""

    name: str
    paper: str
    module: str
    run_function: str
    sizes: Callable[[int | None], dict]
    options: tuple[str, ...] = ()
    option_names: dict = field(default_factory=dict)  # CLI option -> run keyword
    parts: tuple[str, ...] = ()  # what --part accepts (empty: the option does not apply)
    report_html: bool = True  # whether the run writes report.html

    def _module(self):
        return importlib.import_module(f"warmbo.experiments.{self.module}")

    def run(self, out: Path, *, runs: int | None, workers, quick: bool, seed: int, progress, **options):
        """Run the experiment with ``--runs`` mapped to its sizes and the CLI options renamed."""
        if options.get("parts"):  # repeatable and comma-separated
            options["parts"] = [p.strip() for item in options["parts"] for p in item.split(",") if p.strip()]
        kwargs = {self.option_names.get(k, k): _option_value(v) for k, v in options.items()}
        run = getattr(self._module(), self.run_function)
        try:
            return run(
                out, workers=workers, quick=quick, progress=progress, seed=seed, **self.sizes(runs), **kwargs
            )
        except ImportError as exc:  # an optional package a part needs, asked for by name
            raise RuntimeError(str(exc)) from exc

    def summary(self, result, out: Path) -> list:
        """The rich tables and text lines of the headline (the module's ``summary``)."""
        return self._module().summary(result, out)

    def doc_tables(self, result) -> dict[str, list[str]] | None:
        """The tables of the reproduction's documentation page, by block name (the report module's
        ``doc_tables``; :mod:`warmbo.experiments.doc_tables`), or None when its page has none yet."""
        try:
            report = importlib.import_module(f"warmbo.experiments.{self.module}_report")
        except ImportError:
            return None
        make = getattr(report, "doc_tables", None)
        return make(result) if callable(make) else None


def _option_value(value):
    if value is None:
        return None
    if isinstance(value, Path):
        return str(value)
    return list(value) if isinstance(value, list | tuple) else value


def _per_part(parts: tuple[str, ...]) -> Callable[[int | None], dict]:
    return lambda runs: {} if runs is None else {f"runs_{p}": runs for p in parts}


_ENTRIES = {
    "metakel": Reproduction(
        "metakel",
        "000 Meta-KeL",
        "metakel",
        "run_metakel",
        _per_part(("calibration", "regret", "lambda", "support")),
    ),
    "multitask": Reproduction(
        "multitask",
        "001 MT-KB / MT-BKB",
        "multitask",
        "run_multitask",
        lambda runs: {} if runs is None else {"runs": runs},
        options=("parts", "data_dir"),
        parts=MULTITASK_PARTS,
        report_html=False,
    ),
    "envelope": Reproduction(
        "envelope",
        "003 Envelope-BO",
        "envelope",
        "run_envelope",
        lambda runs: {} if runs is None else {"repeats": runs, "hpo_repeats": runs},
        options=("parts", "methods", "acquisitions", "data_dir"),
        option_names={"acquisitions": "hpo_acquisitions"},
        parts=ENVELOPE_PARTS,
    ),
    "tuned-prior": Reproduction(
        "tuned-prior",
        "004 tuned-prior BO",
        "tuned_prior",
        "run_tuned_prior",
        lambda runs: {} if runs is None else {"runs": runs},
    ),
}


REPRODUCTIONS: Registry[Reproduction] = Registry("experiment")
for _entry in _ENTRIES.values():
    REPRODUCTIONS.register(_entry.name, _entry)


def reproduction(name: str) -> Reproduction:
    """The registered reproduction ``name``; a clear error for an unknown one."""
    return REPRODUCTIONS.lookup(name)
