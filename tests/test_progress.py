"""Progress of long runs: a live bar on a terminal, plain lines when piped (warmbo._progress)."""

from __future__ import annotations

import io
import re

import rich
from rich.console import Console
from rich.progress import Progress

import warmbo as wb
from warmbo._progress import LineProgress, live, progress


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def piped() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=80), out


def test_a_terminal_gets_the_bar_and_a_pipe_gets_lines():
    assert isinstance(progress(Console(file=io.StringIO(), force_terminal=True)), Progress)
    console, _ = piped()
    assert not live(console)
    assert isinstance(progress(console), LineProgress)


def test_one_line_per_finished_task_with_its_counts_and_times():
    console, out = piped()
    clock = Clock()
    with LineProgress(console, every=None, clock=clock) as bar:
        first = bar.add_task("branin: GP-UCB", total=3, unit="runs")
        for _ in range(3):
            clock.now += 2.0
            bar.advance(first)
        second = bar.add_task("a description wider than the eighty columns of a console: GP-EI " * 2, total=2)
        clock.now += 1.5
        bar.advance(second)
        assert out.getvalue().count("\n") == 1  # the unfinished task printed nothing
        clock.now += 1.5
        bar.update(second, advance=1)
        bar.advance(second)  # past its total: no second line
    lines = out.getvalue().splitlines()
    assert lines[0] == "branin: GP-UCB - 3/3 runs done in 6.0 s"  # (the same time once: a user test)
    assert lines[1].endswith("GP-EI  - 2/2 runs done in 3.0 s, 9.0 s elapsed")  # not wrapped
    assert len(lines) == 2


def test_a_long_task_prints_at_most_every_interval():
    console, out = piped()
    clock = Clock()
    with LineProgress(console, every=60.0, clock=clock) as bar:
        task = bar.add_task("HPO", total=10)
        for _ in range(10):
            clock.now += 25.0
            bar.advance(task)
    lines = out.getvalue().splitlines()
    # 25 s per step: a line at 75 s (3 steps, >= 60 s since the start), 150 s, 225 s, then the end
    assert [re.match(r"HPO - (\d+)/10", line).group(1) for line in lines] == ["3", "6", "9", "10"]


def test_optimizer_run_prints_plain_lines_when_stdout_is_piped(capsys):
    opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), seed=0, n_initial=3)
    opt.run(lambda p: (p["x"] - 0.3) ** 2, budget=5)  # progress=True by default
    out = capsys.readouterr().out
    best = opt.best.value
    assert re.fullmatch(rf"best: {best:.6g} - 5/5 trials done in [\d.]+ s(, [\d.]+ s elapsed)?\n", out)
    opt.run(lambda p: (p["x"] - 0.3) ** 2, budget=6, progress=False)
    assert capsys.readouterr().out == ""


def test_a_resumed_run_counts_its_own_trials_on_the_terminal_and_when_piped(capsys, monkeypatch):
    # before: a run to budget=14 on a study of 9 trials ended on "14/14 trials" (it started at 9/14):
    # the bar counted the study's trials, not the run's; now "5/5 trials (14 in the study)"
    opt = wb.Optimizer(wb.Space([wb.Float("x", 0.0, 1.0)]), seed=0, n_initial=3)
    opt.run(lambda p: (p["x"] - 0.3) ** 2, budget=9, progress=False)
    opt.run(lambda p: (p["x"] - 0.3) ** 2, budget=14)
    out = capsys.readouterr().out
    assert re.fullmatch(
        r"best: \S+ - 5/5 trials \(14 in the study\) done in [\d.]+ s(, [\d.]+ s elapsed)?\n", out
    )
    terminal = io.StringIO()
    monkeypatch.setattr(rich, "_console", Console(file=terminal, force_terminal=True, width=120))
    opt.run(lambda p: (p["x"] - 0.3) ** 2, budget=16)
    final = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal.getvalue()).splitlines()[-1]
    assert re.search(r" 2/2 trials \(16 in the study\) 0:00:\d\d", final), final
