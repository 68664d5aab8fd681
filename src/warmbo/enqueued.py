"""Points the user asks to have evaluated first, kept in the study: the queue behind
:meth:`warmbo.Optimizer.enqueue` and ``warmbo enqueue``.

A configuration known to be good (last month's best, a colleague's default, the one row of an earlier
run) is the commonest warm start there is; Optuna's ``Study.enqueue_trial`` and Ax's
``attach_trial`` serve it. Each queued point is a meta entry ``queued:<n>`` of the study (``n``
zero-padded and increasing: the queue's order) holding the JSON record
``{"params": {...}, "at": <unix time>, "trial": <id or null>}``. An ask takes the first entry whose
trial is not in the study, inside the write transaction that stores the trial, and writes the
trial's id into the entry; so two workers never take the same entry, a process killed before that
commit leaves the entry waiting, and an ``ask(n)`` that fails after taking one (and removes the
trials it stored, all or nothing) leaves it waiting again. An entry may name some of the
parameters only (a partial point, as Optuna's ``enqueue_trial`` takes): the ask that takes it
chooses the others with these held (:meth:`warmbo.Optimizer.ask`'s ``fixed``), without the lock,
and marks the entry in the transaction that stores its trial, after checking that no other worker
took it meanwhile. An entry is waiting when its ``trial`` is null, or names no trial of the study
that has its values (SQLite may give a removed trial's id to the next one). A taken entry whose
trial is no longer pending (told or failed) is deleted at the next take: the queue holds what is
waiting and what is being evaluated, not the study's history (the trials are that).

Written by hand: a few lines over the study's meta table, which no library offers.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .trial import PENDING

__all__ = [
    "QUEUE_PREFIX",
    "QueuedPoint",
    "holds",
    "is_waiting",
    "new_records",
    "queue_records",
    "stale_keys",
]

#: key prefix of the queue's meta entries
QUEUE_PREFIX = "queued:"
#: digits of an entry's number (keys sort as numbers while they have this many)
_DIGITS = 9


@dataclass(frozen=True)
class QueuedPoint:
    """One entry of the queue: its meta key, the point, when it was queued and the trial that took
    it (None while waiting)."""

    key: str
    params: dict[str, Any]
    at: float | None
    trial: int | None

    def record(self) -> str:
        """The entry's JSON text, as stored."""
        return json.dumps({"params": self.params, "at": self.at, "trial": self.trial})


def _parsed(key: str, text: str) -> QueuedPoint | None:
    """The entry stored under ``key``, or None when it does not read as one (edited by hand)."""
    try:
        record = json.loads(text)
    except ValueError:
        return None
    if not isinstance(record, Mapping) or not isinstance(record.get("params"), Mapping):
        return None
    trial = record.get("trial")
    at = record.get("at")
    return QueuedPoint(
        key,
        dict(record["params"]),
        float(at) if isinstance(at, int | float) else None,
        int(trial) if isinstance(trial, int) and not isinstance(trial, bool) else None,
    )


def queue_records(study) -> list[QueuedPoint]:
    """Every entry of ``study``'s queue in order (waiting and taken); unreadable entries are skipped."""
    entries = (_parsed(key, text) for key, text in sorted(study.meta_items(QUEUE_PREFIX).items()))
    return [entry for entry in entries if entry is not None]


def holds(params: Mapping[str, Any], entry: QueuedPoint) -> bool:
    """Whether a trial's ``params`` have every value ``entry`` names (all of them for a whole point,
    some for a partial one)."""
    return all(name in params and params[name] == value for name, value in entry.params.items())


def is_waiting(entry: QueuedPoint, trials_by_id: Mapping[int, Any]) -> bool:
    """Whether ``entry`` still waits for an ask: never taken, or its trial is not in the study with its
    values (removed by a failed ask's clean-up)."""
    if entry.trial is None:
        return True
    trial = trials_by_id.get(entry.trial)
    return trial is None or not holds(trial.params, entry)


def stale_keys(entries: list[QueuedPoint], trials_by_id: Mapping[int, Any]) -> list[str]:
    """Keys of taken entries whose trial is told or failed: done with, deleted at the next take."""
    done = []
    for entry in entries:
        trial = None if entry.trial is None else trials_by_id.get(entry.trial)
        if trial is not None and holds(trial.params, entry) and trial.state != PENDING:
            done.append(entry.key)
    return done


def new_records(entries: list[QueuedPoint], points: list[dict[str, Any]]) -> dict[str, str]:
    """Meta entries that append ``points`` to a queue holding ``entries`` (numbered after its last)."""
    last = 0
    for entry in entries:
        try:
            last = max(last, int(entry.key[len(QUEUE_PREFIX) :]))
        except ValueError:
            continue
    now = time.time()
    return {
        f"{QUEUE_PREFIX}{last + i:0{_DIGITS}d}": QueuedPoint("", point, now, None).record()
        for i, point in enumerate(points, start=1)
    }
