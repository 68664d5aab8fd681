"""Warnings that point at the user's line, however deep inside warmbo they are raised.

``warnings.warn(..., stacklevel=n)`` counts frames by hand, and the count is wrong as soon as a frame
is added between the warning and the caller: :func:`~warmbo._threads.blas_limited` wraps every public
entry point that does linear algebra (``MetaKeL.fit``, ``GP.fit``, ``Optimizer.ask``, ...) and its
wrapper is one more frame, so such warnings pointed at ``_threads.py`` instead of the user's code.
:func:`warn` instead attributes the warning to the first frame outside the warmbo package (the
approach of pandas' ``find_stack_level``), which is the same line whatever the depth or the
wrappers. Python 3.12's ``skip_file_prefixes`` does the same, but warmbo supports 3.10. Frames of
the libraries that call warmbo for the user (scikit-learn's search and cross-validation, joblib,
Optuna's study loop: :data:`_CALLERS`) are passed over too, so a warning raised under
``WarmboSearchCV(...).fit(X, y)`` points at that line, not at ``sklearn/model_selection/_search.py``.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["UnansweredAskWarning", "held_warnings", "warn", "user_stacklevel"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
#: libraries whose frames stand between the user's line and warmbo's (:func:`user_stacklevel`)
_CALLERS = ("sklearn", "joblib", "optuna")


def _inside(filename: str) -> bool:
    """Whether a frame's file is warmbo's or one of :data:`_CALLERS`' (those already imported)."""
    path = os.path.abspath(filename)
    if path.startswith(_PACKAGE):
        return True
    for name in _CALLERS:
        module = sys.modules.get(name)
        where = getattr(module, "__file__", None)
        if where and path.startswith(os.path.dirname(os.path.abspath(where)) + os.sep):
            return True
    return False


class UnansweredAskWarning(UserWarning):
    """``Optimizer.ask()`` called again while the trial it suggested last is still pending and
    nothing was told since (a notebook cell with ``opt.ask()`` run twice): that trial stays pending,
    and the optimizer treats it as running. Said once per optimizer, only for ``ask()`` called by hand
    on the main thread (never by ``run``, ``ask(n)``, worker threads, the integrations or the CLI)."""


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a ``warnings.warn`` in the calling function point at the first
    frame outside warmbo and the libraries calling it (:data:`_CALLERS`; the outermost frame if every
    frame is inside, e.g. under ``python -m``)."""
    frame = sys._getframe(1)  # the function that will call warnings.warn: stacklevel 1
    level = 1
    while frame.f_back is not None and _inside(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level


_held = threading.local()


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` attributed to the first frame outside warmbo; in a worker
    thread of :func:`~warmbo._threads.map_limited` (inside :func:`held_warnings`), kept for the
    thread that waits for it to say, at its caller's line (a worker's stack has no user frame)."""
    pending = getattr(_held, "pending", None)
    if pending is not None:
        pending.append((message, category))
        return
    warnings.warn(message, category, stacklevel=user_stacklevel())


@contextmanager
def held_warnings() -> Iterator[list[tuple[str, type[Warning]]]]:
    """Collect what :func:`warn` says in this thread instead of saying it (the list yielded); for
    worker threads, where ``warnings.catch_warnings`` cannot be used: it swaps the process-wide
    filters, and two threads inside it at once leave each other's filters behind."""
    pending: list[tuple[str, type[Warning]]] = []
    previous = getattr(_held, "pending", None)
    _held.pending = pending
    try:
        yield pending
    finally:
        _held.pending = previous
