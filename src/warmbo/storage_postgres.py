"""The PostgreSQL back end of :class:`~warmbo.storage.Study`: one study shared by many machines.

``Study("postgresql://user@host:5432/db?study=NAME")`` (also ``postgres://``; a Unix socket as
``postgresql://user@/db?host=/run/postgresql``) opens study ``NAME`` (default ``"default"``) in that
database; several studies live side by side in three tables (``warmbo_studies``, ``warmbo_meta``,
``warmbo_trials``), created on first use. The guarantees are SQLite's:

- every change is committed before the call returns (PostgreSQL's synchronous commit);
- a write transaction (:meth:`PostgresStudy.transaction`) holds a transaction-scoped advisory lock on
  the study (``pg_advisory_xact_lock``), the database's own lock, released at COMMIT or ROLLBACK,
  so the optimizer's read-choose-insert of an ask is atomic across processes and machines: no two
  workers get the same trial id or the same pending point;
- a different space is refused with the list of differences; the schema carries a version.

:meth:`version` is a counter every write transaction increments, so the optimizer's "did anyone
write since my snapshot" check works across machines. Trial ids come from one sequence shared by all
studies of the database: increasing within a study, not necessarily consecutive.

The driver is psycopg 3 (``pip install 'warmbo[postgres]'``); it is imported only when a PostgreSQL
URL is opened, so the SQLite path stays standard-library only.

Why this file is long: one class implements the whole study interface in SQL (trials, meta,
heartbeats, amendments, snapshots), and the connection handling a server needs and a file does not
(reconnecting after a dropped connection, saying a transaction cut by it in warmbo's words, keeping
passwords out of messages) lives beside it; splitting them would spread one connection's state over
two modules.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
import re
import threading
import time
import warnings
import weakref
from urllib.parse import parse_qsl, quote, unquote, unquote_plus, urlsplit, urlunsplit

from ._warnings import user_stacklevel
from .space import Space
from .storage import (
    _OPENING_KEYS,
    _SCHEMA_VERSION,
    ConnectionLostError,
    NewStudyWarning,
    StorageError,
    StoreUnavailableError,
    Study,
    _Closer,
    _finite_value,
    _finite_vector,
    _inherit,
    _mistyped_name,
    _new_lock,
    _series,
    default_worker,
    redacted,
)
from .trial import COMPLETE, FAILED, PENDING, STATES, History, Trial

__all__ = ["PostgresStudy", "is_driver_error", "is_postgres_url", "split_url"]

_SCHEMES = ("postgresql://", "postgres://")
_INSERT_TRIAL = (
    "INSERT INTO warmbo_trials (study, params, state, value, created, completed, worker, error, vector) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id"
)
_COLUMNS = "id, params, state, value, created, completed, worker, error, vector"
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS warmbo_studies (name TEXT PRIMARY KEY, version BIGINT NOT NULL DEFAULT 0)",
    "CREATE TABLE IF NOT EXISTS warmbo_meta (study TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, "
    "PRIMARY KEY (study, key))",
    "CREATE TABLE IF NOT EXISTS warmbo_trials (id BIGSERIAL PRIMARY KEY, study TEXT NOT NULL, "
    "params TEXT NOT NULL, state TEXT NOT NULL CHECK (state IN ('pending', 'complete', 'failed')), "
    "value DOUBLE PRECISION, created DOUBLE PRECISION NOT NULL, completed DOUBLE PRECISION, worker TEXT, "
    "error TEXT, vector TEXT)",
    "CREATE INDEX IF NOT EXISTS warmbo_trials_study ON warmbo_trials (study, id)",
    # last sign of life of a pending trial's worker (NULL: the creation time counts)
    "ALTER TABLE warmbo_trials ADD COLUMN IF NOT EXISTS heartbeat DOUBLE PRECISION",
)


def is_driver_error(error: BaseException) -> bool:
    """Whether ``error`` is the psycopg driver's own (its errors derive from Exception only; not
    psycopg2's, which a user's objective may raise)."""
    return type(error).__module__.split(".")[0] == "psycopg"


def is_postgres_url(url) -> bool:
    """Whether ``url`` names a PostgreSQL study."""
    return isinstance(url, str) and url.strip().lower().startswith(_SCHEMES)


def split_url(url: str) -> tuple[str, str]:
    """``(conninfo, study name)`` of a PostgreSQL study URL (the ``study`` and ``mode`` query parameters
    removed, the others passed to libpq as written: re-encoded, ``options=-c%20search_path%3Dlab``
    reached libpq as ``-c+search_path=lab``, a review). The name is decoded as a query's value is,
    ``+`` a space (``study=a+b`` is the study ``'a b'``, as it always was)."""
    parts = urlsplit(url.strip())
    query = parse_qsl(parts.query, keep_blank_values=True)
    names = [v for k, v in query if k == "study"]
    shown = re.sub(r"[?&]mode=ro$", "", redacted(url).strip())  # (the read-only form: not what was typed)
    if len(names) > 1 or (names and not names[0]):
        raise StorageError(f"malformed storage URL {shown!r}: give one non-empty study=NAME")
    if not parts.path or parts.path == "/":
        raise StorageError(f"malformed storage URL {shown!r}: name the database, postgresql://user@host/db")
    kept = [
        piece
        for piece in parts.query.split("&")
        if piece and unquote_plus(piece.partition("=")[0]) not in ("study", "mode")
    ]
    rest = "&".join(kept)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, rest, "")), (names[0] if names else "default")


def study_parameter(name: str) -> str:
    """``study=NAME`` as a URL holds it (percent-encoded: ``study=a%20b`` for the study ``'a b'``,
    ``study=a%2Bb`` for ``'a+b'``)."""
    return f"study={quote(name, safe='-_.~')}"


def _timeout(conninfo: str) -> dict:
    """libpq's ``connect_timeout`` unless the URL gives its own (:data:`CONNECT_TIMEOUT`)."""
    return {} if "connect_timeout" in conninfo else {"connect_timeout": CONNECT_TIMEOUT}


def _names_in(conn) -> list[str]:
    """The names of the studies a database holds, sorted ([] without warmbo's tables)."""
    if not conn.execute("SELECT to_regclass('warmbo_studies') IS NOT NULL").fetchone()[0]:
        return []
    return [row[0] for row in conn.execute("SELECT name FROM warmbo_studies ORDER BY name").fetchall()]


def study_names(url: str) -> list[str]:
    """The names of the studies the database of ``url`` holds, sorted ([] when it holds no warmbo
    tables); the server's refusal as a StorageError."""
    import psycopg

    conninfo, _ = split_url(url)
    try:
        with psycopg.connect(conninfo, autocommit=True, **_timeout(conninfo)) as conn:
            return _names_in(conn)
    except psycopg.Error as exc:
        raise StorageError(f"cannot read the studies of {redacted(conninfo)}: {type(exc).__name__}") from None


def _lock_key(name: str) -> int:
    """A signed 64-bit advisory-lock key for a study name."""
    return int.from_bytes(hashlib.sha256(f"warmbo:{name}".encode()).digest()[:8], "big", signed=True)


#: statements sent again on a new connection when the server dropped the old one before answering
#: them outside a transaction: reads, and the BEGIN of a transaction (nothing of theirs was done)
_RESENDABLE = ("SELECT", "BEGIN")
#: seconds a dropped connection waits for the server to accept connections again (a restart)
RECONNECT_PATIENCE = 60.0
#: what a server in the middle of a restart answers a new connection (SQLSTATE 57P03)
_RESTARTING = (
    "the database system is shutting down",
    "the database system is starting up",
    "the database system is not yet accepting connections",
    "the database system is in recovery mode",
)
#: what a server answers a connection it will refuse however long one waits (a password changed, a
#: role dropped or not allowed to log in, a database dropped, a pg_hba.conf rule): said at once, even
#: by a server this process reached before, instead of after RECONNECT_PATIENCE seconds
_REFUSED = (
    "password authentication failed",
    "no password supplied",
    "authentication failed",
    "is not permitted to log in",
    "does not exist",
    "no pg_hba.conf entry",
    "permission denied",
)
#: libpq's connect_timeout (seconds) unless the URL gives one: a host that drops packets (a firewall)
#: is said after this long, not after the operating system's TCP timeout (minutes)
CONNECT_TIMEOUT = 10
#: the servers (conninfo) this process has connected to: one that refuses a later connection is
#: restarting, not misnamed
_REACHED: set[str] = set()


def _refused(exc: Exception) -> bool:
    """Whether a failed connection's error is one waiting cannot cure (:data:`_REFUSED`)."""
    return any(words in str(exc) for words in _REFUSED)


class _Connection:
    """A thread's connection to the server that outlives the server dropping it (a restart, a
    failover, an administrator's ``pg_terminate_backend``, an idle timeout): a read, or the BEGIN of
    a transaction, that finds the connection dropped is sent again on a new one, made as soon as the
    server accepts it (for up to :data:`RECONNECT_PATIENCE` seconds); so is a transaction dropped
    before it wrote anything (:meth:`PostgresStudy._begin`). A statement inside a transaction is
    not: the transaction is lost with the connection, which the study says as a
    :class:`~warmbo.storage.ConnectionLostError` (an ask then asks again on a new connection; a run
    says which value it could not store). Everything else is the psycopg connection's."""

    def __init__(self, study: PostgresStudy):
        # (weakly: the study's thread-local slots hold this connection, and a strong reference back
        # would make a cycle that only a garbage collection frees, not the study's drop: _Closer)
        self._study_ref = weakref.ref(study)
        try:
            self._conn = study._open_connection()
        except StorageError as exc:
            # a server that is restarting ("the database system is shutting down", "... starting
            # up"), or one this process reached before (a command opens the study more than once, and
            # the restart came between): the first connection waits for it as a dropped one does.
            # Before, a command in flight when the server restarted failed at once. Any other server
            # that cannot be reached (a wrong port, a server that is down) is said at once
            if _refused(exc) or (
                study.conninfo not in _REACHED and not any(words in str(exc) for words in _RESTARTING)
            ):
                raise
            self._conn = None
            self.reconnect()

    @property
    def _study(self) -> PostgresStudy:
        return self._study_ref()

    def __getattr__(self, name):
        return getattr(self._conn, name)

    def execute(self, query: str, params=None):
        from psycopg.pq import TransactionStatus

        conn = self._conn
        idle = not conn.closed and conn.info.transaction_status == TransactionStatus.IDLE
        if conn.broken and query.strip().upper() == "ROLLBACK":
            return None  # (the server ended the transaction with the connection)
        try:
            return conn.execute(query, params)
        except self._study._psycopg.OperationalError:
            if not (idle and conn.broken and query.lstrip().upper().startswith(_RESENDABLE)):
                raise
        self.reconnect()
        return self._conn.execute(query, params)

    def reconnect(self) -> None:
        """Replace the dropped connection, waiting for the server for up to RECONNECT_PATIENCE s; once
        the study has waited that long in vain, its next reconnections within the following
        RECONNECT_PATIENCE s try once each (a user test: a run whose server was down gave up after
        about 200 s, three waits of 60 s in a row, its value's, its check of the trial's and its
        record that the run stopped, while its message said 60 s)."""
        lost = "lost the connection to the server, and could not" if self._conn is not None else "could not"
        with contextlib.suppress(Exception):  # (the dropped one's socket and client state)
            self._conn.close()
        study = self._study
        gave_up = getattr(study, "_unreachable_since", None)
        waited = gave_up is not None and time.monotonic() - gave_up < RECONNECT_PATIENCE
        deadline = time.monotonic() + (0.0 if waited else RECONNECT_PATIENCE)
        pause = 0.1
        while True:
            try:
                self._conn = study._open_connection()
                study._unreachable_since = None
                return
            except StorageError as exc:
                if _refused(exc):  # (no restart makes it accept this connection)
                    raise StorageError(f"{lost} connect again: {exc}") from None
                if time.monotonic() > deadline:
                    if waited:
                        raise StoreUnavailableError(
                            f"{lost} connect again (the server could not be reached for "
                            f"{time.monotonic() - gave_up + RECONNECT_PATIENCE:.0f} s): {exc}"
                        ) from None
                    study._unreachable_since = time.monotonic()
                    raise StoreUnavailableError(
                        f"{lost} connect again within {RECONNECT_PATIENCE:.0f} s: {exc}"
                    ) from None
            time.sleep(pause)
            pause = min(pause * 2, 2.0)


class PostgresStudy(Study):
    """A :class:`~warmbo.storage.Study` kept in PostgreSQL (see the module docstring)."""

    _keeps_snapshot = False  # (its version counts write transactions, not rows: every snapshot reads)

    def __init__(
        self, storage=None, space: Space | None = None, settings: dict | None = None, readonly=False
    ):
        try:
            import psycopg
        except ImportError:
            raise StorageError(
                "a postgresql:// study needs the psycopg driver: pip install 'warmbo[postgres]'"
            ) from None
        self._psycopg = psycopg
        self._unreachable_since: float | None = None  # (when a reconnection last waited in vain)
        self.url = storage
        self.conninfo, self.name = split_url(storage)
        self.path = f"{urlsplit(self.conninfo).path.lstrip('/')}?study={self.name}"  # used in messages
        self.readonly = bool(readonly) or ("mode", "ro") in parse_qsl(urlsplit(storage.strip()).query)
        self._local = threading.local()
        self._parsed: dict[int, tuple[str, dict]] = {}
        self._shared_rows: dict[int, tuple[tuple, Trial]] = {}  # id -> (row, Trial) of snapshot()
        self._rollbacks = 0
        self._lock = _new_lock(self)
        self._key = _lock_key(self.name)
        self._refuse_placeholder_password()
        conn = self._connect()  # fails early, with the server's own words, if the server is unreachable
        try:
            if self.readonly:
                meta = self._meta_rows(conn)
                if not meta:
                    raise StorageError(self._no_study())
                self._check_meta(meta, space, settings or {})
            else:
                self._initialise(space, settings or {})
        except BaseException:
            # closed here: the error's traceback holds this object in a reference cycle, and a
            # collection of it finalises the psycopg connection and its closer in any order (one
            # warned "deleted while still open" after `Study(url_of_no_study)`)
            self.close()
            raise

    @staticmethod
    def study_name(url: str) -> str:
        """The study name of a PostgreSQL URL (``study=``, default ``"default"``)."""
        return split_url(url)[1]

    def _no_study(self) -> str:
        # a study name mistyped (study=enzym for enzyme) read as a missing study, and the advice to
        # create one split a lab's results over two studies: the database's own studies come first
        names = self.study_names()
        similar = self.similar_studies(names)
        held = ""
        if names:
            shown = similar + [n for n in names if n not in similar][: max(0, 10 - len(similar))]
            more = f" and {len(names) - len(shown)} more" if len(names) > len(shown) else ""
            listed = ", ".join(shown) + more
            held = (
                f"; did you mean {study_parameter(similar[0])}? (the database holds the studies {listed})"
                if similar
                else f"; the database holds the studies {listed}"
            )
        return (
            f"no study {self.name!r} in {self._where()}{held}. To create a new study, give a search "
            "space: `warmbo suggest --space space.json --storage URL` with this study's URL (or "
            "`warmbo optimize --space ...`; in Python, wb.Optimizer(space, storage=URL))"
        )

    def study_names(self) -> list[str]:
        """The names of the studies the database holds (this one too, once it exists), sorted."""
        return _names_in(self._connect())

    def similar_studies(self, names: list[str] | None = None) -> list[str]:
        """The database's other studies whose names are close to this one's (``enzyme`` for
        ``enzym`` or ``Enzyme``), closest first: what a mistyped ``study=`` meant."""
        others = [n for n in (self.study_names() if names is None else names) if n != self.name]
        folded = {n.casefold(): n for n in others}
        close = [
            folded[n] for n in difflib.get_close_matches(self.name.casefold(), list(folded), n=3, cutoff=0.75)
        ]
        # and the slips difflib scores low in short names: 'at1' for 'ta1', 'a b' for 'a+b'
        slips = [n for n in others if n not in close and _mistyped_name(self.name, n)]
        return (close + slips)[:3]

    @property
    def reference(self) -> str:
        return redacted(self.url.strip())

    def _label(self) -> str:
        return f"{self.name!r} in {self._where()}"

    def _where(self) -> str:
        parts = urlsplit(self.conninfo)
        return redacted(f"postgresql://{parts.netloc}{parts.path}")

    # ------------------------------------------------------------------ connections
    def _without_password(self, message: str) -> str:
        """libpq's message with the URL's password (as typed and percent-decoded) replaced by ***:
        libpq quotes the URL's text in some errors ('invalid percent-encoded token: "se%zzcret"')."""
        for secret in sorted({p for p in self._passwords(typed=True) if p}, key=len, reverse=True):
            message = message.replace(secret, "***")
        return message

    def _passwords(self, typed: bool = False) -> list[str]:
        """The passwords the URL gives (its user part, percent-decoded, and a ``password=`` query
        parameter); with ``typed``, the user part as typed too."""
        parts = urlsplit(self.conninfo)
        given = [] if parts.password is None else [unquote(parts.password)]
        if typed and parts.password is not None:
            given.append(parts.password)
        return given + [v for k, v in parse_qsl(parts.query) if k == "password"]

    def _refuse_placeholder_password(self) -> None:
        """A URL whose password is ``***`` was copied from what warmbo printed (it shows every URL
        that way, the advised ``warmbo observe --storage ...`` line too): the server answered
        "password authentication failed", which did not say that the stars stand for the password."""
        if "***" in self._passwords():
            raise StorageError(
                f"the password in {self._where()} is ***, the stand-in warmbo prints in place of a "
                "password: put the real password there, or leave it out of the URL "
                "(postgresql://user@host/db?study=NAME) and set the PGPASSWORD variable or a ~/.pgpass "
                "line"
            )

    def _connect(self):
        conn = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "pid", None) != os.getpid():
            _inherit(conn, self._local)
            conn = _Connection(self)
            self._local.conn = conn
            self._local.closer = _Closer(conn)
            self._local.pid = os.getpid()
        elif conn.closed:
            if getattr(self._local, "depth", 0):
                # dropped inside this thread's write transaction, whose error was caught on the way:
                # the rest of it must not run on a new connection (in autocommit, half of it stored)
                raise ConnectionLostError(
                    f"the server dropped the connection to {self._where()} during a write transaction: "
                    "nothing of it was stored; the next call connects again"
                )
            conn.reconnect()  # (dropped by the server in a transaction: the next one waits for it)
        return conn

    def _open_connection(self):
        """A new autocommit connection to the server; a StorageError with the server's words if none."""
        try:
            conn = self._psycopg.connect(self.conninfo, autocommit=True, **_timeout(self.conninfo))
        except self._psycopg.Error as exc:
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            message = self._without_password(message)
            hint = ""
            if "Connection refused" in message or "No such file or directory" in message:
                hint = (
                    "; is the server running, and are the host and port right? (when it was restarting, "
                    "run the command again)"
                )
            raise StorageError(f"cannot connect to {self._where()}: {message}{hint}") from None
        _REACHED.add(self.conninfo)
        return conn

    @staticmethod
    def _in_transaction(conn) -> bool:
        from psycopg.pq import TransactionStatus

        return conn.info.transaction_status != TransactionStatus.IDLE

    def _lost_connection(self, exc: BaseException, conn, committing: bool) -> ConnectionLostError | None:
        """psycopg's error for a connection the server dropped during a write transaction (a restart,
        a failover, ``pg_terminate_backend``, an idle timeout: "server closed the connection
        unexpectedly", "terminating connection due to administrator command"), in warmbo's words. The
        server rolls back a transaction whose connection it drops, unless the drop came at the COMMIT
        (``committing``), which may have reached the server: then it may be stored (``at_commit``)."""
        if not isinstance(exc, self._psycopg.OperationalError) or not (conn.closed or conn.broken):
            return None  # (a statement the server refused, a query cancelled: the connection lives)
        said = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        said = self._without_password(said)
        if committing:
            what = f"at the COMMIT of a write transaction ({said}): it may or may not have been stored"
        else:
            what = f"during a write transaction ({said}): nothing of it was stored"
        return ConnectionLostError(
            f"the server dropped the connection to {self._where()} {what}; the next call connects again",
            at_commit=committing,
            reason=said,
        )

    def _begin(self, conn) -> None:
        """BEGIN, then the study's advisory lock (released at COMMIT/ROLLBACK) and its write counter.

        A connection the server drops before this returns (while waiting for the lock another
        worker's transaction holds, during a restart) has written nothing that can stay: the
        transaction is begun again on a new connection (``_Connection.reconnect``), once."""
        for again in (False, True):
            conn.execute("BEGIN")
            try:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._key,))
                conn.execute("UPDATE warmbo_studies SET version = version + 1 WHERE name = %s", (self.name,))
                return
            except self._psycopg.OperationalError:
                conn.execute("ROLLBACK")
                if again or not conn.broken or not callable(getattr(conn, "reconnect", None)):
                    raise
                conn.reconnect()
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # ------------------------------------------------------------------ creation / reopening
    def _meta_rows(self, conn) -> dict:
        exists = conn.execute("SELECT to_regclass('warmbo_meta') IS NOT NULL").fetchone()[0]
        if not exists:
            return {}
        rows = conn.execute(
            "SELECT key, value FROM warmbo_meta WHERE study = %s AND key = ANY(%s)",
            (self.name, list(_OPENING_KEYS)),
        ).fetchall()
        return dict(rows)

    @staticmethod
    def _ensure_schema(conn) -> None:
        """Create the tables, or add a missing column, only when needed: DDL on an existing table
        (even ``ADD COLUMN IF NOT EXISTS`` or ``CREATE INDEX IF NOT EXISTS``) takes a lock that
        conflicts with other workers' inserts, and a worker opening the study while others write
        then deadlocked with them (seen with 4 processes)."""
        if not conn.execute("SELECT to_regclass('warmbo_trials') IS NOT NULL").fetchone()[0]:
            for statement in _SCHEMA:
                conn.execute(statement)
            return
        has_heartbeat = conn.execute(
            "SELECT 1 FROM information_schema.columns WHERE table_name = 'warmbo_trials' "
            "AND column_name = 'heartbeat' AND table_schema = current_schema()"
        ).fetchone()
        if not has_heartbeat:
            conn.execute(_SCHEMA[-1])

    def _initialise(self, space: Space | None, settings: dict) -> None:
        conn = self._connect()
        similar: list[str] = []
        with self._lock:
            conn.execute("BEGIN")
            try:
                # one creator at a time, across machines (the tables may not exist yet)
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key("<schema>"),))
                self._ensure_schema(conn)
                meta = self._meta_rows(conn)
                if not meta:
                    if space is None:
                        raise StorageError(self._no_study())
                    if not isinstance(space, Space):
                        raise StorageError(f"space must be a warmbo Space, got {type(space).__name__}")
                    meta = {
                        "schema_version": _SCHEMA_VERSION,
                        "space": json.dumps(space.to_dict()),
                        "settings": json.dumps(settings),
                        "created": repr(time.time()),
                    }
                    # (names that differ in their numbers alone, run-2 beside run-1, are a series,
                    # as for SQLite files)
                    similar = [n for n in self.similar_studies() if _series(n) != _series(self.name)]
                    conn.execute("INSERT INTO warmbo_studies (name) VALUES (%s)", (self.name,))
                    for key, value in meta.items():
                        conn.execute(
                            "INSERT INTO warmbo_meta (study, key, value) VALUES (%s, %s, %s)",
                            (self.name, key, value),
                        )
                self._check_meta(meta, space, settings)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        if similar:
            # (a user test: study=lr-sweeep beside lr-sweep split a sweep over two studies without a
            # word, where a new SQLite file beside one of a close name warns the same)
            warnings.warn(
                f"created a new study {self.name!r} in {self._where()}; did you mean "
                f"{study_parameter(similar[0])}, which exists? (a mistyped study= starts a study with no "
                "trials)",
                NewStudyWarning,
                stacklevel=user_stacklevel(),
            )

    # ------------------------------------------------------------------ reading
    def version(self) -> tuple[int, int]:
        """The study's write counter (every write transaction increments it, on any machine)."""
        row = (
            self._connect()
            .execute("SELECT version FROM warmbo_studies WHERE name = %s", (self.name,))
            .fetchone()
        )
        return (0 if row is None else int(row[0]), 0)

    def trials(self, states: tuple[str, ...] | None = None) -> History:
        query = f"SELECT {_COLUMNS} FROM warmbo_trials WHERE study = %s"
        args: list = [self.name]
        if states is not None:
            bad = [s for s in states if s not in STATES]
            if bad:
                raise ValueError(f"unknown trial state(s) {bad}; states are {STATES}")
            query += " AND state = ANY(%s)"
            args.append(list(states))
        rows = self._connect().execute(query + " ORDER BY id", args).fetchall()
        return History(self._trial(row) for row in rows)

    def _all_rows(self) -> list[tuple]:
        query = f"SELECT {_COLUMNS} FROM warmbo_trials WHERE study = %s ORDER BY id"
        return self._connect().execute(query, (self.name,)).fetchall()

    def trial(self, trial_id: int) -> Trial:
        trial_id = self._check_id(trial_id)
        row = (
            self._connect()
            .execute(
                f"SELECT {_COLUMNS} FROM warmbo_trials WHERE study = %s AND id = %s", (self.name, trial_id)
            )
            .fetchone()
        )
        if row is None:
            # trial ids are unique in the database: one of another study says where it is (a result
            # recorded with the wrong study= in the URL)
            other = (
                self._connect()
                .execute("SELECT study FROM warmbo_trials WHERE id = %s", (trial_id,))
                .fetchone()
            )
            where = (
                f" (it is a trial of study {other[0]!r}: give {study_parameter(other[0])} in the URL)"
                if other
                else ""
            )
            raise self._missing(trial_id, where)
        return self._trial(row)

    def __len__(self) -> int:
        row = (
            self._connect()
            .execute("SELECT COUNT(*) FROM warmbo_trials WHERE study = %s", (self.name,))
            .fetchone()
        )
        return int(row[0])

    def count(self, state: str) -> int:
        row = (
            self._connect()
            .execute("SELECT COUNT(*) FROM warmbo_trials WHERE study = %s AND state = %s", (self.name, state))
            .fetchone()
        )
        return int(row[0])

    # ------------------------------------------------------------------ writing
    def add_trial(self, params: dict, state: str = PENDING, value=None, worker=None, error=None, values=None):
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
        worker = worker or default_worker()
        with self.transaction() as conn:
            trial_id = conn.execute(
                _INSERT_TRIAL,
                (
                    self.name, json.dumps(params), state, value, now, completed, worker, error,
                    None if vector is None else json.dumps(list(vector)),
                ),
            ).fetchone()[0]  # fmt: skip
        return Trial(int(trial_id), params, state, value, now, completed, worker, error, vector)

    def complete(self, trial_id, value, worker: str | None = None, values=None) -> Trial:
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
            conn.execute(
                "UPDATE warmbo_trials SET state = %s, value = %s, completed = %s, error = NULL, "
                "worker = COALESCE(%s, worker), vector = %s WHERE study = %s AND id = %s",
                (
                    COMPLETE, value, time.time(), worker,
                    None if vector is None else json.dumps(list(vector)), self.name, trial_id,
                ),
            )  # fmt: skip
        return self.trial(trial_id)

    def fail(self, trial_id, error: str | None = None) -> Trial:
        trial_id = self._check_id(trial_id)
        with self.transaction() as conn:
            trial = self.trial(trial_id)
            if trial.state == COMPLETE:
                raise StorageError(f"trial {trial_id} is already complete (value {trial.value!r})")
            conn.execute(
                "UPDATE warmbo_trials SET state = %s, completed = %s, error = %s "
                "WHERE study = %s AND id = %s",
                (FAILED, time.time(), error, self.name, trial_id),
            )
        return self.trial(trial_id)

    def _write_result(self, conn, trial_id: int, state: str, value, vector: str | None, error) -> None:
        conn.execute(
            "UPDATE warmbo_trials SET state = %s, value = %s, vector = %s, error = %s "
            "WHERE study = %s AND id = %s",
            (state, value, vector, error, self.name, trial_id),
        )

    def delete_trials(self, ids) -> int:
        ids = [self._check_id(i) for i in ids]
        with self.transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM warmbo_trials WHERE study = %s AND id = ANY(%s)", (self.name, ids)
            )
            deleted = cursor.rowcount
        for i in ids:
            self._parsed.pop(i, None)
        return int(deleted)

    def heartbeat(self, ids, now: float | None = None) -> int:
        ids = [self._check_id(i) for i in ids]
        if not ids:
            return 0
        now = time.time() if now is None else float(now)
        with self.transaction() as conn:
            cursor = conn.execute(
                "UPDATE warmbo_trials SET heartbeat = %s "
                "WHERE study = %s AND state = 'pending' AND id = ANY(%s)",
                (now, self.name, ids),
            )
            return int(cursor.rowcount)

    def last_beats(self, beating_only: bool = False) -> dict[int, float]:
        query = (
            "SELECT id, COALESCE(heartbeat, created) FROM warmbo_trials "
            "WHERE study = %s AND state = 'pending'"
        )
        if beating_only:
            query += " AND heartbeat IS NOT NULL"
        rows = self._connect().execute(query, (self.name,)).fetchall()
        return {int(i): float(t) for i, t in rows}

    def reassign(self, trial_id, worker: str, now: float | None = None) -> Trial:
        trial_id = self._check_id(trial_id)
        with self.transaction() as conn:
            conn.execute(
                "UPDATE warmbo_trials SET worker = %s, heartbeat = %s WHERE study = %s AND id = %s "
                "AND state = 'pending'",
                (worker, time.time() if now is None else float(now), self.name, trial_id),
            )
        return self.trial(trial_id)

    def meta_items(self, prefix: str = "") -> dict[str, str]:
        rows = (
            self._connect()
            .execute(
                # length() in the database's own encoding, as substr() counts
                "SELECT key, value FROM warmbo_meta "
                "WHERE study = %s AND substr(key, 1, length(%s::text)) = %s ORDER BY key",
                (self.name, prefix, prefix),
            )
            .fetchall()
        )
        return dict(rows)

    def delete_meta(self, key: str) -> None:
        with self.transaction() as conn:
            conn.execute("DELETE FROM warmbo_meta WHERE study = %s AND key = %s", (self.name, key))

    def set_meta(self, key: str, value: str) -> None:
        self.set_metas({key: value})

    def set_metas(self, items: dict[str, str]) -> None:
        with self.transaction() as conn:
            for key, value in items.items():
                conn.execute(
                    "INSERT INTO warmbo_meta (study, key, value) VALUES (%s, %s, %s) "
                    "ON CONFLICT (study, key) DO UPDATE SET value = EXCLUDED.value",
                    (self.name, key, value),
                )

    def get_meta(self, key: str) -> str | None:
        row = (
            self._connect()
            .execute("SELECT value FROM warmbo_meta WHERE study = %s AND key = %s", (self.name, key))
            .fetchone()
        )
        return None if row is None else row[0]

    def __repr__(self) -> str:
        return f"Study({self._where()}?study={self.name}, trials={len(self)})"
