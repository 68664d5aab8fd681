"""Trials: one evaluation of the objective, as stored in a study.

A trial is created ``pending`` by ``Optimizer.ask`` (or directly ``complete`` by telling a point
that was never asked), then becomes ``complete`` with a value or ``failed``. Trials are immutable
records: the store returns new ones after every change.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Trial", "History", "PENDING", "COMPLETE", "FAILED", "STATES", "amendment_note", "why_and_who"]

PENDING = "pending"
COMPLETE = "complete"
FAILED = "failed"
STATES = (PENDING, COMPLETE, FAILED)


@dataclass(frozen=True)
class Trial:
    """One evaluation of the objective.

    Attributes
    ----------
    id : int
        Trial id, unique within the study, increasing in creation order.
    params : dict
        Parameter values (validated against the study's space).
    state : {"pending", "complete", "failed"}
    value : float or None
        Objective value on the user's scale (None unless complete).
    created, completed : float or None
        Unix timestamps.
    worker : str or None
        Who asked for / told the trial (``user@host:pid`` by default, ``"prior"`` for imported data).
    error : str or None
        Why the trial failed, if it did.
    values : tuple of float or None
        The vector of task values of a multi-task trial (:class:`~warmbo.MultiTaskOptimizer`), whose
        ``value`` is then the expected scalarised utility of that vector.
    """

    id: int
    params: dict[str, Any]
    state: str
    value: float | None = None
    created: float | None = None
    completed: float | None = None
    worker: str | None = None
    error: str | None = field(default=None, compare=False)
    values: tuple[float, ...] | None = None

    def __repr__(self) -> str:
        """``Trial(id=12, state='complete', value=0.963, params={...})``: the fields that say what the
        trial is (``error`` when it failed, ``values`` for a multi-task trial); the timestamps and the
        worker are attributes (the dataclass's repr printed them all, 300 characters a trial)."""
        fields = [f"id={self.id}", f"state={self.state!r}"]
        fields += [
            f"{name}={getattr(self, name)!r}"
            for name in ("value", "values", "error")
            if getattr(self, name) is not None
        ]
        return f"Trial({', '.join(fields)}, params={self.params!r})"

    @property
    def is_complete(self) -> bool:
        return self.state == COMPLETE

    @property
    def is_pending(self) -> bool:
        return self.state == PENDING

    @property
    def is_failed(self) -> bool:
        return self.state == FAILED

    def as_row(self, task_names=None) -> dict[str, Any]:
        """Flat dict: id, state, value, timestamps, worker, error (a failed trial's), the task values
        of a multi-task trial (a column per task, named by ``task_names`` or ``value_0, value_1,
        ...``; a task name that is also a parameter's or a fixed column's becomes ``value_<name>``),
        then one column per parameter. A fixed column whose name a parameter has gives way as
        ``warmbo export``'s do: ``warmbo_<name>`` (a parameter named ``value`` overwrote the trial's
        value)."""
        fixed = {
            "id": self.id,
            "state": self.state,
            "value": self.value,
            "created": self.created,
            "completed": self.completed,
            "worker": self.worker,
            "error": self.error,  # (why a failed trial failed; a user test found it only on Trial.error)
        }
        row = {(f"warmbo_{k}" if k in self.params else k): v for k, v in fixed.items()}
        if self.values is not None:
            names = [f"value_{i}" for i in range(len(self.values))]
            if task_names is not None and len(task_names) == len(self.values):
                names = task_columns(task_names, set(row) | set(self.params))
            row.update(zip(names, self.values, strict=True))
        row.update(self.params)
        return row


def task_columns(task_names: Sequence[str], taken: Iterable[str]) -> list[str]:
    """The column of each task beside the columns ``taken`` (parameters, fixed columns): its name,
    else ``value_<name>``, else ``warmbo_value_<name>``, else that with the task's index: distinct
    from ``taken`` and from each other. One rule for ``History.to_dataframe``, ``warmbo export`` and
    ``warmbo status`` (each had its own; a parameter named ``value_time`` beside a task ``time`` gave
    two columns of one name, a review)."""
    used = {str(t) for t in taken}
    columns = []
    for k, task in enumerate(task_names):
        options = (str(task), f"value_{task}", f"warmbo_value_{task}", f"warmbo_value_{task}_{k}")
        column = next((c for c in options if c not in used), f"warmbo_task_{k}")
        used.add(column)
        columns.append(column)
    return columns


class History(list):
    """A list of trials with a ``to_dataframe()`` (needs pandas, not a core dependency);
    ``task_names`` (a multi-task study's) name the task value columns."""

    def __init__(self, trials=(), task_names=None):
        super().__init__(trials)
        self.task_names = None if task_names is None else tuple(task_names)

    #: trials a repr shows in full; a longer history shows its first and last HEAD // 2
    HEAD = 10

    def __repr__(self) -> str:
        """A count of the trials by state, then one trial a line, the first and last 5 of a long
        history (a notebook cell ending with ``opt.history`` printed every field of every trial: 3,800
        characters at 12 trials)."""
        counts = Counter(t.state for t in self if isinstance(t, Trial))
        states = ", ".join(f"{counts[s]} {s}" for s in (COMPLETE, FAILED, PENDING) if counts[s])
        head = f"History of {len(self)} trial{'' if len(self) == 1 else 's'}" + (
            f" ({states})" if states else ""
        )
        shown = [repr(t) for t in self]
        if len(shown) > self.HEAD:
            half = self.HEAD // 2
            shown = [*shown[:half], f"... {len(shown) - 2 * half} more ...", *shown[-half:]]
        return "\n  ".join([head + (":" if shown else ""), *shown])

    def to_dataframe(self):
        """The trials as a pandas DataFrame, one row per trial (see :meth:`Trial.as_row`).

        ``created`` and ``completed`` are datetimes in the machine's local time zone (time-zone
        aware, as the CLI's ``export`` writes them), and ``duration`` is their difference (a
        ``Timedelta``; missing for a pending trial), as Optuna's ``trials_dataframe()`` has
        ``datetime_start``, ``datetime_complete`` and ``duration``."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("History.to_dataframe() needs pandas: pip install pandas") from exc
        frame = pd.DataFrame([trial.as_row(self.task_names) for trial in self])
        if frame.empty:
            return frame
        # the parameter columns in the space's order: pandas orders them as they first appear, and a
        # conditional space's first trial may lack some (a linear SVM's gamma went last)
        order: list[str] = []
        for trial in self:
            at = -1
            for name in trial.params:  # (each trial's own are in the space's order: merged so)
                if name in order:
                    at = order.index(name)
                else:
                    at += 1
                    order.insert(at, name)
        frame = frame[[c for c in frame.columns if c not in order] + order]
        for name in order:  # an integer parameter some trials lack: pandas' nullable Int64, not floats
            values = [t.params[name] for t in self if name in t.params]
            if len(values) < len(self) and all(type(v) is int for v in values):
                frame[name] = frame[name].astype("Int64")
        from dateutil.tz import tzlocal  # (pandas' own dependency)

        local = tzlocal()  # (each time at its own offset: a fixed one put summer times an hour off)
        params = {name for trial in self for name in trial.params}  # (a name they take: Trial.as_row)
        created, completed, duration = (
            f"warmbo_{k}" if k in params else k for k in ("created", "completed", "duration")
        )
        for column in (created, completed):
            stamps = pd.to_numeric(frame[column], errors="coerce")  # (None for a pending trial)
            frame[column] = pd.to_datetime(stamps, unit="s", utc=True).dt.tz_convert(local)
        frame.insert(frame.columns.get_loc(completed) + 1, duration, frame[completed] - frame[created])
        return frame

    def complete(self) -> History:
        """Only the complete trials."""
        return History((t for t in self if t.is_complete), self.task_names)


def why_and_who(record: dict) -> str:
    """``recorded twice; by ana``: the ``note`` and ``by`` of a correction's or a withdrawal's record
    (:meth:`warmbo.storage.Study.amend`, :meth:`~warmbo.storage.Study.withdraw`), either or both; ""
    for neither."""
    by = f"by {record['by']}" if record.get("by") else None
    return "; ".join(str(part) for part in (record.get("note"), by) if part)


def amendment_note(earlier: list[dict], task_names=()) -> str:
    """One line on what an amended trial held before: ``amended, was value 55.2 (why)`` from the
    records :meth:`warmbo.storage.Study.amendments` returns (oldest first; the latest is shown, with
    the number of amendments when there were several). Shown by ``warmbo status`` and the report."""
    if not earlier:
        return ""
    last = earlier[-1]
    try:
        if last.get("state") == COMPLETE and task_names and last.get("values") is not None:
            was = ", ".join(
                f"{name}={float(v):.6g}" for name, v in zip(task_names, last["values"], strict=True)
            )
        elif last.get("state") == COMPLETE and last.get("value") is not None:
            was = f"value {float(last['value']):.6g}"
        else:
            was = str(last.get("state", "?")) + (f": {last['error']}" if last.get("error") else "")
    except (TypeError, ValueError, AttributeError):  # a hand-edited record: say it exists
        return "amended"
    times = f" {len(earlier)}x" if len(earlier) > 1 else ""
    said = why_and_who(last)
    why = f" ({said})" if said else ""
    return f"amended{times}, was {was}{why}"
