"""Study reports: valid self-contained HTML, escaped user strings, valid PNGs, honest series."""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

import warmbo as wb
from warmbo import GP, Categorical, Float, Int, Space
from warmbo.kernels import RBF
from warmbo.report import (
    PNG_SIGNATURE,
    _fmt,
    best_so_far_series,
    parameter_importance,
    pareto_trials,
    plot_best_so_far,
    plot_importance,
    plot_observed,
    plot_pareto,
    plot_posterior_slices,
    plot_task_values,
    settings_text,
    task_summary,
    write_experiment_report,
    write_report,
)
from warmbo.trial import COMPLETE, FAILED, PENDING, Trial

EVIL_NAME = "<script>alert(1)</script>"
EVIL_CHOICE = "<b onmouseover=x>$\\frac$</b>"  # markup for HTML, broken mathtext for matplotlib
T0 = 1_700_000_000.0

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class TagBalance(HTMLParser):
    """Tracks open/close tags of non-void elements and collects ``<img>`` and link attributes."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.imgs: list[dict[str, str]] = []
        self.hrefs: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img":
            self.imgs.append(attrs)
        if "href" in attrs:
            self.hrefs.append(attrs["href"])
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in VOID:
            self.errors.append(f"end tag for void element {tag}")
        elif not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}>, open: {self.stack}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def check_html(text: str) -> TagBalance:
    parser = TagBalance()
    parser.feed(text)
    parser.close()
    assert parser.errors == []
    assert parser.stack == []
    for img in parser.imgs:
        src = img["src"]
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1], validate=True).startswith(PNG_SIGNATURE)
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:|//)""", text, re.IGNORECASE)
    assert parser.hrefs == []
    return parser


def mixed_space() -> Space:
    return Space(
        (
            Float("lr", 1e-4, 1e-1, log=True),
            Int("layers", 1, 8),
            Categorical("opt", ("adam", "sgd", EVIL_CHOICE)),
            Float(EVIL_NAME, 0.0, 1.0),
        )
    )


def objective(p: dict) -> float:
    return (
        -((np.log10(p["lr"]) + 2.5) ** 2) - 0.1 * (p["layers"] - 4) ** 2 + (p["opt"] == "adam") + p[EVIL_NAME]
    )


def make_trials(
    space: Space, n: int = 16, seed: int = 0, n_failed: int = 3, n_pending: int = 1
) -> list[Trial]:
    points = space.sample(n + n_failed + n_pending, seed=seed)
    states = [COMPLETE] * n + [FAILED] * n_failed + [PENDING] * n_pending
    order = np.random.default_rng(seed).permutation(len(points))
    trials = []
    for i, (k, state) in enumerate(zip(order, states, strict=True)):
        p = points[k]
        trials.append(
            Trial(
                id=i,
                params=p,
                state=state,
                value=objective(p) if state == COMPLETE else None,
                created=T0 + 60.0 * i,
                completed=T0 + 60.0 * i + 30.0 if state != PENDING else None,
                worker="<host>:1" if i % 2 else "prior",
                error="boom <i>" if state == FAILED else None,
            )
        )
    return trials


def fitted_predict(space: Space, trials: list[Trial]):
    done = [t for t in trials if t.state == COMPLETE]
    U = space.encode([t.params for t in done])
    y = np.array([t.value for t in done])
    gp = GP(RBF(0.5), noise=1e-3, normalize_y=True).fit(U, y)
    return gp.predict


# ----------------------------------------------------------------------------------------------
# best so far
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("maximize", [True, False])
def test_best_so_far_is_monotone_and_is_the_running_extreme(maximize):
    rng = np.random.default_rng(1)
    values = rng.standard_normal(25)
    states = [FAILED if i % 7 == 3 else COMPLETE for i in range(25)]
    trials = [
        Trial(id=i, params={}, state=s, value=float(v) if s == COMPLETE else None)
        for i, (v, s) in enumerate(zip(values, states, strict=True))
    ]
    series = best_so_far_series(list(reversed(trials)), maximize)  # order of the input is irrelevant
    ok = np.array([s == COMPLETE for s in states])
    np.testing.assert_array_equal(series.trial_ids, np.flatnonzero(ok))
    np.testing.assert_array_equal(series.values, values[ok])
    np.testing.assert_array_equal(series.failed_ids, np.flatnonzero(~ok))
    steps = np.diff(series.best)
    assert np.all(steps >= 0) if maximize else np.all(steps <= 0)
    extreme = np.maximum if maximize else np.minimum
    expected = [extreme.reduce(values[ok][: i + 1]) for i in range(ok.sum())]
    np.testing.assert_array_equal(series.best, expected)

    ax = plot_best_so_far(trials, maximize).axes[0]
    (line,) = [ln for ln in ax.lines if ln.get_label() == "best so far"]
    np.testing.assert_array_equal(line.get_ydata(), series.best)
    (failed,) = [ln for ln in ax.lines if ln.get_label() == "failed"]
    np.testing.assert_array_equal(failed.get_xdata(), series.failed_ids)


def test_failed_and_pending_trials_are_marked_where_they_are_in_both_plots():
    # a lab study: trials 4 and 9 failed, 13-15 asked and not yet measured; the plots must show them
    space = Space((Float("temp_C", 60.0, 100.0), Categorical("catalyst", ("Pd", "Pt", "Ni"))))
    states = {4: FAILED, 9: FAILED, 13: PENDING, 14: PENDING, 15: PENDING}
    trials = [
        Trial(
            i,
            {"temp_C": 60.0 + 2.5 * i, "catalyst": ("Pd", "Pt", "Ni")[i % 3]},
            states.get(i, COMPLETE),
            float(i) if i not in states else None,
        )
        for i in range(1, 16)
    ]
    series = best_so_far_series(trials, maximize=True)
    assert list(series.pending_ids) == [13, 14, 15] and list(series.failed_ids) == [4, 9]

    ax = plot_best_so_far(trials, maximize=True).axes[0]
    marks = {ln.get_label(): ln for ln in ax.lines}
    assert list(marks["pending"].get_xdata()) == [13, 14, 15]
    assert list(marks["failed"].get_xdata()) == [4, 9]
    assert ax.get_xlim()[1] >= 15  # the pending trials are inside the plot, not cut off
    assert "pending" in ax.get_legend_handles_labels()[1]

    fig = plot_observed(trials, space, maximize=True)
    temp, catalyst = (a for a in fig.axes if a.get_visible())
    marks = {ln.get_label(): ln for ln in temp.lines}
    np.testing.assert_allclose(marks["failed"].get_xdata(), [70.0, 82.5])
    np.testing.assert_allclose(marks["pending"].get_xdata(), [92.5, 95.0, 97.5])
    marks = {ln.get_label(): ln for ln in catalyst.lines}  # jittered around each choice's index
    np.testing.assert_allclose(marks["pending"].get_xdata(), [1, 2, 0], atol=0.2)
    np.testing.assert_allclose(marks["failed"].get_xdata(), [1, 0], atol=0.2)


def test_a_study_of_two_thousand_trials_stays_readable():
    # 2100 random trials of a 6-d study: the dots must thin out so the best-so-far line and the best
    # point read above them, and no legend may sit on the data
    space = Space(tuple(Float(f"x{i}", 0.0, 1.0) for i in range(6)))
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(2100, 6))
    trials = [
        Trial(i, {f"x{j}": float(x[j]) for j in range(6)}, COMPLETE, float(np.sum((x - 0.3) ** 2)))
        for i, x in enumerate(X)
    ]

    def overlaps(a, b) -> bool:
        return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1

    ax = plot_best_so_far(trials, maximize=False).axes[0]
    fig = ax.figure
    fig.canvas.draw()
    (dots,) = [ln for ln in ax.lines if ln.get_label() == "observed"]
    assert dots.get_markersize() <= 2.0 and dots.get_alpha() <= 0.3
    legend = ax.get_legend().get_window_extent()
    assert not overlaps(legend, ax.get_window_extent())

    fig = plot_observed(trials, space, maximize=False)
    fig.canvas.draw()
    panels = [a for a in fig.axes if a.get_visible()]
    assert all(a.get_legend() is None for a in panels)
    (legend,) = fig.legends
    assert {t.get_text() for t in legend.get_texts()} == {"observed", "best"}
    box = legend.get_window_extent()
    assert not any(overlaps(box, a.get_window_extent()) for a in panels)
    for a in panels:
        (dots,) = [ln for ln in a.lines if ln.get_label() == "observed"]
        assert dots.get_markersize() <= 2.0 and dots.get_alpha() <= 0.3


def test_a_single_trial_gets_integer_trial_ids_and_axes_spanning_the_bounds():
    space = Space((Float("x", 0.0, 1.0), Float("lr", 1e-6, 1e-1, log=True), Int("n", 1, 8)))
    trials = [Trial(1, {"x": 0.85, "lr": 1e-3, "n": 5}, COMPLETE, 0.85)]
    ax = plot_best_so_far(trials, maximize=False).axes[0]
    lo, hi = ax.get_xlim()
    ticks = [t for t in ax.get_xticks() if lo <= t <= hi]
    assert ticks and all(float(t).is_integer() for t in ticks)  # not 0.945, 0.960, ... around trial 1
    assert lo < 1 < hi

    fig = plot_observed(trials, space, maximize=False)
    x, lr, n = (a for a in fig.axes if a.get_visible())
    assert x.get_xlim()[0] <= 0.0 and x.get_xlim()[1] >= 1.0  # where the trial sits in the space
    assert lr.get_xlim()[0] <= 1e-6 and lr.get_xlim()[1] >= 1e-1
    assert n.get_xlim()[0] <= 1 and n.get_xlim()[1] >= 8


def test_values_spanning_decades_get_a_log_axis_that_says_so_and_tasks_mark_failed_trials():
    space = Space((Float("C", 1e-6, 1e6, log=True),))
    trials = [Trial(i, {"C": 10.0 ** (i - 6)}, COMPLETE, 10.0 ** (4 - i / 2)) for i in range(12)]
    ax = plot_best_so_far(trials, maximize=False).axes[0]
    assert ax.get_yscale() == "log" and ax.get_ylabel() == "objective (lower is better, log scale)"
    (panel,) = [a for a in plot_observed(trials, space, maximize=False).axes if a.get_visible()]
    assert panel.get_yscale() == "log" and panel.get_ylabel().endswith("log scale)")
    assert panel.get_xlabel() == "C (log scale)"
    flat = [Trial(i, {"C": 1.0}, COMPLETE, 1.0 + i) for i in range(5)]
    assert plot_best_so_far(flat, maximize=False).axes[0].get_ylabel() == "objective (lower is better)"

    tasks = {"acc": "maximize", "cost": "minimize"}
    mt = [Trial(i, {"C": 1.0}, COMPLETE, 0.0, values=(float(i), 10.0 - i)) for i in range(4)]
    mt += [Trial(4, {"C": 1.0}, FAILED), Trial(5, {"C": 1.0}, PENDING)]
    for panel in [a for a in plot_task_values(mt, tasks).axes if a.get_visible()]:
        marks = {ln.get_label(): list(ln.get_xdata()) for ln in panel.lines}
        assert marks["failed"] == [4] and marks["pending"] == [5]


def test_many_categorical_choices_with_a_common_prefix_stay_readable_and_distinct():
    choices = tuple(f"model_variant_{i:02d}_long" for i in range(30))
    space = Space((Categorical("arch", choices), Categorical("opt", ("adam", "sgd"))))
    rng = np.random.default_rng(0)
    trials = [
        Trial(i, {"arch": choices[rng.integers(30)], "opt": "adam"}, COMPLETE, float(rng.normal()))
        for i in range(60)
    ]
    fig = plot_observed(trials, space, maximize=False)
    fig.canvas.draw()
    arch, opt = (a for a in fig.axes if a.get_visible())
    labels = [t.get_text() for t in arch.get_xticklabels()]
    assert len(labels) == 15 and len(set(labels)) == 15  # one in two, each telling its choice apart
    assert labels[1] == "model_v\u2026_02_long" and list(arch.get_xticks()) == list(range(0, 30, 2))
    assert arch.get_xlabel() == "arch (30 choices, one in 2 labelled)"
    boxes = [t.get_window_extent() for t in arch.get_xticklabels()]
    assert all(a.x1 <= b.x0 for a, b in zip(boxes, boxes[1:], strict=False))  # no label on another
    assert [t.get_text() for t in opt.get_xticklabels()] == ["adam", "sgd"] and opt.get_xlabel() == "opt"


def test_categorical_choices_that_differ_in_the_middle_get_distinct_labels():
    # head and tail of "model_variant_07_with_a_long_name" read "model_v…ong_name" for all 40
    # choices: the axis could not tell one from another
    choices = tuple(f"model_variant_{i:02d}_with_a_long_name" for i in range(40))
    space = Space((Categorical("arch", choices),))
    trials = [Trial(i, {"arch": choices[i]}, COMPLETE, float(i)) for i in range(40)]
    for fig in (
        plot_observed(trials, space, maximize=False),
        plot_posterior_slices(space, trials[0].params, lambda U: (U[:, 0], U[:, 0] * 0 + 0.1), False),
    ):
        (arch,) = [a for a in fig.axes if a.get_visible()]
        labels = [t.get_text() for t in arch.get_xticklabels()]
        assert len(set(labels)) == len(labels) == 14, labels
        assert labels[1] == "…del_variant_03…" and all(len(s) <= 16 for s in labels)


def test_the_legend_beside_a_single_panel_leaves_the_figure_title_clear():
    # one parameter: a figure one panel wide, whose title ran under the legend at its top right
    space = Space((Float("x", 0.0, 1.0),))
    trials = [Trial(i, {"x": i / 9}, COMPLETE, float(i)) for i in range(10)] + [Trial(10, {"x": 0.5}, FAILED)]
    for fig in (
        plot_observed(trials, space, maximize=True),
        plot_posterior_slices(space, trials[9].params, lambda U: (U[:, 0], U[:, 0] * 0 + 0.1), True),
    ):
        fig.canvas.draw()
        (legend,) = fig.legends
        assert not legend.get_window_extent().overlaps(fig._suptitle.get_window_extent())


def test_the_slices_legend_sits_beside_the_panels_with_the_band_in_its_own_shade():
    space = mixed_space()
    trials = make_trials(space)
    best = max((t for t in trials if t.state == COMPLETE), key=lambda t: t.value)
    fig = plot_posterior_slices(space, best.params, fitted_predict(space, trials), maximize=True)
    fig.canvas.draw()
    panels = [a for a in fig.axes if a.get_visible()]
    assert all(a.get_legend() is None for a in panels)  # the first panel's legend hid its band
    # each panel names its parameter once, on its x-axis (a title repeated it above the panel)
    assert [a.get_title() for a in panels] == [""] * len(panels)
    assert all(a.get_xlabel().startswith(name) for a, name in zip(panels, space.names, strict=False))
    (legend,) = fig.legends
    keys = dict(zip([t.get_text() for t in legend.get_texts()], legend.legend_handles, strict=True))
    assert set(keys) == {"mean \u00b1 2 std", "posterior mean", "best point"}
    assert keys["mean \u00b1 2 std"].get_facecolor()[3] == pytest.approx(0.2)  # light, as drawn
    box = legend.get_window_extent()
    assert not any(
        box.x0 < a.get_window_extent().x1 and a.get_window_extent().x0 < box.x1
        and box.y0 < a.get_window_extent().y1 and a.get_window_extent().y0 < box.y1
        for a in panels
    )  # fmt: skip


def test_best_so_far_ignores_pending_and_non_finite_values():
    trials = [
        Trial(0, {}, COMPLETE, 1.0),
        Trial(1, {}, PENDING),
        Trial(2, {}, COMPLETE, float("nan")),
        Trial(3, {}, COMPLETE, 3.0),
    ]
    series = best_so_far_series(trials, maximize=False)
    np.testing.assert_array_equal(series.trial_ids, [0, 3])
    np.testing.assert_array_equal(series.best, [1.0, 1.0])
    empty = best_so_far_series([Trial(0, {}, FAILED)], maximize=True)
    assert empty.best.size == 0 and list(empty.failed_ids) == [0]


# ----------------------------------------------------------------------------------------------
# importance and slices
# ----------------------------------------------------------------------------------------------


def test_importance_ranks_the_parameter_the_objective_depends_on():
    space = Space((Float("ignored", 0.0, 1.0), Float("used", 1e-3, 1.0, log=True), Int("k", 0, 4)))
    points = space.sample(32, seed=3)
    U = space.encode(points)
    y = np.array([-((np.log10(p["used"]) + 1.5) ** 2) for p in points])  # depends on "used" only
    gp = GP(RBF([0.3, 0.3, 0.3]), noise=1e-4, optimizer="ml2", n_restarts=0, normalize_y=True, seed=0)
    gp.fit(U, y)
    best = points[int(np.argmax(y))]
    importance = parameter_importance(space, best, gp.predict)
    assert list(importance) == ["ignored", "used", "k"]
    assert sum(importance.values()) == pytest.approx(1.0)
    assert all(v >= 0 for v in importance.values())
    assert importance["used"] > 0.9
    assert importance["used"] > 20 * max(importance["ignored"], importance["k"])

    ax = plot_importance(importance).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()][-1] == "used"  # most important on top


def test_importance_of_a_flat_posterior_is_equal_shares():
    space = Space((Float("a", 0.0, 1.0), Categorical("c", ("x", "y"))))

    def flat(U):
        return np.full(len(U), 2.0), np.ones(len(U))

    importance = parameter_importance(space, {"a": 0.5, "c": "x"}, flat)
    assert importance == pytest.approx({"a": 0.5, "c": 0.5})


@pytest.mark.parametrize("level", [1.0, -3e4, 1e6, 1e-6])
def test_importance_of_a_posterior_flat_up_to_round_off_is_equal_shares(level):
    """A flat posterior mean comes back as its level give or take an ulp or two, not exactly: the
    check was ``total > 0``, which ranked round-off (57 % / 43 % for a constant objective)."""
    space = Space((Float("a", 0.0, 1.0), Float("b", 1e-6, 1e3, log=True), Categorical("c", ("x", "y"))))
    ulp = np.spacing(abs(level))

    def wobbly(U):  # ranges of 2, 1 and 3 ulps of the level along a, b and c (one-hot in U[:, 2:])
        return level + ulp * ((U[:, :2] > 0.5) @ [2.0, 1.0] + 3.0 * U[:, 3]), np.ones(len(U))

    importance = parameter_importance(space, {"a": 0.5, "b": 1.0, "c": "x"}, wobbly)
    assert importance == pytest.approx({"a": 1 / 3, "b": 1 / 3, "c": 1 / 3})


def test_importance_of_a_constant_objective_is_equal_shares_and_the_report_says_flat(tmp_path):
    opt = wb.Optimizer(wb.Space([wb.Float("x", 0, 1), wb.Float("y", 1e-6, 1e3, log=True)]), seed=0)
    for _ in range(12):
        opt.tell(opt.ask(), 1.0)
    model = opt.fit_model()
    best = opt.best.params
    assert parameter_importance(opt.space, best, opt._report_predictor(model)) == {"x": 0.5, "y": 0.5}

    page = opt.report(tmp_path / "r").read_text(encoding="utf-8")
    assert "posterior mean is flat along every slice" in page
    assert (tmp_path / "r" / "importance.png").exists()


def test_importance_of_a_small_real_effect_is_its_share_of_the_ranges():
    """Not flat: the shares are the ranges over their sum, as before, even when the effect is a
    relative 1e-12 of a large mean (thousands of ulps, far above round-off)."""
    space = Space((Float("a", 0.0, 1.0), Float("b", 0.0, 1.0), Int("k", 0, 4)))

    def tilted(U):
        return 1e6 + 1e-6 * (3.0 * U[:, 0] + 1.0 * U[:, 1]), np.ones(len(U))

    importance = parameter_importance(space, {"a": 0.5, "b": 0.5, "k": 2}, tilted)
    ranges = {"a": 3e-6, "b": 1e-6, "k": 0.0}
    expected = {name: r / sum(ranges.values()) for name, r in ranges.items()}
    assert importance == pytest.approx(expected, rel=1e-6, abs=1e-12)


def test_slices_sweep_decoded_values_and_hold_the_rest_at_the_best_point():
    space = Space((Float("lr", 1e-4, 1e-1, log=True), Int("n", 1, 5), Categorical("c", ("a", "b", "c"))))
    best = {"lr": 1e-2, "n": 3, "c": "b"}
    seen = []

    def predict(U):
        seen.append(np.array(U))
        return U.sum(axis=1), np.full(len(U), 0.1)

    fig = plot_posterior_slices(space, best, predict, maximize=True)
    (U,) = seen
    assert U.shape == (100 + 5 + 3, space.dim)  # (1e-2 is a point of the sweep: not added again)
    np.testing.assert_allclose(U, space.snap(U))  # every swept point is a valid encoding
    decoded = space.decode(U)
    lrs = [p["lr"] for p in decoded[:100]]
    assert lrs[0] == pytest.approx(1e-4) and lrs[-1] == pytest.approx(1e-1) and lrs == sorted(lrs)
    assert sum(1 for v in lrs if v == pytest.approx(1e-2, rel=1e-12)) == 1
    assert np.allclose(np.diff(np.log(lrs)), np.log(1e3) / 99)  # log-uniform sweep
    assert [p["n"] for p in decoded[100:105]] == [1, 2, 3, 4, 5]  # each integer once
    assert [p["c"] for p in decoded[105:]] == ["a", "b", "c"]
    assert all(p["n"] == 3 and p["c"] == "b" for p in decoded[:100])
    assert fig.axes[0].get_xscale() == "log" and fig.axes[1].get_xscale() == "linear"

    with pytest.raises(ValueError, match="shape"):
        plot_posterior_slices(space, best, lambda U: (np.zeros(2), np.zeros(2)), maximize=True)
    with pytest.raises(ValueError, match="missing"):
        parameter_importance(space, {"lr": 1e-2}, predict)


def test_observed_panels_use_log_axes_and_highlight_the_best():
    space = mixed_space()
    trials = make_trials(space)
    fig = plot_observed(trials, space, maximize=True)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 4
    assert axes[0].get_xscale() == "log" and axes[1].get_xscale() == "linear"
    best = max((t for t in trials if t.state == COMPLETE), key=lambda t: t.value)
    (star,) = [ln for ln in axes[0].lines if ln.get_label() == "best"]
    assert star.get_xdata()[0] == pytest.approx(best.params["lr"])
    assert star.get_ydata()[0] == pytest.approx(best.value)


# ----------------------------------------------------------------------------------------------
# HTML reports
# ----------------------------------------------------------------------------------------------


def test_write_report_is_self_contained_valid_and_escaped(tmp_path):
    space = mixed_space()
    trials = make_trials(space)
    path = write_report(
        tmp_path / "out",
        space,
        trials,
        maximize=True,
        title="study <&>",
        predict=fitted_predict(space, trials),
    )
    assert path == tmp_path / "out" / "report.html"
    text = path.read_text(encoding="utf-8")
    parser = check_html(text)

    pngs = ["best_so_far.png", "observed.png", "slices.png", "importance.png"]
    for name in pngs:
        assert (tmp_path / "out" / name).read_bytes().startswith(PNG_SIGNATURE)
    assert len(parser.imgs) == len(pngs)
    embedded = {base64.b64decode(img["src"].split(",", 1)[1]) for img in parser.imgs}
    assert embedded == {(tmp_path / "out" / name).read_bytes() for name in pngs}

    for raw in (EVIL_NAME, EVIL_CHOICE, "<host>", "boom <i>", "study <&>"):
        assert raw not in text
    assert "<script" not in text.lower()
    visible = "".join(parser.text)
    assert EVIL_NAME in visible and "study <&>" in visible  # escaped, not dropped

    best = max((t for t in trials if t.state == COMPLETE), key=lambda t: t.value)
    assert f"{best.value:.6g}" in visible
    assert "16 complete" in visible and "3 failed" in visible and "1 pending" in visible
    assert "maximize" in visible
    assert "2023-11-14T22:13:20+00:00" in visible  # created of trial 0, ISO 8601 UTC
    assert text.count("<tr") == 1 + len(trials) + 1 + len(space.params)  # trials + best-params tables


def test_the_trials_table_of_a_large_study_is_folded_below_the_figures(tmp_path):
    space = Space((Float("x", 0.0, 1.0),))
    xs = np.random.default_rng(0).uniform(size=250)
    trials = [Trial(i, {"x": float(x)}, COMPLETE, float(x)) for i, x in enumerate(xs)]
    text = write_report(tmp_path / "big", space, trials, maximize=False).read_text(encoding="utf-8")
    check_html(text)
    trials_section = text[text.index("<h2>Trials</h2>") :]
    assert trials_section.startswith("<h2>Trials</h2>\n<details><summary>Show all 250 trials")
    folded = trials_section[trials_section.index("<details>") : trials_section.index("</details>")]
    assert folded.count("<tr") == 1 + 250  # every trial is still there, one click away

    small = write_report(tmp_path / "small", space, trials[:20], maximize=False).read_text(encoding="utf-8")
    assert "<details>" not in small and small.count("<tr") == 1 + 20 + 1 + 1


@pytest.mark.parametrize("case", ["no trials", "only failed", "failed and pending"])
def test_write_report_without_complete_trials(tmp_path, case):
    space = mixed_space()
    trials = {
        "no trials": [],
        "only failed": make_trials(space, n=0, n_failed=4, n_pending=0),
        "failed and pending": make_trials(space, n=0, n_failed=2, n_pending=2),
    }[case]
    (tmp_path / "slices.png").write_bytes(b"stale")  # from an earlier report: must not linger

    def never(U):
        raise AssertionError("predict must not be called without a best point")

    path = write_report(tmp_path, space, trials, maximize=False, predict=never)
    text = path.read_text(encoding="utf-8")
    parser = check_html(text)
    assert "no complete trials" in "".join(parser.text).lower()
    assert parser.imgs == []
    assert list(tmp_path.glob("*.png")) == []
    assert text.count("<tr") == (1 + len(trials) if trials else 0)


def test_write_report_without_predict_skips_model_figures(tmp_path):
    space = Space((Int("n", 1, 100, log=True),))
    trials = [Trial(i, {"n": n}, COMPLETE, float(n) ** 2) for i, n in enumerate([1, 3, 10, 40, 100])]
    path = write_report(tmp_path, space, trials, maximize=False)
    parser = check_html(path.read_text(encoding="utf-8"))
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["best_so_far.png", "observed.png"]
    assert len(parser.imgs) == 2


def test_write_experiment_report_embeds_images_and_escapes_text(tmp_path):
    ax = plot_best_so_far([Trial(0, {}, COMPLETE, 1.0), Trial(1, {}, COMPLETE, 0.5)], maximize=False).axes[0]
    png = tmp_path / "curve.png"
    ax.figure.savefig(png)
    path = write_experiment_report(
        tmp_path / "exp",
        "Experiment <1>",
        [("Regret <b>", "first para\n\nsecond & last", [png]), ("Notes", "", [])],
    )
    text = path.read_text(encoding="utf-8")
    parser = check_html(text)
    assert len(parser.imgs) == 1
    assert base64.b64decode(parser.imgs[0]["src"].split(",", 1)[1]) == png.read_bytes()
    assert "<b>" not in text and "Experiment <1>" not in text
    assert text.count("<p>") == 2 and "second &amp; last" in text

    bad = tmp_path / "bad.png"
    bad.write_bytes(b"GIF89a")
    with pytest.raises(ValueError, match="not a PNG"):
        write_experiment_report(tmp_path, "x", [("h", "t", [bad])])


def test_experiment_report_figures_say_what_they_plot(tmp_path):
    """Before: every figure was captioned with its file name only ('regret.png')."""
    ax = plot_best_so_far([Trial(0, {}, COMPLETE, 1.0), Trial(1, {}, COMPLETE, 0.5)], maximize=False).axes[0]
    png = tmp_path / "regret.png"
    ax.figure.savefig(png)
    caption = "Simple regret r_t, mean over 5 runs, band +/- 1 sd"
    text = write_experiment_report(tmp_path / "exp", "x", [("h", "t", [(png, caption), png])]).read_text()
    assert f"<figcaption>{caption} (regret.png)</figcaption>" in text
    assert "<figcaption>regret.png</figcaption>" in text  # a bare path keeps its file name


def test_settings_text_is_readable():
    settings = {"quick": False, "runs": 3, "setup": {"p": 20, "B": 10.0}, "parts": ["a", "b"], "notes": []}
    assert (
        settings_text(settings)
        == "quick = False; runs = 3; setup.p = 20; setup.B = 10.0; parts = a, b; notes = none"
    )


# ----------------------------------------------------------------------------------------------
# multi-task studies
# ----------------------------------------------------------------------------------------------


class Tables(TagBalance):
    """TagBalance that also collects every table as rows of cell texts, and the headings."""

    def __init__(self):
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.headings: list[str] = []
        self._cell: list[str] | None = None
        self._heading: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        super().handle_starttag(tag, attrs)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag in ("h2", "h3"):
            self._heading = []

    def handle_endtag(self, tag):
        super().handle_endtag(tag)
        if tag in ("td", "th"):
            self.tables[-1][-1].append("".join(self._cell))
            self._cell = None
        elif tag in ("h2", "h3"):
            self.headings.append("".join(self._heading))
            self._heading = None

    def handle_data(self, data):
        super().handle_data(data)
        for sink in (self._cell, self._heading):
            if sink is not None:
                sink.append(data)


LATENCY = "latency <ms>"  # a task name that must be escaped
#: (accuracy, latency) of trials 1 to 6. Maximising accuracy and minimising latency, the front is
#: trials {1, 2, 4, 6}; maximising both it would be {4} alone, and the best latency 80 (trial 4), not 10.
MT_VALUES = [(0.80, 30.0), (0.90, 50.0), (0.70, 40.0), (0.95, 80.0), (0.85, 60.0), (0.60, 10.0)]


def multitask_study():
    from warmbo import MultiTaskOptimizer

    space = Space((Float("x", 0.0, 1.0), Categorical("mode", ("fast", "slow"))))
    opt = MultiTaskOptimizer(
        space, task_names=["accuracy", LATENCY], directions=["maximize", "minimize"], seed=0
    )
    for i, values in enumerate(MT_VALUES):
        opt.tell({"x": i / 10, "mode": "fast" if i % 2 else "slow"}, list(values))
    failed = opt.ask()
    opt.tell_failed(failed.trial_id, error="crashed")
    opt.ask()  # left pending
    return opt


def test_multitask_report_names_tasks_directions_best_values_and_pareto_front(tmp_path):
    opt = multitask_study()
    tasks = dict(zip(opt.task_names, opt.directions, strict=True))
    path = write_report(tmp_path, opt.space, list(opt.history), maximize=opt.maximize, tasks=tasks)
    text = path.read_text(encoding="utf-8")
    parser = Tables()
    parser.feed(text)
    parser.close()
    check_html(text)
    assert LATENCY not in text  # escaped
    visible = "".join(parser.text)
    assert f"Tasks: 2 (accuracy maximize, {LATENCY} minimize)" in visible
    assert "Direction:" not in visible  # the study's internal "maximize" is not shown as the direction
    assert "expected scalarised utility" in visible

    best_params, per_task, front, trials = parser.tables
    best = opt.best
    assert best_params[1:] == [[name, f"{best.params[name]:.6g}" if name == "x" else best.params[name]]
                               for name in ("x", "mode")]  # fmt: skip
    best_id = max((t for t in opt.history if t.state == COMPLETE), key=lambda t: t.value).id
    assert f"Best utility: {best.value:.6g} (trial {best_id})" in visible
    assert per_task == [
        ["task", "direction", "best value", "trial"],
        ["accuracy", "maximize", "0.95", "4"],
        [LATENCY, "minimize", "10", "6"],
    ]
    assert "Pareto front (4 trials)" in parser.headings
    assert front[0] == ["id", "accuracy", LATENCY, "x", "mode"]
    assert [int(row[0]) for row in front[1:]] == [1, 2, 4, 6] == sorted(t.id for t in opt.pareto_front)
    assert front[1][:3] == ["1", "0.8", "30"]
    header = trials[0]
    assert header[:5] == ["id", "state", "utility", "accuracy", LATENCY]
    rows = {int(row[0]): row for row in trials[1:]}
    assert len(rows) == 8 and rows[3][3:5] == ["0.7", "40"] and rows[8][1] == "pending"
    assert rows[7][1] == "failed" and rows[7][3:5] == ["", ""]

    names = ["best_so_far.png", "tasks.png", "pareto.png", "observed.png"]
    assert sorted(p.name for p in tmp_path.glob("*.png")) == sorted(names)
    assert [img["alt"] for img in parser.imgs] == [n.removesuffix(".png").replace("_", " ") for n in names]


def test_pareto_plot_highlights_the_front_in_each_tasks_direction():
    from matplotlib.colors import to_rgba

    opt = multitask_study()
    trials = list(opt.history)
    ax = plot_pareto(trials, {"accuracy": "maximize", LATENCY: "minimize"}).axes[0]
    by_label = {c.get_label(): c for c in ax.collections}
    front = {tuple(p) for p in by_label["Pareto front"].get_offsets().tolist()}
    assert front == {MT_VALUES[i] for i in (0, 1, 3, 5)}
    assert {tuple(p) for p in by_label["dominated"].get_offsets().tolist()} == {MT_VALUES[2], MT_VALUES[4]}
    assert "lower is better" in ax.get_ylabel() and "higher is better" in ax.get_xlabel()
    both_max = plot_pareto(trials, {"accuracy": "maximize", LATENCY: "maximize"}).axes[0]
    front = [c for c in both_max.collections if c.get_label() == "Pareto front"][0]
    assert front.get_offsets().tolist() == [list(MT_VALUES[3])]
    # rendered: the PNG holds the front's red, and the front's points are drawn in it
    fig = ax.figure
    fig.canvas.draw()
    pixels = np.asarray(fig.canvas.buffer_rgba())[..., :3].astype(int)
    red = np.array(to_rgba("#d62728")[:3]) * 255
    assert np.sum(np.all(np.abs(pixels - red) < 10, axis=-1)) > 50
    assert [t.id for t in pareto_trials(trials, {"accuracy": "minimize", LATENCY: "minimize"})] == [6]


def test_task_values_plot_tracks_each_task_in_its_own_direction():
    trials = list(multitask_study().history)
    fig = plot_task_values(trials, {"accuracy": "maximize", LATENCY: "minimize"})
    accuracy, latency = fig.axes[:2]
    best = {
        ax.get_title(): [line for line in ax.lines if line.get_label() == "best so far"][0] for ax in fig.axes
    }
    assert list(best["accuracy (maximize)"].get_ydata()) == [0.8, 0.9, 0.9, 0.95, 0.95, 0.95]
    assert list(best[f"{LATENCY} (minimize)"].get_ydata()) == [30, 30, 30, 30, 30, 10]
    assert "lower is better" in latency.get_ylabel() and "higher is better" in accuracy.get_ylabel()
    rows = task_summary(trials, {"accuracy": "maximize", LATENCY: "minimize"})
    assert [(r["best"], r["trial"]) for r in rows] == [(0.95, 4), (10.0, 6)]
    with pytest.raises(ValueError, match="'maximize' or 'minimize'"):
        task_summary(trials, {"accuracy": "max", LATENCY: "minimize"})


# ----------------------------------------------------------------------------------------------
# calibration (the confidence audit) and the page as a browser shows it
# ----------------------------------------------------------------------------------------------


def audited_report(tmp_path, space=None):
    from warmbo.audit import audit

    space = space or mixed_space()
    trials = make_trials(space, n=24)
    done = [t for t in trials if t.state == COMPLETE]
    U = space.encode([t.params for t in done])
    y = np.array([t.value for t in done])
    result = audit(GP(RBF(0.5), noise=1e-3, normalize_y=True), U, y)
    path = write_report(tmp_path / "r", space, trials, maximize=True, audit=result)
    return path, result


def test_report_has_a_calibration_section_with_plot_table_and_warnings(tmp_path):
    path, result = audited_report(tmp_path)
    text = path.read_text()
    parser = check_html(text)
    assert any(img["alt"] == "calibration" for img in parser.imgs)
    assert (path.parent / "calibration.png").read_bytes().startswith(PNG_SIGNATURE)
    body = " ".join(parser.text)
    assert "Calibration" in body and result.summary() in body
    for level in result.levels:
        assert f"{round(100 * level)}%: \u00b1" in body
    for message in result.warnings:
        assert message in body
    # without an audit the section and a stale calibration.png go away
    write_report(path.parent, mixed_space(), make_trials(mixed_space()), maximize=True)
    assert not (path.parent / "calibration.png").exists()
    assert "Calibration" not in path.read_text()


def test_calibration_plot_draws_the_diagonal_the_band_and_one_line_per_audit():
    from warmbo.audit import audit
    from warmbo.report import plot_calibration

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (20, 1))
    y = np.sin(5 * X[:, 0]) + 0.1 * rng.standard_normal(20)
    a = audit(GP(RBF(0.3), noise=0.01), X, y)
    ax = plot_calibration({"f0": a, "f1": a}).axes[0]
    lines = [line for line in ax.get_lines() if line.get_label() in ("f0", "f1")]
    assert len(lines) == 2
    np.testing.assert_allclose(lines[0].get_ydata(), [a.coverage[v] for v in a.levels])
    assert any(line.get_label() == "calibrated" for line in ax.get_lines())
    assert ax.collections  # the binomial band
    with pytest.raises(ValueError, match="at least one audit"):
        plot_calibration({})


_PROBE = """<script>
window.addEventListener("load", function () {
  var img = document.querySelector('img[alt="calibration"]');
  var out = document.createElement("pre");
  out.id = "probe";
  if (!img) { out.textContent = "probe: missing"; }
  else {
    var box = img.getBoundingClientRect();
    out.textContent = "probe: natural=" + img.naturalWidth + "x" + img.naturalHeight +
      " box=" + Math.round(box.width) + "x" + Math.round(box.height);
  }
  document.body.appendChild(out);
});
</script>"""


def _chromium() -> str:
    """The Chromium binary (Debian's; `make test` installs it): a missing one fails the test."""
    import shutil

    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail("headless Chromium is required (apt-get install chromium; make test installs it)")


def _render(page, tmp_path) -> str:
    """The probe's line after Chromium loaded ``page`` (a copy of the report with a probe script
    that reads the calibration image's natural size and laid-out box once the page has loaded)."""
    import subprocess

    probe = tmp_path / f"probe-{page.stem}.html"
    probe.write_text(page.read_text().replace("</body>", _PROBE + "</body>"))
    done = subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",  # CI runs as root
            "--disable-gpu",
            f"--user-data-dir={tmp_path / 'chromium-profile'}",
            "--virtual-time-budget=5000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = re.search(r'<pre id="probe">(probe: [^<]*)</pre>', done.stdout)
    assert found, f"chromium rendered no probe (exit {done.returncode}): {done.stderr[-2000:]}"
    return found.group(1)


def test_the_report_page_displays_the_calibration_plot_in_headless_chromium(tmp_path):
    path, _ = audited_report(tmp_path)
    shown = re.fullmatch(r"probe: natural=(\d+)x(\d+) box=(\d+)x(\d+)", _render(path, tmp_path))
    assert shown, "calibration image not found on the rendered page"
    natural_w, natural_h, box_w, box_h = map(int, shown.groups())
    assert natural_w > 0 and natural_h > 0  # the browser decoded the embedded PNG
    assert box_w > 0 and box_h > 0  # and laid it out visibly
    # the check can fail: a page whose calibration image data are corrupt shows natural=0x0
    broken = tmp_path / "broken.html"
    broken.write_text(re.sub(r'(<img src="data:image/png;base64,)[^"]*(" alt="calibration")', r"\1AAAA\2",
                             path.read_text()))  # fmt: skip
    assert _render(broken, tmp_path).startswith("probe: natural=0x0")


def test_the_trials_table_says_what_an_amended_trial_held_before(tmp_path, monkeypatch):
    monkeypatch.setenv("WARMBO_USER", "ana")  # (who corrected a value is kept with it)
    # before: an amended trial looked like any other in the report; its earlier value was only in
    # the study's meta table
    opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), storage=tmp_path / "s.db", seed=0)
    for x, y in [(0.1, 3.0), (0.5, 2.0), (0.9, 1.0)]:
        opt.tell({"x": x}, y)
    opt.amend(1, 2.5, note="misread <gauge>")
    opt.amend(2, failed=True, note="contaminated")
    opt.study.set_meta("amended:3", "not json")  # a hand-edited entry still marks the trial
    assert opt.study.amendments()[3] == [{}]
    page = opt.report(tmp_path / "r").read_text()
    table = page[page.index("<h2>Trials</h2>") :]
    assert "<th>amended</th>" in table
    assert "amended, was value 3 (misread &lt;gauge&gt;; by ana)" in table  # escaped like every user string
    assert "amended, was value 2 (contaminated; by ana)" in table
    assert table.count(">amended<") == 1  # trial 3: the bare mark (the header is a <th>)
    assert "<th>note</th>" not in table  # (no note kept: no empty column)
    opt.study.set_note(1, "stirring <slow>")  # (warmbo observe --note; escaped too)
    table = opt.report(tmp_path / "r").read_text().split("<h2>Trials</h2>")[1]
    assert "<th>note</th>" in table and "stirring &lt;slow&gt;" in table
    plain = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), seed=0)
    plain.tell({"x": 0.5}, 1.0)
    page = plain.report(tmp_path / "p").read_text()
    assert "<th>amended</th>" not in page  # no empty column


def test_the_summary_lists_withdrawn_trials_with_what_they_held(tmp_path, monkeypatch):
    monkeypatch.setenv("WARMBO_USER", "ana")
    opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), storage=tmp_path / "s.db", seed=0)
    for x, y in [(0.1, 3.0), (0.5, 2.0), (0.5, 2.0)]:
        opt.tell({"x": x}, y)
    opt.withdraw(3, note="recorded <twice>")
    page = opt.report(tmp_path / "r").read_text()
    summary = page[page.index("<h2>Summary</h2>") : page.index("</ul>")]
    assert "<li>Trials: 2 (2 complete)</li>" in summary
    assert (
        "Withdrawn: 1, read by nothing (kept in the study): "
        "trial 3 (was value 2; recorded &lt;twice&gt;; by ana)" in summary
    )
    assert (
        "Withdrawn"
        not in wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), seed=0).report(tmp_path / "p").read_text()
    )


def test_the_tables_tell_apart_the_values_of_a_narrow_range_far_from_zero(tmp_path):
    # before: 6 significant digits showed every trial of [1000, 1000.5] as 1000.x, of
    # [2.4e9, 2.4e9 + 1000] as 2.4e+09
    space = wb.Space([wb.Float("f", 2.4e9, 2.4e9 + 1000), wb.Float("t", 1000.0, 1000.5), wb.Float("u", 0, 1)])
    opt = wb.Optimizer(space, seed=0)
    points = [
        {"f": 2.4e9 + 123.456, "t": 1000.12345, "u": 0.25},
        {"f": 2.4e9 + 789.012, "t": 1000.4321, "u": 0.5},
    ]
    for i, p in enumerate(points):
        opt.tell(p, float(i))
    page = opt.report(tmp_path / "r").read_text()
    for text in ("2400000123.46", "2400000789.01", "1000.12345", "1000.4321", "0.25"):
        assert f">{text}<" in page


def _visible_tick_labels(fig, ax):
    """The x tick labels matplotlib draws on ``ax`` (text not empty, tick inside the view)."""
    fig.canvas.draw()
    lo, hi = sorted(ax.get_xlim())
    ticks = [(t, t.label1) for t in [*ax.xaxis.get_major_ticks(), *ax.xaxis.get_minor_ticks()]]
    return [
        label
        for tick, label in ticks
        if tick.get_visible() and label.get_visible() and label.get_text() and lo <= tick.get_loc() <= hi
    ]


@pytest.mark.parametrize(
    "param",
    [
        Int("max_leaf_nodes", 4, 64, log=True),
        Int("min_samples_leaf", 1, 60, log=True),
        Int("hidden_units", 16, 256, log=True),
        Float("learning_rate", 1e-3, 1e-1, log=True),
        Float("scale", 0.5, 2.0, log=True),
        Float("alpha", 1e-7, 1e-1, log=True),
        # fewer than two of 1, 2, 5 x 10^k inside: matplotlib's minor labels 5x10^-1 ... 9x10^-1 overlapped
        Float("subsample", 0.5, 0.9, log=True),
        Float("tol", 0.011, 0.019, log=True),
        Int("max_depth", 3, 9, log=True),
    ],
    ids=lambda p: p.name,
)
def test_log_axes_of_the_report_panels_have_readable_tick_labels(param):
    # a log Int("max_leaf_nodes", 4, 64) spans 1.2 decades, where matplotlib labels the minor ticks
    # too, in scientific notation: seven labels 4x10^0 ... 6x10^1 printed over each other in the
    # posterior slices and the observed panels of every HistGradientBoosting report
    space = Space((param, Categorical("loss", ("log_loss", "exponential"))))
    trials = [
        Trial(id=i, params=p, state=COMPLETE, value=float(i % 5), created=T0, completed=T0)
        for i, p in enumerate(space.sample(12, seed=0))
    ]
    best = trials[4].params

    def predict(U):
        return np.asarray(U)[:, 0], np.full(len(U), 0.1)

    observed = plot_observed(trials, space, maximize=True)
    for fig in (observed, plot_posterior_slices(space, best, predict, maximize=True)):
        ax = fig.axes[0]
        labels = _visible_tick_labels(fig, ax)
        boxes = [label.get_window_extent() for label in labels]
        assert len(labels) >= 2, [label.get_text() for label in labels]
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                assert not a.overlaps(b), [label.get_text() for label in labels]


def test_a_report_stopped_while_it_is_made_leaves_the_folder_as_it_was(tmp_path, monkeypatch):
    # a chemist user test: Ctrl-C during `warmbo report` left new PNGs beside the old page, silently
    import warmbo.report as report_module

    opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), storage=tmp_path / "s.db", seed=0)
    for x, y in [(0.1, 3.0), (0.5, 2.0), (0.9, 1.0)]:
        opt.tell({"x": x}, y)
    out = tmp_path / "r"
    opt.report(out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    opt.tell({"x": 0.7}, 0.5)  # (the next report differs in every figure)
    made = []
    real = report_module._figure_png

    def interrupted(fig):
        made.append(fig)
        if len(made) == 3:
            raise KeyboardInterrupt
        return real(fig)

    monkeypatch.setattr(report_module, "_figure_png", interrupted)
    with pytest.raises(KeyboardInterrupt):
        opt.report(out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    with pytest.raises(KeyboardInterrupt):
        made.clear()
        opt.report(tmp_path / "new")
    assert not (tmp_path / "new").exists()  # (no empty folder left behind either)
    monkeypatch.setattr(report_module, "_figure_png", real)
    # ... and stopped while the files are written (a review: the second file's write, of a new folder
    # and of the existing one)
    written = []
    real_write = Path.write_bytes

    def stopped_writing(path, data):
        written.append(path)
        if len(written) % 2 == 0:
            raise KeyboardInterrupt
        return real_write(path, data)

    monkeypatch.setattr(Path, "write_bytes", stopped_writing)
    for folder in (tmp_path / "fresh", out):
        with pytest.raises(KeyboardInterrupt):
            opt.report(folder)
    assert not (tmp_path / "fresh").exists()
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    monkeypatch.setattr(Path, "write_bytes", real_write)
    opt.report(out)
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(after) == set(before) and after["report.html"] != before["report.html"]


def test_a_grid_of_more_values_than_ticks_gets_ticks_on_the_grid_that_do_not_run_together():
    # a user test: stir_rpm (100 to 1200 in steps of 100) got ticks at 150, 450, 1050, and "1050" ran
    # into "1200" ("10501200" in the rendered report)
    space = Space((Int("stir_rpm", 100, 1200, step=100), Float("t", 20.0, 95.0, step=0.5), Int("n", 1, 5000)))
    trials = [
        Trial(i + 1, {"stir_rpm": 100 * (i + 1), "t": 20.0 + 5 * i, "n": 400 * i + 1}, COMPLETE, float(i))
        for i in range(12)
    ]
    fig = plot_observed(trials, space, maximize=False)
    fig.canvas.draw()
    rpm, t, n = (a for a in fig.axes if a.get_visible())
    ticks = [v for v in rpm.get_xticks() if 100 <= v <= 1200]
    assert 3 <= len(ticks) <= 5 and all(v % 100 == 0 for v in ticks), ticks
    for ax in (rpm, t, n):  # no two labels overlap
        boxes = [label.get_window_extent() for label in ax.get_xticklabels() if label.get_text()]
        assert len(boxes) >= 2
        assert all(a.x1 <= b.x0 for a, b in zip(boxes, boxes[1:], strict=False)), [
            label.get_text() for label in ax.get_xticklabels()
        ]


def test_long_parameter_names_that_share_a_prefix_keep_apart_in_the_figures():
    # cut after 40 characters, three names differing only at the end all read
    # "encoder_transformer_block_attention_dro…" in every panel and importance bar (a user test)
    names = [f"encoder_transformer_block_attention_dropout_probability_layer_{i}" for i in (1, 2, 3)]
    fig = plot_importance(dict(zip(names, (0.55, 0.3, 0.15), strict=True)))
    shown = [t.get_text() for t in fig.axes[0].get_yticklabels()] + [
        t.get_text() for t in fig.axes[0].get_xticklabels()
    ]
    shown = [t for t in shown if "encoder" in t]
    assert len(shown) == 3 and len(set(shown)) == 3, shown
    assert all(t.endswith(f"layer_{i}") for t, i in zip(sorted(shown), (1, 2, 3), strict=True)), shown
    space = Space([Float(n, 0.0, 1.0) for n in names])
    trials = [
        Trial(
            id=i + 1,
            params={n: float(v) for n, v in zip(names, row, strict=True)},
            state=COMPLETE,
            value=float(sum(row)),
        )
        for i, row in enumerate(np.random.default_rng(0).random((6, 3)))
    ]
    titles = [ax.get_title() for ax in plot_observed(trials, space, maximize=False).axes if ax.get_title()]
    assert len(set(titles)) == 3 and all("\u2026" in t for t in titles), titles


def test_the_best_trial_on_a_categorical_panel_is_starred_on_its_own_dot():
    # the dots of a categorical panel are jittered and the star was drawn at the choice's centre: two
    # marks at the best value, read as a withdrawn duplicate still plotted (a user test)
    space = Space([Categorical("catalyst", ["Pd", "Pt", "Ru"]), Float("temp", 0.0, 1.0)])
    trials = [
        Trial(id=i + 1, params={"catalyst": c, "temp": t}, state=COMPLETE, value=v)
        for i, (c, t, v) in enumerate(
            [("Pd", 0.1, 50.0), ("Pt", 0.4, 70.5), ("Ru", 0.8, 60.0), ("Pt", 0.6, 65.0)]
        )
    ]
    ax = plot_observed(trials, space, maximize=True).axes[0]
    dots = next(line for line in ax.get_lines() if line.get_label() == "observed")
    star = next(line for line in ax.get_lines() if line.get_label() == "best")
    at = [x for x, y in zip(dots.get_xdata(), dots.get_ydata(), strict=True) if y == 70.5]
    assert list(star.get_xdata()) == at and at[0] != 1.0  # (jittered off the choice's centre, 1)


def test_the_report_gives_the_models_estimate_at_the_best_trial_as_status_does(tmp_path):
    # `warmbo status` said "model's estimate there: -0.017 (sd 0.012)" beside a best single
    # measurement of -0.063; the page, which a colleague may get alone, gave the measurement only
    opt = wb.Optimizer(Space([Float("x", 0.0, 1.0)]), seed=0, storage=str(tmp_path / "noisy.db"))
    rng = np.random.default_rng(0)
    opt.run(lambda p: (p["x"] - 0.3) ** 2 + 0.05 * float(rng.standard_normal()), budget=14, progress=False)
    page = opt.report(tmp_path / "out").read_text(encoding="utf-8")
    best = opt.best
    mean, sd = wb.Optimizer.load(str(tmp_path / "noisy.db")).predict([best.params])  # as status sees it
    assert f"Model's estimate there: {_fmt(float(mean[0]))} (sd {_fmt(float(sd[0]))})" in page


def test_the_report_names_the_setting_the_model_ranks_first_when_it_is_not_the_best_measured(tmp_path):
    # status said "lowest estimate: ... at trial N" beside a lucky best measurement; the page gave
    # only the model's estimate at that lucky one (a noisy-objective user test)
    opt = wb.Optimizer(Space([Float("x", 0.0, 1.0)]), seed=0, storage=str(tmp_path / "lucky.db"))
    # (x = 0.8 measured twice, 0.0 once: the lucky draw is the best measurement)
    rows = [(0.3, 0.11), (0.3, 0.09), (0.31, 0.1), (0.29, 0.12), (0.79, 1.0), (0.81, 1.05), (0.8, 0.0)]
    for x, y in [*rows, (0.8, 1.02), (0.6, 0.6), (0.1, 0.5)]:
        opt.tell({"x": x}, y)
    page = opt.report(tmp_path / "out").read_text(encoding="utf-8")
    complete = opt.study.trials(("complete",))
    mean, sd = wb.Optimizer.load(str(tmp_path / "lucky.db")).predict([t.params for t in complete])
    first = int(np.argmin(mean))
    assert opt.best.params == {"x": 0.8} and complete[first].params["x"] != 0.8
    assert (
        f"Lowest estimate among the measured settings: {_fmt(float(mean[first]))} "
        f"(sd {_fmt(float(sd[first]))}) at trial {complete[first].id} (x={_fmt(complete[first].params['x'])})"
    ) in page


def test_a_one_choice_categorical_gets_no_slice_and_no_importance():
    # a list-of-dicts search's estimator, a categorical of one choice, was drawn as a panel of one
    # point and ranked at 0% (categorical-heavy user test)
    from warmbo.report import _importance, _posterior_slices

    space = Space([Float("x", 0.0, 1.0), Categorical("clf", ["svc"]), Categorical("k", ["a", "b"])])

    def predict(U):
        U = np.asarray(U)
        return U[:, 0] + U[:, -1], np.full(len(U), 0.1)

    best = {"x": 0.5, "clf": "svc", "k": "a"}
    assert [s.param.name for s in _posterior_slices(space, best, predict)] == ["x", "k"]
    assert set(_importance(space, best, predict)[0]) == {"x", "k"}


def test_sections_left_out_for_want_of_trials_or_activity_are_said_on_the_page(tmp_path):
    # one trial: no slices, importance or calibration and no word why; 4 trials: no calibration; a
    # conditional parameter inactive at the best point: 4 parameters counted, 3 panels (a user test)
    space = Space(
        [
            Float("x", 0.0, 1.0),
            Categorical("kernel", ["rbf", "poly"]),
            Float("gamma", 0.1, 1.0, when={"kernel": ["rbf"]}),
        ]
    )
    opt = wb.Optimizer(space, seed=0, storage=str(tmp_path / "c.db"))
    opt.tell({"x": 0.5, "kernel": "poly"}, 1.0)
    page = opt.report(tmp_path / "one").read_text(encoding="utf-8")
    said = "Not drawn yet: the model's figures (posterior slices, importance) from 2 complete trials on; "
    assert said + "the calibration audit from 10 on (1 so far)" in page
    for x, kernel, gamma, value in [(0.2, "rbf", 0.3, 2.0), (0.8, "poly", None, 0.5), (0.4, "rbf", 0.9, 1.5)]:
        opt.tell({"x": x, "kernel": kernel, **({} if gamma is None else {"gamma": gamma})}, value)
    page = opt.report(tmp_path / "four").read_text(encoding="utf-8")
    assert "Not drawn yet: the calibration audit from 10 on (4 so far)" in page
    assert page.count("Not shown: gamma, inactive at the best point.") == 2  # (slices and importance)


def test_the_slice_star_is_the_models_mean_at_the_best_point_itself():
    # the star took the mean of the sweep's nearest grid point (x = 0.303 for a best x = 0.3): -0.005
    # where the model said -0.017 (a user test)
    space = Space([Float("x", 0.0, 1.0), Float("z", 0.0, 1.0)])
    best = {"x": 0.3, "z": 0.77}

    def predict(U):
        U = np.atleast_2d(U)
        return np.sin(40.0 * U[:, 0]) + U[:, 1], np.full(U.shape[0], 0.1)  # (steep: grid points differ)

    fig = plot_posterior_slices(space, best, predict, maximize=False)
    for ax, name in zip(fig.axes, ("x", "z"), strict=False):
        star = next(line for line in ax.get_lines() if line.get_label() == "best point")
        expected = predict(space.encode([best]))[0][0]
        assert star.get_xdata()[0] == best[name] and star.get_ydata()[0] == pytest.approx(expected)
