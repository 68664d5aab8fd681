"""What a notebook user sees: the run's progress output, figures shown inline, short reprs, and what an
interrupted run (the stop button) says.

No notebook kernel is started (nbclient and ipykernel are not dependencies): each test checks the
behaviour the kernel shows, through a recording stand-in for IPython's ``display`` and IPython's own
protocols (``_repr_png_``, ``_repr_pretty_``, ``__notes__``).
"""

from __future__ import annotations

import io
import re
import sys
import types
import warnings

import numpy as np
import pytest
import rich
from rich.console import Console

import warmbo as wb
from warmbo import _progress

PNG = b"\x89PNG\r\n\x1a\n"


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class Display:
    """IPython's ``display(data, raw=True, display_id=True)``: records the output and its updates."""

    def __init__(self):
        self.outputs: list[list[dict]] = []  # each output: its first data, then every update

    def __call__(self, data, raw=False, display_id=None):
        assert raw and display_id is True
        self.outputs.append([data])
        return types.SimpleNamespace(update=lambda new, raw=False: self.outputs[-1].append(new))

    def text(self, i: int = -1) -> str:
        return self.outputs[i][-1]["text/plain"]


@pytest.fixture
def notebook(monkeypatch):
    """A notebook kernel as rich and IPython see it: rich's console says Jupyter, and
    ``IPython.display.display`` is a recorder (IPython itself need not be installed)."""
    out = io.StringIO()
    monkeypatch.setattr(rich, "_console", Console(file=out, force_jupyter=True))
    display = Display()
    monkeypatch.setitem(sys.modules, "IPython", types.ModuleType("IPython"))
    monkeypatch.setitem(sys.modules, "IPython.display", types.SimpleNamespace(display=display))
    return display, out


def test_a_run_in_a_notebook_shows_one_output_updated_in_place_and_no_warning(notebook):
    """In Jupyter, rich's live bar needs ipywidgets (not a dependency): without it every refresh
    printed a 'install "ipywidgets" for Jupyter support' box, 73 in a 12-trial run, and no bar.
    The run now shows one plain-text output, updated in place, ending on the final count."""
    display, out = notebook
    opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), seed=0, n_initial=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (rich's warning, or any other)
        opt.run(lambda p: (p["x"] - 0.3) ** 2, budget=5)
    assert len(display.outputs) == 1
    assert re.fullmatch(rf"best: {opt.best.value:.6g} \u2501{{40}} 5/5 trials 0:00:\d\d", display.text())
    assert out.getvalue() == ""
    opt.run(lambda p: (p["x"] - 0.3) ** 2, budget=7)  # a resumed run counts its own 2 trials
    assert display.outputs[1][0]["text/plain"].endswith("0/2 trials (5 in the study) 0:00:00")
    assert " 2/2 trials (7 in the study) " in display.text()


def test_a_resumed_run_counts_its_own_trials_against_its_share_of_the_budget(notebook):
    """A run to budget=14 on a study already holding 9 trials read "9/14 trials" at its start and
    "14/14" at its end: the bar mixed the study's trials with the run's. It now counts the run's 5
    against the 5 left, and says the study's total beside them."""
    display, _ = notebook
    opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), seed=0, n_initial=3)
    opt.run(lambda p: (p["x"] - 0.3) ** 2, budget=9, progress=False)
    opt.run(lambda p: (p["x"] - 0.3) ** 2, budget=14)
    first, *_, last = (update["text/plain"] for update in display.outputs[0])
    assert " 0/5 trials (9 in the study) " in first
    assert re.fullmatch(
        rf"best: {opt.best.value:.6g} \u2501{{40}} 5/5 trials \(14 in the study\) 0:00:\d\d", last
    )


def test_the_notebook_output_is_updated_at_most_every_interval_and_at_the_end():
    clock, display = Clock(), Display()
    with _progress.NotebookProgress(display=display, every=1.0, clock=clock) as bar:
        task = bar.add_task("demo", total=80, unit="runs")
        for _ in range(80):
            clock.now += 0.125
            bar.advance(task)
        clock.now += 30.0  # after the task's end: its time stays at 10 s
    updates = display.outputs[0]
    assert len(display.outputs) == 1
    assert 10 <= len(updates) <= 12  # one a second for 10 s, then the end
    assert display.text() == "demo " + "\u2501" * 40 + " 80/80 runs 0:00:10"
    (half,) = [u["text/plain"] for u in updates if " 40/80 " in u["text/plain"]]  # at 5 s
    assert "\u2501" * 20 + "\u2500" * 20 in half


def test_tasks_share_the_output_one_line_each_and_a_removed_task_leaves_it():
    clock, display = Clock(), Display()
    with _progress.NotebookProgress(display=display, clock=clock) as bar:
        overall = bar.add_task("demo", total=2)
        part = bar.add_task("branin: GP-EI", total=None, unit="runs")
        clock.now += 1.0
        bar.advance(part)
        assert display.text().splitlines() == [
            "demo " + "\u2500" * 40 + " 0/2 runs 0:00:01",
            "branin: GP-EI 1 runs 0:00:01",
        ]
        bar.remove_task(part)
        bar.advance(overall, 2)
    assert display.text().splitlines() == ["demo " + "\u2501" * 40 + " 2/2 runs 0:00:01"]
    assert len(display.outputs) == 1


def test_progress_picks_the_notebook_output_in_jupyter():
    console = Console(file=io.StringIO(), force_jupyter=True)
    assert isinstance(_progress.progress(console), _progress.NotebookProgress)


def _study(budget=12, **kwargs):
    opt = wb.Optimizer(wb.Space.box([(0.0, 1.0), (0.0, 1.0)]), seed=0, **kwargs)
    opt.run(lambda p: (p["x0"] - 0.3) ** 2 + (p["x1"] - 0.6) ** 2, budget=budget, progress=False)
    return opt


def test_plot_shows_inline_once_without_pyplot():
    """A cell ending with ``opt.plot()`` showed the text ``<Figure size 700x400 with 1 Axes>``: a figure
    made without pyplot has no image for IPython unless pyplot's inline backend registered one. The
    figure gives IPython its PNG, and being unknown to pyplot it is shown once (as the cell's result)."""
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    from warmbo.report import plot_observed

    before = plt.get_fignums()
    opt = _study()
    fig = opt.plot()
    assert isinstance(fig, Figure)
    assert fig._repr_png_().startswith(PNG)
    assert repr(fig) == "<Figure size 700x400 with 1 Axes>"  # (the text beside the image)
    assert plot_observed(list(opt.history), opt.space, maximize=False)._repr_png_().startswith(PNG)
    assert plt.get_fignums() == before  # nothing for the inline backend to show a second time


def test_every_report_plot_returns_a_figure_shown_inline_once():
    """plot_importance, plot_calibration, plot_pareto and plot_best_so_far returned matplotlib Axes,
    which a cell ending with one showed as the text ``<Axes: title={...}>`` and no image, while
    plot_observed, plot_task_values, plot_posterior_slices and opt.plot() returned a figure. Each
    now returns the figure, which gives IPython its PNG and is not registered in pyplot."""
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    from warmbo import report
    from warmbo.audit import audit

    before = plt.get_fignums()
    opt = _study()
    trials = list(opt.history)
    X = opt.space.encode([t.params for t in trials])
    y = np.array([t.value for t in trials])
    two_tasks = [
        wb.Trial(i, {"x0": 0.1 * i}, "complete", float(i), values=(float(i), float(-i))) for i in range(4)
    ]
    figures = {
        "plot_best_so_far": report.plot_best_so_far(trials, maximize=False),
        "plot_importance": report.plot_importance({"x0": 0.7, "x1": 0.3}),
        "plot_calibration": report.plot_calibration(audit(wb.GP(wb.kernels.RBF(0.3), noise=0.01), X, y)),
        "plot_pareto": report.plot_pareto(two_tasks, {"a": "maximize", "b": "minimize"}),
    }
    for name, fig in figures.items():
        assert isinstance(fig, Figure), name
        assert fig._repr_png_().startswith(PNG), name
    assert plt.get_fignums() == before
    # drawn into an axes of yours: the figure holding it
    mine = Figure()
    ax = mine.subplots()
    assert report.plot_importance({"x0": 1.0}, ax=ax) is mine and ax.get_title().startswith("Parameter")


def test_an_interrupted_run_says_what_it_kept_and_how_to_go_on(tmp_path):
    """The stop button (KeyboardInterrupt) during an evaluation ended the cell with a bare
    'KeyboardInterrupt' under a traceback into the objective, and the trial being evaluated was left
    pending without a word. The interrupt now carries a note (shown under it by Python and IPython):
    the trials finished and stored, how to go on, and the trial left pending."""
    url = f"sqlite:///{tmp_path / 'nb.db'}"
    opt = wb.Optimizer(wb.Space.box([(0.0, 1.0)]), seed=0, storage=url)
    calls = []

    def objective(p):
        calls.append(p)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return (p["x0"] - 0.3) ** 2

    with pytest.raises(KeyboardInterrupt) as info:
        opt.run(objective, budget=8, progress=False)
    (note,) = info.value.__notes__
    assert note == (
        f"warmbo: run interrupted at 3 of 8 finished trials, each stored in {url} as it finished; "
        "run it again to go on to the budget. Trial(s) 4, whose evaluation was cut short, stay pending "
        "and are not evaluated again unless you pass retry_pending=True"
    )
    again = wb.Optimizer(wb.Space.box([(0.0, 1.0)]), seed=0, storage=url)
    again.run(objective, budget=8, progress=False, retry_pending=True)
    assert [t.state for t in again.history] == ["complete"] * 8  # nothing lost, nothing pending


def test_an_interrupt_between_trials_leaves_nothing_pending_and_says_so():
    def stop_after_the_second(opt, trial):
        if trial.id == 2:
            raise KeyboardInterrupt

    opt = wb.Optimizer(wb.Space.box([(0.0, 1.0)]), seed=0)
    with pytest.raises(KeyboardInterrupt) as info:
        opt.run(lambda p: p["x0"], budget=5, callbacks=[stop_after_the_second], progress=False)
    (note,) = info.value.__notes__
    assert note == (
        "warmbo: run interrupted at 2 of 5 finished trials, each stored in this Optimizer's study (in "
        "memory) as it finished; run it again to go on to the budget"
    )
    opt.run(lambda p: p["x0"], budget=5, progress=False)
    assert len(opt.history) == 5


def test_a_trial_repr_is_short_and_a_history_repr_shows_counts_and_ends():
    """A cell ending with ``opt.history`` printed every field of every trial (3,800 characters for 12
    trials, timestamps and all); a trial was 300 characters."""
    opt = _study(budget=14)
    opt.tell_failed(opt.ask(), error="out of memory")
    opt.ask()
    first = opt.history[0]
    assert repr(first) == f"Trial(id=1, state='complete', value={first.value!r}, params={first.params!r})"
    failed, pending = opt.history[-2:]
    assert repr(failed).startswith("Trial(id=15, state='failed', error='out of memory', params={")
    assert repr(pending).startswith("Trial(id=16, state='pending', params={")
    lines = repr(opt.history).splitlines()
    assert lines[0] == "History of 16 trials (14 complete, 1 failed, 1 pending):"
    assert lines[1:6] == [f"  {t!r}" for t in opt.history[:5]]
    assert lines[6] == "  ... 6 more ..."
    assert lines[7:] == [f"  {t!r}" for t in opt.history[-5:]]
    short = wb.History(opt.history[:3])
    assert repr(short).splitlines()[1:] == [f"  {t!r}" for t in opt.history[:3]]
    assert repr(wb.History()) == "History of 0 trials"


class Printer:
    """IPython's pretty printer, as ``_repr_pretty_`` sees it."""

    def __init__(self):
        self.shown = ""

    def text(self, text):
        self.shown += text


def test_an_audit_in_a_notebook_is_its_table():
    rng = np.random.default_rng(0)
    opt = wb.Optimizer(wb.Space.box([(0.0, 1.0)]), seed=0)
    opt.run(lambda p: np.sin(6 * p["x0"]) + 0.05 * rng.standard_normal(), budget=12, progress=False)
    audit = opt.audit()
    printer = Printer()
    audit._repr_pretty_(printer, False)
    lines = printer.shown.splitlines()
    assert printer.shown == str(audit)
    assert lines[0] == "audit: 12 of 12 trials held out (closed-form)"
    assert lines[1].split()[:3] == ["interval", "inside", "calibrated"]
    assert lines[4].startswith("90%: \u00b11.64 sd")
    assert lines[7] == audit.summary()


def test_a_transfer_report_in_a_notebook_reads_as_printed(tmp_path):
    source = _study(storage=f"sqlite:///{tmp_path / 'old.db'}")
    opt = wb.Optimizer(source.space, seed=1, prior=[source.study.url])
    printer = Printer()
    report = opt.transfer_report()
    report._repr_pretty_(printer, False)
    assert printer.shown == str(report)
    assert printer.shown.startswith("transfer auto: 1 source task(s), 12 rows")


def test_warnings_from_an_ask_or_a_run_point_at_the_users_line(tmp_path):
    """A notebook shows a warning with the line it points at: the prior-subset warning of an ask
    pointed at a line of optimizer.py (``return self._fit_trials(...)``), and the stored-sources
    warning of a run past the user's line, at IPython's own code."""
    from warmbo.optimizer import PriorSubsetWarning

    rng = np.random.default_rng(0)
    space = wb.Space.box([(0.0, 1.0), (0.0, 1.0)])
    X = rng.random((1100, 2))
    opt = wb.Optimizer(space, seed=0, prior=(X, X[:, 0]), transfer="none")
    with pytest.warns(PriorSubsetWarning) as record:
        opt.ask()
    assert [w.filename for w in record] == [__file__]

    url = f"sqlite:///{tmp_path / 'warm.db'}"
    wb.Optimizer(space, seed=0, prior=(X[:20], X[:20, 0]), storage=url)
    for act in (lambda o: o.ask(), lambda o: o.run(lambda p: p["x0"], budget=1, progress=False)):
        with pytest.warns(UserWarning, match="transfers from stored sources") as record:
            act(wb.Optimizer(space, seed=0, storage=url))
        assert {w.filename for w in record if "stored sources" in str(w.message)} == {__file__}


def test_a_second_ask_without_a_tell_says_once_that_the_first_trial_is_still_pending():
    """Running a cell with ``opt.ask()`` twice left the first suggestion pending without a word: the
    optimizer treats it as running (points are suggested away from it) until it is told. The second
    ask now says so once, at the user's line, with how to ask for a batch and how to close the trial."""
    opt = wb.Optimizer(wb.Space.box([(0.0, 1.0)]), seed=0)
    first = opt.ask()
    with pytest.warns(UserWarning) as record:
        opt.ask()
    from warmbo.optimizer import UnansweredAskWarning

    (said,) = record
    assert said.category is UnansweredAskWarning
    message = str(said.message)
    assert said.filename == __file__
    assert f"trial {first.trial_id}, which the last ask() suggested, is still pending" in message
    assert "ask(n)" in message and f"opt.tell({first.trial_id}, value)" in message
    assert f"take it out with opt.withdraw({first.trial_id})" in message  # (not failed: never run)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnansweredAskWarning)
        opt.ask()  # once per optimizer
        # what does not warn: an ask after a tell, batches, runs, a fresh optimizer's first ask
        fresh = wb.Optimizer(wb.Space.box([(0.0, 1.0)]), seed=0)
        fresh.tell(fresh.ask(), 1.0)
        fresh.tell_failed(fresh.ask())
        fresh.ask()
        fresh.tell({"x0": 0.5}, 0.5)  # any tell counts, a point measured outside the optimizer too
        fresh.ask()
        batched = wb.Optimizer(wb.Space.box([(0.0, 1.0)]), seed=0)
        batched.ask(2)
        batched.ask(2)
        batched.run(lambda p: p["x0"], budget=5, progress=False)
        batched.run(lambda p: p["x0"], budget=8, n_workers=2, progress=False)


def test_asks_in_a_worker_thread_or_after_the_trial_was_closed_elsewhere_do_not_warn():
    import threading

    from warmbo.optimizer import UnansweredAskWarning

    opt = wb.Optimizer(wb.Space.box([(0.0, 1.0)]), seed=0)
    errors = []

    def worker():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", UnansweredAskWarning)
                opt.ask()
                opt.ask()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert errors == []
    closed = wb.Optimizer(wb.Space.box([(0.0, 1.0)]), seed=0)
    suggestion = closed.ask()
    closed.study.complete(suggestion.trial_id, 1.0)  # told through the study, not this optimizer
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnansweredAskWarning)
        closed.ask()
