"""Progress of long runs: a live bar on a terminal or in a notebook, plain lines when piped.

One rule for every long command (``warmbo demo``, ``warmbo reproduce``, ``Optimizer.run``): a rich
bar is drawn only where it can be seen, a terminal. Piped or redirected, a transient rich bar shows
nothing at all until the run ends, so :func:`progress` returns a :class:`LineProgress` instead: the
part of :class:`rich.progress.Progress` the runners use (``add_task``, ``update``, ``advance``,
``remove_task``), printing one plain line when a task finishes and, while a task is running, a line
at most every ``every`` seconds, so a piped run is never silent for long and never floods its log.

In a notebook (Jupyter, VS Code, Colab) it returns a :class:`NotebookProgress`: one text output
updated in place through IPython's display ids. Rich's own bar there needs ipywidgets, which
warmbo does not require: without it every refresh (four a second) printed a warning box, 73 in a
12-trial ``Optimizer.run`` and no bar; with it the bar lives in a widget that a saved or
nbconvert-executed notebook does not show.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

__all__ = ["LineProgress", "NotebookProgress", "UnitColumn", "live", "progress"]


def live(console: Console) -> bool:
    """Whether a live bar on ``console`` is seen as it runs (a terminal or a notebook)."""
    return bool(console.is_terminal or console.is_jupyter)


def progress(
    console: Console, every: float = 60.0, transient: bool = True
) -> Progress | LineProgress | NotebookProgress:
    """A rich bar on a terminal (removed when done if ``transient``), a :class:`NotebookProgress` in a
    notebook, else a :class:`LineProgress`."""
    if console.is_jupyter:
        return NotebookProgress()
    if live(console):
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            UnitColumn(),
            TimeElapsedColumn(),
        )
        return Progress(*columns, console=console, transient=transient)
    return LineProgress(console, every=every)


class UnitColumn(ProgressColumn):
    """The task's ``unit`` field after its count (``"5/5 trials (14 in the study)"``), as the plain
    lines and the notebook output show it; nothing for a task without one."""

    def render(self, task: Task) -> Text:
        return Text(str(task.fields.get("unit", "")))


@dataclass
class _Task:
    description: str
    total: float | None
    completed: float
    unit: str
    started: float
    reported: bool = False
    ended: float | None = None  # when it reached its total (NotebookProgress stops its clock there)


class LineProgress:
    """Plain-text stand-in for :class:`rich.progress.Progress`: one line per finished task.

    A line reads ``"<description> - <completed>/<total> <unit> done in <s> s, <s> s elapsed"``: the
    task's own time, then the time since the progress was entered, when it differs (a single task's
    line gives its time once). ``unit`` is a field given to
    ``add_task`` (rich keeps it as an unused task field), ``"runs"`` by default.

    Parameters
    ----------
    console : rich.console.Console
        Where the lines go (no markup, no highlighting, no wrapping).
    every : float or None
        While a task runs, print its progress when this many seconds have passed since the last line
        (None: only finished tasks).
    clock : callable
        Seconds, monotone (``time.monotonic``; tests pass a fake clock).
    """

    def __init__(
        self, console: Console, every: float | None = 60.0, clock: Callable[[], float] = time.monotonic
    ):
        self.console = console
        self.every = every
        self.clock = clock
        self.tasks: dict[int, _Task] = {}
        self.start = self.last_line = clock()

    def __enter__(self) -> LineProgress:
        self.start = self.last_line = self.clock()
        return self

    def __exit__(self, *exc) -> bool:
        return False

    def add_task(self, description: str, total: float | None = 100.0, completed: float = 0, **fields) -> int:
        """Start a task; returns its id."""
        task_id = len(self.tasks)
        self.tasks[task_id] = _Task(description, total, completed, fields.get("unit", "runs"), self.clock())
        return task_id

    def update(
        self,
        task_id: int,
        *,
        description: str | None = None,
        total: float | None = None,
        completed: float | None = None,
        advance: float | None = None,
        **fields,
    ) -> None:
        """Change a task as :meth:`rich.progress.Progress.update` does; may print its line."""
        task = self.tasks[task_id]
        if description is not None:
            task.description = description
        if total is not None:
            task.total = total
        if completed is not None:
            task.completed = completed
        if advance is not None:
            task.completed += advance
        if "unit" in fields:
            task.unit = fields["unit"]
        self._report(task)

    def advance(self, task_id: int, advance: float = 1) -> None:
        """Advance a task by ``advance``; may print its line."""
        self.update(task_id, advance=advance)

    def remove_task(self, task_id: int) -> None:
        """Forget a task (its line was printed when it finished)."""
        self.tasks.pop(task_id, None)

    def _report(self, task: _Task) -> None:
        now = self.clock()
        finished = task.total is not None and task.completed >= task.total
        if finished and not task.reported:
            task.reported = True
        elif finished or self.every is None or now - self.last_line < self.every:
            return
        total = "?" if task.total is None else f"{task.total:g}"
        done = f"{task.completed:g}/{total} {task.unit} done"
        own, elapsed = f"{now - task.started:.1f}", f"{now - self.start:.1f}"
        since = (
            "" if own == elapsed else f", {elapsed} s elapsed"
        )  # (one task: the same time twice, a user test)
        self.console.print(
            f"{task.description} - {done} in {own} s{since}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        self.last_line = now


def _elapsed(seconds: float) -> str:
    """``H:MM:SS``, as rich's ``TimeElapsedColumn`` shows it."""
    seconds = max(int(seconds), 0)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class NotebookProgress(LineProgress):
    """The bar of a notebook cell: one plain-text output, replaced in place as tasks advance.

    Each task is a line ``"<description> <bar> <completed>/<total> <unit> <H:MM:SS>"``. The output is
    created by the first task and updated through its display id (``IPython.display.display(...,
    display_id=True)``), at most every ``every`` seconds while tasks run, and always when a task is
    added, finishes or is removed, and when the progress ends, so the cell keeps the final state. It
    needs no ipywidgets and shows in a saved notebook as in a live one.

    Parameters
    ----------
    display : callable, optional
        ``display(data, raw=True, display_id=True) -> handle`` with ``handle.update(data, raw=True)``:
        IPython's ``display`` by default (tests pass a recorder).
    every : float
        Least seconds between two updates while tasks run.
    clock : callable
        Seconds, monotone.
    width : int
        Characters of the bar.
    """

    def __init__(
        self,
        display: Callable | None = None,
        every: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
        width: int = 40,
    ):
        super().__init__(Console(quiet=True), every=every, clock=clock)
        self.display = display
        self.width = width
        self.handle = None
        self.shown = False

    def __exit__(self, *exc) -> bool:
        self._render()
        return False

    def add_task(self, description: str, total: float | None = 100.0, completed: float = 0, **fields) -> int:
        task_id = super().add_task(description, total=total, completed=completed, **fields)
        self._render()
        return task_id

    def remove_task(self, task_id: int) -> None:
        super().remove_task(task_id)
        self._render()

    def _report(self, task: _Task) -> None:
        finished = task.total is not None and task.completed >= task.total
        if finished and task.ended is None:
            task.ended = self.clock()
        elif not finished:
            task.ended = None
        if (finished and not task.reported) or self.clock() - self.last_line >= self.every:
            task.reported = task.reported or finished
            self._render()

    def _line(self, task: _Task) -> str:
        if task.total:
            done = round(self.width * min(max(task.completed / task.total, 0.0), 1.0))
            bar = "\u2501" * done + "\u2500" * (self.width - done)
            counts = f"{task.completed:g}/{task.total:g}"
        else:
            bar, counts = "", f"{task.completed:g}"
        end = self.clock() if task.ended is None else task.ended
        parts = (task.description, bar, f"{counts} {task.unit}", _elapsed(end - task.started))
        return " ".join(part for part in parts if part)

    def text(self) -> str:
        """What the output shows now: one line per task."""
        return "\n".join(self._line(task) for task in self.tasks.values())

    def _render(self) -> None:
        self.last_line = self.clock()
        if not self.shown and not self.tasks:
            return
        data = {"text/plain": self.text()}
        if not self.shown:
            self.shown = True
            display = self.display
            if display is None:
                from IPython.display import display
            self.handle = display(data, raw=True, display_id=True)
        elif self.handle is not None:
            self.handle.update(data, raw=True)
