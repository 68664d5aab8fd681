"""The record of a study's transfer sources: the rows in the user's units, their task labels and the
transfer settings, as zlib-compressed JSON in the study's metadata (:func:`sources_text`), read back
by :func:`sources_from_text`, and the :func:`digest` that names a set of sources.

A study that transfers keeps its sources this way, so ``Optimizer.load(url)``, ``warmbo suggest`` and
a resumed run transfer as the first optimizer object did, on another machine too, without the source
files. Reading them back is on the path of every ``warmbo suggest``: a record (its bytes guarded by
zlib's checksum) is taken as the canonical rows it was written from, checked column by column, not
validated row by row or hashed again.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zlib

import numpy as np

from .data import DataError, TaskData
from .space import Space

__all__ = ["digest", "sources_text", "sources_from_text", "sources_summary_from_text"]


def digest(data: TaskData) -> str:
    """A short hash of the data's points, values and task labels: the tag under which a prior is
    told once per study (reopening a study with the same prior adds nothing). Kept on the object
    (a TaskData does not change), since it costs 0.3 s for 100,000 rows of 4 parameters."""
    known = getattr(data, "_digest", None)
    if known is not None:
        return known
    value = _digest_of(data.params, data.y, data.task)
    object.__setattr__(data, "_digest", value)
    return value


def _digest_of(params, y, task) -> str:
    h = hashlib.sha256()
    h.update(json.dumps([list(p.items()) for p in params], default=repr).encode())
    h.update(np.asarray(y, dtype=np.float64).tobytes())
    if task is not None:
        h.update("\x00".join(map(str, task)).encode())
    return h.hexdigest()[:16]


def sources_text(data: TaskData, settings: dict, data_digest: str | None = None) -> str:
    """The transfer sources ``data`` and the ``settings`` they are used with, as one short ASCII text
    (zlib-compressed JSON, base64) to store with a study; read back with :func:`sources_from_text`.

    Rows are stored column by column in the order of ``data.space.names`` (50 sources x 300 rows of
    random values in a 4-parameter space: 0.94 MB, bench/transfer_resume.py; values on a grid
    compress much better), with their digest so that a reader can tell a complete record
    (``data_digest``: :func:`digest` of ``data`` when the caller has it; it costs 0.23 s for 50 x 300
    rows of 20 parameters).

    zlib level 1: on those rows, 2.95 MB in 0.045 s against level 6's 2.77 MB in 0.33 s (d = 4: 0.71
    MB in 0.011 s against 0.66 MB in 0.11 s); every level reads back the same way.
    """
    names = data.space.names
    record = {
        "version": 1,
        "settings": settings,
        "digest": digest(data) if data_digest is None else data_digest,
        "source": str(data.source),
        "names": list(names),
        # (points are canonical, plain Python values, as the study's own trials store them; null for a
        # conditional parameter inactive at the point)
        "columns": [[p.get(name) for p in data.params] for name in names],
        "y": [float(v) for v in data.y],
        "task": None if data.task is None else [str(t) for t in data.task],
    }
    raw = json.dumps(record, separators=(",", ":"), allow_nan=False).encode()
    return base64.b64encode(zlib.compress(raw, 1)).decode("ascii")


def _in_space(columns: list, space: Space) -> bool:
    """Whether the stored columns (one list per parameter, in the space's order) hold values of their
    parameters' kinds within their ranges: floats of a ``Float``, ints of an ``Int`` (bools refused),
    choices of a ``Categorical`` (type-aware), checked column by column. Not a full validation (a
    grid's step is not checked): the guard of a record read back without validation
    (:func:`sources_from_text`)."""
    from .space import Categorical, Float, Int

    for p, column in zip(space.params, columns, strict=True):
        if p.when is not None:  # (null where the parameter is inactive; which rows, from_records checks)
            column = [v for v in column if v is not None]
        if isinstance(p, Categorical):
            allowed = {(type(c), c) for c in p.choices}
            if not all((type(v), v) in allowed for v in column):
                return False
            continue
        kind = float if isinstance(p, Float) else int if isinstance(p, Int) else None
        if kind is None or not all(type(v) is kind for v in column):
            return False
        values = np.asarray(column, dtype=np.float64)
        tol = 1e-9 * max(1.0, abs(p.high - p.low))
        if values.size and not (values.min() >= p.low - tol and values.max() <= p.high + tol):
            return False
    return True


def sources_summary_from_text(text: str) -> dict | None:
    """The digest and settings of a :func:`sources_text` record (``{"digest", **settings}``), without
    reading its rows into a TaskData; None when the record cannot be read."""
    try:
        record = json.loads(zlib.decompress(base64.b64decode(text.encode("ascii"), validate=True)))
        return {"digest": record["digest"], **dict(record["settings"])}
    except (ValueError, KeyError, TypeError, AttributeError, zlib.error):
        return None


def sources_from_text(text: str, space: Space) -> tuple[TaskData, dict]:
    """The sources and settings stored by :func:`sources_text`, checked against ``space``.

    Raises :class:`DataError` naming the problem when the record is unreadable (damaged bytes fail
    zlib's checksum), was written for other parameters, or holds a value its parameter refuses (a
    record written by hand: it is then validated row by row, which names the row, and must match its
    digest); the data are then not used."""
    try:
        record = json.loads(zlib.decompress(base64.b64decode(text.encode("ascii"), validate=True)))
        if record.get("version") != 1:
            raise ValueError(f"record version {record.get('version')!r}, this warmbo reads version 1")
        names, columns = list(record["names"]), record["columns"]
        settings = dict(record["settings"])
        if names == list(space.names):
            params = [
                {n: v for n, v in zip(names, row, strict=True) if v is not None}
                for row in zip(*columns, strict=True)
            ]
            y, task, digest_stored = record["y"], record["task"], record["digest"]
    except (ValueError, KeyError, TypeError, AttributeError, zlib.error) as exc:
        raise DataError(f"the study's stored transfer sources are unreadable ({exc})") from None
    if names != list(space.names):
        raise DataError(
            f"the study's stored transfer sources have parameters {names}, the space has {list(space.names)}"
        )
    source = record.get("source") or "<stored sources>"
    try:
        intact = isinstance(digest_stored, str) and _in_space(columns, space)
    except (TypeError, ValueError):
        intact = False
    if intact:
        # the rows of a TaskData validated against this study's space (it cannot change) when it was
        # stored, the bytes as written (zlib's checksum): made canonical then, so neither validated
        # row by row again (1.4 s for 100,000 rows of 4 parameters at every `warmbo suggest`) nor
        # hashed again (0.5 s); a column-wise check of kinds and ranges stands guard against a record
        # written by hand, and the values and labels are still checked
        data = TaskData._of_canonical(tuple(params), y, task, space, source)
        object.__setattr__(data, "_digest", digest_stored)
        return data, settings
    data = TaskData.from_records(params, y, space, task=task, source=source)
    if digest(data) != digest_stored:
        raise DataError("the study's stored transfer sources do not match their digest (a partial write?)")
    return data, settings
