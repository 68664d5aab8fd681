"""Study reports: diagnostic figures and self-contained HTML pages.

This module owns how a study is *shown* to a person, never how it is run:

* the series and figures of a study's progress (:func:`best_so_far_series`,
  :func:`plot_best_so_far`) and of its observations per parameter (:func:`plot_observed`);
* for a multi-task study (:class:`~warmbo.MultiTaskOptimizer`), each task's values in its own direction
  and the Pareto front (:func:`task_summary`, :func:`pareto_trials`, :func:`plot_task_values`,
  :func:`plot_pareto`);
* posterior slices through the best point and the cheap sensitivity read off them
  (:func:`plot_posterior_slices`, :func:`parameter_importance`, :func:`plot_importance`);
* the calibration of a study's intervals from its confidence audit (:func:`plot_calibration`,
  :mod:`warmbo.audit`: observed against nominal coverage, with the binomial band);
* single-file HTML reports (:func:`write_report` for a study, :func:`write_experiment_report` for
  the paper reproductions in :mod:`warmbo.experiments`): images embedded as base64 ``data:`` URIs,
  inline CSS, no external resource, every user string escaped.

Figures are drawn on :class:`matplotlib.figure.Figure` objects attached to the Agg canvas, without
pyplot: making a report never changes the caller's matplotlib backend, opens no window and leaves
no figure registered in pyplot. Every ``plot_*`` function returns the figure (a cell ending with one
shows it once); those that take ``ax`` also accept a pyplot ``Axes`` and then return its figure.

Models are reached only through a ``predict`` callable, ``predict(U) -> (mean, std)`` with ``U`` of
shape ``(n, space.dim)`` in the unit cube (the :meth:`warmbo.space.Space.encode` convention) and
``mean``, ``std`` on the user's scale and sign, so the report does not care which model made them
(``GP.predict`` qualifies directly for a model fitted on the user's values).

Why this file is long: one self-contained HTML report (sections, tables, inline plots) for single- and
multi-task studies and for the experiments; splitting it would spread one page's layout over several
modules.
"""

from __future__ import annotations

import base64
import contextlib
import html
import io
import math
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter, PercentFormatter
from scipy import stats

from .audit import Audit, audit_header, audit_rows
from .pareto import pareto_mask
from .space import Categorical, Float, Int, Parameter, Space
from .trial import COMPLETE, STATES, Trial, amendment_note, why_and_who

__all__ = [
    "BestSoFar",
    "settings_text",
    "best_so_far_series",
    "parameter_importance",
    "pareto_trials",
    "plot_best_so_far",
    "plot_calibration",
    "plot_importance",
    "plot_observed",
    "plot_pareto",
    "plot_posterior_slices",
    "plot_task_values",
    "task_summary",
    "write_experiment_report",
    "write_report",
    "audit_rows",
]

Predict = Callable[[np.ndarray], tuple[Any, Any]]

#: PNG file signature; every embedded image is checked against it.
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

#: Figures written by :func:`write_report`, in page order, with their captions.
REPORT_FIGURES = {
    "best_so_far.png": (
        "Best value so far (for a multi-task study, the expected utility) against trial id; dots are "
        "the observed values, red crosses on the axis the failed trials and hollow circles the pending "
        "ones."
    ),
    "tasks.png": (
        "Each task's observed values against trial id, with its best so far in its own direction; "
        "failed and pending trials on the axis, as above."
    ),
    "pareto.png": (
        "Observed values of the first two tasks; the Pareto front (non-dominated over all tasks, each "
        "in its own direction) in red."
    ),
    "observed.png": (
        "Observed values against each parameter; the star is the best trial, red crosses on the axis "
        "the failed trials' settings and hollow circles the pending ones'."
    ),
    "slices.png": (
        "Posterior mean and mean \u00b1 2 std along each parameter, the others fixed at the best point."
    ),
    "importance.png": "Range of the posterior mean along each slice, as a share of the total.",
}

#: added to the slices' caption of a study with transfer sources
TRANSFER_SLICES_NOTE = (
    "This study transfers from earlier tasks: the posterior is the transfer model's (for auto and "
    "rgpe, a weighted sum of the sources' GPs and this study's, each on its own standardised scale), "
    "which ranks configurations and need not pass through this study's observations; the weights are "
    "in the Transfer section."
)

#: added to the importance caption when the posterior mean is flat along every slice (a constant
#: objective, say): the shares are then equal by convention and rank nothing
FLAT_IMPORTANCE_NOTE = (
    "The posterior mean is flat along every slice (its ranges are round-off), so no parameter is more "
    "important than another: the shares are equal by convention and rank nothing."
)

#: A slice whose posterior-mean range is at most this many machine epsilons times the largest
#: magnitude of the mean over all slices counts as flat. A constant objective's posterior mean comes
#: back as the constant give or take an ulp or two (ranges of 0 to 2 eps times the constant, seen for
#: 12 to 200 trials and constants from 1e-6 to 3e8): the standardisation and the GP's sums round at
#: the mean's own magnitude, so the floor scales with it, not with an absolute number. 64 leaves wide
#: room over that, and a real effect that small (a relative 1.4e-14 of the mean) is below what any
#: observation resolves: treating it as flat loses nothing.
_FLAT_ULPS = 64

#: caption of the calibration figure (in its own section, with the audit's table)
CALIBRATION_CAPTION = (
    "Leave-one-out coverage of the model's intervals for an observation against their nominal level; "
    "the grey band is where a calibrated model's coverage falls 95% of the time with this many "
    "held-out trials (binomial). Below the band: overconfident; above: underconfident."
)

_N_SWEEP = 100
_MAX_CHOICE_LABELS = 15  # a categorical axis labels at most this many choices (every k-th of more)
_DENSE = 200  # observed values beyond which the dots shrink and fade (see _dots), trials beyond
# which the trials table is folded
_DPI = 100
_BEST_COLOR = "#d62728"
_LINE_COLOR = "#1f77b4"
_DOT_COLOR = "#7f7f7f"

_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto;
       max-width: 1100px; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { border-bottom: 2px solid #ddd; padding-bottom: 0.2em; }
h2 { margin-top: 1.6em; border-bottom: 1px solid #eee; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.failed td { color: #a00; }
tr.pending td { color: #777; }
.scroll { overflow-x: auto; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #555; }
summary { cursor: pointer; color: #1f5fa8; }
.note { background: #fff8e1; border-left: 4px solid #f0c36d; padding: 0.5em 1em; }
"""


# ----------------------------------------------------------------------------------------------
# data helpers
# ----------------------------------------------------------------------------------------------


class BestSoFar(NamedTuple):
    """Series plotted by :func:`plot_best_so_far`.

    Attributes
    ----------
    trial_ids : ndarray of int, shape (n,)
        Ids of the complete trials with a finite value, increasing.
    values : ndarray, shape (n,)
        Their observed values.
    best : ndarray, shape (n,)
        Running maximum (``maximize=True``) or minimum of ``values``.
    failed_ids : ndarray of int
        Ids of the failed trials, increasing.
    pending_ids : ndarray of int
        Ids of the pending trials (asked, no value yet), increasing.
    """

    trial_ids: np.ndarray
    values: np.ndarray
    best: np.ndarray
    failed_ids: np.ndarray
    pending_ids: np.ndarray


def _scored(trials: Sequence[Trial]) -> list[Trial]:
    """Complete trials with a finite value, in id order."""
    out = [t for t in trials if t.state == COMPLETE and t.value is not None and math.isfinite(float(t.value))]
    return sorted(out, key=lambda t: t.id)


def _best_trial(trials: Sequence[Trial], maximize: bool) -> Trial | None:
    """Best complete trial (lowest id on ties), or None without any."""
    scored = _scored(trials)
    if not scored:
        return None
    sign = 1.0 if maximize else -1.0
    return max(scored, key=lambda t: (sign * float(t.value), -t.id))  # type: ignore[arg-type]


def best_so_far_series(trials: Sequence[Trial], maximize: bool) -> BestSoFar:
    """Best value so far over the complete trials, in id order.

    Parameters
    ----------
    trials : sequence of Trial
        Any order; pending trials are ignored, and so are complete trials whose value is missing
        or not finite.
    maximize : bool
        Running maximum if True, running minimum otherwise.

    Returns
    -------
    BestSoFar
        ``trial_ids``, ``values``, ``best`` (monotone: non-decreasing when maximising,
        non-increasing when minimising), ``failed_ids`` and ``pending_ids``.
    """
    scored = _scored(trials)
    ids = np.array([t.id for t in scored], dtype=np.int64)
    values = np.array([float(t.value) for t in scored], dtype=np.float64)  # type: ignore[arg-type]
    accumulate = np.maximum.accumulate if maximize else np.minimum.accumulate
    best = accumulate(values) if values.size else values.copy()
    failed = np.array(sorted(t.id for t in trials if t.is_failed), dtype=np.int64)
    pending = np.array(sorted(t.id for t in trials if t.is_pending), dtype=np.int64)
    return BestSoFar(ids, values, best, failed, pending)


def _label(text: Any, max_chars: int = 40) -> str:
    """A user string made safe for matplotlib text, shortened to ``max_chars`` as :func:`_short`
    does, head and tail around an ellipsis: names that share a long prefix differ at the end
    (``..._dropout_layer_1``, ``_2``, ``_3``), and cut there they all read alike in the panels and
    the importance bars (a user test).

    ``$`` is escaped because it would otherwise start mathtext (and fail to parse on e.g. ``$^$``).
    """
    return _short(text, max_chars)


def _objective_label(maximize: bool, name: str = "objective", log: bool = False) -> str:
    return f"{name} ({'higher' if maximize else 'lower'} is better{', log scale' if log else ''})"


def _maybe_log_y(ax: Axes, values: np.ndarray) -> bool:
    """Log y-axis when all values are positive and span at least two decades; True then (the y-label
    says so, as a log parameter's x-label does)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size >= 2 and v.min() > 0 and v.max() / v.min() >= 100.0:
        ax.set_yscale("log")
        return True
    return False


def _dots(n: int) -> dict[str, float]:
    """Marker size and opacity of ``n`` observed values: up to 200 the usual dots; beyond, smaller and
    fainter as ``sqrt(200 / n)``, so 2000 trials read as a density with the best-so-far line and the
    best point above it, not as one grey slab."""
    if n <= _DENSE:
        return {"ms": 4.0, "alpha": 0.7}
    shrink = math.sqrt(_DENSE / n)
    return {"ms": max(1.5, 4.0 * shrink), "alpha": max(0.2, 0.7 * shrink)}


def _legend_beside(ax: Axes) -> None:
    """The legend to the right of the axes, where it hides no data (a study of thousands of trials
    leaves no corner free)."""
    _opaque_keys(ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small"))


def _opaque_keys(legend) -> None:
    """A legend's keys at full opacity and their usual size: the faint dots of :func:`_dots` would
    make the "observed" key nearly invisible."""
    for handle in legend.legend_handles:
        if isinstance(handle, Line2D) and handle.get_marker() not in (None, "None", "", " "):
            handle.set_alpha(1.0)  # (a band's patch keeps its own light shade)
            handle.set_markersize(max(handle.get_markersize(), 4.0))


def _figure_legend(fig: Figure, axes: Sequence[Axes]) -> None:
    """One legend for a figure of panels, to the right of them: each label once, from whichever
    panel has it (one panel may have failed trials to mark and another not). Centred on the right
    edge rather than at its top, where the suptitle, centred over the whole figure, runs into it
    when the figure is one panel wide."""
    entries: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    if entries:
        legend = fig.legend(entries.values(), entries.keys(), loc="outside right center", fontsize="small")
        _opaque_keys(legend)


def _mark_without_value(ax: Axes, failed_x: Sequence[float], pending_x: Sequence[float]) -> None:
    """Failed trials (red crosses) and pending ones (hollow grey circles) on the x-axis: they have
    no value to place them at, but where they are (which trial, which setting) is worth seeing."""
    for xs, marker, style, label in (
        (failed_x, "x", {"color": _BEST_COLOR}, "failed"),
        (pending_x, "o", {"mec": _DOT_COLOR, "mfc": "none", "mew": 1.2}, "pending"),
    ):
        if len(xs):
            ax.plot(
                np.asarray(xs, dtype=np.float64),
                np.zeros(len(xs)),
                marker,
                ms=6,
                ls="none",
                transform=ax.get_xaxis_transform(),
                clip_on=False,
                zorder=6,
                label=label,
                **style,
            )


class _Figure(Figure):
    """A :class:`~matplotlib.figure.Figure` that a notebook shows inline when a cell ends with it.

    IPython shows a figure as an image only through pyplot's inline backend, which registers its
    formatter when pyplot is set up for the notebook; a figure made without pyplot (as here, so that
    a report never touches the caller's backend) was shown as the text ``<Figure size 700x400 with 1
    Axes>`` and no image. ``_repr_png_`` gives IPython the PNG itself. Nothing registers the figure
    in pyplot, so it is shown once, as the cell's result, and ``fig = opt.plot()`` shows nothing.
    """

    def _repr_png_(self) -> bytes:
        return _figure_png(self)

    def __repr__(self) -> str:  # matplotlib's, with the class users know: <Figure size 700x400 with 1 Axes>
        return super().__repr__().replace(type(self).__name__, Figure.__name__, 1)


def _new_figure(width: float, height: float) -> Figure:
    fig = _Figure(figsize=(width, height), dpi=_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _panel_figure(n: int, ncols: int = 3) -> tuple[Figure, list[Axes]]:
    """A figure with ``n`` small panels, ``ncols`` per row (unused cells hidden)."""
    cols = max(1, min(ncols, n))
    rows = math.ceil(n / cols)
    fig = _new_figure(3.8 * cols, 3.1 * rows + 0.4)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, list(axes[:n])


def _is_log(p: Parameter) -> bool:
    return isinstance(p, (Float, Int)) and bool(p.log)


def _set_bounds_xlim(ax: Axes, p: Parameter) -> None:
    """The x-axis of a ``Float`` or ``Int`` spans its bounds (4% margins, in log space for a log
    parameter): where the trials sit in the space is the point, and a few clustered trials (or one)
    otherwise fill the axis as if they covered it."""
    lo, hi = float(p.low), float(p.high)  # type: ignore[attr-defined]
    if _is_log(p):
        a, b = math.log10(lo), math.log10(hi)
        pad = 0.04 * (b - a) if b > a else 0.5
        ax.set_xlim(10.0 ** (a - pad), 10.0 ** (b + pad))
    else:
        pad = 0.04 * (hi - lo) if hi > lo else 0.5
        ax.set_xlim(lo - pad, hi + pad)


def _short(text: Any, max_chars: int) -> str:
    """A choice's label within ``max_chars``: its head and tail around an ellipsis, since choices
    often differ at the end (``model_variant_07``, ``model_variant_08``), where a cut-off tail would
    make them all read alike."""
    s = str(text)
    if len(s) > max_chars:
        head = (max_chars - 1) // 2
        s = s[:head] + "\u2026" + s[len(s) - (max_chars - 1 - head) :]
    return s.replace("$", r"\$")


def _choice_labels(choices: Sequence[Any], max_chars: int) -> list[str]:
    """The choices' labels within ``max_chars``: :func:`_short`'s head and tail, or, when that makes
    two alike (``model_07_with_a_long_name`` and ``model_08_with_a_long_name`` both read
    ``model_\u2026long_name``), the part where the choices differ, with what precedes it as room
    allows and an ellipsis for the text cut before and after it (``model_07\u2026``)."""
    texts = [str(c) for c in choices]
    labels = [_short(t, max_chars) for t in texts]
    if len(set(labels)) == len(set(texts)):
        return labels
    prefix = len(os.path.commonprefix(texts))
    suffix = len(os.path.commonprefix([t[::-1] for t in texts]))
    out = []
    for t in texts:
        end = max(prefix, len(t) - suffix)  # t[prefix:end] differs (prefix and suffix may overlap)
        room = max_chars - (end < len(t))  # (one character for the ellipsis of the cut tail)
        if end <= room:
            label = t[:end]
        elif end - prefix <= room - 1:  # the differing part, and what precedes it as room allows
            label = "\u2026" + t[end - (room - 1) : end]
        else:  # the differing part alone is too long: its head and tail
            label = "\u2026" + _short(t[prefix:end], room - 1).replace(r"\$", "$")
        out.append((label + ("\u2026" if end < len(t) else "")).replace("$", r"\$"))
    return out


def _choice_step(p: Categorical) -> int:
    """Every how many choices a tick label is written: all of up to :data:`_MAX_CHOICE_LABELS`."""
    return math.ceil(len(p.choices) / _MAX_CHOICE_LABELS)


def _x_label(p: Parameter) -> str:
    """A panel's x-label: the parameter's name, and how its axis reads when that is not plain."""
    if _is_log(p):
        return _label(p.name) + " (log scale)"
    if isinstance(p, Categorical) and _choice_step(p) > 1:
        return _label(p.name) + f" ({len(p.choices)} choices, one in {_choice_step(p)} labelled)"
    return _label(p.name)


#: Up to this ratio high / low, a log axis is labelled in plain numbers at the first of 1, 2 and 5
#: times, 1 and 3 times, or 1 times the powers of ten that gives at most :data:`_MAX_LOG_LABELS`
#: labels; above it, matplotlib's own labels (the powers of ten) are kept.
_PLAIN_LOG_RATIO = 100.0
_MAX_LOG_LABELS = 5


def _log_subs(low: float, high: float) -> tuple[float, ...] | None:
    """The multiples of the powers of ten a short log axis ``[low, high]`` is labelled at: the finest
    of (1, 2, 5), (1, 3), (1) with between 2 and ``_MAX_LOG_LABELS`` ticks inside; None if none has."""
    powers = 10.0 ** np.arange(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
    for subs in ((1.0, 2.0, 5.0), (1.0, 3.0), (1.0,)):
        ticks = np.outer(powers, subs).ravel()
        inside = int(np.sum((ticks >= low * (1 - 1e-9)) & (ticks <= high * (1 + 1e-9))))
        if 2 <= inside <= _MAX_LOG_LABELS:
            return subs
    return None


#: a step parameter with at most this many grid values gets a tick on each
_MAX_GRID_TICKS = 9
#: at most this many ticks on a grid of more values than :data:`_MAX_GRID_TICKS`
_GRID_TICKS_SHOWN = 5


def _set_numeric_x_axis(ax: Axes, p: Parameter) -> None:
    """The x-axis of a ``Float`` or ``Int`` panel: log-scaled for a log parameter, integer ticks for
    an ``Int``, a tick on every grid value of a step parameter with at most :data:`_MAX_GRID_TICKS`
    values. Over less than about two decades matplotlib labels a log axis's minor ticks too, in
    scientific notation: a log ``Int("max_leaf_nodes", 4, 64)`` got the seven labels 4x10^0 ... 6x10^1
    printed over each other. There the ticks are 1, 2 and 5 times the powers of ten (or fewer, so that
    at most five are written: :func:`_log_subs`; evenly spaced ticks where fewer than two of those
    fall inside), labelled as plain numbers (5, 10, 20, 50), and the minor ticks are not labelled."""
    if _is_log(p):
        ax.set_xscale("log")
        low, high = float(p.low), float(p.high)  # type: ignore[attr-defined]
        if high / low <= _PLAIN_LOG_RATIO:
            subs = _log_subs(low, high)
            if subs is not None:
                ax.xaxis.set_major_locator(LogLocator(base=10.0, subs=subs))
            else:
                # a span of less than about a factor 3 (0.5 to 0.9, 3 to 9) holds fewer than two of
                # those multiples, and matplotlib's minor labels (5x10^-1 ... 9x10^-1) overlap: evenly
                # spaced ticks, as on a linear axis, which a log axis this short nearly is
                ax.xaxis.set_major_locator(MaxNLocator(nbins=4, integer=isinstance(p, Int)))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_formatter(NullFormatter())
    elif _has_step(p) and p._size() <= _MAX_GRID_TICKS:
        # a few grid values (a temperature in steps of 5): a tick on each, and nothing between them
        ax.set_xticks(_sweep_values(p))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    elif _has_step(p) and p._size() <= _N_SWEEP:
        # more grid values than fit (not a fine grid, whose round ticks serve): every k-th, on the
        # grid (a user test's stir_rpm in steps of 100 from 100 to 1200 got ticks at 150, 450, 1050,
        # and "1050" ran into "1200")
        values = _sweep_values(p)
        ax.set_xticks(values[:: -(-len(values) // _GRID_TICKS_SHOWN)])
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    elif isinstance(p, Int):
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4, integer=True))


def _has_step(p: Parameter) -> bool:
    """A ``Float`` with ``step`` or an ``Int`` with ``step > 1``."""
    return (isinstance(p, Float) and p.step is not None) or (isinstance(p, Int) and p.step > 1)


def _set_categorical_ticks(ax: Axes, p: Categorical) -> None:
    """One tick per choice, labelled (every :func:`_choice_step`-th of many), upright when they fit
    and turned when they would run into each other."""
    labels = _choice_labels(p.choices, 16)
    shown = list(range(0, len(labels), _choice_step(p)))
    ax.set_xticks(shown)
    width = max(len(labels[i]) for i in shown) * len(shown)
    rotation = 0 if width <= 28 else 30 if len(shown) <= 6 else 90
    ax.set_xticklabels(
        [labels[i] for i in shown], rotation=rotation, ha="right" if rotation == 30 else "center"
    )
    ax.set_xlim(-0.6, len(labels) - 0.4)


# ----------------------------------------------------------------------------------------------
# figures of the observations
# ----------------------------------------------------------------------------------------------


def plot_best_so_far(
    trials: Sequence[Trial], maximize: bool, ax: Axes | None = None, name: str = "objective"
) -> Figure:
    """Best value so far against trial id, with the observed values as dots.

    Parameters
    ----------
    trials : sequence of Trial
        The study's trials (see :func:`best_so_far_series` for which ones count).
    maximize : bool
        Direction of the study.
    ax : matplotlib Axes, optional
        Where to draw; a new figure (Agg canvas, not registered in pyplot) by default.
    name : str
        What the value is, for the axis label and title ("utility" for a multi-task study).

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (``ax.figure`` when ``ax`` is given; ``fig.axes[0]`` the axes). The step
        line carries the label ``"best so far"``; failed trials are red crosses on the x-axis (label
        ``"failed"``), pending ones hollow grey circles (``"pending"``).
    """
    if ax is None:
        ax = _new_figure(7.0, 4.0).subplots()
    series = best_so_far_series(trials, maximize)
    log = False
    if series.values.size:
        dots = _dots(series.values.size)
        ax.plot(series.trial_ids, series.values, "o", color=_DOT_COLOR, label="observed", **dots)
        ax.step(series.trial_ids, series.best, where="post", color=_LINE_COLOR, lw=2, label="best so far")
        log = _maybe_log_y(ax, series.values)
    else:
        ax.text(0.5, 0.5, "no complete trials", ha="center", va="center", transform=ax.transAxes)
    _mark_without_value(ax, series.failed_ids, series.pending_ids)
    ids = np.concatenate([series.trial_ids, series.failed_ids, series.pending_ids])
    if ids.size and np.ptp(ids) < 2:  # one or two trials: room for integer ticks around them
        ax.set_xlim(ids.min() - 1, ids.max() + 1)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("trial id")
    ax.set_ylabel(_objective_label(maximize, name, log))
    ax.set_title(
        f"Best {'value' if name == 'objective' else name} so far ({'maximize' if maximize else 'minimize'})"
    )
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        _legend_beside(ax)
    return ax.figure


def _param_x(p: Parameter, trial: Trial) -> float | None:
    """Where a trial sits on a parameter's axis (a choice's index for a ``Categorical``), or None
    when it lacks the parameter or holds a value the parameter does not accept."""
    try:
        v = p.validate(trial.params[p.name])
    except (KeyError, ValueError):
        return None
    return float(p.index(v)) if isinstance(p, Categorical) else float(v)


def plot_observed(trials: Sequence[Trial], space: Space, maximize: bool, name: str = "objective") -> Figure:
    """One panel per parameter: observed value against the parameter's value.

    Log-scale ``Float``/``Int`` parameters get a log x-axis; a ``Categorical`` is drawn as a
    jittered strip per choice (fixed jitter seed, so the figure is reproducible). The best trial is
    a red star in every panel; failed trials are red crosses and pending ones hollow grey circles on
    the x-axis, at their setting (labels ``"failed"`` and ``"pending"``).

    Parameters
    ----------
    trials : sequence of Trial
        Complete trials with a finite value are plotted, failed and pending ones on the x-axis; a
        trial missing a parameter, or with a value the parameter does not accept, is left out of
        that parameter's panel.
    space : Space
        The study's search space.
    maximize : bool
        Direction of the study (which trial is best).
    name : str
        What the value is, for the axis labels ("utility" for a multi-task study).

    Returns
    -------
    matplotlib.figure.Figure
    """
    scored = _scored(trials)
    best = _best_trial(trials, maximize)
    failed = sorted((t for t in trials if t.is_failed), key=lambda t: t.id)
    pending = sorted((t for t in trials if t.is_pending), key=lambda t: t.id)
    fig, axes = _panel_figure(len(space.params))
    rng = np.random.default_rng(0)
    values = np.array([float(t.value) for t in scored])  # type: ignore[arg-type]
    for ax, p in zip(axes, space.params, strict=True):
        xs, ys, best_x, best_at = [], [], None, None
        for t, y in zip(scored, values, strict=True):
            x = _param_x(p, t)
            if x is None:
                continue
            if best is not None and t.id == best.id:
                best_x, best_at = x, len(xs)
            xs.append(x)
            ys.append(y)
        x_arr, y_arr = np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64)
        failed_x, pending_x = (
            np.array([x for x in (_param_x(p, t) for t in group) if x is not None], dtype=np.float64)
            for group in (failed, pending)
        )
        if isinstance(p, Categorical):
            x_arr = x_arr + rng.uniform(-0.18, 0.18, size=x_arr.size)
            if best_at is not None:  # the star on its own dot (at the choice's centre it was a second mark)
                best_x = float(x_arr[best_at])
            failed_x = failed_x + rng.uniform(-0.18, 0.18, size=failed_x.size)
            pending_x = pending_x + rng.uniform(-0.18, 0.18, size=pending_x.size)
        ax.plot(x_arr, y_arr, "o", color=_DOT_COLOR, label="observed", **_dots(x_arr.size))
        _mark_without_value(ax, failed_x, pending_x)
        if isinstance(p, Categorical):
            _set_categorical_ticks(ax, p)
        else:
            _set_numeric_x_axis(ax, p)
            _set_bounds_xlim(ax, p)
        if best_x is not None:
            ax.plot([best_x], [float(best.value)], "*", ms=13, color=_BEST_COLOR, zorder=5, label="best")  # type: ignore[union-attr, arg-type]
        if not xs:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
        log = _maybe_log_y(ax, y_arr)
        ax.set_xlabel(_x_label(p))
        ax.set_ylabel(_objective_label(maximize, name, log))
        ax.set_title(_label(p.name), fontsize="medium")
        ax.grid(True, alpha=0.3)
    _figure_legend(fig, axes)
    fig.suptitle("Observed values per parameter")
    return fig


# ----------------------------------------------------------------------------------------------
# multi-task studies: each task in its own direction, and the Pareto front
# ----------------------------------------------------------------------------------------------


def _check_tasks(tasks: Mapping[str, str]) -> dict[str, bool]:
    """Task name -> maximise?, from a mapping of task name to "maximize" or "minimize"."""
    if not isinstance(tasks, Mapping) or not tasks:
        raise ValueError(f"tasks must map each task name to 'maximize' or 'minimize', got {tasks!r}")
    bad = {k: v for k, v in tasks.items() if v not in ("maximize", "minimize")}
    if bad:
        raise ValueError(f"task directions must be 'maximize' or 'minimize', got {bad!r}")
    return {str(k): v == "maximize" for k, v in tasks.items()}


def _task_scored(trials: Sequence[Trial], n_tasks: int) -> tuple[list[Trial], np.ndarray]:
    """Complete trials with ``n_tasks`` finite task values, in id order, and those values (N, n)."""
    out = [
        t
        for t in sorted(trials, key=lambda t: t.id)
        if t.state == COMPLETE
        and t.values is not None
        and len(t.values) == n_tasks
        and all(math.isfinite(float(v)) for v in t.values)
    ]
    return out, np.array([[float(v) for v in t.values] for t in out]).reshape(len(out), n_tasks)  # type: ignore[union-attr]


def task_summary(trials: Sequence[Trial], tasks: Mapping[str, str]) -> list[dict[str, Any]]:
    """Per task: its direction, the best observed value in that direction and the trial holding it.

    Parameters
    ----------
    trials : sequence of Trial
        Trials of a multi-task study; complete trials with a finite vector ``Trial.values`` count.
    tasks : Mapping
        Task name to "maximize" or "minimize", in the order of ``Trial.values``.

    Returns
    -------
    list of dict
        ``{"task", "direction", "best", "trial"}`` per task (``best`` and ``trial`` None without data).
    """
    maximize = _check_tasks(tasks)
    scored, Y = _task_scored(trials, len(maximize))
    rows = []
    for i, (name, up) in enumerate(maximize.items()):
        if not scored:
            rows.append({"task": name, "direction": tasks[name], "best": None, "trial": None})
            continue
        k = int(np.argmax(Y[:, i]) if up else np.argmin(Y[:, i]))  # first (lowest id) on ties
        rows.append({"task": name, "direction": tasks[name], "best": float(Y[k, i]), "trial": scored[k].id})
    return rows


def pareto_trials(trials: Sequence[Trial], tasks: Mapping[str, str]) -> list[Trial]:
    """Complete trials whose task values are not Pareto dominated, each task in its own direction.

    The same set as :attr:`warmbo.MultiTaskOptimizer.pareto_front` (both use
    :func:`warmbo.pareto.pareto_mask` on the signed values), in id order.
    """
    maximize = _check_tasks(tasks)
    scored, Y = _task_scored(trials, len(maximize))
    if not scored:
        return []
    signs = np.array([1.0 if up else -1.0 for up in maximize.values()])
    return [t for t, keep in zip(scored, pareto_mask(Y * signs), strict=True) if keep]


def plot_task_values(trials: Sequence[Trial], tasks: Mapping[str, str]) -> Figure:
    """One panel per task: observed values against trial id and the best so far in its direction;
    failed and pending trials are marked on the x-axis as in :func:`plot_best_so_far`.

    Parameters
    ----------
    trials : sequence of Trial
        Trials of a multi-task study (see :func:`task_summary` for which ones count).
    tasks : Mapping
        Task name to "maximize" or "minimize", in the order of ``Trial.values``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    maximize = _check_tasks(tasks)
    scored, Y = _task_scored(trials, len(maximize))
    ids = np.array([t.id for t in scored], dtype=np.int64)
    series = best_so_far_series(trials, maximize=True)  # (for its failed and pending ids)
    fig, axes = _panel_figure(len(maximize))
    for i, (ax, (name, up)) in enumerate(zip(axes, maximize.items(), strict=True)):
        log = False
        if scored:
            best = (np.maximum if up else np.minimum).accumulate(Y[:, i])
            ax.plot(ids, Y[:, i], "o", color=_DOT_COLOR, label="observed", **_dots(ids.size))
            ax.step(ids, best, where="post", color=_LINE_COLOR, lw=2, label="best so far")
            log = _maybe_log_y(ax, Y[:, i])
        else:
            ax.text(0.5, 0.5, "no complete trials", ha="center", va="center", transform=ax.transAxes)
        _mark_without_value(ax, series.failed_ids, series.pending_ids)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("trial id")
        ax.set_ylabel(_objective_label(up, _label(name, max_chars=24), log))
        ax.set_title(f"{_label(name)} ({tasks[name]})", fontsize="medium")
        ax.grid(True, alpha=0.3)
    _figure_legend(fig, axes)
    fig.suptitle("Values per task")
    return fig


def plot_pareto(trials: Sequence[Trial], tasks: Mapping[str, str]) -> Figure:
    """Scatter of the first two tasks' values with the Pareto front (:func:`pareto_trials`) in red.

    The front is non-dominated over *all* tasks, each in its own direction; with more than two tasks
    some of its points may look dominated in this projection. Two tasks also get the front's
    attainment line (a staircase through its points).

    Returns
    -------
    matplotlib.figure.Figure
        The figure (``fig.axes[0]`` the axes); the front is the collection labelled
        ``"Pareto front"``, the others ``"dominated"``.
    """
    maximize = _check_tasks(tasks)
    if len(maximize) < 2:
        raise ValueError(f"a Pareto front needs at least two tasks, got {list(maximize)}")
    scored, Y = _task_scored(trials, len(maximize))
    front = {t.id for t in pareto_trials(trials, tasks)}
    on_front = np.array([t.id in front for t in scored], dtype=bool)
    (x_name, x_up), (y_name, y_up) = list(maximize.items())[:2]
    ax = _new_figure(6.5, 5.0).subplots()
    if scored:
        dots = _dots(int((~on_front).sum()))
        ax.scatter(
            Y[~on_front, 0],
            Y[~on_front, 1],
            s=1.4 * dots["ms"] ** 2,
            color=_DOT_COLOR,
            alpha=dots["alpha"],
            label="dominated",
        )
        ax.scatter(Y[on_front, 0], Y[on_front, 1], s=40, color=_BEST_COLOR, zorder=5, label="Pareto front")
        if len(maximize) == 2:
            P = Y[on_front][np.argsort(Y[on_front, 0] * (-1.0 if x_up else 1.0))]  # best task-1 value first
            ax.step(P[:, 0], P[:, 1], where="post", color=_BEST_COLOR, lw=1, alpha=0.6)
        _legend_beside(ax)
    else:
        ax.text(0.5, 0.5, "no complete trials", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel(_objective_label(x_up, _label(x_name, max_chars=30)))
    ax.set_ylabel(_objective_label(y_up, _label(y_name, max_chars=30)))
    more = f" (front over all {len(maximize)} tasks)" if len(maximize) > 2 else ""
    x_dir, y_dir = ("max" if up else "min" for up in (x_up, y_up))
    ax.set_title(f"Pareto front: {_label(x_name, 20)} ({x_dir}) vs {_label(y_name, 20)} ({y_dir}){more}")
    ax.grid(True, alpha=0.3)
    return ax.figure


# ----------------------------------------------------------------------------------------------
# posterior slices
# ----------------------------------------------------------------------------------------------


class _Slice(NamedTuple):
    param: Parameter
    x: np.ndarray  # user-scale values (choice indices for a Categorical)
    mean: np.ndarray
    std: np.ndarray
    best_x: float


def _encode_points(space: Space, points: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """Encode points parameter by parameter (works for grid spaces off their candidates too). In a
    conditional space a parameter inactive at a point is left out, and one active there but missing
    (a child a slice's parent value switches on) encodes at the middle of its range."""
    if space.is_conditional:
        kept = []
        for pt in points:
            off = space.inactive(pt)  # (once a point, not once a key)
            kept.append({k: v for k, v in pt.items() if k not in off})
        return space._encode_valid(kept)
    U = np.empty((len(points), space.dim), dtype=np.float64)
    for p in space.params:
        U[:, space.slice_of(p.name)] = p.encode([pt[p.name] for pt in points])
    return U


def _check_best_params(space: Space, best_params: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(best_params, Mapping):
        raise TypeError(f"best_params must be a mapping of parameter name to value, got {best_params!r}")
    if space.is_conditional:  # (its active parameters only)
        try:
            return space.validate(best_params)
        except ValueError as exc:
            raise ValueError(f"best_params: {exc}") from None
    missing = [n for n in space.names if n not in best_params]
    if missing:
        raise ValueError(f"best_params is missing parameter(s) {missing!r}")
    return {p.name: p.validate(best_params[p.name]) for p in space.params}


def _sweep_values(p: Parameter) -> list[Any]:
    """Values of one parameter along its slice: every choice, or 100 decoded points in order."""
    if isinstance(p, Categorical):
        return list(p.choices)
    decoded = p.decode(np.linspace(0.0, 1.0, _N_SWEEP)[:, None])
    return list(dict.fromkeys(decoded))  # ints repeat across a bin: keep each value once


def _call_predict(predict: Predict, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean, std = predict(U)
    mean = np.asarray(mean, dtype=np.float64)
    std = np.asarray(std, dtype=np.float64)
    n = U.shape[0]
    if mean.shape != (n,) or std.shape != (n,):
        raise ValueError(
            f"predict must return (mean, std) of shape ({n},) each for {n} points, "
            f"got shapes {mean.shape} and {std.shape}"
        )
    if not np.all(np.isfinite(mean)):
        raise ValueError("predict returned a non-finite posterior mean")
    return mean, np.maximum(np.nan_to_num(std, nan=0.0), 0.0)


def _fixed_choice(p) -> bool:
    """A categorical with one choice: no value to compare."""
    return isinstance(p, Categorical) and len(p.choices) == 1


def _posterior_slices(space: Space, best_params: Mapping[str, Any], predict: Predict) -> list[_Slice]:
    """Slices through the best point along every parameter (of a conditional space: every parameter
    active at the best point), from one batched ``predict`` call."""
    best = _check_best_params(space, best_params)
    # (a one-choice categorical, a list-of-dicts search's estimator, has nothing to sweep: it was
    # drawn as a panel of one point and ranked at 0% in the importance: a user test)
    active = [p for p in space.params if p.name in best]
    swept = [p for p in active if not _fixed_choice(p)] or active
    points: list[dict[str, Any]] = []
    spans: list[tuple[int, int, list[Any]]] = []
    for p in swept:
        values = _sweep_values(p)
        if not isinstance(p, Categorical) and not np.isclose(values, best[p.name], rtol=1e-9, atol=0).any():
            # the best point itself, so that its star is the model's mean there (it was the nearest
            # grid point's, -0.005 where the model said -0.017: a user test)
            values = sorted([*values, best[p.name]])
        spans.append((len(points), len(points) + len(values), values))
        points.extend({**best, p.name: v} for v in values)
    mean, std = _call_predict(predict, _encode_points(space, points))
    out = []
    for p, (start, stop, values) in zip(swept, spans, strict=True):
        if isinstance(p, Categorical):
            x = np.arange(len(values), dtype=np.float64)
            best_x = float(p.index(best[p.name]))
        else:
            x = np.asarray(values, dtype=np.float64)
            best_x = float(best[p.name])
        out.append(_Slice(p, x, mean[start:stop], std[start:stop], best_x))
    return out


def plot_posterior_slices(
    space: Space, best_params: Mapping[str, Any], predict: Predict, maximize: bool
) -> Figure:
    """Posterior mean and mean +/- 2 std along each parameter, the others fixed at the best point.

    A ``Float`` or ``Int`` parameter is swept over 100 points evenly spaced in its encoding, decoded
    (so log parameters are swept log-uniformly and integers land on their bin centres, each integer
    once) and encoded again; a ``Categorical`` is evaluated at each choice and drawn with error bars.

    Parameters
    ----------
    space : Space
        The study's search space.
    best_params : Mapping
        The point the slices go through (usually the best trial's parameters), marked in red.
    predict : callable
        ``predict(U) -> (mean, std)`` for ``U`` of shape ``(n, space.dim)`` in the unit cube, both
        of shape ``(n,)`` on the user's scale and sign.
    maximize : bool
        Direction of the study (used in the axis labels).

    Returns
    -------
    matplotlib.figure.Figure
    """
    slices = _posterior_slices(space, best_params, predict)
    fig, axes = _panel_figure(len(slices))
    for ax, s in zip(axes, slices, strict=True):
        p = s.param
        lo, hi = s.mean - 2.0 * s.std, s.mean + 2.0 * s.std
        at_best = int(np.argmin(np.abs(s.x - s.best_x)))
        if isinstance(p, Categorical):
            ax.errorbar(
                s.x,
                s.mean,
                yerr=2.0 * s.std,
                fmt="o",
                color=_LINE_COLOR,
                capsize=4,
                label="mean \u00b1 2 std",
            )
            _set_categorical_ticks(ax, p)
        else:
            style = "-" if s.x.size > 30 else "-o"
            ax.fill_between(s.x, lo, hi, color=_LINE_COLOR, alpha=0.2, lw=0, label="mean \u00b1 2 std")
            ax.plot(s.x, s.mean, style, ms=3, color=_LINE_COLOR, lw=1.8, label="posterior mean")
            _set_numeric_x_axis(ax, p)
        ax.axvline(s.best_x, color=_BEST_COLOR, lw=1, ls="--", alpha=0.7)
        ax.plot([s.best_x], [s.mean[at_best]], "*", ms=13, color=_BEST_COLOR, zorder=5, label="best point")
        ax.set_xlabel(_x_label(p))
        ax.set_ylabel(_objective_label(maximize))  # (no panel title: it repeated the x-label)
        ax.grid(True, alpha=0.3)
    _figure_legend(fig, axes)
    fig.suptitle("Posterior slices through the best point")
    return fig


def parameter_importance(space: Space, best_params: Mapping[str, Any], predict: Predict) -> dict[str, float]:
    """Cheap sensitivity: range of the posterior mean along each slice through the best point.

    For each parameter, ``max - min`` of the posterior mean along its slice (the sweep of
    :func:`plot_posterior_slices`, every choice for a ``Categorical``), divided by the sum over
    parameters. This is a local, one-at-a-time measure: it ignores interactions and the
    uncertainty of the mean.

    Parameters
    ----------
    space : Space
        The study's search space.
    best_params : Mapping
        The point the slices go through.
    predict : callable
        ``predict(U) -> (mean, std)``, as for :func:`plot_posterior_slices`.

    Returns
    -------
    dict
        Parameter name to importance in ``[0, 1]``, in the order of ``space.names``; the values sum
        to 1 (equal shares when the posterior mean is flat along every slice: every range at most
        64 machine epsilons times the mean's largest magnitude, i.e. round-off, as for a constant
        objective).
    """
    return _importance(space, best_params, predict)[0]


def _importance(
    space: Space, best_params: Mapping[str, Any], predict: Predict
) -> tuple[dict[str, float], bool]:
    """:func:`parameter_importance` and whether the posterior mean is flat along every slice."""
    slices = _posterior_slices(space, best_params, predict)
    ranges = np.array([float(np.ptp(s.mean)) for s in slices])
    scale = max(float(np.max(np.abs(s.mean))) for s in slices)
    # round-off of a flat mean is an ulp or two of its magnitude, not 0 (see _FLAT_ULPS)
    flat = bool(np.all(ranges <= _FLAT_ULPS * np.finfo(np.float64).eps * scale))
    shares = np.full(ranges.size, 1.0 / ranges.size) if flat else ranges / float(ranges.sum())
    return {s.param.name: float(v) for s, v in zip(slices, shares, strict=True)}, flat


def plot_importance(importance: Mapping[str, float], ax: Axes | None = None) -> Figure:
    """Horizontal bar chart of :func:`parameter_importance`, most important on top.

    Parameters
    ----------
    importance : Mapping
        Parameter name to importance.
    ax : matplotlib Axes, optional
        Where to draw; a new figure (Agg canvas) by default.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (``ax.figure`` when ``ax`` is given; ``fig.axes[0]`` the axes). Before,
        the axes, which a notebook cell showed as text.
    """
    items = sorted(importance.items(), key=lambda kv: kv[1])  # barh draws bottom-up
    if ax is None:
        ax = _new_figure(6.5, 1.2 + 0.4 * max(len(items), 1)).subplots()
    names = [_label(k, max_chars=30) for k, _ in items]
    values = [float(v) for _, v in items]
    bars = ax.barh(range(len(items)), values, color=_LINE_COLOR)
    ax.bar_label(bars, labels=[f"{v:.0%}" for v in values], padding=3, fontsize="small")
    ax.set_yticks(range(len(items)))
    ax.set_yticklabels(names)
    ax.set_xlim(0, max([*values, 0.0]) * 1.15 + 1e-12)
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("share of the posterior-mean range along its slice")
    ax.set_title("Parameter importance (local, one at a time)")
    ax.grid(True, axis="x", alpha=0.3)
    return ax.figure


def plot_calibration(audits: Audit | Mapping[str, Audit], ax: Axes | None = None) -> Figure:
    """Observed against nominal coverage of a confidence audit (:mod:`warmbo.audit`).

    The diagonal is perfect calibration; the grey band is the central 95% range of a calibrated
    model's coverage with the audit's number of held-out points, ``Binomial(m, level) / m``, drawn
    over a fine grid of levels. ``audits`` is one :class:`~warmbo.audit.Audit` or a mapping of
    labelled audits (one line each, e.g. per task, drawn with the band of the first). Returns the
    figure drawn on (``ax.figure`` when ``ax`` is given; ``fig.axes[0]`` the axes).
    """
    items = {"observed": audits} if isinstance(audits, Audit) else dict(audits)
    if not items:
        raise ValueError("plot_calibration needs at least one audit")
    if ax is None:
        ax = _new_figure(5.0, 4.2).add_subplot(1, 1, 1)
    first = next(iter(items.values()))
    grid = np.linspace(0.01, 0.995, 200)
    m = max(first.held_out, 1)
    lo = stats.binom.ppf(0.025, m, grid) / m
    hi = stats.binom.ppf(0.975, m, grid) / m
    ax.fill_between(grid, lo, hi, color="#dddddd", step="mid", label=f"95% band, {m} held out")
    ax.plot([0, 1], [0, 1], color="black", lw=1.0, ls="--", label="calibrated")
    for label, audit in items.items():
        levels = list(audit.levels)
        ax.plot(levels, [audit.coverage[v] for v in levels], marker="o", lw=1.5, label=_label(label))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("nominal level of the interval")
    ax.set_ylabel("held-out trials inside")
    ax.set_title("Calibration (leave-one-out)")
    ax.legend(loc="upper left", fontsize="small")
    return ax.figure


# ----------------------------------------------------------------------------------------------
# HTML
# ----------------------------------------------------------------------------------------------


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _weight(value: float | None) -> str:
    """A transfer weight as ``warmbo status`` prints it (two decimals: the report said 0.203125 where
    status said 0.20, a chemist user test)."""
    return "" if value is None else f"{value:.2f}"


def _fmt(value: Any, param: Parameter | None = None) -> str:
    """Compact text for a table cell (not yet escaped); a parameter's value as
    :meth:`~warmbo.parameters.Parameter.text` gives it (the digits that tell its values apart)."""
    if value is None:
        return ""
    if param is not None:
        return param.text(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _iso(timestamp: float | None) -> str:
    if timestamp is None:
        return ""
    try:
        return datetime.fromtimestamp(float(timestamp), tz=timezone.utc).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):
        return str(timestamp)


def _figure_png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI)
    return buf.getvalue()


def _img(png: bytes, alt: str) -> str:
    if not png.startswith(PNG_SIGNATURE):
        raise ValueError(f"{alt!r} is not a PNG image")
    data = base64.b64encode(png).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{_esc(alt)}">'


def _figure_html(png: bytes, alt: str, caption: str) -> str:
    return f"<figure>{_img(png, alt)}<figcaption>{_esc(caption)}</figcaption></figure>"


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_esc(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f"<h1>{_esc(title)}</h1>\n{body}\n</body>\n</html>\n"
    )


def _table(header: Sequence[str], rows: Sequence[tuple[str, Sequence[tuple[str, bool]]]]) -> str:
    """Table of escaped cells; ``rows`` are ``(row_class, [(text, numeric), ...])``."""
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    body = []
    for cls, cells in rows:
        tds = "".join(f'<td class="num">{_esc(c)}</td>' if num else f"<td>{_esc(c)}</td>" for c, num in cells)
        attr = f' class="{_esc(cls)}"' if cls else ""
        body.append(f"<tr{attr}>{tds}</tr>")
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    return f'<div class="scroll">{table}</div>'


def _withdrawn_html(withdrawn: Mapping[int, dict]) -> str:
    """The summary's item on withdrawn trials (:meth:`warmbo.storage.Study.withdraw`): each id with
    what it held, why and by whom."""
    items = []
    for i in sorted(withdrawn):
        r = withdrawn[i] if isinstance(withdrawn[i], Mapping) else {}
        held = r.get("state", "?")
        if r.get("value") is not None:
            try:
                held = f"value {float(r['value']):.6g}"
            except (TypeError, ValueError):
                held = "a value"
        said = why_and_who(r)
        items.append(f"trial {i} (was {held}" + (f"; {said}" if said else "") + ")")
    return (
        f"<li>Withdrawn: {len(withdrawn)}, read by nothing (kept in the study): {_esc(', '.join(items))}</li>"
    )


def _summary_html(
    space: Space,
    trials: Sequence[Trial],
    maximize: bool,
    best: Trial | None,
    tasks: Mapping[str, str] | None,
    withdrawn: Mapping[int, dict] | None = None,
    estimate: tuple[float, float] | None = None,
    top: tuple[Trial, float, float] | None = None,
) -> str:
    counts = Counter(t.state for t in trials)
    states = [s for s in STATES if s in counts] + sorted(s for s in counts if s not in STATES)
    by_state = ", ".join(f"{counts[s]} {_esc(s)}" for s in states) or "none"
    if tasks:
        directions = ", ".join(f"{_esc(name)} <strong>{_esc(d)}</strong>" for name, d in tasks.items())
        heading = [
            f"<li>Tasks: {len(tasks)} ({directions})</li>",
            "<li>Value of a trial: the expected scalarised utility of its task values "
            "(higher is better)</li>",
        ]
    else:
        heading = [f"<li>Direction: <strong>{'maximize' if maximize else 'minimize'}</strong></li>"]
    parts = [
        "<h2>Summary</h2>",
        "<ul>",
        *heading,
        f"<li>Trials: {len(trials)} ({by_state})</li>",
        *([_withdrawn_html(withdrawn)] if withdrawn else []),
        f"<li>Parameters: {len(space.params)} ({', '.join(_esc(n) for n in space.names)})</li>",
    ]
    if best is None:
        parts.append("</ul>")
        parts.append(
            '<p class="note">No complete trials yet: there is no best value, and the figures that '
            "need observed values are not drawn.</p>"
        )
        return "\n".join(parts)
    what = "utility" if tasks else "value"
    parts.append(f"<li>Best {what}: <strong>{_esc(_fmt(float(best.value)))}</strong> (trial {best.id})</li>")  # type: ignore[arg-type]
    if estimate is not None:
        parts.append(
            f"<li>Model's estimate there: {_esc(_fmt(estimate[0]))} (sd {_esc(_fmt(estimate[1]))}): "
            "the model's mean pools every trial, where one measurement may be a lucky draw</li>"
        )
    if top is not None:
        trial, mean, sd = top
        shown = ", ".join(f"{_esc(p.name)}={_esc(_fmt(trial.params.get(p.name), p))}" for p in space.params)
        parts.append(
            f"<li>{'Highest' if maximize else 'Lowest'} estimate among the measured settings: "
            f"{_esc(_fmt(mean))} (sd {_esc(_fmt(sd))}) at trial {trial.id} ({shown})</li>"
        )
    parts.append("</ul>")
    parts.append("<h3>Best parameters</h3>")
    rows = [("", [(p.name, False), (_fmt(best.params.get(p.name), p), False)]) for p in space.params]
    parts.append(_table(["parameter", "value"], rows))
    return "\n".join(parts)


def _trials_html(
    space: Space,
    trials: Sequence[Trial],
    task_names: Sequence[str] = (),
    amendments: Mapping[int, list[dict]] | None = None,
    notes: Mapping[int, str] | None = None,
) -> str:
    names = list(space.names)
    params = dict(zip(names, space.params, strict=True))
    extra = sorted({k for t in trials for k in t.params if k not in space.names}, key=str)
    value = "utility" if task_names else "value"
    amended = {
        t.id: amendment_note(amendments[t.id], task_names) for t in trials if t.id in (amendments or {})
    }
    header = ["id", "state", value, *task_names, *names, *extra, "worker", "created (UTC)", "error"]
    header += ["amended"] if amended else []
    kept = {t.id: notes[t.id] for t in trials if t.id in (notes or {})}
    header += ["note"] if kept else []
    rows = []
    for t in sorted(trials, key=lambda t: t.id):
        cells = [(str(t.id), True), (t.state, False), (_fmt(t.value), True)]
        if task_names:
            values = list(t.values) if t.values is not None else [None] * len(task_names)
            cells += [(_fmt(None if v is None else float(v)), True) for v in values]
        for k in [*names, *extra]:
            v = t.params.get(k)
            cells.append((_fmt(v, params.get(k)), isinstance(v, (int, float)) and not isinstance(v, bool)))
        cells += [(_fmt(t.worker), False), (_iso(t.created), False), (_fmt(t.error), False)]
        cells += [(amended.get(t.id, ""), False)] if amended else []
        cells += [(kept.get(t.id, ""), False)] if kept else []
        rows.append((t.state, cells))
    if not rows:
        return "<h2>Trials</h2>\n<p>No trials.</p>"
    if len(rows) <= _DENSE:
        return "<h2>Trials</h2>\n" + _table(header, rows)
    # thousands of rows would bury the page under numbers: folded, one click away (no script needed)
    return (
        "<h2>Trials</h2>\n<details><summary>Show all "
        f"{len(rows)} trials (id, state, value, parameters, worker, time, error)</summary>\n"
        f"{_table(header, rows)}\n</details>"
    )


def _tasks_html(space: Space, trials: Sequence[Trial], tasks: Mapping[str, str]) -> str:
    """Best value of each task in its direction, and the Pareto front's trials."""
    rows = []
    for row in task_summary(trials, tasks):
        trial = "" if row["trial"] is None else str(row["trial"])
        cells = [(row["task"], False), (row["direction"], False), (_fmt(row["best"]), True), (trial, True)]
        rows.append(("", cells))
    parts = ["<h2>Tasks</h2>", _table(["task", "direction", "best value", "trial"], rows)]
    if len(tasks) < 2:
        return "\n".join(parts)
    front = pareto_trials(trials, tasks)
    parts.append(f"<h3>Pareto front ({len(front)} trials)</h3>")
    parts.append(
        "<p>Trials that no other trial dominates (as good in every task and better in one), each task in its "
        f"own direction ({_esc(', '.join(f'{name}: {d}' for name, d in tasks.items()))}).</p>"
    )
    header = ["id", *tasks, *space.names]
    rows = [
        (
            "",
            [(str(t.id), True)]
            + [(_fmt(float(v)), True) for v in t.values]  # type: ignore[union-attr]
            + [(_fmt(t.params.get(p.name), p), False) for p in space.params],
        )
        for t in front
    ]
    parts.append(_table(header, rows) if rows else "<p>No complete trials yet.</p>")
    return "\n".join(parts)


def _calibration_html(audits: Mapping[str, Audit], png: bytes | None) -> str:
    parts = [
        "<h2>Calibration</h2>",
        "<p>Each complete trial is left out in turn and predicted from the others; a calibrated model's "
        "intervals for an observation (its posterior sd and the noise) hold the left-out value at their "
        "nominal rate. The schedule row is the bound GP-UCB uses (beta_t, latent sd): it is meant to "
        "hold for every point at once, so coverage near 100% is expected there.</p>",
    ]
    if png is not None:
        parts.append(_figure_html(png, "calibration", CALIBRATION_CAPTION))
    for name, audit in audits.items():
        if len(audits) > 1:
            parts.append(f"<h3>{_esc(name)}</h3>")
        parts.append(
            f"<p>{audit.held_out} of {audit.n} trials held out ({_esc(audit.method)}); "
            f"{_esc(audit.summary())}.</p>"
        )
        rows = [("", [(c, i > 0) for i, c in enumerate(row)]) for row in audit_rows(audit)]
        parts.append(_table(list(audit_header(audit)), rows))
        if audit.warnings:
            items = "".join(f"<li>{_esc(w)}</li>" for w in audit.warnings)
            parts.append(f'<div class="note"><ul>{items}</ul></div>')
    return "\n".join(parts)


def _transfer_html(report) -> str:
    """The Transfer section: method, each source's rows and weight (or learned noise), the warm design."""
    parts = [f"<h2>Transfer: {_esc(report.method)}</h2>"]
    rows = [
        ("", [(s.name, False), (str(s.rows), True), (_weight(s.weight), True), (_fmt(s.noise), True)])
        for s in report.sources
    ]
    if report.target_weight is not None:
        rows.append(
            (
                "best",
                [
                    ("this study (target model)", False),
                    (str(report.n_target), True),
                    (_weight(report.target_weight), True),
                    ("", False),
                ],
            )
        )
    parts.append(_table(["source task", "rows", "weight", "learned noise"], rows))
    if report.refuted is not None:
        # (a user test: the section listed the sources with empty weights and "as the study's last ask
        # weighed them" after they had been set aside)
        parts.append(
            f"<p><strong>{_esc(report.refuted[:1].upper() + report.refuted[1:])}.</strong> The model, "
            "its slices and the audit are the plain GP's, fitted to this study's own trials.</p>"
        )
    else:
        parts.append(
            f"<p>As the study's last ask weighed them, on {report.n_target} of this study's complete "
            "trials; a trial told since then counts from the next ask.</p>"
        )
    if report.fell_back:
        parts.append(
            "<p>No source ranks this study's trials better than its own model: the optimizer "
            "runs as the plain GP.</p>"
        )
    if report.warm_design:
        points = "; ".join(", ".join(f"{k}={_fmt(v)}" for k, v in p.items()) for p in report.warm_design)
        parts.append(
            f"<p>Warm design ({len(report.warm_design)} points from the sources): {_esc(points)}</p>"
        )
    return "\n".join(parts)


def write_report(
    out_dir: str | Path,
    space: Space,
    trials: Sequence[Trial],
    *,
    maximize: bool,
    title: str = "warmbo study",
    predict: Predict | None = None,
    extra_html: str = "",
    tasks: Mapping[str, str] | None = None,
    transfer=None,
    audit: Audit | Mapping[str, Audit] | None = None,
    amendments: Mapping[int, list[dict]] | None = None,
    notes: Mapping[int, str] | None = None,
    withdrawn: Mapping[int, dict] | None = None,
) -> Path:
    """Write the figures of a study and a self-contained ``report.html`` into ``out_dir``.

    The page has the title, a summary (trials by state, direction, best value and parameters), the
    figures and a table of every trial (id, state, value, parameters, worker, creation time in ISO
    8601 UTC, error; folded in a ``<details>`` element above 200 trials, so the page opens on the
    figures). Images are embedded as base64 ``data:`` URIs and the CSS is inline, so the
    file can be moved or mailed alone; every user string (title, names, values, workers, errors)
    is HTML-escaped.

    Figures, also written as PNG files: ``best_so_far.png`` and ``observed.png`` when there is at
    least one complete trial; ``slices.png`` and ``importance.png`` when ``predict`` is given too
    (slices through the best trial). A figure that is not drawn has its stale PNG from an earlier
    report in ``out_dir`` removed, so the files always match the page.

    Parameters
    ----------
    out_dir : str or Path
        Output directory, created (with parents) if needed.
    space : Space
        The study's search space.
    trials : sequence of Trial
        All trials of the study, any order, any state.
    maximize : bool
        Direction of the study.
    title : str
        Page title.
    predict : callable, optional
        ``predict(U) -> (mean, std)`` on the user's scale and sign, as for
        :func:`plot_posterior_slices`.
    extra_html : str
        Trusted HTML appended after the figures, inserted as is (not escaped).
    tasks : Mapping, optional
        For a multi-task study: task name to "maximize" or "minimize", in the order of
        ``Trial.values`` (``dict(zip(opt.task_names, opt.directions))``). The page then names the tasks
        and their directions, calls the trial value what it is (the expected scalarised utility,
        maximised), tabulates each task's best value and the Pareto front, adds the task values to the
        trials table, and draws ``tasks.png`` (each task's values and best so far) and, with two or
        more tasks, ``pareto.png`` (first two tasks, front highlighted).
    transfer : TransferReport, optional
        For a study that transfers from earlier ones (:meth:`Optimizer.transfer_report`): a Transfer
        section with each source's rows and weight or learned noise, and the warm design.
    audit : Audit or Mapping[str, Audit], optional
        The study's confidence audit (:meth:`warmbo.Optimizer.audit`; per task for a multi-task
        study): a "Calibration" section with ``calibration.png`` (:func:`plot_calibration`), the
        table of coverage and width by level (and the schedule's row) and the audit's warnings.
    amendments : Mapping[int, list of dict], optional
        :meth:`warmbo.storage.Study.amendments`: the trials table then gets an "amended" column saying
        what each amended trial held before, and why (:func:`warmbo.trial.amendment_note`).
    notes : Mapping[int, str], optional
        :meth:`warmbo.storage.Study.notes`: the trials table then gets a "note" column (``warmbo
        observe --note``, "reported by ...").
    withdrawn : Mapping[int, dict], optional
        :meth:`warmbo.storage.Study.withdrawn`: the summary then lists the trials taken out of the
        study (``warmbo observe --withdraw``), each with why and by whom.

    Returns
    -------
    pathlib.Path
        Path of ``report.html``.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():  # (mkdir said a bare "[Errno 17] File exists")
        raise ValueError(f"{str(out)!r} is a file: give a folder for report.html and the PNGs")
    trials = list(trials)
    best = _best_trial(trials, maximize)
    # every figure and the page are made in memory first and the files written at the end, each
    # through a temporary file: a report stopped while it is made (Ctrl-C, an error) leaves the
    # folder as it was, not new PNGs beside the old page (a user test)
    files: dict[str, bytes | None] = {}  # name -> content, None: remove a stale one

    if tasks is not None:
        tasks = {str(k): v for k, v in tasks.items()}
        _check_tasks(tasks)
    name = "utility" if tasks else "objective"

    figures: dict[str, Figure] = {}
    flat_importance = False
    if best is not None:
        figures["best_so_far.png"] = plot_best_so_far(trials, maximize, name=name)
        figures["observed.png"] = plot_observed(trials, space, maximize, name=name)
        if tasks:
            figures["tasks.png"] = plot_task_values(trials, tasks)
            if len(tasks) >= 2:
                figures["pareto.png"] = plot_pareto(trials, tasks)
        if predict is not None:
            figures["slices.png"] = plot_posterior_slices(space, best.params, predict, maximize)
            importance, flat_importance = _importance(space, best.params, predict)
            figures["importance.png"] = fig = plot_importance(importance)
            if flat_importance:  # the PNG alone must not read as a ranking either
                fig.axes[0].set_xlabel("posterior mean flat along every slice: equal shares")

    estimate = top = None
    if predict is not None and best is not None and not tasks:
        # what `warmbo status` shows beside the best value: under noise the best single measurement
        # is optimistic, and a colleague who gets only the page never saw it (a user test); and, as
        # status does, the measured setting the model ranks first when it is another (a noisy user
        # test: the page's only line rated the best measurement 0.04, another setting 0.19)
        complete = [t for t in trials if t.state == "complete"]
        with contextlib.suppress(ValueError, ArithmeticError):
            mean, std = _call_predict(predict, _encode_points(space, [t.params for t in complete]))
            if np.all(np.isfinite(mean)) and np.all(np.isfinite(std)):
                here = next(i for i, t in enumerate(complete) if t.id == best.id)
                estimate = (float(mean[here]), float(std[here]))
                first = int(np.argmax(mean) if maximize else np.argmin(mean))
                if complete[first].params != best.params:
                    top = (complete[first], float(mean[first]), float(std[first]))
    blocks = [_summary_html(space, trials, maximize, best, tasks, withdrawn, estimate, top)]
    if tasks:
        blocks.append(_tasks_html(space, trials, tasks))
    if transfer is not None:
        blocks.append(_transfer_html(transfer))
    if figures:
        blocks.append("<h2>Figures</h2>")
    for name, caption in REPORT_FIGURES.items():
        if name not in figures:
            files[name] = None
            continue
        png = files[name] = _figure_png(figures[name])
        if transfer is not None and name == "slices.png" and getattr(transfer, "refuted", None) is None:
            caption += " " + TRANSFER_SLICES_NOTE
        if name == "importance.png" and flat_importance:
            caption += " " + FLAT_IMPORTANCE_NOTE
        if name in ("slices.png", "importance.png") and best is not None:
            # a conditional parameter inactive at the best point has no slice: said, since the summary
            # counts it among the parameters (a user test counted 4 and found 3 panels)
            off = [n for n in space.names if n in space.inactive(best.params)]
            if off:
                caption += f" Not shown: {', '.join(off)}, inactive at the best point."
        blocks.append(_figure_html(png, name.removesuffix(".png").replace("_", " "), caption))
    if audit is not None:
        audits = {"observed": audit} if isinstance(audit, Audit) else dict(audit)
        png = files["calibration.png"] = _figure_png(plot_calibration(audits))
        blocks.append(_calibration_html(audits, png))
    else:
        files["calibration.png"] = None
    if extra_html:
        blocks.append(extra_html)
    blocks.append(_trials_html(space, trials, list(tasks or ()), amendments, notes))

    files["report.html"] = _page(title, "\n".join(blocks)).encode("utf-8")  # (last: the page itself)
    _write_all(out, files)
    return out / "report.html"


def _write_all(out: Path, files: Mapping[str, bytes | None]) -> None:
    """Write ``files`` (name -> content; None removes a stale file) into the folder ``out``: every
    content first into a temporary file beside its target, then the renames and removals, which
    take microseconds. A failure or Ctrl-C while writing (a full disk, a slow network folder)
    leaves the folder as it was, and a folder this call created is removed again."""
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    parts = {name: out / f".{name}.part" for name, content in files.items() if content is not None}
    try:
        for name, part in parts.items():
            part.write_bytes(files[name])  # type: ignore[arg-type]
    except BaseException:
        for part in parts.values():
            part.unlink(missing_ok=True)
        if created:
            with contextlib.suppress(OSError):
                out.rmdir()
        raise
    for name, content in files.items():
        if content is None:
            (out / name).unlink(missing_ok=True)
        else:
            os.replace(parts[name], out / name)


def settings_text(settings: dict) -> str:
    """A reproduction's settings as one readable line, ``name = value`` separated by semicolons
    (nested dicts as ``outer.inner``), for the report's Setting section instead of raw JSON."""

    def flat(prefix: str, value) -> list[str]:
        if isinstance(value, dict):
            return [item for k, v in value.items() for item in flat(f"{prefix}{k}.", v)] if value else []
        if isinstance(value, list | tuple):
            value = ", ".join(map(readable, value)) if value else "none"
        return [f"{prefix[:-1]} = {readable(value)}"]

    def readable(value) -> str:  # (a float as people write it: 0.15, not 0.1499999999999999)
        return repr(float(f"{value:.12g}")) if isinstance(value, float) else str(value)

    return "; ".join(flat("", settings))


def write_experiment_report(
    out_dir: str | Path,
    title: str,
    sections: Sequence[tuple[str, str, Sequence[str | Path]]],
    *,
    filename: str = "report.html",
) -> Path:
    """Write a self-contained HTML page of headed sections with text and embedded PNG images.

    Parameters
    ----------
    out_dir : str or Path
        Output directory, created (with parents) if needed.
    title : str
        Page title.
    sections : sequence of (heading, text, pngs)
        ``text`` is plain text (escaped; blank lines separate paragraphs); each PNG is a path or a
        ``(path, caption)`` pair, read and embedded as a base64 ``data:`` URI under its caption (what
        the figure plots) and its file name.
    filename : str
        Name of the page inside ``out_dir``.

    Returns
    -------
    pathlib.Path
        Path of the page.

    Raises
    ------
    ValueError
        If a file is not a PNG image.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    blocks = []
    for heading, text, pngs in sections:
        blocks.append(f"<h2>{_esc(heading)}</h2>")
        for para in str(text).split("\n\n"):
            if para.strip():
                blocks.append(f"<p>{_esc(para.strip())}</p>")
        for png in pngs:
            png_path, caption = png if isinstance(png, tuple) else (png, "")
            png_path = Path(png_path)
            data = png_path.read_bytes()
            if not data.startswith(PNG_SIGNATURE):
                raise ValueError(f"{str(png_path)!r} is not a PNG image (wrong file signature)")
            label = f"{caption.strip()} ({png_path.name})" if caption.strip() else png_path.name
            blocks.append(_figure_html(data, png_path.stem, label))
    page = out / filename
    page.write_text(_page(title, "\n".join(blocks)), encoding="utf-8")
    return page
