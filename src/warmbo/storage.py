"""Durable study store: the space, the optimizer settings and every trial, in SQLite.

A study lives at a storage URL: ``"study.db"``, ``"sqlite:///study.db"`` (relative path),
``"sqlite:////abs/path/study.db"`` or ``None``/``":memory:"`` (in memory, for throw-away runs), or
``"postgresql://user@host/db?study=NAME"`` (one study shared by many machines: the same class, the
back end of :mod:`warmbo.storage_postgres`, with the same guarantees).
A ``?mode=ro`` suffix on a ``sqlite:///`` URL, or ``Study(..., readonly=True)``, opens an existing
study read-only: nothing is created or migrated, a write raises :class:`StorageError`, and a study
in a folder the reader cannot write (where SQLite cannot create its ``-shm`` file) is read as an
immutable file. ``warmbo status`` and ``warmbo report`` open studies this way.
Guarantees:

- every change (a new pending trial, a told value, a failure) is committed before the call returns,
  with ``synchronous=FULL``, so a process killed at any moment loses no told trial;
- several processes may share one study: writes run in ``BEGIN IMMEDIATE`` transactions (one
  writer at a time, readers never blocked, WAL journal), and :meth:`Study.transaction` lets the
  optimizer read the trials, choose points and insert them as pending atomically, so two workers
  never get the same trial id or the same pending point;
- a study opened with a different space is refused with an error that lists the differences.
- a recorded result is never overwritten silently: a complete trial changes only through
  :meth:`Study.amend`, which keeps its earlier result (meta ``amended:<id>``) in the same transaction.

Written on the standard library's ``sqlite3``: no ORM is needed for two tables. Other back ends
(:data:`_BACKENDS`: PostgreSQL) subclass :class:`Study` in their own modules and are chosen by URL.

Why this file is long: the study interface every back end shares (URLs, validation of values and
ids, the stored space and settings) and its SQLite implementation with heartbeats, which share one
class; the PostgreSQL back end lives in :mod:`warmbo.storage_postgres`.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import math
import os
import re
import socket
import sqlite3
import stat
import threading
import time
import warnings
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ._validation import not_a_real_number
from ._warnings import user_stacklevel
from .enqueued import queue_records
from .parameters import stored_space as stored_space_block
from .space import Space
from .trial import COMPLETE, FAILED, PENDING, STATES, History, Trial

__all__ = [
    "Study",
    "StorageError",
    "TrialNotFoundError",
    "StoreUnavailableError",
    "ConnectionLostError",
    "parse_url",
    "default_worker",
    "study_exists",
]

_SCHEMA_VERSION = "1"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trials (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    params TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'complete', 'failed')),
    value REAL,
    created REAL NOT NULL,
    completed REAL,
    worker TEXT,
    error TEXT,
    vector TEXT
);
"""
# studies written before multi-task support lack the vector column; it is added on opening
_MIGRATIONS = {
    "vector": "ALTER TABLE trials ADD COLUMN vector TEXT",
    # last sign of life of a pending trial's worker (time.time()); NULL: the creation time counts
    "heartbeat": "ALTER TABLE trials ADD COLUMN heartbeat REAL",
}
_COLUMNS = "id, params, state, value, created, completed, worker, error, vector"
# what SQLite says when a write fails because of the file, not of the statement (see Study._write_error)
_WRITE_FAILURES = ("readonly", "unable to open", "malformed", "disk is full", "disk I/O error")


#: seconds after which an empty study file is taken as truncated rather than being created: SQLite
#: creates the file empty and writes its first page a moment later, and a process opening it then (a
#: study created by several workers at once) was told to restore it from a backup (a review: 9 of 36
#: opens of six processes started together)
EMPTY_SETTLED = 10.0


def _empty_file(path: str) -> bool:
    """Whether ``path`` is an existing file of 0 bytes, unchanged for :data:`EMPTY_SETTLED` s."""
    try:
        found = os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(found.st_mode) and found.st_size == 0 and time.time() - found.st_mtime > EMPTY_SETTLED


def _file_id(path: str) -> tuple[int, int]:
    """(device, inode) of a file: which file a path names now."""
    found = os.stat(path)
    return (found.st_dev, found.st_ino)


class ForeignTablesWarning(UserWarning):
    """A warmbo study's SQLite file also holds another program's tables (an Optuna storage's)."""


class NewStudyWarning(UserWarning):
    """A new study was created beside an existing file of a close name, or in a PostgreSQL database
    that holds a study of a close name (a mistyped path or ``study=``?)."""


def _series(name: str) -> str:
    """A name without its numbers (each with the separator before it): ``run-2.db``, ``run1.db`` and
    ``run.db`` are one series (a user walk-through: lab2.db, created with --prior lab.db, warned), so
    are ``2026-03-plate`` and ``2026-04-plate``. Case and other separators count: ``Lr-Sweep`` and
    ``lr_sweep`` beside ``lr-sweep`` are slips to warn of, not a series (before, the series folded
    case and dropped every separator, so neither warned)."""
    return re.sub(r"[_\-.\s]?\d+", "", name)


def _near_files(path: str) -> list[str]:
    """Files beside ``path`` whose names are close to its name (as it was typed: ``persit.db`` ->
    ``persist.db``), closest first; [] when there are none or the folder cannot be listed."""
    import difflib

    folder, name = os.path.split(path)
    numbered = _series(name)
    try:
        names = [
            n for n in os.listdir(folder or ".") if n != name and not n.endswith(("-wal", "-shm", "-journal"))
        ]
    except OSError:
        return []
    # (names that differ in their numbers alone, run2.db beside run1.db or lab.db, are a series)
    names = [n for n in names if _series(n) != numbered]
    # the name without its ending (`warmbo status april` for april.db: a chemist user test) first
    ending = [
        n for n in names if "." not in name and n.startswith(name + ".") and "." not in n[len(name) + 1 :]
    ]
    near = ending[:1] + [
        n for n in difflib.get_close_matches(name, names, n=3, cutoff=0.8) if n not in ending[:1]
    ]
    return [os.path.join(folder, n) for n in near if os.path.isfile(os.path.join(folder or ".", n))]


def _looks_mistyped(typed: str, existing: str) -> bool:
    """Whether a new study's file name ``typed`` is the existing study ``existing``'s with a slip: the
    same name but for case or a separator (``Lr-Sweep.db``, ``lr_sweep.db`` for ``lr-sweep.db``),
    another ending (``lab.bd``), or one letter added, left out, changed or two neighbours swapped in
    a name of at least 4 characters before its ending (``persit.db`` for ``persist.db``). A shorter
    name differs in one letter from many others (a user test was warned at ``c1.db`` beside ``t1.db``,
    ``pp.db`` beside ``pk.db``, and ``experiment.db`` beside the script ``experiment.py``: only an
    SQLite file is a study to mean)."""
    a, b = os.path.basename(typed), os.path.basename(existing)
    (stem_a, end_a), (stem_b, end_b) = os.path.splitext(a), os.path.splitext(b)
    if _folded(a) == _folded(b) or stem_a == stem_b:
        return True
    return end_a == end_b and _mistyped_name(stem_a, stem_b)


def _folded(name: str) -> str:
    """``name`` without case, its separators one ('+' too: a space in a URL)."""
    return re.sub(r"[_\-.\s+]", "-", name.casefold())


def _mistyped_name(typed: str, existing: str) -> bool:
    """Whether the name ``typed`` is ``existing`` with a slip: the same but for case or a separator,
    two neighbouring characters swapped, or (in names of 4 characters or more) one character added,
    left out or changed."""
    if typed == existing:
        return False
    if _folded(typed) == _folded(existing) or _swapped_neighbours(typed, existing):
        return True
    return min(len(typed), len(existing)) >= 4 and _one_edit(typed, existing)


def _swapped_neighbours(a: str, b: str) -> bool:
    """Whether ``a`` is ``b`` with two neighbouring characters swapped (``enyzme`` for ``enzyme``)."""
    if len(a) != len(b):
        return False
    diff = [i for i in range(len(a)) if a[i] != b[i]]
    return len(diff) == 2 and diff[1] == diff[0] + 1 and (a[diff[0]], a[diff[1]]) == (b[diff[1]], b[diff[0]])


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one insertion, deletion, substitution or swap of neighbours."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1 or _swapped_neighbours(a, b)
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def _sqlite_file(path: str) -> bool:
    """Whether the file at ``path`` begins as an SQLite database does."""
    try:
        with open(path, "rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


class StorageError(ValueError):
    """A storage URL, a study file or a stored record is unusable."""


class ConnectionLostError(StorageError):
    """The database server dropped the connection (a restart, a failover, ``pg_terminate_backend``, an
    idle timeout) inside a write transaction, which is lost with it. ``at_commit``: the drop came at
    the COMMIT, which may have reached the server, so the transaction may be stored after all (look
    before writing it again). ``reason``: the server's or the driver's words. The next call on the
    study connects again."""

    def __init__(self, message: str, at_commit: bool = False, reason: str = ""):
        super().__init__(message)
        self.at_commit = at_commit
        self.reason = reason or message


class StoreUnavailableError(StorageError):
    """The study's store cannot be written or reached now (a full disk, a server that stays down):
    what was being written can be written again once it can. Not raised for what the study refuses
    (a trial already complete, withdrawn)."""


class SettingConflictError(StorageError):
    """A setting given to an optimizer differs from the one its existing study was created with.
    ``key`` names the setting (the constructor's argument), ``created`` and ``given`` are the two
    values, so a front end (the command line) can say it in its own words."""

    def __init__(self, message: str, key: str, created: object, given: object):
        super().__init__(message)
        self.key = key
        self.created = created
        self.given = given


#: meta key prefix of a withdrawn trial's record (:meth:`Study.withdraw`)
WITHDRAWN_PREFIX = "withdrawn:"


def _withdrawn_record(text: str) -> dict:
    """A ``withdrawn:<id>`` meta entry's record (:meth:`Study.withdraw`); ``{}`` for one edited by hand
    into something else."""
    try:
        record = json.loads(text)
    except ValueError:
        return {}
    return record if isinstance(record, dict) else {}


class TrialNotFoundError(StorageError, KeyError):
    """No trial with the given id exists in the study."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


def _schema_message(path: str, found) -> str:
    """Why a study of another schema version cannot be opened, and what to do (a user test: "has
    schema version '2', expected 1" said neither)."""
    said = f"{path!r} has schema version {found!r}; this warmbo reads version {_SCHEMA_VERSION}"
    try:
        newer = int(found) > int(_SCHEMA_VERSION)
    except (TypeError, ValueError):
        newer = None
    if newer:
        return f"{said}: a newer warmbo wrote it; upgrade warmbo (pip install -U warmbo) to open it"
    if newer is None:
        return (
            f"{said}: its meta table holds no readable version, so warmbo did not write it or it was "
            "edited; its trials are untouched (read them with sqlite3 or psql)"
        )
    return f"{said}: an older warmbo wrote it, which this one cannot open"


class _Closer:
    """Closes a thread's connection when the thread's slot of the study's thread-local storage is
    freed: as the thread ends (in that thread: SQLite refuses a close from another), or when the
    study is dropped (another live thread's SQLite connection then at the next garbage collection,
    which frees it whatever thread runs it). The connection itself cannot do it: SQLite's sits in a
    reference cycle (its statement cache), freed only by a later garbage collection, and a run's
    heartbeat and worker threads each left one open until then. Python 3.13's sqlite3 and psycopg
    warn ``ResourceWarning`` for a connection collected open."""

    __slots__ = ("conn", "pid")

    def __init__(self, conn) -> None:
        self.conn = conn
        self.pid = os.getpid()

    def __del__(self) -> None:
        if self.pid != os.getpid():
            return  # (the parent's, in a forked child: closing it there is SQLite's "do not")
        with contextlib.suppress(Exception):  # (another thread's SQLite one: freed at collection)
            self.conn.close()


_STUDIES: weakref.WeakSet = weakref.WeakSet()

#: connections a forked child found in its thread's slot: the parent's, copied by the fork. Kept for
#: the child's life, never closed or collected there: SQLite's close of a copied connection may
#: touch the parent's locks and files, and a collected psycopg one warns "deleted while still open"
#: (a review)
_INHERITED: list = []


def _inherit(conn, local) -> None:
    """Keep ``conn`` (with its closer) when it is another process's, copied into this one by a fork."""
    if conn is not None and getattr(local, "pid", None) not in (None, os.getpid()):
        _INHERITED.append((conn, getattr(local, "closer", None)))


def _new_lock(study: Study) -> threading.RLock:
    """The study's write lock, made again in a forked child (:func:`_after_fork`)."""
    _STUDIES.add(study)
    return threading.RLock()


@contextmanager
def closing_opened() -> Iterator[None]:
    """Close, on the way out, this thread's connection of every study opened inside: a command of
    the CLI run in-process (typer's ``CliRunner``, a notebook calling ``warmbo.cli.app``) left them
    to the garbage collector. After an error the study sits in the traceback's reference cycle, and
    the collector may finalise psycopg's connection before the study's closer, so it warned "deleted
    while still open" (the CLI's ``observe`` of a second value, a PostgreSQL test). Studies opened
    before stay open; other threads close their own as they end (:meth:`Study.close`)."""
    before = weakref.WeakSet(_STUDIES)
    try:
        yield
    finally:
        for study in list(_STUDIES):
            if study not in before:
                with contextlib.suppress(Exception):  # (a connection the server dropped: gone already)
                    study.close()


def _after_fork() -> None:
    """A child forked while another thread of the parent held a study's lock (inside a write
    transaction) would wait for it for ever: that thread does not exist in the child. Each study
    gets a new lock there; its connections are made again too (``_local.pid``)."""
    for study in list(_STUDIES):
        study._lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def default_worker() -> str:
    """Worker name recorded with trials: ``user@host:pid[:thread]`` (``host:pid[:thread]`` where no
    user name can be found). The user name tells a lab sharing a study who took a suggestion:
    ``warmbo status`` lists the pending trials by worker, and ``vm:28630`` named nobody. The
    variable ``WARMBO_USER`` gives the name in place of the login's: on a lab computer that everyone
    uses under one account, every trial said ``lab@bench-pc`` (a user test); host and process stay,
    so two people's processes are still told apart."""
    import getpass

    user = os.environ.get("WARMBO_USER", "").strip()
    if not user:
        try:
            user = getpass.getuser()
        except Exception:  # noqa: BLE001 - no such variable and no passwd entry (a bare container)
            user = ""
    name = f"{user + '@' if user else ''}{socket.gethostname()}:{os.getpid()}"
    thread = threading.current_thread()
    if thread is not threading.main_thread():
        name += f":{thread.name}"
    return name


def person() -> str | None:
    """Who is at the keyboard, as stored with a correction or a withdrawal: ``WARMBO_USER``, else the
    login (the user part of :func:`default_worker`); None where neither is known."""
    worker = default_worker()
    return worker.split("@", 1)[0] if "@" in worker else None


_READONLY_QUERY = "?mode=ro"


#: Back ends other than SQLite, by URL scheme: "module:class", imported on first use (a back end
#: module subclasses Study and imports this one, never the other way round, and its driver loads
#: only when such a URL is opened).
_BACKENDS = {"postgresql": "warmbo.storage_postgres:PostgresStudy"}


def _backend(scheme: str) -> type:
    import importlib

    module, _, name = _BACKENDS[scheme].partition(":")
    return getattr(importlib.import_module(module), name)


#: the metadata a study's opening reads: not the rest (a transfer study's sources are ~1 MB, read
#: only by the optimizer that uses them)
_OPENING_KEYS = ("schema_version", "space", "settings", "created", "multitask")
_OPENING_META = f"SELECT key, value FROM meta WHERE key IN ({', '.join(repr(k) for k in _OPENING_KEYS)})"


def _is_postgres(url) -> bool:
    return isinstance(url, str) and url.strip().lower().startswith(("postgresql://", "postgres://"))


def readonly_url(url: str | os.PathLike) -> str:
    """The read-only form of a storage URL: ``sqlite:///path?mode=ro`` (``...&mode=ro`` for PostgreSQL)."""
    if is_readonly_url(url):
        return str(url)
    if _is_postgres(url):
        return url.strip() + ("&" if "?" in url else "?") + "mode=ro"
    path = parse_url(url)
    if path == ":memory:":
        raise StorageError("an in-memory study cannot be opened read-only")
    return "sqlite:///" + path + _READONLY_QUERY


def is_readonly_url(url) -> bool:
    """Whether a storage URL asks for a read-only study (``sqlite:///path?mode=ro``)."""
    if _is_postgres(url):
        from urllib.parse import parse_qsl, urlsplit

        return ("mode", "ro") in parse_qsl(urlsplit(url.strip()).query)
    return (
        isinstance(url, str) and url.strip().startswith("sqlite://") and url.strip().endswith(_READONLY_QUERY)
    )


def optuna_studies(url) -> list[str] | None:
    """The study names of an Optuna storage in the SQLite file at ``url`` (its ``studies`` and
    ``trials`` tables), or None for anything else: a user test gave an Optuna database as a warmbo
    prior and was told it does not exist."""
    if _is_postgres(url):
        return None
    try:
        path = parse_url(url)
    except (StorageError, ValueError):
        return None
    if path == ":memory:" or not Path(path).is_file():
        return None
    try:
        conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, timeout=10.0)
        try:
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not {"studies", "trials", "version_info"} <= tables:
                return None
            return [row[0] for row in conn.execute("SELECT study_name FROM studies ORDER BY study_id")]
        finally:
            conn.close()
    except sqlite3.Error:
        return None


def study_exists(url) -> bool:
    """Whether a study is stored at ``url`` (an SQLite file, or a named study in PostgreSQL)."""
    if _is_postgres(url):
        try:
            Study(readonly_url(url)).close()
            return True
        except StorageError as exc:
            if "no study" in str(exc):
                return False
            raise
    path = parse_url(url)
    if path == ":memory:" or not Path(path).is_file() or Path(path).stat().st_size == 0:
        return False  # an empty file (`touch lab.db`) holds no study yet
    # an SQLite file whose tables are not there (yet): another process is creating the study (its
    # WAL header is written before the tables commit), or a command failed on an empty file; either
    # way the creation path, which decides under the write lock, is the one to take
    try:
        conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, timeout=60.0)
        try:
            found = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'")
            return found.fetchone() is not None
        finally:
            conn.close()
    except sqlite3.Error:
        return True  # not readable as a database here: opening it says what it is


def study_label(url) -> str:
    """A short name of a study for file names: the SQLite file's stem, or the PostgreSQL study name."""
    if _is_postgres(url):
        return _backend("postgresql").study_name(url)
    return Path(parse_url(url)).stem


def redacted(url) -> str:
    """A study URL fit to show or store: a PostgreSQL URL's password (``user:secret@host``, a
    ``password=`` or ``sslpassword=`` parameter) replaced by ``***``; the rest as it is written
    (``postgresql:///db?host=/run/sock``, no host, keeps its ``//``); anything else as it is."""
    from urllib.parse import unquote_plus, urlsplit

    text = str(getattr(url, "url", url))
    if not _is_postgres(text):
        return text
    text = text.strip()
    parts = urlsplit(text)
    scheme, _, rest = text.partition("://")
    netloc, path_and_query = rest[: len(parts.netloc)], rest[len(parts.netloc) :]
    if parts.password is not None:
        userinfo, _, host = netloc.rpartition("@")
        netloc = f"{userinfo.split(':', 1)[0]}:***@{host}"
    head, mark, query = path_and_query.partition("?")
    query, hash_mark, fragment = query.partition("#")
    pieces = []
    for piece in query.split("&") if mark else []:
        key, equals, _ = piece.partition("=")
        secret = unquote_plus(key).strip() in _SECRET_PARAMETERS
        pieces.append(f"{key}=***" if secret and equals else piece)
    return f"{scheme}://{netloc}{head}{mark}{'&'.join(pieces)}{hash_mark}{fragment}"


#: libpq connection parameters that hold a secret (the password, the client key's passphrase)
_SECRET_PARAMETERS = frozenset({"password", "sslpassword"})


def study_identity(url) -> str | None:
    """What tells one study from another whatever the form of its URL: the SQLite file's real path
    (``a.db``, ``./a.db``, ``sqlite:///a.db`` and ``sqlite:///a.db?mode=ro`` are one study), a
    PostgreSQL study's server, database, parameters and name (:func:`_postgres_identity`); None for
    an in-memory study (each is a study of its own)."""
    url = getattr(url, "url", url)  # a Study object: its URL
    if _is_postgres(url):
        return _postgres_identity(url)
    path = parse_url(url)
    return None if path == ":memory:" else file_identity(path)


def _postgres_identity(url: str) -> str:
    """A PostgreSQL study whatever the spelling of its URL: ``postgres://`` or ``postgresql://``, its
    query parameters in any order, read-only or not (a malformed URL: its read-only form, which
    opening it will refuse)."""
    import importlib
    from urllib.parse import parse_qsl, urlencode, urlsplit

    # (by name, as _backend does: the back end imports this module; no driver is imported here)
    split_url = importlib.import_module(_BACKENDS["postgresql"].partition(":")[0]).split_url
    try:
        conninfo, name = split_url(url)
        parts = urlsplit(conninfo)
        query = urlencode(sorted(parse_qsl(parts.query, keep_blank_values=True)))
    except (StorageError, ValueError):
        return readonly_url(url)
    return f"postgresql://{parts.netloc}{parts.path}?{query} study {name}"


def file_identity(path: str | os.PathLike) -> str:
    """One file whatever its name: its device and inode when it exists (a hard link, or ``Run.csv``
    and ``run.csv`` on a case-insensitive file system such as macOS's and Windows', are one file),
    else its real path."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return os.path.realpath(path)
    return f"inode {found.st_dev}:{found.st_ino}"


def parse_url(url: str | os.PathLike | None) -> str:
    """The SQLite path of a storage URL (``":memory:"`` for in-memory studies), ``~`` expanded."""
    path = _sqlite_path(url)
    return path if path == ":memory:" else os.path.expanduser(path)


def _sqlite_path(url: str | os.PathLike | None) -> str:
    if is_readonly_url(url):
        url = url.strip()[: -len(_READONLY_QUERY)]
    if url is None:
        return ":memory:"
    if isinstance(url, os.PathLike):
        return os.fspath(url)
    if not isinstance(url, str) or not url.strip():
        raise StorageError(f"storage must be a path or a sqlite:/// URL, got {url!r}")
    url = url.strip()
    if url == ":memory:" or url == "sqlite://":
        return ":memory:"
    if url.startswith("sqlite:") and not url.startswith("sqlite://"):
        raise StorageError(f"malformed storage URL {url!r}; use sqlite:///relative.db or sqlite:////abs.db")
    if "://" in url:
        scheme, _, rest = url.partition("://")
        if scheme != "sqlite":
            raise StorageError(
                f"unsupported storage URL scheme {scheme!r} in {url!r}; use sqlite:///path.db or "
                "postgresql://user@host/db"
            )
        if not rest.startswith("/") or rest == "/":
            raise StorageError(
                f"malformed storage URL {url!r}; use sqlite:///relative.db or sqlite:////abs.db"
            )
        return rest[1:]
    return url


def _short(value: Any) -> str:
    """``repr`` of a value, shortened for error messages (10**400 has 401 digits)."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:25]}...{text[-25:]} ({len(text)} characters)"


def _several_numbers(value: Any) -> bool:
    """An array or sequence of more than one number (what an objective returning scikit-learn's
    ``cross_val_score`` gives: one score per fold)."""
    if isinstance(value, str | bytes | bytearray):
        return False
    try:
        return len(value) > 1 and not any(not_a_real_number(v) for v in value)
    except TypeError:
        return False


def _not_a_number(value: Any) -> ValueError:
    message = f"value must be a number, got {_short(value)} ({type(value).__name__})"
    if value is None:  # (a first-time user test: an objective that printed its value)
        message += ": the objective returned nothing; return the value (a print() is not returned)"
    elif _several_numbers(value):
        message += (
            f": one number per evaluation, not {len(value)} (scikit-learn's cross_val_score gives one "
            "score per fold: return scores.mean())"
        )
    elif isinstance(value, Mapping) and value:  # (a user test's {"loss": ...}; the regex below reads
        # the last "(type)" of the message, so the hint ends without one)
        numbers = [k for k, v in value.items() if not not_a_real_number(v)]
        key = numbers[0] if len(numbers) == 1 else next(iter(value))
        message += f": return the number to optimise itself, e.g. result[{key!r}], not the dict"
    return ValueError(message)


#: what :func:`_not_a_number` says, read back by :func:`value_refusal_kind` (greedy: the last "(type)")
_REFUSAL = re.compile(r"value must be a number, got .* \((?P<type>[\w.]+)\)")


def value_refusal_kind(message: str) -> str:
    """``message`` with the refused value of :func:`_not_a_number`'s words replaced by its type
    ("got {'loss': 0.31} (dict)" -> "got a dict"): one refusal whatever the value; any other message
    unchanged."""
    return _REFUSAL.sub(r"value must be a number, got a \g<type>", message)


def _finite_value(value: Any) -> float:
    if isinstance(value, np.ndarray) and value.size == 1 and value.ndim > 0 and value.dtype.kind in "iuf":
        value = value.reshape(())  # one number in a shape-(1,) array: what model.predict(x) returns
    if not_a_real_number(value):
        # float("1.5") would pass: an objective that returns text has most likely printed the wrong thing
        raise _not_a_number(value)
    try:
        number = float(value)
    except OverflowError:
        raise ValueError(f"value {_short(value)} is too large for a float (over 1.8e308)") from None
    except (TypeError, ValueError):
        raise _not_a_number(value) from None
    if not math.isfinite(number):
        raise ValueError(f"value must be finite, got {value!r}; use tell_failed for a failed evaluation")
    return number


def _finite_vector(values: Any) -> tuple[float, ...] | None:
    if values is None:
        return None
    try:
        items = [] if isinstance(values, str | bytes | bytearray) else list(values)
        if not items or any(not_a_real_number(v) for v in items):
            raise TypeError
        vector = tuple(float(v) for v in items)
    except OverflowError:
        raise ValueError(f"values {_short(values)} hold a number too large for a float") from None
    except (TypeError, ValueError):
        raise ValueError(f"values must be a sequence of numbers, got {values!r}") from None
    bad = [i for i, v in enumerate(vector) if not math.isfinite(v)]
    if bad:
        raise ValueError(f"values must be finite; component {bad[0]} is {vector[bad[0]]!r}")
    return vector


class Study:
    """A study in SQLite: its space, settings and trials.

    Parameters
    ----------
    storage : str, path or None
        Storage URL (see module docstring); None keeps the study in memory.
    space : Space, optional
        Required to create a study; when opening an existing one it must equal the stored space.
    settings : dict, optional
        JSON-serialisable optimizer settings stored at creation (informative; ``direction`` is checked
        on reopening).
    readonly : bool
        Open an existing study for reading only (as does a ``sqlite:///path?mode=ro`` URL): nothing
        is created or migrated, and every write raises :class:`StorageError`.
    """

    def __new__(cls, storage=None, *args, **kwargs):
        # one interface, two back ends, chosen by the URL (the PostgreSQL one imports psycopg)
        if cls is Study and _is_postgres(storage):
            return super().__new__(_backend("postgresql"))
        return super().__new__(cls)

    @property
    def reference(self) -> str:
        """What names this study as ``prior=[...]`` or ``--prior`` in a message: the file's path for
        SQLite; the URL with ``study=`` (password hidden) for PostgreSQL."""
        return self.path

    def __init__(
        self, storage=None, space: Space | None = None, settings: dict | None = None, readonly: bool = False
    ):
        self.path = parse_url(storage)
        self.url = storage if isinstance(storage, str) else self.path
        self.readonly = bool(readonly) or is_readonly_url(storage)
        self._immutable = False  # set when a read-only study's folder does not allow SQLite's -shm file
        self._file_id: tuple[int, int] | None = None  # (device, inode) of the file the first write opened
        # the file as named when the study was opened: an objective that changes the working folder
        # (os.chdir into a run folder) must not move a relative path's study (a review: every write
        # after a chdir was refused as "deleted or moved", and a new thread's connection would have
        # created an empty study in the new folder)
        self._absolute = self.path if self.path == ":memory:" else os.path.abspath(self.path)
        if self.readonly and self.path == ":memory:":
            raise StorageError("an in-memory study cannot be opened read-only")
        if self.path != ":memory:":
            parent = Path(self.path).expanduser().resolve().parent
            if not parent.is_dir():
                slash = ""
                first = Path(self.path).parts[0] if Path(self.path).parts else ""
                if not os.path.isabs(self.path) and first and os.path.isdir(os.sep + first):
                    # (sqlite:///tmp/x.db is the relative path tmp/x.db: a first-time user test)
                    slash = (
                        f"; for the absolute path /{self.path}, write four slashes: sqlite:////{self.path}, "
                        f"or the path alone"
                    )
                # (a command that only reads, `warmbo report`, said "cannot create": a user test)
                what = "no study at" if space is None or self.readonly else "cannot create study"
                raise StorageError(f"{what} {self.path!r}: folder {str(parent)!r} does not exist{slash}")
            if (space is None or self.readonly) and (not Path(self.path).is_file() or _empty_file(self.path)):
                # opening an existing study: leave no empty file behind for a mistyped path
                raise StorageError(self._no_study())
            if Path(self.path).is_file() and not os.access(self.path, os.R_OK):
                raise StorageError(f"cannot read study {self.path!r}: permission denied")
            if space is not None and not self.readonly and _empty_file(self.path):
                # (`touch lab.db` first is fine; a study truncated to 0 bytes by a full disk or a
                # `> lab.db` slip was restarted from trial 1 without a word: a user test)
                warnings.warn(
                    f"creating a new study in {self.path!r}, an empty file (0 bytes): if it held a study "
                    "(truncated by a full disk or a '>' slip), stop and restore it from a backup",
                    NewStudyWarning,
                    stacklevel=user_stacklevel(),
                )
            if not Path(self.path).exists():
                near = [
                    p for p in _near_files(self.path) if _looks_mistyped(self.path, p) and _sqlite_file(p)
                ]
                if near:  # (a new study beside one of a close name: a mistyped path, most likely)
                    warnings.warn(
                        f"creating a new study {self.path!r}; did you mean {near[0]!r}, which exists? "
                        "(a mistyped path starts a study with no trials)",
                        NewStudyWarning,
                        stacklevel=user_stacklevel(),
                    )
        self._local = threading.local()
        self._memory_conn = None
        self._parsed: dict[int, tuple[str, dict]] = {}
        self._shared_rows: dict[int, tuple[tuple, Trial]] = {}  # id -> (row, Trial) of snapshot()
        self._rollbacks = 0  # rolled-back transactions (part of a kept snapshot's key)
        self._lock = _new_lock(self)
        try:
            if self.readonly:
                self._open_readonly(space, settings or {})
            else:
                self._initialise(space, settings or {})
        except sqlite3.DatabaseError as exc:
            raise self._open_error(exc) from None

    def _no_study(self) -> str:
        """Where no study was found (the absolute path: a relative one depends on the folder the
        command ran in) and how to create one."""
        where = os.path.abspath(self.path)
        if _empty_file(self.path):
            return (
                f"{where!r} is an empty file (0 bytes), with no study in it: if it held one (truncated by a "
                "full disk or a '>' slip), restore it from a backup; to start a new study there, give a "
                f"search space, `warmbo suggest --space space.json --storage {where}` (in Python, "
                "wb.Optimizer(space, storage=...))"
            )
        near = _near_files(self.path)
        if near:
            return f"no study at {where!r}: did you mean {near[0]!r}?"
        return (
            f"no study at {where!r}: create one with a search space, "
            f"`warmbo suggest --space space.json --storage {where}` (or `warmbo optimize --space ...`; "
            "in Python, wb.Optimizer(space, storage=...))"
        )

    def _open_error(self, exc: sqlite3.DatabaseError) -> StorageError:
        """An accurate message for a study SQLite could not open."""
        text = str(exc)
        if "readonly" in text:
            return StorageError(
                f"study {self.path!r} cannot be opened for writing (the file or its folder is read-only); "
                "warmbo status, export and report read it, or open it with Study(..., readonly=True)"
            )
        if "unable to open" in text:
            folder = str(Path(self.path).expanduser().resolve().parent)
            if not self.readonly and not os.access(folder, os.W_OK):
                # (SQLite cannot create the study, or the write-ahead log beside it, in that folder)
                if not Path(self.path).is_file():
                    return StorageError(f"cannot create study {self.path!r}: folder {folder!r} is read-only")
                return StorageError(
                    f"study {self.path!r} cannot be opened for writing (its folder {folder!r} is "
                    "read-only); warmbo status, export and report read it, or open it with "
                    "Study(..., readonly=True)"
                )
            return StorageError(f"cannot open study {self.path!r} (SQLite says: {text})")
        if "not a database" in text:
            return StorageError(f"{self.path!r} is not a warmbo study: it is not an SQLite database")
        full = self._full_disk()
        if full:  # (a full disk read as "disk I/O error": SQLite needs room for -wal and -shm to read)
            return StorageError(f"cannot open study {self.path!r}: {full} (SQLite says: {text})")
        return StorageError(f"cannot read study {self.path!r} (SQLite says: {text})")

    def _full_disk(self) -> str:
        """Words for a full disk under the study ('' when it has room): a study on a full disk failed
        even ``warmbo status`` with "cannot read study ... disk I/O error", which read as damage (a
        user test); its data were intact."""
        import shutil

        if _is_postgres(self.url):
            return ""
        try:
            free = shutil.disk_usage(Path(self.path).expanduser().resolve().parent).free
        except OSError:
            return ""
        if free >= 1 << 20:
            return ""
        return (
            f"the disk holding it is full ({free} bytes free), and SQLite needs room beside the study "
            "(its -wal and -shm files) even to read it; free some space and run the command again (the "
            "study's trials are not damaged by this)"
        )

    def _write_error(self, exc: sqlite3.DatabaseError) -> StorageError:
        """An accurate message for a write SQLite refused (a read-only file or folder, a damaged file,
        a full disk), naming the study."""
        if "readonly" in str(exc) or "unable to open" in str(exc):
            return self._open_error(exc)
        if "malformed" in str(exc):
            return StorageError(
                f"study {self.path!r} is damaged (SQLite says: {exc}){self._integrity_hint()}"
            )
        full = self._full_disk() if "disk" in str(exc) else ""
        if full:
            return StoreUnavailableError(f"cannot write study {self.path!r}: {full} (SQLite says: {exc})")
        return StoreUnavailableError(f"cannot write study {self.path!r} (SQLite says: {exc})")

    def _label(self) -> str:
        """The study as messages name it: its file (a PostgreSQL study its name and database)."""
        return repr(self.path)

    def _integrity_hint(self) -> str:
        """What to do with a damaged study file (nothing for a PostgreSQL study)."""
        if _is_postgres(self.url):
            return ""
        return f"; check the file with `sqlite3 {self.path} 'PRAGMA integrity_check'` and use a backup copy"

    # ------------------------------------------------------------------ connections
    def _connect(self) -> sqlite3.Connection:
        if self.path == ":memory:":
            if self._memory_conn is None:
                self._memory_conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            return self._memory_conn
        conn = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "pid", None) != os.getpid():
            _inherit(conn, self._local)
            if self.readonly:
                conn = self._connect_readonly()
            else:
                conn = self._connect_file()
                conn.execute("PRAGMA synchronous = FULL")
                # every commit is copied into the study file at once (a passive checkpoint: it waits
                # for no reader, and copies nothing past an open reader's snapshot), not every 1000
                # pages: a killed run's trials are in study.db itself, not only in the study.db-wal
                # file beside it, which a copy of study.db, or a reader in a read-only folder
                # (immutable), does not see
                conn.execute("PRAGMA wal_autocheckpoint = 1")
            conn.execute("PRAGMA busy_timeout = 60000")
            self._local.conn = conn
            self._local.closer = _Closer(conn)
            self._local.pid = os.getpid()
        return conn

    def _connect_file(self) -> sqlite3.Connection:
        """A writing connection. The first creates the file; every later one (another thread's: the
        heartbeat, a worker) opens it only if it is there (``mode=rw``). Before, a study file moved or
        deleted during a run was created again, empty, by the heartbeat's next connection, and
        rerunning the command then started a new study in it (a user test)."""
        if self._file_id is None:
            conn = sqlite3.connect(self._absolute, timeout=60.0, isolation_level=None)
            with contextlib.suppress(OSError):
                self._file_id = _file_id(self._absolute)
            return conn
        self._check_still_here()
        uri = Path(self._absolute).as_uri()
        try:
            return sqlite3.connect(f"{uri}?mode=rw", uri=True, timeout=60.0, isolation_level=None)
        except sqlite3.OperationalError:
            self._check_still_here()
            raise

    def _check_still_here(self) -> None:
        """Refuse to go on when the study's path no longer holds the file this study opened: trials
        written after a ``mv`` or ``rm`` would go to the moved file or to none, while the run said
        they were stored (a user test)."""
        if self._file_id is None:  # (an in-memory study, or no file opened yet)
            return
        try:
            here = _file_id(self._absolute)
        except OSError:
            here = None
        if here != self._file_id:
            what = "deleted or moved" if here is None else "replaced by another file"
            raise StorageError(
                f"study file {self.path!r} was {what} while this process had it open: nothing more is "
                "written to it (a moved study file holds the trials stored so far; point --storage / "
                "storage= at it to go on)"
            )

    def _connect_readonly(self) -> sqlite3.Connection:
        """A ``mode=ro`` connection; ``immutable=1`` when SQLite cannot create the WAL index (-shm)
        because the folder is not writable (then nobody can be writing the study either)."""
        uri = Path(self.path).resolve().as_uri()
        if not self._immutable:
            conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=60.0, isolation_level=None)
            try:
                conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
                return conn
            except sqlite3.OperationalError as exc:
                conn.close()
                if "readonly" not in str(exc) and "unable to open" not in str(exc):
                    raise
                self._immutable = True
        return sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """An exclusive write transaction (SQLite: ``BEGIN IMMEDIATE``; see :meth:`_begin`), committed
        on exit and rolled back on an exception; re-entrant within a thread."""
        if self.readonly:
            raise StorageError(f"study {self._label()} was opened read-only; it cannot be written")
        depth = getattr(self._local, "depth", 0)
        conn = self._connect()
        if depth:
            self._local.depth = depth + 1
            try:
                yield conn
            finally:
                self._local.depth = depth
            return
        with self._lock:
            self._local.writes = [0, set()]  # rows written and trial ids touched (_wrote)
            kept = None
            committing = False
            try:
                # BEGIN and COMMIT inside the try: a Ctrl-C landing just after the one or before the
                # other must roll back too (it left the connection in a transaction holding the write
                # lock, and the next write failed with "cannot start a transaction within a transaction")
                self._begin(conn)
                self._local.depth = 1
                kept = self._current_snapshot(conn)
                yield conn
                self._local.snapshot = None
                committing = True
                conn.execute("COMMIT")  # (inside the try: an interrupt just before it rolls back too)
            except BaseException as exc:
                self._local.snapshot = None
                try:
                    if self._in_transaction(conn):
                        conn.execute("ROLLBACK")
                finally:
                    # counted after the rollback: a reader of the shared in-memory connection that
                    # read the key before this count and the rows before the rollback would keep the
                    # rolled-back rows under a key that never changes again (see snapshot)
                    self._rollbacks += 1
                if isinstance(exc, sqlite3.DatabaseError) and any(w in str(exc) for w in _WRITE_FAILURES):
                    # (a study whose killed writer left its -wal and -shm files opens for writing in
                    # a read-only folder, and fails at its first write; a damaged page is found when
                    # a write reaches it; a disk fills)
                    raise self._write_error(exc) from None
                lost = self._lost_connection(exc, conn, committing)
                if lost is not None:  # (a server that dropped the connection: said in warmbo's words)
                    raise lost from None
                raise
            finally:
                self._local.depth = 0
                writes, self._local.writes = self._local.writes, None
            try:
                self._local.snapshot = self._patched_snapshot(conn, kept, writes)
            except sqlite3.Error:
                pass  # (committed all the same; the next snapshot reads every row)

    @staticmethod
    def _in_transaction(conn) -> bool:
        return conn.in_transaction

    def _lost_connection(self, exc: BaseException, conn, committing: bool) -> ConnectionLostError | None:
        """The :class:`ConnectionLostError` that stands for ``exc`` when it is the server dropping the
        connection of a write transaction (never for SQLite, whose database has no connection to lose)."""
        return None

    def _begin(self, conn) -> None:
        """Open the write transaction, holding the store's writer lock (each back end its own)."""
        self._check_still_here()
        for attempt in range(3):  # busy_timeout waits 60 s each time; transactions are short
            try:
                conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc):  # (a read-only file, a full disk: not another process)
                    raise self._write_error(exc) from None
                if attempt == 2:
                    raise StoreUnavailableError(
                        f"study {self.path!r} is locked by another process: {exc}"
                    ) from None

    def __reduce__(self):
        # (the default would fail on the thread-local connections with "cannot pickle '_thread._local'")
        raise TypeError(
            "a Study, and an Optimizer holding one, cannot be pickled or copied: it holds open "
            f"connections to {redacted(self.url)!r}. Pass the storage URL instead and reopen it there "
            "(wb.Optimizer.load(url), wb.Study(url)); an in-memory study cannot be shared at all"
        )

    def close(self) -> None:
        """Close this thread's connection (the study stays on disk; a later call connects again).
        Another thread's connection is that thread's own (SQLite's cannot be closed from elsewhere,
        and closing a PostgreSQL one under a thread that reads it breaks its read): it is closed
        when that thread ends or when the study is dropped."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # ------------------------------------------------------------------ creation / reopening
    def _foreign(self, conn: sqlite3.Connection) -> StorageError | None:
        """The error for an SQLite file another program's tables are in (an Optuna storage, say), or
        None. Before (a user test), giving an Optuna database as a study created warmbo's tables in
        it and then failed with SQLite's "no such column: id", and every later opening named a
        space mismatch."""
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        tables = {t for t in tables if not t.startswith("sqlite_")}
        if {"studies", "version_info"} <= tables:
            names = [row[0] for row in conn.execute("SELECT study_name FROM studies ORDER BY study_id")]
            if "meta" in tables:
                # a warmbo study Optuna was once pointed at (create_study on the same URL, a user
                # test): Optuna added its tables beside warmbo's, whose trials are intact (its own
                # "trials" table was not made, and Optuna fails there). It was refused as Optuna's
                warnings.warn(
                    f"{self.path!r} is a warmbo study that also holds an Optuna storage's tables "
                    f"(studies: {', '.join(names) or 'none'}), which warmbo leaves alone; Optuna cannot "
                    "use this file (its trials table is warmbo's): give the Optuna study a file of its own",
                    ForeignTablesWarning,
                    stacklevel=user_stacklevel(),
                )
                return None
            return StorageError(
                f"{self.path!r} is an Optuna database (studies: {', '.join(names) or 'none'}), not a warmbo "
                "study: give the warmbo study a file of its own, and the Optuna study as its prior to "
                "start warm from it (Python: prior=[optuna.load_study(...)]; the CLI reads its CSV "
                "export; docs/transfer.md)"
            )
        if tables and "meta" not in tables:
            listed = ", ".join(sorted(tables))
            return StorageError(
                f"{self.path!r} is an SQLite database of another program (tables: {listed}), not a warmbo "
                "study: give the warmbo study a file of its own"
            )
        return None

    def _open_readonly(self, space: Space | None, settings: dict) -> None:
        conn = self._connect()
        foreign = self._foreign(conn)
        if foreign is not None:
            raise foreign
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables and _empty_file(self.path):
            raise StorageError(self._no_study())
        if not {"meta", "trials"} <= tables:
            raise StorageError(
                f"{self.path!r} is an SQLite database but not a warmbo study (no meta and trials tables)"
            )
        meta = dict(conn.execute(_OPENING_META).fetchall())
        if not meta:
            raise StorageError(self._no_study())
        self._check_meta(meta, space, settings)
        # a study written by an older warmbo lacks the columns added since (a writing open adds them,
        # _MIGRATIONS; a read-only one may not): they read as NULL, as a migrated study's old rows do
        columns = {row[1] for row in conn.execute("PRAGMA table_info(trials)").fetchall()}
        missing = [column for column in _MIGRATIONS if column not in columns]
        if "vector" in missing:
            self._columns = _COLUMNS.replace("vector", "NULL AS vector")
        if "heartbeat" in missing:
            self._heartbeat = "NULL"

    def _initialise(self, space: Space | None, settings: dict) -> None:
        conn = self._connect()
        if self.path != ":memory:":
            foreign = self._foreign(conn)  # (before WAL mode, which rewrites the file's header)
            if foreign is not None:
                raise foreign
            self._use_wal(conn)
        with self.transaction() as conn:
            for statement in _SCHEMA.strip().split(";"):
                if statement.strip():
                    conn.execute(statement)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(trials)").fetchall()}
            for column, statement in _MIGRATIONS.items():
                if column not in columns:
                    conn.execute(statement)
            meta = dict(conn.execute(_OPENING_META).fetchall())
            if not meta:
                if space is None:
                    raise StorageError(self._no_study())
                if not isinstance(space, Space):
                    raise StorageError(f"space must be a warmbo Space, got {type(space).__name__}")
                rows = {
                    "schema_version": _SCHEMA_VERSION,
                    "space": json.dumps(space.to_dict()),
                    "settings": json.dumps(settings),
                    "created": repr(time.time()),
                }
                conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", rows.items())
                meta = rows
            self._check_meta(meta, space, settings)

    @staticmethod
    def _use_wal(conn: sqlite3.Connection, patience: float = 60.0) -> None:
        """Switch the file to write-ahead logging (once per file; later openers find it set).

        Changing the journal mode needs the file to itself, and SQLite answers "database is locked"
        at once, without its busy timeout, while another process holds it: several processes creating
        one study at the same moment failed that way (3 to 8 of 240 openings, 8 processes at a time).
        So the switch is retried with a short growing pause, for up to ``patience`` seconds."""
        deadline = time.monotonic() + patience
        pause = 0.005
        while True:
            try:
                if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.25)

    def _check_meta(self, meta: dict, space: Space | None, settings: dict) -> None:
        if meta.get("schema_version") != _SCHEMA_VERSION:
            raise StorageError(_schema_message(self.path, meta.get("schema_version")))
        try:
            with stored_space_block():
                stored_space = Space.from_dict(json.loads(meta["space"]))
            self.settings = json.loads(meta["settings"])
        except (KeyError, ValueError, TypeError) as exc:
            raise StorageError(
                f"study {self._label()}: the stored space or settings are unreadable ({exc})"
            ) from None
        if space is not None and space != stored_space:
            differences = "; ".join(space.diff(stored_space, ("the space given", "the study"))) or (
                "different structure"
            )
            advice = (
                # (prior= refuses a multi-task study: its values are utilities of task vectors)
                "start a new multi-task study and give it this study's task values with "
                "MultiTaskOptimizer.add_prior (history.to_dataframe() has a column per task)"
                if meta.get("multitask")
                else f"start a new study with prior=[{self.reference!r}], transfer='none' (warmbo "
                "optimize: --prior STUDY --transfer none); trials outside the new space are left out"
            )
            raise StorageError(
                f"study {self._label()} was created with a different space (the space given first, the "
                f"study's second): {differences}. A study's space cannot change; to search the new space "
                f"with this study's trials, {advice}"
            )
        stored_direction = self.settings.get("direction")
        new_direction = settings.get("direction")
        if stored_direction and new_direction and stored_direction != new_direction:
            flag = "maximize=True" if stored_direction == "maximize" else "maximize=False (the default)"
            raise StorageError(
                f"study {self._label()} was created to {stored_direction} the objective, "
                f"not to {new_direction} it: open it with {flag}; to optimise the other way, start a new "
                f"study from its trials, prior=[{self.reference!r}]"
            )  # (the recipe: a first-time user test had no way on)
        self.space = stored_space
        self.created = float(meta.get("created", "nan"))

    # ------------------------------------------------------------------ reading
    # the trials' columns as the reading queries select them; a read-only open of a study written before
    # a column existed reads it as NULL instead (see _open_readonly)
    _columns = _COLUMNS
    _heartbeat = "heartbeat"

    def _trial(self, row, copy: bool = True) -> Trial:
        id_, params, state, value, created, completed, worker, error, vector = row
        # the parsed parameters of each trial are kept (JSON parsing was most of the cost of reading
        # a study at every ask); a trial's parameters never change once stored, and every Trial gets
        # its own copy, so a caller that edits one changes nothing here (``copy=False``: the kept dict
        # itself, for snapshot(), whose callers only read it)
        try:
            cached = self._parsed.get(id_)
            if cached is None or cached[0] != params:
                cached = (params, json.loads(params))
                if not isinstance(cached[1], dict):
                    raise ValueError(f"parameters {_short(params)} are not a JSON object")
                self._parsed[id_] = cached
            if state not in STATES:
                raise ValueError(f"state {_short(state)}")
            if not isinstance(value, (float, int, type(None))) or not isinstance(created, (float, int)):
                raise ValueError(f"value {_short(value)}, created {_short(created)}")
            values = None if vector is None else tuple(json.loads(vector))
        except (TypeError, ValueError) as exc:
            raise self._damaged_row(id_, exc) from None
        return Trial(
            id=int(id_),
            params=dict(cached[1]) if copy else cached[1],
            state=state,
            value=value,
            created=created,
            completed=completed,
            worker=worker,
            error=error,
            values=values,
        )

    def _damaged_row(self, trial_id, exc: Exception) -> StorageError:
        """A stored trial that does not read as one (a damaged file: a disk or copy that cut it, a
        page overwritten), named instead of a TypeError from deep inside a command."""
        return StorageError(
            f"study {self._label()} is damaged: trial {_short(trial_id)} does not read as a trial "
            f"({exc}){self._integrity_hint()}"
        )

    def version(self) -> tuple[int, int]:
        """A value that changes whenever a trial is written, by this process or any other.

        ``PRAGMA data_version`` changes when another connection commits; ``total_changes`` counts the
        rows this connection wrote (which, for an in-memory study, every thread shares). Equal values
        at two moments mean nobody wrote in between.
        """
        conn = self._connect()
        return int(conn.execute("PRAGMA data_version").fetchone()[0]), int(conn.total_changes)

    def trials(self, states: tuple[str, ...] | None = None) -> History:
        """All trials (or those in ``states``) in id order."""
        conn = self._connect()
        query = f"SELECT {self._columns} FROM trials"
        args: tuple = ()
        if states is not None:
            bad = [s for s in states if s not in STATES]
            if bad:
                raise ValueError(f"unknown trial state(s) {bad}; states are {STATES}")
            query += f" WHERE state IN ({', '.join('?' * len(states))})"
            args = tuple(states)
        return History(self._trial(row) for row in conn.execute(query + " ORDER BY id", args))

    def _all_rows(self) -> list[tuple]:
        """The rows of every trial (the columns :meth:`_trial` reads), in id order."""
        return self._connect().execute(f"SELECT {self._columns} FROM trials ORDER BY id").fetchall()

    def snapshot(self) -> tuple[Trial, ...]:
        """All trials in id order, as :meth:`trials` reads them, for reading only (the optimizer's ask).

        Unlike :meth:`trials`, a trial whose stored row is unchanged since an earlier snapshot is the
        same :class:`Trial` object, and every trial's ``params`` is the study's own parsed dict (no
        copy): callers must not change it (:meth:`shares` tells such a dict). A changed row (amended,
        failed, completed, reassigned, by any process) gives a new Trial. Building a Trial per row was
        a tenth of a fixed-hyperparameter ask.

        SQLite: while nothing has been written since this thread's last snapshot, that snapshot is
        returned without reading the rows (see :meth:`_snapshot_key`), and this thread's own writes
        are patched into it when they commit (:meth:`_patched_snapshot`). One read inside a
        transaction is not kept (its rows may yet be rolled back).
        """
        keep = self._keeps_snapshot and not self.readonly
        if not keep or self.path != ":memory:":
            return self._snapshot(keep)
        # an in-memory study has one connection for every thread, which sees another thread's open
        # transaction: its reads are kept only under the lock every write transaction holds, so no
        # uncommitted row (later rolled back, or undone by ROLLBACK TO a savepoint) is kept
        with self._lock:
            return self._snapshot(keep)

    def _snapshot(self, keep: bool) -> tuple[Trial, ...]:
        if keep:
            conn = self._connect()
            key = self._snapshot_key(conn)  # before the rows: a write in between counts as a change
            kept = getattr(self._local, "snapshot", None)
            if kept is not None and kept[0] is conn and kept[1] == key:
                return kept[4]
        rows = self._all_rows()
        cache = self._shared_rows
        entries = [self._shared_entry(cache, row) for row in rows]
        if len(cache) > len(entries):  # deleted trials: forget them (from this read's own entries:
            # another thread may have changed the shared dict meanwhile)
            self._shared_rows = {entry[0][0]: entry for entry in entries}
        trials = tuple(entry[1] for entry in entries)
        if keep and not getattr(self._local, "depth", 0):
            self._local.snapshot = (conn, key, [row[0] for row in rows], rows, trials)
        return trials

    def _shared_entry(self, cache: dict, row) -> tuple[tuple, Trial]:
        """``(row, Trial)`` of a row in ``cache`` (the shared trials of :meth:`snapshot`): the one kept
        while the row is unchanged, else a new one, kept."""
        entry = cache.get(row[0])
        # (a value of 0 is rebuilt: -0.0 == 0.0, and PostgreSQL keeps the sign)
        if entry is None or entry[0] != row or row[3] == 0:
            entry = (row, self._trial(row, copy=False))
            cache[row[0]] = entry
        return entry

    def _shared_trial(self, row) -> Trial:
        """The snapshot's Trial of a row (see :meth:`snapshot`)."""
        return self._shared_entry(self._shared_rows, row)[1]

    # A kept snapshot (SQLite, per thread): (connection, key, ids, rows, trials). Its key changes with
    # every write anyone commits: PRAGMA data_version when another connection commits, total_changes
    # when this connection writes a row (an in-memory study's, from any thread), and the count of
    # rolled-back transactions (another thread of an in-memory study may have read rows that were
    # then rolled back). PostgreSQL keeps none (its version counts transactions, not rows).
    _keeps_snapshot = True

    def _snapshot_key(self, conn) -> tuple[int, int, int]:
        return (
            int(conn.execute("PRAGMA data_version").fetchone()[0]),
            int(conn.total_changes),
            self._rollbacks,
        )

    def _current_snapshot(self, conn):
        """This thread's kept snapshot if nothing was written since it was read, else None."""
        kept = getattr(self._local, "snapshot", None) if self._keeps_snapshot else None
        if kept is None or kept[0] is not conn or kept[1] != self._snapshot_key(conn):
            return None
        return kept

    def _wrote(self, cursor, ids=()) -> None:
        """Count the rows a write statement of this thread's transaction changed, and the trials it
        touched (for :meth:`_patched_snapshot`)."""
        writes = getattr(self._local, "writes", None)
        if writes is not None:
            writes[0] += cursor.rowcount
            writes[1].update(ids)

    def _patched_snapshot(self, conn, kept, writes):
        """After this thread's transaction committed: the snapshot that was current when it began
        (``kept``) with the trials it touched read again, or None. Valid only when the connection's
        total changes grew by exactly the rows this class's statements reported writing (no other
        statement changed a row) and no other connection committed since (data_version, read after
        the commit: a later commit changes it, and the snapshot with it)."""
        if kept is None or writes is None:
            return None
        key = self._snapshot_key(conn)
        data_version, changes, rollbacks = kept[1]
        if key != (data_version, changes + writes[0], rollbacks):
            return None
        ids, rows, trials = list(kept[2]), list(kept[3]), list(kept[4])
        touched = sorted(writes[1])
        fresh = {}
        for start in range(0, len(touched), 500):
            chunk = touched[start : start + 500]
            query = f"SELECT {self._columns} FROM trials WHERE id IN ({', '.join('?' * len(chunk))})"
            fresh.update((row[0], row) for row in conn.execute(query, chunk))
        for trial_id in touched:
            row = fresh.get(trial_id)
            i = bisect.bisect_left(ids, trial_id)
            present = i < len(ids) and ids[i] == trial_id
            if row is None:  # deleted
                if present:
                    del ids[i], rows[i], trials[i]
                self._shared_rows.pop(trial_id, None)
            elif present:
                rows[i], trials[i] = row, self._shared_trial(row)
            else:
                ids.insert(i, trial_id)
                rows.insert(i, row)
                trials.insert(i, self._shared_trial(row))
        return conn, key, ids, rows, tuple(trials)

    def shares(self, trial: Trial) -> bool:
        """Whether ``trial.params`` is the study's own parsed dict (a :meth:`snapshot` trial's), which
        nothing changes: the same dict always holds the same parameters."""
        cached = self._parsed.get(trial.id)
        return cached is not None and cached[1] is trial.params

    def trial(self, trial_id: int) -> Trial:
        """The trial with this id; :class:`TrialNotFoundError` if there is none."""
        trial_id = self._check_id(trial_id)
        row = (
            self._connect()
            .execute(
                f"SELECT {self._columns} FROM trials WHERE id = ?",
                (trial_id,),
            )
            .fetchone()
        )
        if row is None:
            raise self._missing(trial_id)
        return self._trial(row)

    def __len__(self) -> int:
        return int(self._connect().execute("SELECT COUNT(*) FROM trials").fetchone()[0])

    def count(self, state: str) -> int:
        """Number of trials in a state."""
        return int(
            self._connect().execute("SELECT COUNT(*) FROM trials WHERE state = ?", (state,)).fetchone()[0]
        )

    # ------------------------------------------------------------------ writing
    @staticmethod
    def _check_id(trial_id) -> int:
        if isinstance(trial_id, Trial):
            return trial_id.id
        if isinstance(trial_id, bool):
            raise ValueError(f"trial id must be an integer, got {trial_id!r}")
        try:
            value = int(trial_id)
        except (TypeError, ValueError):
            raise ValueError(f"trial id must be an integer, got {trial_id!r}") from None
        if isinstance(trial_id, float) and value != trial_id:
            raise ValueError(f"trial id must be an integer, got {trial_id!r}")
        return value

    def add_trial(
        self,
        params: dict,
        state: str = PENDING,
        value=None,
        worker: str | None = None,
        error: str | None = None,
        values=None,
    ) -> Trial:
        """Insert a trial (params are validated against the space) and commit.

        ``values`` is the vector of task values of a multi-task trial (stored as JSON).
        """
        if state not in STATES:
            raise ValueError(f"unknown trial state {state!r}; states are {STATES}")
        params = self.space.validate(params)
        if state == COMPLETE:
            value = _finite_value(value)
        vector = _finite_vector(values)
        if state == COMPLETE:
            self._check_task_values(None, vector)
        now = time.time()
        completed = now if state != PENDING else None
        with self.transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO trials (params, state, value, created, completed, worker, error, vector) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    json.dumps(params), state, value, now, completed, worker or default_worker(), error,
                    None if vector is None else json.dumps(list(vector)),
                ),
            )  # fmt: skip
            trial_id = int(cursor.lastrowid)
            self._wrote(cursor, (trial_id,))
        return Trial(
            trial_id, params, state, value, now, completed, worker or default_worker(), error, vector
        )

    def _check_task_values(self, trial_id, vector) -> None:
        """A complete trial of a multi-task study (meta ``multitask``) needs its task values: without
        them it would be a complete trial no multi-task model can read (and one with the wrong number
        of them a vector the model cannot stack)."""
        stored = self.get_meta("multitask")
        if stored is None:
            return
        what = "a new trial" if trial_id is None else f"trial {trial_id}"
        try:
            n_tasks = int(json.loads(stored)["n_tasks"])
        except (ValueError, TypeError, KeyError):
            n_tasks = None
        if vector is None:
            raise ValueError(
                f"{what} belongs to a multi-task study: complete it with its task values (values=[...]; "
                "MultiTaskOptimizer.tell computes the utility)"
            )
        if n_tasks is not None and len(vector) != n_tasks:
            raise ValueError(f"{what}: the study has {n_tasks} tasks, got {len(vector)} task values")

    def complete(self, trial_id, value, worker: str | None = None, values=None) -> Trial:
        """Record the value (and a multi-task trial's vector ``values``) of a pending (or failed)
        trial and commit before returning; a failed trial's failure is kept in ``amended:<id>``."""
        value = _finite_value(value)
        vector = _finite_vector(values)
        trial_id = self._check_id(trial_id)
        self._check_task_values(trial_id, vector)
        with self.transaction() as conn:
            trial = self.trial(trial_id)
            if trial.state == COMPLETE:
                return self._completed_again(trial, value, vector)
            if trial.state == FAILED:  # a failure a value now replaces: kept, never dropped silently
                self._keep_earlier(trial, "completed after it had failed")
            now = time.time()
            cursor = conn.execute(
                "UPDATE trials SET state = ?, value = ?, completed = ?, error = NULL, "
                "worker = COALESCE(?, worker), vector = ? WHERE id = ?",
                (
                    COMPLETE,
                    value,
                    now,
                    worker,
                    None if vector is None else json.dumps(list(vector)),
                    trial_id,
                ),
            )
            self._wrote(cursor, (trial_id,))
        return self.trial(trial_id)

    def _completed_again(self, trial: Trial, value: float, vector) -> Trial:
        """A result told for a trial that is already complete: the same result again is the stored
        trial (a worker retrying its tell after a dropped connection whose COMMIT had reached the
        store; before, a StorageError stopped it), another one is refused, saying who recorded the
        stored one when the trial was taken over from a silent worker (``heartbeat_grace``)."""
        same_vector = (vector is None) == (trial.values is None) and (
            vector is None or list(map(float, vector)) == list(map(float, trial.values))
        )
        if value == trial.value and same_vector:
            return trial
        taken = ""
        record = self.get_meta(f"reclaimed:{trial.id}")
        if record is not None:
            with contextlib.suppress(ValueError, TypeError, KeyError):
                info = json.loads(record)
                taken = (
                    f"; worker {info['to']} took it over after {info['from']} had sent no heartbeat for "
                    f"{float(info['silent_s']):.0f} s (heartbeat_grace) and recorded that value: a worker "
                    "evaluating for longer calls opt.heartbeat() meanwhile (Optimizer.run does), or the "
                    "study's workers use a longer heartbeat_grace"
                )
        raise StorageError(
            f"trial {trial.id} is already complete (value {trial.value!r}){taken}; to correct it, "
            "amend it (Study.amend, or warmbo observe --amend); a repeated measurement at the "
            "same settings is a trial of its own: tell its parameters as a plain dict"
        )

    def fail(self, trial_id, error: str | None = None) -> Trial:
        """Mark a pending trial failed (the run continues; failed points are not re-asked)."""
        trial_id = self._check_id(trial_id)
        with self.transaction() as conn:
            trial = self.trial(trial_id)
            if trial.state == COMPLETE:
                raise StorageError(f"trial {trial_id} is already complete (value {trial.value!r})")
            cursor = conn.execute(
                "UPDATE trials SET state = ?, completed = ?, error = ? WHERE id = ?",
                (FAILED, time.time(), error, trial_id),
            )
            self._wrote(cursor, (trial_id,))
        return self.trial(trial_id)

    def amend(
        self,
        trial_id,
        value=None,
        values=None,
        failed: bool = False,
        note: str | None = None,
        by: str | None = None,
    ) -> Trial:
        """Correct the result of a complete trial: a new ``value`` (and a multi-task trial's vector
        ``values``), or ``failed=True`` to mark it failed (``note`` says why, e.g. a contaminated
        sample). In one transaction with the change, the trial's earlier result is appended to the
        meta entry ``amended:<id>`` (a JSON list of ``{"state", "value", "values", "error", "note",
        "amended", "by"}``; ``by`` names who corrected it, ``warmbo observe --amend`` gives
        ``WARMBO_USER`` or the login), so a correction never loses what was stored. Pending and
        failed trials are refused: :meth:`complete` and :meth:`fail` record their first result."""
        if failed == (value is not None):
            raise ValueError("amend needs either a new value or failed=True")
        value = None if failed else _finite_value(value)
        vector = None if failed else _finite_vector(values)
        trial_id = self._check_id(trial_id)
        with self.transaction() as conn:
            trial = self.trial(trial_id)
            if trial.state != COMPLETE:
                raise StorageError(
                    f"trial {trial_id} is {trial.state}, not complete: there is no result to amend; "
                    "record its result as usual (tell, or observe without --amend)"
                )
            if not failed and (trial.values is None) != (vector is None):
                raise ValueError(
                    f"trial {trial_id} "
                    + (
                        "is a multi-task trial: amend it with its task values (values=...; "
                        "MultiTaskOptimizer.amend recomputes the utility)"
                        if vector is None
                        else "has one value, not task values: amend it with value= alone"
                    )
                )
            if failed:
                error = f"amended to failed (was complete, value {trial.value!r})" + (
                    f": {note}" if note else ""
                )
                self._write_result(conn, trial_id, FAILED, None, None, error)
            else:
                self._write_result(
                    conn,
                    trial_id,
                    COMPLETE,
                    value,
                    None if vector is None else json.dumps(list(vector)),
                    None,
                )
            self._keep_earlier(trial, note, by)
        return self.trial(trial_id)

    def withdraw(self, trial_id, note: str | None = None, by: str | None = None) -> Trial:
        """Take a trial out of the study, in any state: a result recorded twice, a suggestion run at
        other settings (stored as a trial of its own) or never run. Unlike a failed trial, which the
        model reads (a failed point is fantasised at the worst value, so that it is not proposed
        again) and ``status`` counts, a withdrawn trial is read by nothing: not the model, not
        ``best``, not the counts, not ``export``. In one transaction, the trial as it stood (params,
        state, value, values, error, worker, created, completed) with ``note`` (why), ``by`` (who)
        and ``withdrawn`` (when) is kept in the meta entry ``withdrawn:<id>`` and the trial's row
        deleted; its id is never reused, and :meth:`trial` on it says it was withdrawn. A queue entry
        (:mod:`warmbo.enqueued`) that this trial took is removed with it: the queue would otherwise
        take a trial it no longer finds for a point still waiting. Returns the trial as it stood."""
        if note is not None and (not isinstance(note, str) or not note.strip()):
            raise ValueError(f"note must be a non-empty str or None, got {note!r}")
        trial_id = self._check_id(trial_id)
        with self.transaction():
            trial = self.trial(trial_id)
            record = {
                "params": trial.params,
                "state": trial.state,
                "value": trial.value,
                "values": None if trial.values is None else list(trial.values),
                "error": trial.error,
                "worker": trial.worker,
                "created": trial.created,
                "completed": trial.completed,
                "note": note,
                "by": by,
                "withdrawn": time.time(),
            }
            self.set_meta(f"{WITHDRAWN_PREFIX}{trial_id}", json.dumps(record))
            for entry in queue_records(self):
                if entry.trial == trial_id:
                    self.delete_meta(entry.key)
            self.delete_trials([trial_id])
        return trial

    def withdrawn(self) -> dict[int, dict]:
        """The trials :meth:`withdraw` took out, by id: each its record (``params``, ``state``,
        ``value``, ``values``, ``error``, ``worker``, ``created``, ``completed``, ``note``, ``by``,
        ``withdrawn``: the time). An entry edited by hand into something else reads as ``{}``."""
        out = {}
        for key, text in self.meta_items(WITHDRAWN_PREFIX).items():
            suffix = key[len(WITHDRAWN_PREFIX) :]
            if suffix.isdigit():
                out[int(suffix)] = _withdrawn_record(text)
        return out

    def _missing(self, trial_id: int, where: str = "") -> TrialNotFoundError:
        """The error for a trial id not in the study; a withdrawn trial's says so, when and why (a
        value reported later for it is refused in words, not "no trial with id")."""
        text = self.get_meta(f"{WITHDRAWN_PREFIX}{trial_id}")
        if text is not None:
            record = _withdrawn_record(text)
            who = f" by {record['by']}" if record.get("by") else ""
            why = f" ({record['note']})" if record.get("note") else ""
            return TrialNotFoundError(
                f"trial {trial_id} of study {self._label()} was withdrawn{who}{why}: nothing reads it "
                "any more; a result for its settings is stored as a new trial (tell its parameters "
                "as a dict, or warmbo observe --params)"
            )
        return TrialNotFoundError(f"no trial with id {trial_id} in study {self._label()}{where}")

    def _keep_earlier(self, trial: Trial, note: str | None, by: str | None = None) -> None:
        """Append ``trial``'s result as it stands to the meta entry ``amended:<id>`` (inside the
        caller's transaction): what :meth:`amend` replaces, or the failure a later value replaces."""
        key = f"amended:{trial.id}"
        earlier = json.loads(self.get_meta(key) or "[]")
        earlier.append(
            {
                "state": trial.state,
                "value": trial.value,
                "values": None if trial.values is None else list(trial.values),
                "error": trial.error,
                "note": note,
                "amended": time.time(),
                "by": by,
            }
        )
        self.set_meta(key, json.dumps(earlier))

    def _write_result(self, conn, trial_id: int, state: str, value, vector: str | None, error) -> None:
        """Overwrite a trial's result (inside :meth:`amend`'s transaction; each back end its own SQL)."""
        cursor = conn.execute(
            "UPDATE trials SET state = ?, value = ?, vector = ?, error = ? WHERE id = ?",
            (state, value, vector, error, trial_id),
        )
        self._wrote(cursor, (trial_id,))

    def delete_trials(self, ids) -> int:
        """Delete the trials with these ids (in one transaction); returns how many were deleted."""
        ids = [self._check_id(i) for i in ids]
        with self.transaction() as conn:
            deleted = 0
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                cursor = conn.execute(
                    f"DELETE FROM trials WHERE id IN ({', '.join('?' * len(chunk))})", chunk
                )
                deleted += cursor.rowcount
                self._wrote(cursor, chunk)
        for i in ids:
            self._parsed.pop(i, None)
        return deleted

    # ------------------------------------------------------------------ heartbeats
    def heartbeat(self, ids, now: float | None = None) -> int:
        """Record that the workers of these pending trials are alive; returns how many were updated."""
        ids = [self._check_id(i) for i in ids]
        if not ids:
            return 0
        now = time.time() if now is None else float(now)
        with self.transaction() as conn:
            cursor = conn.execute(
                "UPDATE trials SET heartbeat = ? WHERE state = 'pending' "
                f"AND id IN ({', '.join('?' * len(ids))})",
                [now, *ids],
            )
            self._wrote(cursor)  # (a column no snapshot reads)
            return int(cursor.rowcount)

    def last_beats(self, beating_only: bool = False) -> dict[int, float]:
        """Pending trial id -> its last heartbeat (its creation time if it never sent one);
        ``beating_only``: only the trials that have sent one (evaluations a run or a heartbeat loop
        looks after, not suggestions waiting for a person)."""
        beat = self._heartbeat
        query = f"SELECT id, COALESCE({beat}, created) FROM trials WHERE state = 'pending'"
        if beating_only:
            query += f" AND {beat} IS NOT NULL"
        rows = self._connect().execute(query).fetchall()
        return {int(i): float(t) for i, t in rows}

    def reassign(self, trial_id, worker: str, now: float | None = None) -> Trial:
        """Hand a pending trial to another worker (a reclaimed trial re-queued): new worker, fresh
        heartbeat, same id and point."""
        trial_id = self._check_id(trial_id)
        with self.transaction() as conn:
            cursor = conn.execute(
                "UPDATE trials SET worker = ?, heartbeat = ? WHERE id = ? AND state = 'pending'",
                (worker, time.time() if now is None else float(now), trial_id),
            )
            self._wrote(cursor, (trial_id,))
        return self.trial(trial_id)

    def meta_items(self, prefix: str = "") -> dict[str, str]:
        """Meta entries whose key starts with ``prefix``."""
        rows = (
            self._connect()
            .execute(
                "SELECT key, value FROM meta WHERE substr(key, 1, length(?)) = ? ORDER BY key",
                (prefix, prefix),
            )
            .fetchall()
        )
        return dict(rows)

    def amendments(self) -> dict[int, list[dict]]:
        """What :meth:`amend` (and a value told after a failure) replaced, by trial id: the records of
        the meta entries ``amended:<id>``, oldest first (``state``, ``value``, ``values``, ``error``,
        ``note``, ``amended``: the time). An entry that is not such a JSON list (edited by hand) reads
        as one empty record, so the trial still shows as amended."""
        out = {}
        for key, text in self.meta_items("amended:").items():
            try:
                trial_id = int(key.split(":", 1)[1])
            except ValueError:
                continue
            try:
                records = json.loads(text)
                if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
                    raise ValueError(text)
            except ValueError:
                records = [{}]
            out[trial_id] = records or [{}]
        return out

    def set_note(self, trial_id: int, note: str) -> None:
        """Keep a note with a trial (meta ``note:<id>``; ``warmbo observe --note`` with a value: "sample
        slightly contaminated"); ``warmbo status`` and ``export`` show it. A second note is added to
        the first, separated by ``; ``, so that neither is lost."""
        if not isinstance(note, str) or not note.strip():
            raise ValueError(f"a note must be a non-empty str, got {note!r}")
        with self.transaction():
            self.trial(trial_id)  # (TrialNotFoundError for an unknown id)
            earlier = self.get_meta(f"note:{trial_id}")
            self.set_meta(f"note:{trial_id}", f"{earlier}; {note}" if earlier else note)

    def notes(self) -> dict[int, str]:
        """The notes kept with trials (:meth:`set_note`), by trial id."""
        out = {}
        for key, text in self.meta_items("note:").items():
            suffix = key.split(":", 1)[1]
            if suffix.isdigit():
                out[int(suffix)] = text
        return out

    def delete_meta(self, key: str) -> None:
        with self.transaction() as conn:
            self._wrote(conn.execute("DELETE FROM meta WHERE key = ?", (key,)))

    def set_meta(self, key: str, value: str) -> None:
        """Store a small string under ``key`` (e.g. which prior files were imported)."""
        self.set_metas({key: value})

    def set_metas(self, items: dict[str, str]) -> None:
        """Store several entries in one transaction: a process stopped while writing them (a kill,
        a power cut) leaves all or none of them, never a record without the entry that names it."""
        with self.transaction() as conn:
            for key, value in items.items():
                cursor = conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))
                self._wrote(cursor)

    def get_meta(self, key: str) -> str | None:
        row = self._connect().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def __repr__(self) -> str:
        return f"Study({self.url!r}, trials={len(self)})"
