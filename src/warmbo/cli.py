"""The ``warmbo`` command line (typer + rich).

Commands: ``demo``, ``optimize``, ``suggest``, ``observe``, ``status``, ``export``, ``audit``,
``clean-pending``, ``report``, ``bench``, ``reproduce``.
Errors are one line on standard error with exit status 1 (no traceback unless ``--debug``); usage
errors exit 2.

Why this file is long: it is the list of commands (one function per command with its typer options and
help text, which is most of its length); the work each command does lives in the library, and the
reproductions' tables come from :mod:`warmbo.experiments.registry`.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import shlex
import signal
import sqlite3
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ._progress import live
from ._progress import progress as progress_display
from .storage import redacted


def _no_type_for_flags() -> None:
    """Help rows of flags show no value placeholder (typer >= 0.25 labels ``--quick <bool>``).

    A user test read ``--prior-add <bool>`` as "type --prior-add true"; a flag takes no value. Typer
    offers no setting for it, so its label method is wrapped for flags; older typers lack the method.
    """
    option = getattr(typer.core, "TyperOption", None)
    label = getattr(option, "display_type_rich", None)
    if label is None or getattr(label, "_warmbo_flags", False):
        return

    def display_type_rich(self, ctx):  # noqa: ANN001, ANN202  (typer's signature)
        return None if self.is_flag and not self.count else label(self, ctx)

    display_type_rich._warmbo_flags = True
    option.display_type_rich = display_type_rich


_no_type_for_flags()

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="warmbo: Bayesian optimization that does not start cold.",
    # paragraphs of the commands' docstrings are reflowed to the terminal (rich mode kept each source
    # line's break: "created first (for experiments run by hand);" then a line of its own)
    rich_markup_mode="markdown",
)
# markup off by default: printed paths, messages and cells hold user text ("runs[old].csv",
# "pip install 'warmbo[hpobench]'"), which rich would read as markup; styled lines say markup=True
console = Console(markup=False)
errors = Console(stderr=True, markup=False, soft_wrap=True)  # one line per message: never wrapped at 80
_STATE = {"debug": False}

# Every command on one study takes it either way: `warmbo status study.db` or `warmbo status -s
# study.db` (some commands took only the option and the others only the argument, so a user of one
# form failed on half of them with "Missing option" or "No such option: -s")
StorageOption = Annotated[
    str | None,
    typer.Option(
        "--storage",
        "-s",
        help="Study file or URL: study.db, sqlite:///study.db or postgresql://user@host/db?study=NAME "
        "(or give it as the first argument).",
    ),
]
# the space file's format in every --space help (a user test found it only in docs/cli.md)
SPACE_FORMAT = (
    ' e.g. {"params": [{"type": "float", "name": "lr", "low": 1e-4, "high": 0.1, "log": true}, {"type": '
    '"int", "name": "layers", "low": 1, "high": 4}, {"type": "categorical", "name": "act", "choices": '
    '["relu", "tanh"]}]} (docs/cli.md has steps and conditions).'
)
# the options that create a study when there is none (`suggest --space`, `enqueue --space`)
NewSpaceOption = Annotated[
    Path | None,
    typer.Option(
        "--space",
        help="JSON file describing the space: creates the study if there is none at --storage "
        "(an existing study must have this very space)." + SPACE_FORMAT,
    ),
]
NewDirectionOption = Annotated[
    bool | None,
    typer.Option(
        "--maximize/--minimize",
        help="Direction of a new study (default minimise); an existing study keeps its own.",
        show_default=False,
    ),
]
NewSeedOption = Annotated[
    int | None, typer.Option("--seed", help="Random seed of a new study (an existing one keeps its own).")
]
CreateOption = Annotated[
    bool,
    typer.Option(
        "--create",
        help="Create the new study even beside a study file of a close name (without it, refused as a "
        "likely typo: lab.bd beside lab.db).",
    ),
]
NewDesignOption = Annotated[
    int | None,
    typer.Option(
        "--n-initial",
        help="Design points of a new study before the model chooses (default min(max(3, 2 d), 20) "
        "for d parameters, a categorical counting one; whole queued configurations count towards "
        "them, partial ones do not); an existing study keeps its own.",
        min=1,
        show_default=False,
    ),
]
StudyArgument = Annotated[
    str | None,
    typer.Argument(help="Study file or URL (or give it with --storage).", show_default=False),
]


def _the_study(study: str | None, storage: str | None) -> str:
    """The study a command works on, given as its argument or with ``--storage``, once (or both
    ways naming one study: ``study.db`` and ``sqlite:///study.db``)."""
    from .storage import redacted, study_identity

    if study is not None and storage is not None and study != storage:
        same = study_identity(study)
        if same is None or same != study_identity(storage):  # (two in-memory studies are two)
            _fail(f"two studies given, {redacted(study)!r} and --storage {redacted(storage)!r}: give one")
    given = storage if storage is not None else study
    if not given:
        _fail(
            "which study? Give its file or URL: study.db, sqlite:///study.db or postgresql://... "
            "(as the first argument or with --storage)"
        )
    return given  # type: ignore[return-value]


def _refuse_optuna_spellings(
    n_trials: int | None, direction: str | None, storage: str | None, command: str = "optimize"
) -> None:
    """Optuna's ``--n-trials`` and ``--direction``, said in warmbo's words (hidden options). Before,
    Typer offered ``--max-trials`` for ``--n-trials`` (a user test followed it: 20 trials ran on a
    3-trial model, without a word) and ``--directions`` for ``--direction`` (multi-task only)."""
    if n_trials is not None:
        from .storage import Study, study_exists

        done = (
            len(Study(storage, readonly=True).trials(("complete", "failed")))
            if (storage is not None and study_exists(storage))
            else 0
        )
        more = f" (the study holds {done} finished trials: --budget {done + n_trials} runs {n_trials} more)"
        raise ValueError(
            f"warmbo optimize has no --n-trials: give --budget, the total of finished trials in the "
            f"study{more if done else f', here --budget {n_trials}'}; Optuna's n_trials counts new ones. "
            "(--max-trials is another thing: how many trials the model sees)"
        )
    if direction is not None:
        said = direction.strip().lower()
        if said.startswith("max"):
            raise ValueError(
                f"warmbo {command} has no --direction: give --maximize (minimising is the default)"
            )
        if said.startswith("min"):
            raise ValueError(f"warmbo {command} has no --direction: leave it out (minimising is the default)")
        raise ValueError(f"--direction {direction!r}: warmbo minimises by default, and --maximize maximises")


#: ``--max-trials`` of optimize and suggest (Optimizer's ``max_trials``)
MaxTrialsOption = Annotated[
    int | None,
    typer.Option(
        "--max-trials",
        help="Model at most this many of the study's own trials (the best quarter and a random rest; "
        "all stay stored): for studies of thousands of trials, where an exact GP costs minutes per ask.",
        min=2,
    ),
]


#: ``--max-prior`` of optimize and suggest (Optimizer's ``max_prior``)
MaxPriorOption = Annotated[
    int | None,
    typer.Option(
        "--max-prior",
        help="At most this many prior rows reach the model (all stay stored). Default: 1000 per source "
        "for auto and rgpe and in all for --transfer none, 256 in all for the methods that pool the "
        "sources. Stored with the study's sources; a resumed study keeps it unless given again.",
        min=1,
        show_default=False,
    ),
]


#: how optimize and suggest read their --prior files
TaskOption = Annotated[
    str | None, typer.Option("--task", help="Column of the prior CSV naming the source task of each row.")
]
PriorYOption = Annotated[
    str, typer.Option("--prior-y", help="Column of the prior CSV holding the objective values.")
]
PriorDelimiterOption = Annotated[
    str, typer.Option("--prior-delimiter", help="Field separator of the prior CSV, e.g. ';' (default ',').")
]
PriorDecimalOption = Annotated[
    str,
    typer.Option(
        "--prior-decimal",
        help="Decimal mark of the prior CSV's numbers: ',' reads 52,1 as 52.1 (a European spreadsheet's "
        "CSV, with --prior-delimiter ';').",
    ),
]
PriorRenameOption = Annotated[
    list[str] | None,
    typer.Option(
        "--prior-rename",
        help="OLD=NEW: read the --prior files' and studies' parameter (or column) OLD as this study's "
        "parameter NEW (repeatable), for a parameter renamed since.",
    ),
]

PriorAddOption = Annotated[
    bool,
    typer.Option(
        "--prior-add",
        help="On a study that stores other transfer sources: add the --prior files to them (a file "
        "whose rows a stored source holds is not added twice).",
    ),
]
PriorReplaceOption = Annotated[
    bool,
    typer.Option(
        "--prior-replace",
        help="On a study that stores other transfer sources: use the --prior files instead of them.",
    ),
]


def _check_prior_sources_options(prior, transfer: str | None, add: bool, replace: bool) -> None:
    """``--prior-add`` / ``--prior-replace`` say what ``--prior`` files do to a study's stored sources:
    refused where they would do nothing (without ``--prior``, with ``--transfer none``, both)."""
    if not (add or replace):
        return
    flag = "--prior-add" if add else "--prior-replace"
    if add and replace:
        raise ValueError("give --prior-add or --prior-replace, not both")
    if not prior:
        raise ValueError(
            f"{flag} says what --prior files do to a study's stored sources: give them with --prior"
        )
    if transfer in ("none", "gp"):
        raise ValueError(
            f"{flag} is for transfer sources; with --transfer none the --prior files are imported as trials"
        )


def _plain(*cells: str) -> list[Text]:
    """Table cells shown as written: rich reads a str cell as markup, so a categorical choice, a
    worker or a file name like "[/a]" raised MarkupError (and "[b]" vanished)."""
    return [Text(cell) for cell in cells]


def _study_arg(storage: str) -> str:
    """A study in a command line a message advises: its URL without a PostgreSQL password, quoted
    for a shell (a PostgreSQL URL's ``&study=`` would end the command there)."""
    return shlex.quote(redacted(storage))


def _fail(message: str) -> None:
    errors.print(
        f"[bold red]error:[/bold red] {escape(message)}", highlight=False, markup=True, soft_wrap=True
    )
    raise typer.Exit(1)


def friendly(command):
    """Turn expected exceptions into one clear line and exit status 1 (tracebacks with --debug)."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        from .storage import closing_opened

        try:
            with warnings.catch_warnings(), closing_opened():  # (restores Python's showwarning after)
                if not _STATE["debug"]:
                    warnings.showwarning = _show_warning
                return command(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except KeyboardInterrupt as exc:
            # a Ctrl-C no command caught itself (while the study opens, a model fits, a line prints)
            # ended with status 130 and not a word (a chemist user test): what was reported before it
            # is stored (each change is a transaction), nothing after it was done
            if _STATE["debug"]:
                raise
            signum = getattr(exc, "signum", signal.SIGINT)
            name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
            errors.print(
                f"stopped by {name}: what is printed above was done and stored; nothing after it",
                highlight=False,
            )
            raise typer.Exit(128 + int(signum)) from None
        except BrokenPipeError:
            # stdout's reader is gone (`warmbo export -o - | head`): stop quietly with status 1, as
            # rich does for the tables (Console.on_broken_pipe), with stdout pointed at /dev/null so
            # that Python's own flush at exit does not raise again
            with contextlib.suppress(OSError, ValueError, AttributeError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(1) from None
        except (ValueError, KeyError, OSError, RuntimeError, sqlite3.Error) as exc:
            if _STATE["debug"]:
                raise
            # (a DataError may carry its message in the command line's words: --prior-y, not y=)
            _fail(
                getattr(exc, "shell", None)
                or (str(exc.args[0]) if isinstance(exc, KeyError) else _error_words(exc))
            )
        except MemoryError:
            if _STATE["debug"]:
                raise
            _fail("out of memory; nothing half-done was stored (imports and asks are single transactions)")
        except Exception as exc:
            # the PostgreSQL driver's errors (a server restarted during a transaction, a connection
            # terminated while waiting for the study's lock) derive from Exception only: one line,
            # not a traceback; nothing of the interrupted transaction was stored
            from .storage_postgres import is_driver_error

            if _STATE["debug"] or not is_driver_error(exc):
                raise
            psycopg = sys.modules["psycopg"]  # (loaded: it raised this)
            said = (str(exc).strip().splitlines() or [type(exc).__name__])[0]  # (not psycopg's LINE/HINT)
            transient = isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)
            _fail(f"the PostgreSQL server: {said}" + (" (run the command again)" if transient else ""))

    return wrapper


def _error_words(exc: BaseException) -> str:
    """An exception's message; the operating system's errors without Python's ``[Errno 13]`` prefix:
    ``'out/report.html': permission denied``."""
    if not (isinstance(exc, OSError) and exc.strerror):
        return str(exc)
    reason = _os_reason(exc)
    if exc.filename is None:
        return reason
    if exc.filename2 is not None:
        return f"{os.fsdecode(exc.filename)!r} -> {os.fsdecode(exc.filename2)!r}: {reason}"
    return f"{os.fsdecode(exc.filename)!r}: {reason}"


def _os_reason(exc: OSError) -> str:
    """The operating system's reason in a line's words (``permission denied``)."""
    return exc.strerror[:1].lower() + exc.strerror[1:]


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning said for the command line: ``warning: <message>`` on stderr, as written.

    Python's own format names the file and source line that warned, which point into warmbo or
    typer (``typer/main.py:1445: LargeStudyWarning: ...  return callback(**use_params)``), not at
    anything the user wrote; ``--debug`` keeps that format."""
    _on_stderr(Text.assemble(("warning: ", "bold yellow"), str(message)))


def _on_stderr(line: Text) -> None:
    """One line on stderr, also while a run's progress bar is live. rich's Live then redirects
    ``sys.stderr`` to a proxy that prints on the bar's console (stdout), above the bar; the
    ``errors`` console writes past that proxy to the real stderr, onto the bar's own line (a stale bar
    before every warning). So the line goes through the proxy, with its styles, when stderr and
    stdout are one terminal; when they are not (``2> err.log``), the bar is not on stderr's screen
    and the line goes to stderr itself, where the user sent it."""
    from rich.file_proxy import FileProxy

    proxy = sys.stderr
    if isinstance(proxy, FileProxy) and _same_terminal(
        proxy.rich_proxied_file, getattr(sys.stdout, "rich_proxied_file", sys.stdout)
    ):
        with errors.capture() as captured:  # (the proxy decodes the ANSI styles of the capture)
            errors.print(line, highlight=False, soft_wrap=True)
        proxy.write(captured.get())
        proxy.flush()
    else:
        errors.print(line, highlight=False, soft_wrap=True)


def _same_terminal(a, b) -> bool:
    """Whether two streams write to the same terminal device."""
    try:
        if not (a.isatty() and b.isatty()):
            return False
        first, second = os.fstat(a.fileno()), os.fstat(b.fileno())
    except (AttributeError, OSError, ValueError):
        return False
    return (first.st_rdev, first.st_ino) == (second.st_rdev, second.st_ino)


def _print_version(given: bool) -> None:
    """``warmbo --version``: the version, then exit (a first-time user test found none)."""
    if given:
        from . import __version__

        typer.echo(f"warmbo {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print warmbo's version and exit.", callback=_print_version, is_eager=True
        ),
    ] = False,
) -> None:
    """warmbo: Bayesian optimization that does not start cold."""
    _STATE["debug"] = debug


# ---------------------------------------------------------------------------------------------- helpers
class _DuplicateKey(ValueError):
    """A JSON object that names one key twice (``json`` would keep the last value silently)."""


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """``object_pairs_hook`` of the JSON a user writes (a space file, ``--params``): a key given twice
    is refused, not read as its last value ({"lr": 0.001, ..., "lr": 0.002} was stored as 0.002)."""
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(f"key {key!r} appears twice in one object ({seen[key]!r} and {value!r})")
        seen[key] = value
    return seen


def load_space(path: Path):
    """Read a search space from a JSON file: ``{"params": [...]}`` or a bare list of parameters.

    Each parameter is ``{"type": "float"|"int", "name": ..., "low": ..., "high": ..., "log": false}``
    (and ``"step": ...`` for a grid ``low + k * step``) or ``{"type": "categorical", "name": ...,
    "choices": [...]}``.
    """
    from ._user_json import plainly, space_problem
    from .space import Space

    if not path.is_file():
        from .storage import _near_files

        near = [] if path.is_dir() else _near_files(str(path))
        hint = f": did you mean {near[0]!r}?" if near else ""
        raise ValueError(
            f"space file {str(path)!r} {'is a folder' if path.is_dir() else 'does not exist'}{hint}"
        )
    try:  # (utf-8-sig: a BOM, as editors on Windows write, was refused as invalid JSON; a CSV took it)
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"space file {str(path)!r} is not UTF-8 text (byte {exc.start}): save it as UTF-8 JSON"
        ) from None
    if not text.strip():
        raise ValueError(f"space file {str(path)!r} is empty")
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"space file {str(path)!r}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except _DuplicateKey as exc:
        raise ValueError(f"space file {str(path)!r}: {exc}") from None
    if isinstance(data, list):
        data = {"params": data}
    if not isinstance(data, dict) or not isinstance(data.get("params"), list):
        raise ValueError(f'space file {str(path)!r} must hold a list of parameters or {{"params": [...]}}')
    problem = space_problem(data)  # (in the file's words; the library's speak Python)
    if problem is not None:
        raise ValueError(f"space file {str(path)!r}: {problem}")
    data.setdefault("candidate_points", None)
    try:
        return Space.from_dict(data)
    except (ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"space file {str(path)!r}: {plainly(str(exc))}") from None


def _params_table(title: str, rows, space, first: str = "trial") -> Table:
    table = Table(title=title)
    table.add_column(first, justify="right")
    for name in space.names:
        table.add_column(name)
    for trial_id, params in rows:
        table.add_row(*_plain(str(trial_id), *_texts(space, params)))
    return table


def _print_params(title: str, rows, space, first: str = "trial") -> None:
    """Points to run, one row each; when that table is wider than the terminal (a wide space: a user
    test's 30 parameters printed blank headers and cells cut to "1.…", the trial ids to "tr…"), one
    row per parameter and a column per point instead, at its full width (:func:`_print_table`)."""
    table = _params_table(title, rows, space, first)
    if _natural_width(table) <= console.width:
        console.print(table)
        return
    turned = Table(title=title)
    turned.add_column("parameter")
    columns = [f"{first} {trial_id}" if first == "trial" else f"{first}{trial_id}" for trial_id, _ in rows]
    for column in columns:
        turned.add_column(column)
    texts = [_texts(space, params) for _, params in rows]
    for i, name in enumerate(space.names):
        turned.add_row(*_plain(name, *(values[i] for values in texts)))
    _print_table(turned)


def _count(n: int, noun: str) -> str:
    """``1 trial``, ``14 trials``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _texts(space, params) -> list[str]:
    """The parameters' values as tables show them, in the space's order (:meth:`Parameter.text`: a
    float has the digits that tell its parameter's values apart); a parameter the point lacks is
    "(chosen)" (an enqueued point's, for the suggestion to choose), or blank where the point's values
    make it inactive (a conditional parameter: ``when=``)."""
    off = space.inactive(params)
    return [
        p.text(params[p.name]) if p.name in params else "" if p.name in off else "(chosen)"
        for p in space.params
    ]


def _trials_table(optimizer, limit: int | None = None) -> Table:
    names = optimizer.space.names
    trials = list(optimizer.history)
    tasks = list(getattr(optimizer, "task_names", ()))
    if tasks:
        directions = ", ".join(f"{t} {d[:3]}" for t, d in zip(tasks, optimizer.directions, strict=True))
        title = f"{len(trials)} trials ({directions}; value = expected scalarised utility)"
    else:
        title = f"{len(trials)} trials ({'maximize' if optimizer.maximize else 'minimize'})"
    table = Table(title=title)
    shown = trials if limit is None else trials[-limit:]
    notes = _trial_notes(optimizer.study, shown, tasks)
    fixed = ("trial", "state", "value", "worker", "note")
    # a parameter or task named like a fixed column (state, value): the fixed one is renamed, as export
    # renames its columns (the header read "state | value | y | state | value")
    from .trial import task_columns

    # a task named like a parameter: value_<name>, as export and History.to_dataframe head it (two
    # columns were headed "time": multi-task user test)
    shown_tasks = task_columns(tasks, names)
    own = {c: f"warmbo_{c}" if c in (*names, *shown_tasks) else c for c in fixed}
    columns = (
        own["trial"], own["state"], own["value"], *shown_tasks, *names, own["worker"],
        *((own["note"],) if notes else ()),
    )  # fmt: skip
    numbers = {0, 2, *range(3, 3 + len(tasks))}  # trial, value and the task values: right-aligned
    for k, column in enumerate(columns):
        table.add_column(column, justify="right" if k in numbers else "left")
    styles = {"complete": "", "pending": "yellow", "failed": "red"}
    for t in shown:
        value = "" if t.value is None else f"{t.value:.6g}"
        table.add_row(
            str(t.id),
            t.state,
            value,
            *([f"{v:.6g}" for v in t.values] if t.values is not None else [""] * len(tasks)),
            *_plain(*_texts(optimizer.space, t.params), _who(t.worker)),
            *((Text(notes.get(t.id, "")),) if notes else ()),  # (user text: never rich markup)
            style=styles[t.state],
        )
    return table


#: the longest note shown in a status table (a failure's error can be a whole traceback line)
NOTE_WIDTH = 60


def _who(worker: str | None) -> str:
    """A trial's worker as ``status`` shows it: ``user@host`` without the process id (and thread)
    of the command that took it, which changed with every ``warmbo suggest`` and told a lab nothing
    (a chemist user test); ``export`` keeps the whole. Other names (``prior``, a name given as
    ``Optimizer(worker="gpu:0")``, ``host:pid`` where no user name was found) are shown as they
    are."""
    import re

    if "@" not in (worker or ""):
        return worker or ""
    return re.sub(r":\d+(:.*)?$", "", worker or "")


def _other_reporter(worker: str | None) -> str | None:
    """The person reporting a result (``WARMBO_USER`` or the login: the user part of
    :func:`~warmbo.storage.default_worker`) when the trial was taken by someone else, else None: on a
    shared lab computer one person takes the suggestions and another runs them (a user walk-through:
    status named only who had asked)."""
    from .storage import person

    me = person()
    them = worker.split("@", 1)[0] if worker and "@" in worker else None
    return me if me and them and me != them else None


def _trial_notes(study, trials, tasks) -> dict[int, str]:
    """The status table's note of each trial that has one: what an amended trial held before
    (:func:`~warmbo.trial.amendment_note`), else why a failed trial failed, then the note kept with
    it (``observe --note``). Empty when no shown trial has a note, so the table gets no empty column."""
    from .trial import amendment_note

    amended, kept = study.amendments(), study.notes()
    notes = {}
    for t in trials:
        text = amendment_note(amended[t.id], tasks) if t.id in amended else (t.error if t.is_failed else None)
        if t.id in kept:
            text = f"{text}; {kept[t.id]}" if text else kept[t.id]
        if text:
            notes[t.id] = text if len(text) <= NOTE_WIDTH else text[: NOTE_WIDTH - 1] + "\u2026"
    return notes


#: ``status`` names this many withdrawn trials, the latest, and counts the others
WITHDRAWN_SHOWN = 5


def _withdrawn_line(study) -> str | None:
    """``status``'s line on the trials taken out with ``observe --withdraw`` (the latest
    :data:`WITHDRAWN_SHOWN`, each with why and by whom); None when there are none."""
    from .trial import why_and_who

    records = study.withdrawn()
    if not records:
        return None
    ids = sorted(records)
    shown = []
    for i in ids[-WITHDRAWN_SHOWN:]:
        said = why_and_who(records[i])
        shown.append(f"trial {i}" + (f" ({said})" if said else ""))
    more = f" and {len(ids) - WITHDRAWN_SHOWN} earlier" if len(ids) > WITHDRAWN_SHOWN else ""
    return f"{len(ids)} withdrawn, read by nothing (kept in the study): {', '.join(shown)}{more}"


def _natural_width(table: Table) -> int:
    """The columns ``table`` takes when nothing is cut."""
    from rich.measure import Measurement

    return Measurement.get(console, console.options.update(max_width=100_000), table).maximum


def _print_table(table: Table) -> None:
    """A table at its natural width, never narrower: rich shrinks a table wider than the terminal
    (and a piped output is 80 columns) by cutting every cell to "0.3…", which hides the values."""
    natural = _natural_width(table)
    if natural <= console.width:
        console.print(table)
        return
    # a console of that width for this table (print's own width= is capped at the console's, and
    # resizing the shared one would pin its width); width and height both given, since rich answers
    # 80 x 25 for a dumb terminal otherwise
    wide = Console(
        file=console.file,
        width=natural,
        height=console.height,
        force_terminal=console.is_terminal,
        color_system=console.color_system,
        markup=False,
    )
    wide.print(table, crop=False)


def _print_best(optimizer) -> None:
    best = optimizer.best
    if best is None:
        console.print("no complete trials yet")
        return
    params = _shown(best.params, optimizer.space)
    tasks = tuple(getattr(optimizer, "task_names", ()))
    if not tasks:
        console.print(f"[bold]best[/bold] {best.value:.6g} at {escape(params)}", markup=True)
        return
    # a multi-task study's value is the expected scalarised utility: say so, with the task values
    complete = optimizer.study.trials(("complete",))
    trial = next((t for t in complete if t.params == best.params and t.value == best.value), None)
    shown = (
        ""
        if trial is None or trial.values is None
        else " (" + ", ".join(f"{n}={v:.6g}" for n, v in zip(tasks, trial.values, strict=True)) + ")"
    )
    console.print(
        f"[bold]best utility[/bold] {best.value:.6g}{escape(shown)} at {escape(params)}", markup=True
    )


def _holds_prior_rows(study, transfer: str | None = None) -> bool:
    """Whether ``--max-prior`` has rows to cap in ``study`` (single-objective, open): stored transfer
    sources, or prior rows imported as trials (``--transfer none``). With ``transfer`` ``"none"``
    (or ``"gp"``) only the imported rows count: the stored sources are not used then, and a cap on
    them capped nothing."""
    from .optimizer import PRIOR_WORKER, Optimizer

    sources = transfer not in ("none", "gp") and bool(Optimizer.stored_transfer(study))
    return sources or any(t.worker == PRIOR_WORKER for t in study.snapshot())


def _check_max_prior(
    max_prior: int | None, prior, storage: str | None, held: bool, transfer: str | None = None
) -> None:
    """``--max-prior`` without ``--prior``, on a study that holds no prior rows (``held``, from
    :func:`_holds_prior_rows`; a new study holds none) caps nothing: refused in the shell's words, by
    optimize and suggest alike (it was taken and did nothing)."""
    if max_prior is None or prior or held:
        return
    where = f"{redacted(storage)} holds none" if storage is not None else "a new study holds none"
    if storage is not None and transfer in ("none", "gp"):
        where += " imported as trials (its stored sources are not used with --transfer none)"
    raise ValueError(
        f"--max-prior caps the prior rows the model sees, and {where}: give earlier studies or CSV "
        "files with --prior"
    )


def load_optimizer(
    storage: str,
    readonly: bool = False,
    transfer: str | None = None,
    max_trials: int | None = None,
    prior=None,
    max_prior: int | None = None,
):
    """Reopen a study with the optimizer that wrote it (multi-task or single-objective).

    ``readonly`` opens it with SQLite's read-only mode (for ``status`` and ``report``), so a study
    the user may not write (a shared or archived file) can still be inspected and is never changed;
    if its stored transfer sources cannot be read it is shown without them. ``transfer`` overrides
    the stored transfer method (``"none"``: without the sources, for commands that do not ask), and
    ``prior`` (a TaskData) the stored sources.
    """
    from .data import DataError
    from .multitask_optimizer import MultiTaskOptimizer
    from .optimizer import Optimizer, RestoreWarning, SourcesReplacedWarning
    from .storage import Study, readonly_url

    url = readonly_url(storage) if readonly else storage
    study = Study(url)
    try:
        multitask = study.get_meta("multitask") is not None
        # what --transfer and --max-prior need: stored sources, or prior rows imported as trials
        checked = prior is None and (transfer not in (None, "none") or max_prior is not None)
        stored = Optimizer.stored_transfer(study) if checked else {}
        held = checked and max_prior is not None and _holds_prior_rows(study, transfer)
    finally:
        study.close()
    if multitask:
        if max_trials is not None:
            raise ValueError("--max-trials applies to single-objective studies; this one is multi-task")
        if max_prior is not None:
            raise ValueError("--max-prior applies to single-objective studies; this one is multi-task")
        if transfer not in (None, "none"):  # (a multi-task study has no transfer sources)
            raise ValueError(
                f"--transfer {transfer} applies to single-objective studies; this one is multi-task"
            )
        return MultiTaskOptimizer.load(url)
    if checked:
        # a study without stored sources has nothing to transfer or cap: said in the shell's words
        # (Optimizer.load said "give them with prior=", and --max-prior was taken and did nothing)
        if transfer not in (None, "none") and not stored:
            raise ValueError(
                f"--transfer {transfer} transfers from earlier studies, and {redacted(storage)} stores "
                "none: give them (or CSV files) with --prior"
            )
        _check_max_prior(max_prior, prior, storage, held, transfer)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RestoreWarning)
            overrides = {"transfer": transfer} if transfer is not None else {}
            if prior is not None:
                overrides["prior"] = prior
            if max_trials is not None:
                overrides["max_trials"] = max_trials
            if max_prior is not None:
                overrides["max_prior"] = max_prior
            opt = Optimizer.load(url, **overrides)
    except DataError as exc:
        if not readonly:
            raise
        # inspecting a study (status, report) needs its trials, not its sources
        errors.print(f"note: {exc}; shown without its transfer sources", highlight=False)
        return Optimizer.load(url, transfer="none")
    for warning in caught:
        if issubclass(warning.category, RestoreWarning):  # its advice (load(model=...)) is Python's
            errors.print(_restore_note(storage, warning.message.lost), highlight=False)
        elif issubclass(warning.category, SourcesReplacedWarning):
            continue  # (--prior-add / --prior-replace asked for it, and a line said so)
        else:
            warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)
    return opt


def _restore_note(storage: str, lost) -> str:
    """A RestoreWarning said for the command line: what the study stores that it cannot rebuild
    (its ``lost`` pairs), and that the command uses the defaults (Python's Optimizer.load(...,
    model=...) can restore them)."""
    from .optimizer import RestoreWarning

    stored = "; ".join(RestoreWarning.stored(arg, text) for arg, text in lost)
    return (
        f"note: {redacted(storage)} was created with settings the command line cannot rebuild ({stored}); "
        "this command uses warmbo's defaults for them (in Python, Optimizer.load(URL, model=..., "
        "acquisition=...) uses yours)"
    )


def _split(text: str | None, option: str) -> list[str] | None:
    if text is None:
        return None
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise ValueError(f"{option} must be a comma-separated list without empty items, got {text!r}")
    return items


# ---------------------------------------------------------------------------------------------- commands
TasksOption = Annotated[
    str | None,
    typer.Option(
        "--tasks",
        help="Multi-task (MT-KB): comma-separated task names; the objective returns one value per task "
        "(a --cmd prints them on its last line, or a JSON object by task name).",
    ),
]
DirectionsOption = Annotated[
    str | None, typer.Option("--directions", help="Per task: max or min, comma-separated (default max).")
]
ScalarizationOption = Annotated[
    str | None,
    typer.Option(
        "--scalarization",
        help="Multi-task utility: chebyshev (default) or linear; a resumed study keeps its own.",
    ),
]
RefOption = Annotated[
    str | None,
    typer.Option(
        "--ref", help="Chebyshev reference point, one number per task; a resumed study keeps its own."
    ),
]
BudgetEpsOption = Annotated[
    float | None,
    typer.Option(
        "--budget-eps",
        help="Run MT-BKB with this Nystrom accuracy (e.g. 0.5); a resumed study keeps its own.",
    ),
]


@app.command()
@friendly
def demo(
    quick: Annotated[bool, typer.Option("--quick", help="Fewer runs and evaluations (under 20 s).")] = False,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the plots and results.")] = Path(
        "warmbo-demo"
    ),
    panel: Annotated[
        list[str] | None,
        typer.Option(
            "--panel", help="Run only this panel (repeatable; default all). Names: see --help-panels."
        ),
    ] = None,
    help_panels: Annotated[bool, typer.Option("--help-panels", help="List the panels and exit.")] = False,
) -> None:
    """GP-UCB and GP-EI against random search on Branin and Hartmann-6, and each warm-start method
    against its paper's baseline: a table, JSON and plots."""
    from .experiments.demo import PANELS, TABLE_HEADER, plain_table, run_demo, table_rows

    if help_panels:
        for name, entry in PANELS.items():
            console.print(f"{name}: {', '.join(entry.runners)}", markup=False, highlight=False)
        return
    if panel:
        for name in panel:
            PANELS.lookup(name)  # an unknown name fails before anything runs
    _check_out_folder(out, "the plots and results")  # (before: the run was made, then mkdir failed)
    with progress_display(console) as progress:
        result = run_demo(out, quick=quick, progress=progress, panels=panel or None)
    results = json.loads((out / "results.json").read_text())
    runs = result.settings["runs"]
    title = f"Final regret (simple regret unless the problem names another; median [IQR] over {runs} runs)"
    if live(console):
        table = Table(title=title)
        for column in TABLE_HEADER:
            table.add_column(column)
        for row in table_rows(results):
            table.add_row(*row)
        console.print(table)
    else:  # a rich table is cut to 80 columns when piped: print the README's plain table
        console.print(title, markup=False, highlight=False, soft_wrap=True)  # (one line, as the rows)
        console.print(plain_table(results), markup=False, highlight=False, soft_wrap=True)
    console.print(
        f"wrote {out / 'report.html'}, {out / 'results.json'} and {out / 'regret.png'} "
        f"in {result.seconds:.1f} s"
    )


@app.command()
@friendly
def optimize(
    objective: Annotated[
        str | None, typer.Argument(help="Objective as module:function (called with a dict of parameters).")
    ] = None,
    cmd: Annotated[
        str | None,
        typer.Option(
            "--cmd",
            help='Command template, e.g. "python train.py --lr {lr}" ({name} for any parameter, {{ }} for '
            "literal braces). The last non-empty line it prints must be the value: one number, or "
            'a JSON object {"value": V} (multi-task: one number per task, or {"task": V, ...}); '
            "or give --value-regex.",
        ),
    ] = None,
    value_regex: Annotated[
        str | None,
        typer.Option(
            "--value-regex",
            help="With --cmd: a regular expression searched over the whole output; the last match's "
            "first capture group is the value (groups 1..n for n tasks), e.g. 'val_loss=(\\S+)'.",
        ),
    ] = None,
    space_file: Annotated[
        Path | None, typer.Option("--space", help="JSON file describing the space." + SPACE_FORMAT)
    ] = None,
    budget: Annotated[
        int,
        typer.Option(
            "--budget",
            "-n",
            help="Total number of finished trials (imported --prior rows not counted).",
            min=0,
        ),
    ] = 20,
    storage: Annotated[
        str | None, typer.Option("--storage", "-s", help="Study URL (resumed if it exists).")
    ] = None,
    prior: Annotated[
        list[str] | None,
        typer.Option(
            "--prior",
            help="CSV of earlier evaluations, or a finished study (file or URL), to start from "
            "(repeatable: each is a source task). On a study that stores other sources, say "
            "--prior-add or --prior-replace.",
        ),
    ] = None,
    transfer: Annotated[
        str | None,
        typer.Option(
            "--transfer",
            help="How --prior is used: auto (default: the guarded portfolio), a transfer model (envelope, "
            "rgpe, diff, efficient, collaborative, generic), or none (told as trials of this study).",
        ),
    ] = None,
    method: Annotated[
        str | None, typer.Option("--method", help="Older name of --transfer (gp means none).", hidden=True)
    ] = None,
    task: TaskOption = None,
    prior_y: PriorYOption = "y",
    prior_delimiter: PriorDelimiterOption = ",",
    prior_decimal: PriorDecimalOption = ".",
    prior_rename: PriorRenameOption = None,
    prior_add: PriorAddOption = False,
    prior_replace: PriorReplaceOption = False,
    max_prior: MaxPriorOption = None,
    maximize: Annotated[
        bool | None,
        typer.Option(
            "--maximize/--minimize",
            help="Direction of a new study (default minimise); a resumed study keeps its stored one.",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed", help="Random seed of a new study (an existing one keeps its own: another is refused)."
        ),
    ] = None,
    n_initial: Annotated[
        int | None,
        typer.Option(
            "--n-initial",
            help="Design points before the model chooses (default min(max(3, 2 d), 20) Sobol points "
            "for d parameters, a categorical counting one; 2-3 warm points with --prior). "
            "A resumed study keeps its own (another "
            "value is refused).",
            min=1,
            show_default=False,
        ),
    ] = None,
    output_transform: Annotated[
        str | None,
        typer.Option(
            "--output-transform",
            help="Scale of the GP: yeo-johnson (default without --prior: a power transform fitted "
            "to the values at every ask), none (the values as they are), or auto (whichever of the "
            "two gives the data the higher likelihood). A resumed study keeps its own (another is "
            "refused).",
            show_default=False,
        ),
    ] = None,
    failures: Annotated[
        str | None,
        typer.Option(
            "--failures",
            help="How the model reads failed evaluations: classifier (default for a new study: the "
            "chance of success, learned from where evaluations failed, weighs each choice) or liar "
            "(each failure fantasised at the worst value seen). A resumed study keeps its own unless "
            "this is given.",
            show_default=False,
        ),
    ] = None,
    max_trials: MaxTrialsOption = None,
    n_trials: Annotated[int | None, typer.Option("--n-trials", hidden=True)] = None,
    direction: Annotated[str | None, typer.Option("--direction", hidden=True)] = None,
    workers: Annotated[int, typer.Option("--workers", help="Concurrent evaluations.", min=1)] = 1,
    retry_pending: Annotated[
        bool,
        typer.Option(
            "--retry-pending",
            help="First evaluate the trials left pending by a killed run (use it when no other worker "
            "is evaluating: a trial it records meanwhile keeps its result). See also clean-pending.",
        ),
    ] = False,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", help="Seconds per --cmd evaluation; then its process group is killed."),
    ] = None,
    max_time: Annotated[
        float | None,
        typer.Option(
            "--max-time",
            help="Seconds for the whole run: then no new point is asked for (one asked before is still "
            "evaluated), those under way finish and are stored (run the same command again to go on). "
            "Not --timeout, which is per evaluation.",
        ),
    ] = None,
    tasks: TasksOption = None,
    directions: DirectionsOption = None,
    scalarization: ScalarizationOption = None,
    ref: RefOption = None,
    budget_eps: BudgetEpsOption = None,
    create: CreateOption = False,
) -> None:
    """Optimise an objective; every result is stored before the next point is chosen."""
    from .objective import CommandObjective, load_callable
    from .optimizer import (
        OUTPUT_TRANSFORMS,
        TRANSFER_TRANSFORM_META,
        Optimizer,
        SourcesReplacedWarning,
        transfer_transform,
    )
    from .storage import Study, study_exists

    _refuse_optuna_spellings(n_trials, direction, storage)
    if (objective is None) == (cmd is None):
        raise ValueError("give exactly one objective: a module:function argument or --cmd")
    if max_time is not None:
        from ._validation import check_seconds

        check_seconds(max_time, "--max-time")
    if cmd is None and (timeout is not None or value_regex is not None):
        raise ValueError("--timeout and --value-regex apply to a --cmd objective")
    exists = storage is not None and study_exists(storage)
    if not exists and storage is not None and space_file is not None:
        _refuse_a_slip(storage, create)
    stored = Study(storage, readonly=True) if exists else None
    if space_file is None:
        if stored is None:
            raise ValueError("--space is required to create a new study")
        space = stored.space
    else:
        space = load_space(space_file)
    task_names = _split(tasks, "--tasks")
    multitask = None if stored is None else stored.get_meta("multitask")
    if multitask is not None:  # a resumed multi-task study keeps its tasks (the command prints them);
        # MultiTaskOptimizer restores its directions, scalarisation and budget and refuses conflicts
        meta = json.loads(multitask)
        task_names = meta["task_names"] if task_names is None else task_names
    if task_names is not None and maximize is not None:
        raise ValueError(
            "--maximize/--minimize apply to single-objective studies; give --directions per task"
        )
    transform_given = output_transform is not None
    if stored is not None:
        # settings a resumed study keeps: another value given is refused, as `suggest` refuses it
        # (before, --seed 5 and --output-transform none were taken without a word and not applied)
        kept_seed = stored.settings.get("seed")
        if seed is not None and kept_seed is not None and int(kept_seed) != seed:
            raise ValueError(
                f"--seed {seed}: study {redacted(storage)} keeps the seed it was created with ({kept_seed}); "
                "leave --seed out to go on with it, or start a new study"
            )
    if stored is not None and task_names is None:
        if output_transform is None:  # a resumed study keeps its stored transform
            output_transform = stored.settings.get("output_transform")
        direction = stored.settings.get("direction")
        if maximize is None:
            maximize = direction == "maximize"
        elif direction and direction != ("maximize" if maximize else "minimize"):
            flag = "--maximize" if maximize else "--minimize"
            raise ValueError(
                f"study {redacted(storage)!r} was created to {direction} the objective; {flag} "
                "conflicts with it " + _wrong_direction_recipe(storage, flag)
            )
    if stored is None and task_names is None and prior:
        maximize, inherited = _new_direction(maximize, prior)
        if inherited:  # (optimize prints no creation line: the direction taken is said here)
            errors.print(
                f"the new study {'maximises' if maximize else 'minimises'}{inherited}", highlight=False
            )
    if stored is None and task_names is None and maximize is None:
        _hint_higher_is_better(objective, cmd, value_regex)
    maximize = bool(maximize)
    resumed_sources = {}
    named = transfer if transfer is not None else method
    if stored is not None and task_names is None and not prior and named not in ("none", "gp"):
        # a resumed study transfers as it did (with another --transfer method, from the same sources)
        resumed_sources = Optimizer.stored_sources(stored)
    recorded_transform = None  # (auto's transform kept with a study: optimizer.transfer_transform)
    if stored is not None and task_names is None:
        recorded_transform = stored.get_meta(TRANSFER_TRANSFORM_META)
        kept_transform = stored.settings.get("output_transform")
        transferring = bool(resumed_sources) or (bool(prior) and named not in ("none", "gp"))
        if (
            transform_given
            and not transferring  # (a transfer model's scale: the optimizer checks what it takes)
            and output_transform in OUTPUT_TRANSFORMS  # (an unknown name: the optimizer says so)
            and kept_transform is not None
            and output_transform != kept_transform
        ):
            raise ValueError(
                f"--output-transform {output_transform}: study {redacted(storage)} keeps the transform "
                f"it was created with ({kept_transform}); leave --output-transform out to go on with it, "
                "or start a new study"
            )
    replaced = _stored_sources_or_none(stored) if task_names is None and prior else None
    # the method (and cap) stored with the sources: new --prior files are used with it too
    kept_transfer = Optimizer.stored_transfer(stored) if stored is not None and task_names is None else {}
    # what --max-prior caps without --prior (checked below, once a multi-task study has refused it)
    held = (
        stored is not None
        and task_names is None
        and max_prior is not None
        and _holds_prior_rows(stored, named)
    )
    # a resumed study keeps its design size (below: the warm one stored with its sources, or the one
    # it was created with when that design was of the kind this run uses, warm or cold)
    created_sizes = {}
    if stored is not None:
        if multitask is not None:
            kept = stored.settings.get("n_initial")
            _check_design_size(n_initial, kept, storage)
            n_initial = kept if n_initial is None else n_initial
        elif task_names is None:
            created_sizes = {warm: Optimizer._created_n_initial(stored, warm) for warm in (True, False)}
        stored.close()
    if objective:
        fn = load_callable(objective)
    else:
        conditional = tuple(p.name for p in space.params if p.when is not None)
        fn = CommandObjective(
            cmd, tuple(space.names), timeout, tuple(task_names or ()), value_regex, conditional
        )
    if task_names is not None:
        if prior:
            raise ValueError(
                "--prior is for single-objective studies; a multi-task study starts from its trials"
            )
        if failures is not None:
            raise ValueError(
                "--failures applies to single-objective studies (a multi-task one fantasises them)"
            )
        if output_transform not in (None, "none"):
            raise ValueError("--output-transform is for single-objective studies")
        if max_trials is not None:
            raise ValueError("--max-trials is for single-objective studies")
        if max_prior is not None:
            raise ValueError("--max-prior is for single-objective studies (a multi-task study has no prior)")
        given = [
            flag
            for flag, value in (
                (f"--transfer {transfer}", transfer),
                (f"--method {method}", method),
                ("--task", task),
                ("--prior-rename", prior_rename),
            )
            if value not in (None, "none", "gp", [])
        ]
        if given:  # (they would be silently ignored: a multi-task study starts from its trials)
            raise ValueError(f"{given[0]} is for single-objective studies with --prior, not multi-task ones")
        opt = _multitask_optimizer(
            space, task_names, directions, scalarization, ref, budget_eps, seed, storage, n_initial
        )
        _run(opt, fn, budget, workers, retry_pending, max_time)
        return
    if directions is not None or scalarization is not None or ref is not None or budget_eps is not None:
        raise ValueError(
            "--directions, --scalarization, --ref and --budget-eps apply to multi-task studies: give --tasks"
        )
    from .transfer.registry import TRANSFER_METHODS

    if transfer is not None and method is not None and transfer != method:
        raise ValueError("give --transfer or its older name --method, not both")
    option = "--transfer" if transfer is not None else "--method"
    method = transfer if transfer is not None else method
    if method == "gp":
        method = "none"
    if method is not None and method not in TRANSFER_METHODS:
        raise ValueError(f"unknown {option} {method!r}; choose one of {', '.join(TRANSFER_METHODS)}")
    if method not in (None, "none") and not prior and not resumed_sources:
        raise ValueError(f"{option} {method} transfers from source data: give them with --prior FILE.csv")
    _check_max_prior(max_prior, prior, storage if stored is not None else None, held, named)
    if method is not None and resumed_sources and method != resumed_sources["transfer"]:
        # the stored sources with another method, as Optimizer.load(url, transfer=...) and `warmbo
        # suggest --transfer` use them: that method's own default cap on rows
        resumed_sources = {k: v for k, v in resumed_sources.items() if k != "max_prior"}
        resumed_sources["transfer"] = method
    method_given = method
    if method is None and prior and kept_transfer:  # the study's stored method, not auto in its place
        method = kept_transfer["transfer"]
    if method is None:
        method = "auto" if prior else "none"
    if task is not None and not prior:
        raise ValueError("--task names the source column of --prior files: give them with --prior FILE.csv")
    if prior_rename and not prior:  # (a study's stored sources are stored under this study's names)
        raise ValueError("--prior-rename renames the parameters of --prior files: give them with --prior")
    _check_prior_sources_options(prior, method, prior_add, prior_replace)
    data = parts = None
    if prior:
        data, parts = _read_priors(
            prior,
            space,
            task,
            maximize,
            prior_y,
            prior_delimiter,
            storage,
            prior_rename,
            prior_decimal,
            extra=method != "none",
        )
        if method == "none":  # checked before the study is created: an error leaves nothing behind
            _check_importable(prior, parts, task)
        else:  # (before the study is touched: a refusal changes nothing)
            data = _with_stored_sources(replaced, data, prior, prior_add, prior_replace, storage, errors)
    # the optimizer encodes and signs the sources as it does its own trials
    kwargs = dict(prior=data, transfer=method) if method != "none" else {"transfer": "none"}
    if (method != "none" or resumed_sources) and not transform_given:
        # auto: the scale its last auto optimizer used (the study's record); else, and for the other
        # methods, the optimizer's default for the method (a study made without sources stored the
        # plain GP's transform in its settings)
        used = method if method != "none" else resumed_sources.get("transfer", "auto")
        output_transform = transfer_transform(
            used, {} if stored is None else stored.settings, recorded_transform
        )
    stored_size = resumed_sources.pop("n_initial", None)
    if created_sizes:
        kept = stored_size or created_sizes[method != "none" or bool(resumed_sources)]
        _check_design_size(n_initial, kept, storage)
        n_initial = kept if n_initial is None else n_initial
    if resumed_sources:
        kwargs = resumed_sources
        errors.print(
            f"resuming with the study's {len(kwargs['prior'])} stored source evaluations "
            f"(transfer {kwargs['transfer']})",
            highlight=False,
        )
        _say_method(kept_transfer, method_given, prior, errors)
    elif data is not None and method != "none" and kept_transfer:
        if method == kept_transfer["transfer"]:  # (with the stored method's cap too, as Optimizer.load
            # does, also when --transfer names the stored method)
            kwargs["max_prior"] = kept_transfer["max_prior"]
    if max_prior is not None:
        _say_cap(kept_transfer, kwargs.get("transfer"), max_prior, errors)
        kwargs["max_prior"] = max_prior
    with warnings.catch_warnings():
        # (--prior-add / --prior-replace asked for the stored sources to change, and a line said so)
        warnings.simplefilter("ignore", SourcesReplacedWarning)
        opt = Optimizer(
            space,
            maximize=maximize,
            seed=seed,
            n_initial=n_initial,
            storage=storage,
            output_transform=output_transform,
            max_trials=max_trials,
            failures=failures,  # (None: the study's own, or the default; Optimizer refuses other names)
            **kwargs,
        )
    if resumed_sources and getattr(opt, "_refuted", None) is not None:
        # (a user test: "resuming with the study's stored source evaluations" read as if it transferred)
        errors.print(f"note: {opt._refuted}", highlight=False)
    if data is not None and method == "none":
        _import_priors(opt, prior, parts, storage, console)
    elif data is not None and opt.warm_design() is None:  # every source left out (it says why)
        console.print("no source says which configurations are better: starting as a study without them")
    elif data is not None:
        names = _entries(prior)
        _say_method(kept_transfer, method_given, prior, console)
        console.print(f"transferring from {len(data)} source evaluations in {names} with {method}")
        warm = opt.warm_design()
        if warm is not None and len(warm) and opt.study.count("complete") == 0:
            probe = ""
            if opt.transfer == "auto":  # (as `warmbo suggest` says it when it creates the study)
                from .optimizer import PROBE_AFTER

                probe = (
                    f"; by evaluation {opt.n_initial + PROBE_AFTER + 1} a cold design point tests them "
                    "(earlier if they lose their weight first)"
                )
            console.print(f"warm design: the first {_count(len(warm), 'point')} come from the sources{probe}")

    _run(opt, fn, budget, workers, retry_pending, max_time)


def _check_importable(prior: list[str], parts: list, task: str | None) -> None:
    """``--transfer none`` imports each ``--prior`` as trials of this objective: a file that ``--task``
    splits into several tasks is refused (check it before anything is stored)."""
    for entry, part in zip(prior, parts, strict=True):
        if part.task is not None and len(set(part.task)) > 1:
            raise ValueError(
                f"{entry}: --transfer none imports rows as evaluations of this very objective, but "
                f"--task {task} splits them into {len(set(part.task))} tasks; use a transfer "
                "method (the default, auto) for several source tasks"
            )


def _import_priors(opt, prior: list[str], parts: list, storage: str, out) -> None:
    """``--transfer none``: each ``--prior`` imported as trials of the study, once, tagged by its
    file's hash (the rows an earlier version of the file already imported are skipped); ``out`` is
    the console the lines go to."""
    from .prior import import_source, import_tag, single_task  # (as the Optimizer's prior=... imports)

    for entry, part in zip(prior, parts, strict=True):  # one import, with its own tag, per source
        started = time.perf_counter()
        tag = import_tag(entry, part)
        source = import_source(entry)
        fresh = opt.priors().get(tag) is None
        added = opt.add_prior(single_task(part), tag=tag, source=source)
        seconds = time.perf_counter() - started
        if not fresh:
            out.print(f"{redacted(entry)} already imported (tag {tag})")
            continue
        out.print(
            f"imported {added} prior evaluations from {redacted(entry)} in {seconds:.1f} s (tag {tag})",
            soft_wrap=True,
        )
        record = opt.priors().get(tag, {})
        if record.get("skipped"):
            out.print(
                f"  skipped {record['skipped']} row(s) that an earlier version of {redacted(entry)} already "
                "imported (same parameters and value)",
                soft_wrap=True,
            )
        if record.get("gone"):
            out.print(
                f"  {record['gone']} row(s) imported from an earlier version of {redacted(entry)} are "
                "no longer "
                f"in it and stay in the study; to keep only its current rows: 'warmbo prior remove "
                f"{_study_arg(storage)} --file {shlex.quote(redacted(entry))}', then import it again "
                f"('warmbo suggest {_study_arg(storage)} --prior {shlex.quote(redacted(entry))} "
                "--transfer none -n 0': -n 0 asks for no suggestion)",
                soft_wrap=True,
            )


def _stored_sources_or_none(stored) -> dict | None:
    """The sources a study stores (which a ``--prior`` adds to or replaces), None without (or when damaged:
    they are replaced without a word about them)."""
    from .optimizer import Optimizer

    if stored is None:
        return None
    with contextlib.suppress(ValueError):
        return Optimizer.stored_sources(stored) or None
    return None


def _rows_by_source(data) -> dict[str, list[str]]:
    """Each source task's rows (sorted JSON texts), by label: two sets of sources are the same when
    their row sets are, whatever their labels (the same files in another order, a study made before
    sources were named by path, 'A:A.db' for 'A')."""
    labels = data.task if data.task is not None else [None] * len(data)
    rows: dict[str, list[str]] = {}
    for p, y, t in zip(data.params, data.y, labels, strict=True):
        rows.setdefault(str(t), []).append(json.dumps([sorted(p.items()), float(y)], default=repr))
    return {label: sorted(r) for label, r in rows.items()}


def _source_names(data) -> str:
    """The source tasks of stored sources, as a person reads them (a.csv's rows: 'a')."""
    from .prior import source_label

    names = data.tasks if data.task is not None else [source_label(data.source)]
    shown = ", ".join(str(n) for n in names[:5])
    return shown + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def _with_stored_sources(stored: dict | None, data, prior: list[str], add: bool, replace: bool, storage, out):
    """The sources a ``--prior`` on a study gives it: on a study that stores other sources, refused
    unless ``--prior-add`` (the stored sources and these; a file whose rows a stored source holds is
    not added twice) or ``--prior-replace`` (these instead) says which. Before, they were replaced,
    and a line said so after the fact. The same sources given again (a command run again) are
    taken without a word."""
    from .data import TaskData
    from .prior import source_label

    if stored is None:
        return data
    held = _rows_by_source(stored["prior"])
    given = _rows_by_source(data)
    if sorted(held.values()) == sorted(given.values()):
        return data
    old = stored["prior"]
    what = (
        f"{len(old)} evaluations of {max(1, len(old.tasks))} source task(s): {_source_names(old)}; "
        f"transfer {stored['transfer']}"
    )
    if not (add or replace):
        raise ValueError(
            f"{redacted(storage)} already transfers from stored sources ({what}). Give --prior-add to add "
            f"{_entries(prior)} to them, or --prior-replace to use {_entries(prior)} instead "
            "(nothing was changed)"
        )
    if replace:
        out.print(f"replacing the study's stored sources ({what}) with {_entries(prior)}", highlight=False)
        return data
    # a given source whose every row a stored source holds (the same file again, or a part of it:
    # a user test added 29 of a stored source's 30 rows as a second source) is not added again
    held_sets = [set(rows) for rows in held.values()]
    new = [label for label, rows in given.items() if not any(set(rows) <= h for h in held_sets)]
    if not new:
        out.print(
            f"{_entries(prior)}: already among the study's stored sources ({what}); nothing added",
            highlight=False,
        )
        return old
    labels_of = lambda d: list(d.task) if d.task is not None else [source_label(d.source)] * len(d)  # noqa: E731
    old_labels, new_labels = labels_of(old), labels_of(data)
    taken = set(map(str, old_labels))
    renamed = {}
    for label in dict.fromkeys(map(str, new_labels)):
        name, k = label, 2
        while name in taken:  # (a source of another file under the same name)
            name, k = f"{label} ({k})", k + 1
        renamed[label] = name
        taken.add(name)
    keys = [str(t) for t in data.task] if data.task is not None else ["None"] * len(data)
    keep = [key in new for key in keys]
    params = list(old.params) + [p for p, k in zip(data.params, keep, strict=True) if k]
    y = list(old.y) + [v for v, k in zip(data.y, keep, strict=True) if k]
    task = [str(t) for t in old_labels] + [
        renamed[str(t)] for t, k in zip(new_labels, keep, strict=True) if k
    ]
    both = TaskData(params, y, task, old.space, source=f"{old.source}, {data.source}")
    skipped = len(given) - len(new)
    out.print(
        f"adding {len(given) - skipped} source task(s) of {_entries(prior)} to the study's stored sources "
        f"({what})" + (f"; {skipped} whose rows are already among them, not added twice" if skipped else ""),
        highlight=False,
    )
    return both


def _say_method(kept: dict, given: str | None, prior, out) -> None:
    """The line saying which transfer method a resumed study's sources are used with, when that is
    news: new ``--prior`` files keep the study's stored method (before, they silently switched it
    to auto), and a ``--transfer`` naming another method replaces the stored one. ``kept`` is the
    study's :meth:`~warmbo.optimizer.Optimizer.stored_transfer`."""
    stored = kept.get("transfer")
    if stored is None:
        return
    if given is None and prior:
        out.print(
            f"the sources are used with the study's stored method, {stored} (--transfer METHOD for another)",
            highlight=False,
        )
    elif given not in (None, "none", stored):
        out.print(
            f"--transfer {given} replaces the study's stored method ({stored}) from now on", highlight=False
        )


def _say_cap(kept: dict, method: str | None, given: int, out) -> None:
    """The line saying that ``--max-prior`` replaces the cap a study stores with its sources (for
    the method it stored; another method starts from its own default)."""
    if kept.get("transfer") == method and kept.get("max_prior") not in (None, given):
        out.print(
            f"--max-prior {given} replaces the study's stored cap on prior rows ({kept['max_prior']})",
            highlight=False,
        )


def _check_design_size(given: int | None, kept: int | None, storage: str) -> None:
    """A resumed study keeps the design size it was created with; a different ``--n-initial`` would
    hold for this run only (the study stores its creation settings), so it is refused."""
    if given is not None and kept is not None and given != kept:
        raise ValueError(
            f"--n-initial {given}: study {redacted(storage)} keeps the design size it was created "
            f"with ({kept}); "
            "leave --n-initial out to resume it, or start a new study"
        )


def _wrong_direction_recipe(storage: str, flag: str) -> str:
    """The refusal's way on, for a study created in the wrong direction (a chemist user test left
    --maximize out and was told only to leave the flag out): its results exported as measured, and
    read back by a new study (a study given as --prior would have its values turned with it)."""
    study = _study_arg(storage)
    return (
        "(leave the flag out to use the stored direction; if the study was created in the wrong "
        f"direction, keep its results and start again: warmbo export {study} --complete -o results.csv, "
        f"then warmbo suggest --space SPACE.json --storage NEW.db {flag} --prior results.csv --transfer none)"
    )


# names of values that are better higher: a new study minimising one by default is said at its start
_HIGHER_IS_BETTER = frozenset(
    "acc accuracy auc auroc roc f1 fscore score r2 precision recall reward fitness yield profit "
    "throughput likelihood loglik map ndcg bleu".split()
)


def _hint_higher_is_better(objective: str | None, cmd: str | None, value_regex: str | None) -> None:
    """Say on stderr that a new study minimises (the default) when the objective's name
    names a value that is better higher (``train:accuracy``; else --value-regex, ``val_acc=(\\S+)``;
    else the command).

    A user test minimised an accuracy for a whole run: nothing said which way the study went until
    the table's "(minimize)". Only words of their own count (``val_acc`` splits into val, acc).
    """
    import re

    named = objective.rsplit(":", 1)[-1] if objective else value_regex or cmd or ""
    words = [w for w in re.split(r"[^a-z0-9]+", named.lower()) if w]
    hits = [w for w in words if w in _HIGHER_IS_BETTER]
    if hits:
        errors.print(
            f"note: the new study minimises (the default) and the objective names {hits[0]!r}: if higher "
            "is better, stop (Ctrl-C) and start a new study with --maximize",
            highlight=False,
        )


def _new_direction(maximize: bool | None, prior: list[str] | None) -> tuple[bool | None, str]:
    """A new study's direction when ``--maximize/--minimize`` was left out and ``--prior`` names
    finished studies: theirs, when they agree (a chemist user test started this month's yield study
    from last month's without --maximize, and it minimised the yield without a word); refused when
    they differ. Returns the direction and the words the creation line adds (``", as april.db"``).
    A flag given against the studies' direction is kept (a study of the opposite task), said on
    stderr."""
    from .storage import Study, redacted, study_exists

    directions = {}
    for entry in prior or ():
        try:
            if study_exists(entry):
                directions[entry] = Study(entry, readonly=True).settings.get("direction")
        except (OSError, ValueError):  # (not a study: read as a table by _read_priors)
            continue
    known = {d for d in directions.values() if d in ("maximize", "minimize")}
    if not known:
        return maximize, ""
    names = ", ".join(redacted(e) for e in directions)
    if maximize is None:
        if len(known) > 1:
            by = "; ".join(f"{redacted(e)} {d}s" for e, d in directions.items())
            raise ValueError(
                f"the --prior studies go in different directions ({by}): give --maximize or --minimize "
                "for the new study"
            )
        tables = [redacted(e) for e in prior or () if e not in directions]
        if tables and known == {"maximize"}:
            # (a table has no direction: it is read in the new study's, which must then be said; the
            # default, minimise, reads it as before)
            raise ValueError(
                f"the --prior stud{'y' if len(directions) == 1 else 'ies'} {names} "
                f"{'was' if len(directions) == 1 else 'were'} created to {next(iter(known))}, and "
                f"{', '.join(tables)} {'is' if len(tables) == 1 else 'are'} read in the new study's "
                "direction: give --maximize or --minimize"
            )
        (direction,) = known
        return direction == "maximize", f", as {names}"
    if known != {"maximize" if maximize else "minimize"}:
        from .prior import PriorDirectionWarning

        warnings.filterwarnings("ignore", category=PriorDirectionWarning)  # (said here, in the CLI's words)
        errors.print(
            f"note: {names} {'was' if len(directions) == 1 else 'were'} created to "
            f"{' and '.join(sorted(known))}; the new study "
            f"{'maximises' if maximize else 'minimises'} as --{'maximize' if maximize else 'minimize'} "
            "says (leave the flag out to take the earlier study's direction)",
            highlight=False,
        )
    return maximize, ""


def _entries(prior: list[str]) -> str:
    """The ``--prior`` entries for a line of output: all of a few, the first three of a folder's worth
    (``--prior runs/*.csv`` of 50 files made each line a screenful); no PostgreSQL password shown."""
    from .storage import redacted

    prior = [redacted(entry) for entry in prior]
    if len(prior) <= 5:
        return ", ".join(prior)
    return f"{', '.join(prior[:3])} and {len(prior) - 3} more"


def _read_priors(
    prior: list[str],
    space,
    task,
    maximize: bool,
    prior_y: str,
    prior_delimiter: str,
    storage,
    prior_rename: list[str] | None = None,
    prior_decimal: str = ".",
    extra: bool = False,
):
    """Every ``--prior`` of ``optimize`` or ``suggest``, read and validated, with a line before and
    after (a large folder of runs takes a moment): ``(data, parts)``, ``data`` one TaskData with a
    source task per entry (:func:`warmbo.prior.join_sources`), ``parts`` each entry's own rows.
    ``extra``: a prior study with parameters this one has not is read on the shared ones, with a
    warning (for a transfer method, as ``prior=[url]`` in Python; ``--transfer none`` refuses it)."""
    from .prior import join_sources

    started = time.perf_counter()
    errors.print(f"reading {_entries(prior)} ...", highlight=False)
    rename = _renames(prior_rename, space)
    if prior_decimal not in (".", ","):
        raise ValueError(f"--prior-decimal must be '.' or ',', got {prior_decimal!r}")
    csv_options = {"y": prior_y, "delimiter": _delimiter(prior_delimiter), "decimal": prior_decimal}
    _check_distinct_priors(prior)
    parts = [
        _read_prior(entry, space, task, maximize, csv_options, storage, rename, extra) for entry in prior
    ]
    data = join_sources(prior, parts, space)
    seconds = time.perf_counter() - started
    errors.print(f"read and validated {_count(len(data), 'row')} in {seconds:.1f} s", highlight=False)
    return data, parts


def _renames(given: list[str] | None, space) -> dict[str, str]:
    """``--prior-rename OLD=NEW`` options as ``{OLD: NEW}``; NEW must be a parameter of the study."""
    out: dict[str, str] = {}
    for text in given or ():
        old, sep, new = (part.strip() for part in text.partition("="))
        if not sep or not old or not new:
            raise ValueError(f"--prior-rename takes OLD=NEW (the name in the prior, then here), got {text!r}")
        if new not in space.names:
            raise ValueError(
                f"--prior-rename {text}: {new!r} is not a parameter of this study ({', '.join(space.names)})"
            )
        if old in out or new in out.values():
            raise ValueError(f"--prior-rename {text}: {old!r} or {new!r} is renamed twice")
        out[old] = new
    return out


def _read_prior(
    entry: str,
    space,
    task: str | None,
    maximize: bool,
    csv_options: dict | None = None,
    storage=None,
    rename: dict | None = None,
    extra: bool = False,
):
    """One ``--prior``: a CSV file (``--task`` names its source column, if any; ``csv_options``: the
    value column ``y`` and the ``delimiter``) or a finished study (its complete trials, read in this
    study's direction, as the Python API's ``prior=[url]``; not the study at ``storage`` itself)."""
    from .data import TaskData
    from .prior import (
        _csv_columns_ignored,
        _csv_header,
        applied_renames,
        as_prior,
        left_out_rows,
        names_a_study,
    )
    from .storage import redacted

    if names_a_study(entry):
        if task is not None:
            raise ValueError(f"{redacted(entry)}: --task splits a CSV file; a study is one source task")
        return as_prior([entry], space, maximize, storage, rename, extra=extra)
    options = dict(csv_options or {})
    if rename:  # this file's column OLD holds parameter NEW (a file that has NEW itself keeps it)
        header = _csv_header(entry, options.get("delimiter", ","))
        options["x"] = applied_renames(rename, header)
    outside: list[str] = []  # rows outside the space's ranges: left out with a warning, as a study's
    data = TaskData.from_csv(Path(entry), space, task=task, outside=outside, **options)
    left_out_rows(outside, len(data))  # (every row outside: an error naming the first)
    _csv_columns_ignored(
        entry, space, task, options.get("y", "y"), options.get("delimiter", ","), options.get("x")
    )
    return data


def _delimiter(text: str) -> str:
    """``--prior-delimiter``: one character; ``\\t`` or ``tab`` for a tab."""
    value = "\t" if text in ("\\t", "tab", "TAB") else text
    if len(value) != 1:
        raise ValueError(
            f"--prior-delimiter must be one character (e.g. ';' or '\\t' for a tab), got {text!r}"
        )
    return value


def _check_distinct_priors(entries: list[str]) -> None:
    """Each ``--prior`` is one source task: a file or study given twice (``--prior a.db --prior
    ./a.db``, a shell glob that overlaps another ``--prior``) is refused, not read as two sources."""
    from .prior import first_repeat
    from .storage import redacted

    twice = first_repeat(entries)
    if twice is not None:
        first, earlier = redacted(twice[0]), redacted(twice[1])
        same = "" if first == earlier else f" (also as {earlier})"
        raise ValueError(
            f"--prior {first} is given twice{same}; each --prior is one source task: give it once"
        )


class _Terminated(KeyboardInterrupt):
    """SIGTERM (``timeout``, ``docker stop``, a batch scheduler) or SIGHUP (the terminal closed, an
    ssh connection lost) during a run: stopped like Ctrl-C. ``signum`` is the signal."""

    @property
    def signum(self) -> int:
        return int(self.args[0]) if self.args else int(signal.SIGTERM)


def _stop(signum, frame) -> None:
    from .objective import terminate_running

    terminate_running()  # commands in worker threads too: the run must not wait for them
    raise _Terminated(signum) if signum != signal.SIGINT else KeyboardInterrupt()


def _stopping_signals() -> tuple[int, ...]:
    """The signals a run stops on (and kills its commands with): Ctrl-C, SIGTERM, and SIGHUP unless
    it is ignored (``nohup``: the run is meant to outlive the terminal). Without its handler, SIGHUP
    ended warmbo and left its commands running, orphaned: they run in sessions of their own, which
    the terminal's hangup does not reach."""
    stopping = [signal.SIGTERM, signal.SIGINT]
    if hasattr(signal, "SIGHUP") and signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:
        stopping.append(signal.SIGHUP)
    return tuple(stopping)


def _run(
    opt, fn, budget: int, workers: int, retry_pending: bool = False, max_time: float | None = None
) -> None:
    from .objective import CommandObjective
    from .optimizer import (
        FIRST_FAILURES,
        BudgetAlreadyReachedWarning,
        BudgetHeldWarning,
        BudgetNotReachedWarning,
        HeldElsewhereWarning,
        InterruptedRunWarning,
        RecordedElsewhereWarning,
        RepeatedFailureError,
        TrialFailedWarning,
    )

    commands = isinstance(fn, CommandObjective)

    # the stopping signals this run received: Python drops a handler's exception raised where it
    # cannot propagate (a callback inside a C extension: "Exception ignored in ..."), and the run
    # went on to its budget and exited 0 after a SIGTERM (seen once under load); the record is
    # checked after each trial and at the end
    received: list[int] = []

    def stop(signum, frame) -> None:
        received.append(signum)
        _stop(signum, frame)

    def stopped() -> KeyboardInterrupt:
        return _Terminated(received[0]) if received[0] != signal.SIGINT else KeyboardInterrupt()

    def report_failure(_, trial) -> None:
        if received:
            raise stopped()
        if trial.is_failed:
            _on_stderr(Text.assemble((f"trial {trial.id} failed:", "yellow"), f" {trial.error}"))

    previous = {}
    if threading.current_thread() is threading.main_thread():  # signals reach only the main thread
        previous = {sig: signal.signal(sig, stop) for sig in _stopping_signals()}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrialFailedWarning)  # reported by the callback instead
            warnings.simplefilter("always", RecordedElsewhereWarning)  # (no callback sees it: said here)
            warnings.simplefilter("error", BudgetNotReachedWarning)  # but a run that cannot go on is an error
            warnings.simplefilter("ignore", BudgetHeldWarning)  # _print_in_flight says it, with the command
            warnings.simplefilter("ignore", HeldElsewhereWarning)
            # on Ctrl-C the commands are killed (nothing to wait for); Python functions are waited for
            warnings.simplefilter("ignore" if commands else "always", InterruptedRunWarning)
            shown = warnings.showwarning

            def show(message, category, *args, **kwargs):
                if issubclass(category, InterruptedRunWarning | RecordedElsewhereWarning):
                    _on_stderr(
                        Text(f"warning: {message}" if category is RecordedElsewhereWarning else str(message))
                    )
                elif issubclass(category, BudgetAlreadyReachedWarning) and budget == 0:
                    pass  # (--budget 0 asks for nothing: an import of --prior rows, the study's table)
                elif issubclass(category, BudgetAlreadyReachedWarning):  # in the command's words
                    held = message.held
                    _on_stderr(
                        Text(
                            f"warning: --budget {budget} counts the study's finished trials (--prior rows "
                            f"not counted), and it already holds {held}: nothing was evaluated. For {budget} "
                            f"more, give --budget {held + budget}"
                        )
                    )
                else:
                    shown(message, category, *args, **kwargs)

            warnings.showwarning = show
            opt.run(
                fn,
                budget=budget,
                n_workers=workers,
                callbacks=[report_failure],
                progress=True,
                retry_pending=retry_pending,
                timeout=max_time,
            )
            if received:  # (lost after the last trial's record)
                raise stopped()
    except RepeatedFailureError as stop:  # (the run has killed the commands still running)
        ids = ", ".join(map(str, stop.failed)) or "ID"
        raise RuntimeError(
            f"the first {FIRST_FAILURES} evaluations of this run all failed with: {stop.error}"
            + (f" (raised at {stop.where})" if stop.where else "")
            + "; stopped instead of spending the budget on it. Fix the objective and run the same command "
            "again (the failed trials stay in the study, and their points are not proposed again unless "
            f"withdrawn: warmbo observe STUDY --trial ID --withdraw, for trials {ids}"
            + (
                f"; trial(s) {', '.join(map(str, stop.pending))} were still running and are left "
                "pending: add --retry-pending to evaluate them)"
                if stop.pending
                else ")"
            )
        ) from stop.__cause__  # (--debug shows the objective's own traceback: a user test)
    except BudgetNotReachedWarning as short:
        raise ValueError(f"{short} (the study holds its trials; see `warmbo status`)") from None
    except KeyboardInterrupt as exc:
        left = [t.id for t in opt.study.trials(("pending",)) if t.worker == opt.worker]
        what = (
            f"stopped by {signal.Signals(exc.signum).name}" if isinstance(exc, _Terminated) else "interrupted"
        )
        done = (
            "the running command(s) were killed"
            if commands
            else "the values of evaluations that finished are stored"
        )
        errors.print(
            f"{what}: {done}; "
            + (
                f"trial(s) {', '.join(map(str, left))} left pending (rerun the same command with "
                "--retry-pending to evaluate them, or take each out with `warmbo observe --storage "
                f"{shlex.quote(redacted(opt.study.url))} --trial ID --withdraw`; `warmbo clean-pending` "
                "would mark them failed, which steers the model away from their settings)"
                if left
                else "no trial left pending"
            ),
            highlight=False,
        )
        raise typer.Exit(128 + exc.signum if isinstance(exc, _Terminated) else 130) from None
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    _print_table(_trials_table(opt, limit=10))
    if len(opt.study) > 10:  # (the title counts every trial: say the rows are the last ten)
        console.print(
            f"(the last 10 of {len(opt.study)} trials; warmbo status --all shows every one)", highlight=False
        )
    _print_best(opt)
    if opt.stopped_by_timeout:
        errors.print(
            f"stopped by --max-time {max_time:g} s at {opt._finished()} of {budget} finished trials; run "
            "the same command again to go on",
            highlight=False,
        )
    else:
        _print_in_flight(opt, budget)
    failed = opt.study.count("failed")
    if failed and opt.study.count("complete") == opt._prior_rows():
        # (a script or CI job read exit 0 as success with every evaluation failed, a user test)
        errors.print(
            f"no evaluation has succeeded: the study's {failed} trial(s) all failed (warmbo status "
            "shows their errors)",
            highlight=False,
        )
        raise typer.Exit(1)


def _print_in_flight(opt, budget: int) -> None:
    """Why a run ended short of its budget: places held by evaluations other workers have in flight
    (a killed worker's trial keeps beating fresh for 30 s), and what to do if those workers are gone."""
    finished = opt._finished()
    if finished >= budget:
        return
    live = opt._live_elsewhere()
    if live:
        errors.print(
            f"stopped at {finished} of {budget} finished trials: {len(live)} evaluation(s) in flight on "
            f"other workers hold the remaining place(s) (last heartbeat {live[-1]:.0f} s ago at most); "
            "if those workers are gone, run the same command again in 30 s (with --retry-pending to "
            "evaluate their trials too)",
            highlight=False,
        )


def _multitask_optimizer(
    space, task_names, directions, scalarization, ref, budget_eps, seed, storage, n_initial=None
):
    from .multitask_optimizer import MultiTaskOptimizer
    from .scalarization import Chebyshev, Linear
    from .storage import SettingConflictError

    words = _split(directions, "--directions")
    mapping = {"max": "maximize", "maximize": "maximize", "min": "minimize", "minimize": "minimize"}
    if words is not None:
        unknown = [w for w in words if w not in mapping]
        if unknown:
            raise ValueError(f"--directions takes max or min per task, got {unknown[0]!r}")
        if len(words) != len(task_names):
            raise ValueError(f"--directions has {len(words)} items but --tasks names {len(task_names)} tasks")
    if scalarization not in (None, "chebyshev", "linear"):
        raise ValueError(f"--scalarization must be chebyshev or linear, got {scalarization!r}")
    reference = None
    if ref is not None:
        if scalarization == "linear":
            raise ValueError("--ref is the reference point of the Chebyshev scalarisation")
        try:
            reference = tuple(float(v) for v in _split(ref, "--ref"))
        except ValueError:
            raise ValueError(f"--ref must be numbers separated by commas, got {ref!r}") from None
        if not all(math.isfinite(v) for v in reference):  # (it said "ref must be a finite vector")
            raise ValueError(f"--ref must be finite numbers, got {ref!r}")
    # neither given: the study's own (MultiTaskOptimizer restores it), Chebyshev at the origin for a
    # new one; the kind alone on a study of that kind keeps the study's ref
    s = None
    if scalarization == "linear":
        s = Linear()
    elif ref is not None or (scalarization == "chebyshev" and _stored_kind(storage) != "chebyshev"):
        s = Chebyshev(ref=reference)
    if budget_eps is not None and not 0.0 < budget_eps < 1.0:
        raise ValueError(f"--budget-eps must be between 0 and 1 (exclusive), got {budget_eps:g}")
    try:
        return MultiTaskOptimizer(
            space,
            task_names=task_names,
            directions=None if words is None else [mapping[w] for w in words],
            scalarization=s,
            budget_eps=budget_eps,
            seed=seed,
            n_initial=n_initial,
            storage=storage,
        )
    except SettingConflictError as exc:
        if exc.key not in ("scalarization", "budget_eps", "task_names", "directions"):
            raise
        if exc.key in ("task_names", "directions"):
            option = "--tasks" if exc.key == "task_names" else "--directions"
            short = {"maximize": "max", "minimize": "min"}
            created, given = (
                f"{option} " + ",".join(short.get(v, v) for v in values)
                for values in (exc.created, exc.given)
            )
            leave = option
        elif exc.key == "budget_eps":
            created, given = (
                f"--budget-eps {v:g}" if v is not None else "no --budget-eps"
                for v in (exc.created, exc.given)
            )
            leave = "--budget-eps"
        else:
            created, given = (_scalarization_words(v) for v in (exc.created, exc.given))
            leave = "--scalarization and --ref"
        raise ValueError(
            f"study {redacted(storage)} was created with {created}, not {given}; leave {leave} out to go "
            "on with the study's, or start a new study"
        ) from None


def _scalarization_words(scalarization) -> str:
    """A scalarisation as the options that make it (``--scalarization chebyshev --ref 1,2``)."""
    ref = getattr(scalarization, "ref", None)
    if type(scalarization).__name__ == "Linear":
        return "--scalarization linear"
    if ref is None:
        return "--scalarization chebyshev (reference point 0, no --ref)"
    return "--scalarization chebyshev --ref " + ",".join(f"{v:g}" for v in ref)


def _stored_kind(storage) -> str | None:
    """The scalarisation type of an existing multi-task study at ``storage``, else None."""
    from .storage import Study, study_exists

    if storage is None or not study_exists(storage):
        return None
    study = Study(storage, readonly=True)
    try:
        meta = study.get_meta("multitask")
    finally:
        study.close()
    return None if meta is None else json.loads(meta)["scalarization"].get("type")


@app.command()
@friendly
def suggest(
    study: StudyArgument = None,
    storage: StorageOption = None,
    n: Annotated[
        int,
        typer.Option(
            "-n",
            help="Number of points; 0 asks for none (to create the study, or import --prior rows with "
            "--transfer none, only).",
            min=0,
        ),
    ] = 1,
    max_trials: MaxTrialsOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines instead of a table.")] = False,
    fixed: Annotated[
        str | None,
        typer.Option(
            "--fixed",
            help='Parameters already decided, as a JSON object, e.g. \'{"catalyst": "Pd"}\': every '
            "suggestion has these values, and the others are chosen with them held.",
        ),
    ] = None,
    transfer: Annotated[
        str | None,
        typer.Option(
            "--transfer",
            help="How --prior is used (auto, the default, or another transfer method; none: import the "
            "files as trials of this study); on a study with stored sources and no --prior, the method to "
            "use them with (none: ask without them).",
        ),
    ] = None,
    prior: Annotated[
        list[str] | None,
        typer.Option(
            "--prior",
            help="CSV of earlier evaluations, or a finished study (file or URL), to start warm from "
            "(repeatable: each is a source task). On a study that stores other sources, say "
            "--prior-add or --prior-replace.",
        ),
    ] = None,
    task: TaskOption = None,
    prior_y: PriorYOption = "y",
    prior_delimiter: PriorDelimiterOption = ",",
    prior_decimal: PriorDecimalOption = ".",
    prior_rename: PriorRenameOption = None,
    prior_add: PriorAddOption = False,
    prior_replace: PriorReplaceOption = False,
    max_prior: MaxPriorOption = None,
    space_file: NewSpaceOption = None,
    maximize: NewDirectionOption = None,
    seed: NewSeedOption = None,
    n_initial: NewDesignOption = None,
    create: CreateOption = False,
    direction: Annotated[str | None, typer.Option("--direction", hidden=True)] = None,
    tasks: TasksOption = None,
    directions: DirectionsOption = None,
    scalarization: ScalarizationOption = None,
    ref: RefOption = None,
    budget_eps: BudgetEpsOption = None,
) -> None:
    """Ask for the next experiment(s): stored as pending trials, reported back with `observe`.

    With --space, a study that does not exist yet is created first (for experiments run by hand);
    with --prior it starts warm from earlier studies or CSV files; with --tasks it is a multi-task
    study (one value per task for each experiment, `observe --value V1,V2,...`).

    Each suggestion records who took it: the variable WARMBO_USER, else the login (on a computer
    that several people use under one login, set WARMBO_USER=yourname); `status` lists them.
    """
    storage = _the_study(study, storage)
    from .optimizer import PROBE_AFTER, Optimizer
    from .storage import Study, study_exists
    from .transfer.registry import TRANSFER_METHODS

    _refuse_optuna_spellings(None, direction, storage, "suggest")
    if transfer is not None and transfer not in TRANSFER_METHODS:
        raise ValueError(TRANSFER_METHODS.unknown(transfer, "--transfer"))
    if task is not None and not prior:
        raise ValueError("--task names the source column of --prior files: give them with --prior FILE.csv")
    if prior_rename and not prior:  # (a study's stored sources are stored under this study's names)
        raise ValueError("--prior-rename renames the parameters of --prior files: give them with --prior")
    _check_prior_sources_options(prior, transfer, prior_add, prior_replace)
    space = None if space_file is None else load_space(space_file)
    data = parts = held = None
    multitask = (tasks, directions, scalarization, ref, budget_eps)
    if any(v is not None for v in multitask):
        opt = _suggest_multitask(
            storage, space, seed, n_initial, maximize, prior, transfer, fixed, create, *multitask
        )
    elif space is not None and not study_exists(storage):
        _refuse_a_slip(storage, create)
        from .storage import NewStudyWarning, _is_postgres

        if _is_postgres(storage):  # (_say_similar_studies' note says it, in the command's words)
            warnings.filterwarnings("ignore", category=NewStudyWarning)
        if fixed is not None:  # (checked first: a bad one must not leave a new study behind)
            held = _parse_params(fixed, space, "--fixed", partial=True)
        if transfer not in (None, "none") and not prior:
            raise ValueError(
                f"--transfer {transfer} transfers from source data: give them with --prior FILE.csv (a "
                "CSV of earlier evaluations or a finished study)"
            )
        _check_max_prior(max_prior, prior, None, held=False)
        maximize, inherited = _new_direction(maximize, prior)
        if prior:  # read before the study is created: an error leaves nothing behind
            data, parts = _read_priors(
                prior,
                space,
                task,
                bool(maximize),
                prior_y,
                prior_delimiter,
                storage,
                prior_rename,
                prior_decimal,
                extra=transfer != "none",
            )
            if transfer == "none":
                _check_importable(prior, parts, task)
        importing = transfer == "none" and data is not None
        opt = Optimizer(
            space,
            maximize=bool(maximize),
            seed=seed,
            n_initial=n_initial,
            storage=storage,
            max_trials=max_trials,
            prior=None if importing else data,
            transfer=None if importing else transfer,
            max_prior=max_prior,
        )
        if importing:
            _import_priors(opt, prior, parts, storage, errors)
        direction = ("maximise" if opt.maximize else "minimise") + inherited
        design = "a design"
        warm = opt.warm_design() if opt.transfer != "none" else None  # (None: every source left out)
        if warm is not None:
            names = _entries(prior)
            design = f"a warm design from {len(data)} source evaluations in {names} (transfer {opt.transfer})"
        plan = f"the first {opt.n_initial} suggestions are {design}, then the model chooses"
        if n > opt.n_initial:  # (a user test: -n 5 got five source rows under a promise of two)
            plan = (
                f"the first {opt.n_initial} suggestions are {design}, and suggestions asked before two "
                "results are in continue the design; then the model chooses"
            )
        if opt.transfer == "auto" and warm is not None:
            probe = opt.n_initial + PROBE_AFTER + 1
            plan += f" (by suggestion {probe}, a cold design point tests the sources)"
        imported = opt.study.count("complete") if importing else 0  # (a new study: the imported rows)
        if imported:
            # the imported rows are trials of the study: they count towards its (cold) design, and
            # the model chooses once the study holds n_initial trials. Before, the line promised the
            # whole design while the model chose the very first suggestion
            left = opt.n_initial - imported
            plan = (
                f"the model chooses from the first suggestion, on the {imported} imported prior evaluations"
                if left <= 0
                else f"the {imported} imported prior evaluations count towards the design: the first "
                f"{left} suggestion(s) are design points, then the model chooses"
            )
        errors.print(
            f"created study {redacted(storage)} ({direction}; {plan}; seed {opt.seed})",
            highlight=False,
            soft_wrap=True,
        )
        _say_similar_studies(opt.study)
    else:
        if (
            space is not None
            or maximize is not None
            or seed is not None
            or n_initial is not None
            or prior
            or transfer not in (None, "none")
            or max_prior is not None
        ):
            stored = Study(storage)  # no study at all: the error says how to create one
            try:
                _check_creation_options(stored, storage, space, maximize, seed, n_initial)
                kept_transfer = (
                    Optimizer.stored_transfer(stored) if stored.get_meta("multitask") is None else {}
                )
                if prior:
                    if stored.get_meta("multitask") is not None:
                        raise ValueError("--prior is for single-objective studies, not multi-task ones")
                    kept = stored.settings.get("direction") == "maximize"
                    data, parts = _read_priors(
                        prior,
                        stored.space,
                        task,
                        kept,
                        prior_y,
                        prior_delimiter,
                        storage,
                        prior_rename,
                        prior_decimal,
                        extra=transfer != "none",
                    )
                    if transfer == "none":
                        _check_importable(prior, parts, task)
                    else:
                        data = _with_stored_sources(
                            _stored_sources_or_none(stored),
                            data,
                            prior,
                            prior_add,
                            prior_replace,
                            storage,
                            errors,
                        )
                _say_method(kept_transfer, transfer, prior, errors)
                if max_prior is not None:
                    _say_cap(kept_transfer, transfer or kept_transfer.get("transfer"), max_prior, errors)
            finally:
                stored.close()
        importing = transfer == "none" and data is not None
        opt = load_optimizer(
            storage,
            transfer=transfer,
            max_trials=max_trials,
            prior=None if importing else data,
            max_prior=max_prior,
        )
        if importing:
            _import_priors(opt, prior, parts, storage, errors)
    if fixed is not None and held is None:
        if getattr(opt, "task_names", None):
            raise ValueError("--fixed is for single-objective studies, not multi-task ones")
        held = _parse_params(fixed, opt.space, "--fixed", partial=True)
    if n == 0:  # (a lab user test: every import of a spreadsheet took an unwanted suggestion too)
        errors.print("no suggestion asked (-n 0)", highlight=False)
        return
    suggestions = _ask_all_or_nothing(opt, n, held)
    waiting = len(opt.queued()) if held is not None else 0
    if waiting:  # (said on stderr: --json keeps stdout to the suggestions)
        # (asks with --fixed leave the queue to the next ask without it: a user test's boss's
        # configurations waited unseen behind --fixed suggestions)
        errors.print(
            f"{_count(waiting, 'queued configuration')} still {'waits' if waiting == 1 else 'wait'}: an ask "
            "with --fixed leaves the queue "
            f"to the next suggest without --fixed (warmbo enqueue {_study_arg(storage)} lists them)",
            highlight=False,
            soft_wrap=True,
        )
    if as_json:
        for s in suggestions:
            typer.echo(json.dumps({"trial": s.trial_id, "params": dict(s)}))
        return
    _print_params("next experiments", [(s.trial_id, s) for s in suggestions], opt.space)
    hint = "V1,V2,..." if getattr(opt, "task_names", None) else "V"
    console.print(  # (soft-wrapped: a line broken by rich pastes as two commands)
        f"report results with: warmbo observe --storage {_study_arg(storage)} --trial ID --value {hint}",
        soft_wrap=True,
    )


def _suggest_multitask(
    storage,
    space,
    seed,
    n_initial,
    maximize,
    prior,
    transfer,
    fixed,
    create,
    tasks,
    directions,
    scalarization,
    ref,
    budget_eps,
):
    """``suggest`` with multi-task options: a new multi-task study (with --space and --tasks; a lab
    could only make one with `optimize --cmd true --budget 0`, a user test), or an existing one
    reopened with them (a conflict is refused in the options' words, as by `optimize`)."""
    from .storage import Study, study_exists

    mixed = [
        flag
        for flag, value in (
            ("--prior", prior),
            (f"--transfer {transfer}", transfer),
            ("--fixed", fixed),
            ("--maximize/--minimize", maximize),
        )
        if value not in (None, [])
    ]
    if mixed:
        raise ValueError(f"{mixed[0]} is for single-objective studies, not multi-task ones (--tasks)")
    exists = study_exists(storage)
    if not exists:
        if space is None or tasks is None:
            raise ValueError(
                "a new multi-task study needs --space and --tasks (--directions, --scalarization, --ref "
                "and --budget-eps set it up further)"
            )
        _refuse_a_slip(storage, create)
        task_names = _split(tasks, "--tasks")
    else:
        stored = Study(storage, readonly=True)
        try:
            described = stored.get_meta("multitask")
            if described is None:
                raise ValueError(
                    "--tasks, --directions, --scalarization, --ref and --budget-eps are for multi-task "
                    f"studies; {redacted(storage)} holds a single-objective one"
                )
            _check_creation_options(stored, storage, space, None, seed, n_initial)
            space = stored.space
        finally:
            stored.close()
        task_names = _split(tasks, "--tasks") if tasks is not None else json.loads(described)["task_names"]
    opt = _multitask_optimizer(
        space, task_names, directions, scalarization, ref, budget_eps, seed, storage, n_initial
    )
    if not exists:
        shown = ", ".join(f"{t} ({d[:3]})" for t, d in zip(opt.task_names, opt.directions, strict=True))
        errors.print(
            f"created multi-task study {redacted(storage)} (tasks {shown}; the first {opt.n_initial} "
            f"suggestions are a design, then the model chooses; seed {opt.seed})",
            highlight=False,
            soft_wrap=True,
        )
    return opt


def _say_what_the_file_is(storage: str) -> None:
    """Raise the store's own error for an SQLite file that exists but holds no study (an empty file,
    another program's database), which says what the file is; nothing for a path with no file (a
    hostile-input user test: `enqueue` said "no study at" of both, where `status` named them)."""
    from .storage import Study, _is_postgres, parse_url, readonly_url

    if _is_postgres(storage):
        return
    path = parse_url(storage)
    if path != ":memory:" and Path(path).is_file():
        Study(readonly_url(storage)).close()


def _refuse_a_slip(storage: str, create: bool) -> None:
    """Before a command creates a study at an SQLite path: refuse when a study file of a close name
    lies beside it (``lab.bd`` beside ``lab.db``), since the mistyped path would start a second
    study with no trials and the lab's results would go on in two files (a chemist user test:
    only a warning on stderr, easy to miss under the suggestions). ``--create`` creates it anyway.
    Only what is nearly always a slip is refused (:func:`_a_slip`: the same name with another
    ending, two neighbouring letters swapped); other close names (``cold.db`` beside ``old.db``)
    keep :class:`~warmbo.storage.NewStudyWarning`. A PostgreSQL study's name is refused by the same
    rule when the database holds the name it slips from (a user test: ``study=ta1`` beside ``at1``
    ran as a new study); other close names get :func:`_say_similar_studies`' note after creation."""
    from .storage import NewStudyWarning, _is_postgres, _near_files, _sqlite_file, parse_url, study_exists

    if _is_postgres(storage):
        if create:
            return
        from .storage_postgres import split_url, study_names, study_parameter

        name = split_url(storage)[1]
        try:
            names = study_names(storage)
        except Exception:  # noqa: BLE001 - a server that cannot be read: opening the study says why
            return
        near = [n for n in names if _a_name_slip(name, n)]
        if name not in names and near:
            raise ValueError(
                f"no study {name!r} in that database, and {near[0]!r} is one: did you mean "
                f"{study_parameter(near[0])}? "
                f"To start a new study {name!r}, add --create"
            )
        return
    path = parse_url(storage)
    if path == ":memory:" or Path(path).exists():
        return
    if create:  # (said and decided: the warning would only repeat it)
        warnings.filterwarnings("ignore", category=NewStudyWarning)
        return
    # (an SQLite file: notes.txt beside notes.tx is no study, though study_exists leaves an unreadable
    # file to the opening's own message)
    near = [p for p in _near_files(path) if _a_slip(path, p) and _sqlite_file(p) and study_exists(p)]
    if near:
        raise ValueError(
            f"no study at {path!r}, and {near[0]!r} beside it is one: did you mean --storage {near[0]}? "
            f"To start a new study at {path!r}, add --create"
        )


def _a_name_slip(typed: str, existing: str) -> bool:
    """Whether the PostgreSQL study name ``typed`` is ``existing`` with a letter's case changed or two
    neighbouring characters swapped, numbers aside (``run.v2`` beside ``run.v1``, ``run12`` beside
    ``run21`` are a series, not a slip: a review; :func:`_a_slip`'s other endings are a file's)."""
    from .storage import _series, _swapped_neighbours

    if typed == existing or _series(typed) == _series(existing):
        return False
    return typed.lower() == existing.lower() or _swapped_neighbours(typed, existing)


def _a_slip(typed: str, existing: str) -> bool:
    """Whether the file name ``typed`` is ``existing``'s with a slip of the keyboard: the same name
    with another ending (``lab.bd``, ``lab.dbb``, ``lab.d`` for ``lab.db``) or two neighbouring
    characters swapped (``enyzme.db`` for ``enzyme.db``), a letter's case (``Lab.db``)."""
    a, b = os.path.basename(typed), os.path.basename(existing)
    (stem_a, end_a), (stem_b, end_b) = os.path.splitext(a), os.path.splitext(b)
    if a != b and a.lower() == b.lower():  # (Lab.db for lab.db: another file on Linux)
        return True
    if stem_a == stem_b and end_a != end_b:
        return True
    if stem_a.startswith(stem_b + "."):  # (lab.db.db, lab.d.db typed; not enzyme.db beside enzyme.db.bak)
        return True
    from .storage import _swapped_neighbours

    return _swapped_neighbours(a, b)


def _say_similar_studies(study) -> None:
    """After ``suggest --space`` created a PostgreSQL study: the database's studies with a close name,
    since a mistyped ``study=`` (``enzym`` for ``enzyme``) creates a new study rather than failing,
    and the lab's results would go on in two studies."""
    similar = study.similar_studies() if hasattr(study, "similar_studies") else []
    if similar:
        from .storage_postgres import study_parameter

        names = ", ".join(similar)
        errors.print(
            f"note: the database also holds the stud{'ies' if len(similar) > 1 else 'y'} {names}; this "
            f"command created the new study {study.name}: if you meant "
            + (
                "one of them, give its name"
                if len(similar) > 1
                else f"it, give {study_parameter(similar[0])}"
            )
            + " in the URL",
            highlight=False,
            soft_wrap=True,
        )


def _ask_all_or_nothing(opt, n: int, fixed: dict | None = None):
    """``opt.ask(n)`` with SIGTERM and SIGHUP turned into an exception, as Ctrl-C is, so that its
    all-or-nothing clean-up runs (the points stored before the signal were never shown to anyone, and
    would stay pending for good); exits 128 + the signal's number, or 130 for Ctrl-C.

    The handler records the signal before it raises, and a later signal is only recorded: Python
    drops an exception raised where it cannot propagate (a callback inside a C extension: "Exception
    ignored in ..."), and numpy may turn it into another error. So the record, not the exception,
    decides: an ask that returns although a signal came removes what it stored, and any error after
    a signal is reported as the stop it is."""
    received: list[int] = []

    def interrupt(signum, frame) -> None:
        received.append(signum)
        if len(received) == 1:  # a second signal must not cut the first one's clean-up short
            raise _Terminated(signum)

    previous = {}
    if threading.current_thread() is threading.main_thread():  # signals reach only the main thread
        previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    hook = sys.unraisablehook

    def dropped(unraisable) -> None:
        # the signal's exception lost inside a C extension (scipy's Sobol initialisation): Python
        # printed its traceback ("Exception ignored in ...") without --debug (a user test); the record
        # above says the stop instead
        if not isinstance(unraisable.exc_value, _Terminated):  # (a Ctrl-C lost so is not recorded: said)
            hook(unraisable)

    sys.unraisablehook = dropped
    suggestions = None
    try:
        suggestions = opt.ask(n) if fixed is None else opt.ask(n, fixed=fixed)
        suggestions = suggestions if isinstance(suggestions, list) else [suggestions]
        if received:
            raise _Terminated(received[0])  # its exception was lost inside the ask
    except BaseException as exc:
        if not (received or isinstance(exc, KeyboardInterrupt)):
            found = getattr(exc, "found", None)
            if found is not None:
                # in the command's words: "-n 7: found 2 point(s), then no more: ..." (it said ask(7),
                # the Python call's, and "every point ... is pending" of a slice it had just found 2 in)
                raise type(exc)(
                    f"-n {n}: found {found} point(s), then no more: {exc.then}; none of them was stored"
                ) from None
            raise
        signum = received[0] if received else signal.SIGINT
        name = signal.Signals(signum).name if signum != signal.SIGINT else "Ctrl-C"
        what = "no suggestion was stored"
        kept = [note for note in getattr(exc, "__notes__", ()) if "could not be removed" in note]
        if suggestions:  # the ask had finished: remove what it stored, as its own clean-up would
            try:
                opt._remove_own_pending([(s.trial_id, dict(s)) for s in suggestions])
            except Exception as cleanup:  # noqa: BLE001 - say what is left, then stop as asked
                kept = [f"trials {[s.trial_id for s in suggestions]} could not be removed: {cleanup}"]
        errors.print(f"stopped by {name}: {kept[0] if kept else what}", highlight=False)
        raise typer.Exit(128 + int(signum)) from None
    finally:
        sys.unraisablehook = hook
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return suggestions


def _check_creation_options(stored, storage: str, space, maximize, seed, n_initial) -> None:
    """``suggest``'s creation options on a study that exists: the same values are accepted (the
    command that created the study can be run again), a different one is refused."""
    if space is not None and space != stored.space:
        differences = (
            "; ".join(space.diff(stored.space, ("the space file", "the study"))) or "different structure"
        )
        raise ValueError(
            f"study {redacted(storage)} was created with a different space (the space file's first, "
            "the study's "
            f"second: {differences}); leave --space out to use the stored one, or, to search the new "
            f"space with this study's trials, start a new study from it: warmbo suggest --storage "
            f"NEW.db --space SPACE.json --prior {shlex.quote(redacted(storage))} (with --transfer none "
            "its trials become the new study's own; trials outside the new space are left out)"
        )
    settings = stored.settings
    if maximize is not None:
        if stored.get_meta("multitask") is not None:
            raise ValueError(
                f"study {redacted(storage)} is multi-task (a direction per task); "
                "--maximize/--minimize apply to "
                "single-objective studies: leave the flag out"
            )
        direction = settings.get("direction")
        if direction and direction != ("maximize" if maximize else "minimize"):
            flag = "--maximize" if maximize else "--minimize"
            raise ValueError(
                f"study {redacted(storage)} was created to {direction} the objective; {flag} "
                "conflicts with it " + _wrong_direction_recipe(storage, flag)
            )
    kept_seed = settings.get("seed")
    if seed is not None and kept_seed is not None and int(kept_seed) != seed:
        raise ValueError(
            f"--seed {seed}: study {redacted(storage)} keeps the seed it was created with "
            f"({kept_seed}); leave "
            "--seed out to go on with it, or start a new study"
        )
    _check_design_size(n_initial, settings.get("n_initial"), storage)


@app.command()
@friendly
def observe(
    study: StudyArgument = None,
    storage: StorageOption = None,
    trial: Annotated[int | None, typer.Option("--trial", "-t", help="Trial id from `suggest`.")] = None,
    value: Annotated[
        str | None,
        typer.Option("--value", "-v", help="Measured objective value (multi-task: V1,V2,... in task order)."),
    ] = None,
    failed: Annotated[bool, typer.Option("--failed", help="Mark the trial failed instead.")] = False,
    withdraw: Annotated[
        bool,
        typer.Option(
            "--withdraw",
            help="Take trial --trial out of the study: a result recorded twice, a suggestion run at other "
            "settings or never run. Nothing reads it afterwards (a failed trial still steers the model "
            "away from its settings); what it held is kept in the study.",
        ),
    ] = False,
    params: Annotated[
        str | None,
        typer.Option(
            "--params",
            help='The settings actually used, as a JSON object, e.g. \'{"temp_C": 86, "catalyst": "Pd"}\': '
            "an experiment the tool did not suggest is stored as a new trial (one matching a pending "
            "suggestion completes it).",
        ),
    ] = None,
    amend: Annotated[
        bool,
        typer.Option(
            "--amend",
            help="Correct a complete trial's value (or, with --failed, mark it failed); the earlier "
            "value is kept in the study.",
        ),
    ] = False,
    note: Annotated[
        str | None,
        typer.Option(
            "--note",
            help="A note kept with the result, shown by `status` and written by `export`: with a value, "
            "anything worth keeping ('sample slightly contaminated'); with --failed, why the experiment "
            "failed; with --amend, why the result was corrected (kept with the earlier value); with "
            "--withdraw, why.",
        ),
    ] = None,
) -> None:
    """Report the result of an experiment: a suggested one (--trial) or any other (--params), or that
    it failed; --amend corrects a result already recorded; --withdraw takes a trial out.

    Who runs the command is kept with a correction, a withdrawal and a result reported for someone
    else's suggestion: the variable WARMBO_USER, else the login (set WARMBO_USER on a shared lab
    computer)."""
    storage = _the_study(study, storage)

    if withdraw:
        _withdraw(storage, trial, value, failed, params, amend, note)
        return
    if failed == (value is not None):
        raise ValueError("give either --value V or --failed")
    if trial is None and params is None:
        raise ValueError(
            "say which experiment: --trial ID (from `warmbo suggest`) or --params '{...}' (the settings "
            "used, for an experiment the tool did not suggest)"
        )
    if amend and trial is None:
        raise ValueError("--amend corrects a recorded trial: give its id with --trial")
    if note is not None and not note.strip():
        raise ValueError("--note is empty: say what to keep with the result, or leave --note out")
    opt = _reporting_optimizer(storage)
    tasks = list(getattr(opt, "task_names", ()))
    multitask = getattr(opt, "task_names", None) is not None
    numbers = None if value is None else _parse_values(value, len(tasks) if multitask else None, tasks)
    point = None if params is None else _parse_params(params, opt.space)
    typed = None if params is None else _typed_numbers(params)
    if trial is not None:
        stored = _reported_trial(opt, trial)
        if point is not None and not _matches_as_typed(stored.params, point, typed, opt.space):
            raise ValueError(
                f"trial {trial} was suggested at {_shown(stored.params, opt.space)}, not at the settings "
                "given in --params; a trial's settings cannot be changed. Record the settings actually used "
                "as a new trial (the same command without --trial), and withdraw the suggestion "
                f"(`warmbo observe --storage {_study_arg(storage)} --trial {trial} --withdraw --note "
                "'run at other settings'`)"
            )
        if stored.is_complete and not amend and numbers is not None:
            same = stored.values == tuple(numbers) if multitask else stored.value == numbers[0]
            if same:  # (the result reported twice, by two people: as Optimizer.tell, nothing changes)
                if note is not None:
                    opt.study.set_note(trial, note)
                console.print(
                    f"trial {trial} already holds {_shown_result(stored, tasks)}: nothing changed"
                    + (" (the note is kept)" if note is not None else ""),
                    soft_wrap=True,
                )
                return
        if stored.is_complete and not amend:
            raise ValueError(
                f"trial {trial} is already complete ({_shown_result(stored, tasks)}); "
                "to correct it, add --amend (the earlier value is kept in the study); a repeated "
                "measurement at the same settings is a trial of its own: "
                f"warmbo observe --storage {_study_arg(storage)} --params "
                f"{shlex.quote(json.dumps(stored.params, ensure_ascii=False))} "
                "--value V"
            )
        if amend and not failed and stored.is_complete:
            same = stored.values == tuple(numbers) if multitask else stored.value == numbers[0]
            if same:  # (a correction made twice, by two people: it stored a second "was 55.3" record)
                console.print(
                    f"trial {trial} already holds {_shown_result(stored, tasks)}: nothing changed"
                    + (" (the note is kept only with a correction)" if note else ""),
                    soft_wrap=True,
                )
                return
        if amend:
            t = opt.amend(
                trial, numbers if multitask or numbers is None else numbers[0], failed=failed, note=note
            )
            now = "marked failed" if failed else _shown_result(t, tasks)
            console.print(
                f"trial {t.id} amended: {now} (was {_shown_result(stored, tasks)}; kept in the study)"
            )
            _print_best(opt)
            return
    matched = ""
    target = trial if trial is not None else point
    if trial is None:  # a dict matching a pending suggestion completes it; any other is a new trial
        target, matched = _pending_match(opt, point, typed, storage)
    _refuse_live_run_trial(opt, target)
    if failed:
        if trial is not None and stored.is_failed:
            # a failure reported twice (two people, or once more with another reason): the second
            # reason replaced the first in the study without a word
            if note is None or note in (stored.error or ""):
                console.print(
                    f"trial {trial} was already marked failed: {stored.error or 'no reason given'}; "
                    "nothing changed",
                    markup=False,
                    soft_wrap=True,
                )
                return
            note = f"{stored.error}; {note}" if stored.error else note
        with opt.study.transaction():
            t = opt.tell_failed(target, error=note or "reported failed")
            reporter = _other_reporter(t.worker)
            if reporter is not None:
                opt.study.set_note(t.id, f"reported by {reporter}")
        matched = matched.replace(_NEW_TRIAL, f"trial {t.id}")
        console.print(f"trial {t.id} marked failed{matched}" + (f": {note}" if note else ""), markup=False)
        return
    with opt.study.transaction():  # (the value and its notes stored together, or neither)
        t = opt.tell(target, numbers if multitask else numbers[0])
        if note is not None:
            opt.study.set_note(t.id, note)
        reporter = _other_reporter(t.worker)
        if reporter is not None:
            opt.study.set_note(t.id, f"reported by {reporter}")
    if trial is not None and stored.is_failed:
        # a value for a failed trial completes it (for a suggestion `clean-pending` cleared); before,
        # a failure someone had reported (an instrument error) became a value without a word, and a
        # mistyped --trial went unnoticed
        matched = (
            f" (it had been marked failed: {stored.error or 'no reason given'}; that is kept in the study, "
            f"and `warmbo status` shows it)"
        )
    kept = " (note kept)" if note is not None else ""
    # (the withdrawal's note names the trial that replaced the suggestion: a chemist user test's
    # write-up could not tell which result stood for the suggestion withdrawn)
    matched = matched.replace(_NEW_TRIAL, f"trial {t.id}")
    console.print(f"trial {t.id}: {_shown_result(t, tasks)} stored{matched}{kept}", soft_wrap=True)
    surprise = _surprise_line(opt, t, storage)
    if surprise is not None:
        errors.print(surprise, highlight=False, soft_wrap=True, markup=False)
    if trial is None:
        # the same --params command run twice (the shell's history) stored one result as two trials
        # without a word; a repeat that measured the very same value is rare, so it is pointed out
        # (at the digits typed too: the first run may have completed a suggestion from its rounded
        # settings, which keeps the suggestion's own; a user test's second run said nothing)
        same = [
            u.id
            for u in opt.study.trials(("complete",))
            if u.id != t.id
            and (u.params == t.params or _matches_as_typed(u.params, point, typed, opt.space))
            and u.value == t.value
            and u.values == t.values
        ]
        if same:
            errors.print(
                f"note: trial {same[-1]} holds the same settings and the same {_shown_result(t, tasks)}: if "
                f"this was one result recorded twice, withdraw the new trial with: warmbo observe --storage "
                f"{_study_arg(storage)} --trial {t.id} --withdraw --note 'recorded twice'",
                highlight=False,
                soft_wrap=True,
            )
    _print_best(opt)


def _reporting_optimizer(storage: str):
    """The optimizer ``observe`` records with: a multi-task study's as stored, else a plain one on
    the study's space and direction (a result needs no model, sources or schedule)."""
    from .optimizer import Optimizer
    from .storage import Study

    study = Study(storage)
    if study.get_meta("multitask") is not None:
        return load_optimizer(storage)
    return Optimizer(study.space, storage=storage, maximize=study.settings.get("direction") == "maximize")


def _reported_trial(opt, trial_id: int):
    """The trial ``observe --trial`` names; for an id the study does not hold, the error lists the
    pending suggestions (a mistyped id said only "no trial with id 99", a chemist user test)."""
    from .storage import WITHDRAWN_PREFIX, TrialNotFoundError

    try:
        return opt.study.trial(trial_id)
    except TrialNotFoundError as exc:
        pending = [t.id for t in opt.study.trials(("pending",))]
        if not pending or opt.study.get_meta(f"{WITHDRAWN_PREFIX}{trial_id}") is not None:
            raise
        shown = ", ".join(str(i) for i in pending[:10]) + (", ..." if len(pending) > 10 else "")
        raise TrialNotFoundError(
            f"{exc}; the suggestions waiting for a result are trial{'s' if len(pending) > 1 else ''} {shown}"
        ) from None


def _withdraw(storage: str, trial, value, failed: bool, params, amend: bool, note) -> None:
    """``observe --withdraw``: take trial ``trial`` out of the study (:meth:`Optimizer.withdraw`),
    saying what it held and that it is kept; the other result options are refused with it."""

    given = [
        flag
        for flag, on in (
            ("--value", value is not None),
            ("--failed", failed),
            ("--params", params is not None),
        )
        if on
    ]
    given += ["--amend"] if amend else []
    if given:
        raise ValueError(
            f"--withdraw takes a trial out of the study: give it with --trial ID (and --note WHY) alone, "
            f"not with {', '.join(given)}"
        )
    if trial is None:
        raise ValueError("--withdraw needs the trial to take out: --trial ID (`warmbo status` lists them)")
    if note is not None and not note.strip():
        raise ValueError("--note is empty: say why the trial is withdrawn, or leave --note out")
    opt = _reporting_optimizer(storage)
    tasks = list(getattr(opt, "task_names", ()))
    t = opt.withdraw(trial, note=note)
    held = _shown_result(t, tasks) if t.is_complete else t.state + (f": {t.error}" if t.error else "")
    console.print(
        f"trial {t.id} withdrawn (was {held}, at {_shown(t.params, opt.space)}): the model and the counts "
        "no longer read it; what it held is kept in the study, and `warmbo status` lists it",
        markup=False,
        soft_wrap=True,
    )
    _print_best(opt)


#: ``observe`` checks a new value against the model of the other complete trials from this many on
SURPRISE_MIN = 5
#: observe checks a value only where the other trials inform the prediction: its posterior sd at most
#: this fraction of the prior's (the trials explain at least 19% of the prior variance there)
UNINFORMED = 0.9


def _surprise_line(opt, t, storage: str) -> str | None:
    """``observe``'s warning when the value just stored lies outside
    :data:`~warmbo.audit.EXTERNAL_FACTOR` times the interval that the model of the other complete
    trials gives a measurement at its settings with probability ``1 -``
    :data:`~warmbo.audit.OUTLIER_ALPHA` (a user test typed 8.44 for 84.4; ``status`` flags outliers
    only from :data:`~warmbo.audit.MIN_HELD_OUT` trials on, and only when run). The model is
    fitted without the new value (an outlier would widen its own noise), on the study's own trials,
    in the user's units (:func:`_measurement_interval`); the interval is the measurement's (the
    noise included).
    When a trial lies at nearly the same settings (within 2% of every range) and, fitted without it
    too, the model takes the new value, that trial is named as the likely wrong one (an uncorrected
    typo made the next, correct, value look wild). None for a multi-task study, fewer than
    :data:`SURPRISE_MIN` other trials, a study larger than ``status`` audits, and a value inside the
    interval."""
    from .audit import EXTERNAL_FACTOR, OUTLIER_ALPHA

    if getattr(opt, "task_names", None) or t.value is None:
        return None
    others = [u for u in opt.study.trials(("complete",)) if u.id != t.id]
    if not SURPRISE_MIN <= len(others) <= STATUS_AUDIT_MAX["single"]:
        return None
    found = _measurement_interval(opt, others, t.params)
    if found is None or found[0] <= t.value <= found[1]:
        return None
    low, high = found
    said = (
        f"warning: {t.value:.6g} lies far outside what the other {len(others)} trials predict for a "
        f"measurement there ({low:.4g} to {high:.4g}: {EXTERNAL_FACTOR:g} times the reach a calibrated "
        f"model misses with probability {OUTLIER_ALPHA:g})"
    )
    near, gap = _nearest(opt.space, others, t.params)
    wrong = t.id
    if gap < 0.02:
        rest = [u for u in others if u.id != near.id]
        without = _measurement_interval(opt, rest, t.params) if len(rest) >= SURPRISE_MIN else None
        if without is not None and without[0] <= t.value <= without[1]:
            said += (
                f"; but trial {near.id}, at nearly these settings, holds {near.value:.6g}, and without it "
                f"the other trials predict {without[0]:.4g} to {without[1]:.4g}: trial {near.id}'s value is "
                "the likely wrong one"
            )
            wrong = near.id
    return (
        f"{said}. Check it: if a value is a typo or a unit slip, correct it (the value stored is kept in "
        f"the study): warmbo observe --storage {_study_arg(storage)} --trial {wrong} --value V --amend"
    )


def _nearest(space, trials, params: dict):
    """The trial of ``trials`` (not empty) nearest to ``params``, and its distance: the max norm in
    the encoded unit cube (a category apart is 1)."""
    import numpy as np

    gaps = np.max(np.abs(space.encode([t.params for t in trials]) - space.encode([params])), axis=1)
    k = int(np.argmin(gaps))
    return trials[k], float(gaps[k])


def _measurement_interval(opt, trials, params: dict) -> tuple[float, float] | None:
    """:data:`~warmbo.audit.EXTERNAL_FACTOR` times the interval, in the user's units, in which a GP
    fitted to ``trials`` (the study's own trials, their values as measured: the optimizer's default
    GP on the plain scale) puts a measurement at ``params`` with probability ``1 -``
    :data:`~warmbo.audit.OUTLIER_ALPHA` (:func:`_surprise_line`); None when the fit fails. On the
    plain scale because the interval is widened: widened on an output transform's scale and mapped
    back, its far side ran to -225 at lambda 2, and a typo /10 went unflagged (a review)."""
    import numpy as np
    from scipy.stats import norm

    from .audit import EXTERNAL_FACTOR, OUTLIER_ALPHA
    from .models.defaults import default_model

    X = opt.space.encode([t.params for t in trials])
    y = np.array([t.value for t in trials], dtype=np.float64)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gp = default_model(opt.space.dim, seed=0, kernel=opt._default_kernel(None)).fit(X, y)
            mean, sd = gp.predict(opt.space.encode([params]))
            loo_mean, loo_sd = gp.loo()
    except (ValueError, ArithmeticError):
        return None
    prior_sd = math.sqrt(float(gp.kernel_.diag(opt.space.encode([params]))[0])) * float(gp.y_std_)
    if float(sd[0]) > UNINFORMED * prior_sd:
        # the other trials say next to nothing there (a buffer never tried, a region far from a warm
        # start's cluster): the prediction is the prior's, whose amplitude those trials set where
        # they lie, so a right value outside it is no slip (a user test was warned at 64.6, exact,
        # after five trials at 84-85 elsewhere)
        return None
    sd_y = math.sqrt(float(sd[0]) ** 2 + float(np.mean(gp.noise_)) * float(gp.y_std_) ** 2)
    # EXTERNAL_FACTOR times the reach, as the audit flags a residual against a model fitted without
    # it: a GP fitted to few noisy trials takes too little noise (9 trials of noise sd 1.5 put a
    # right value outside the plain reach), and what this is for is a gross slip (8.44 for 84.4);
    # widened further by the model's own leave-one-out residuals when they are larger than it
    # predicts (a GP that took noise for signal): their root mean square in predicted sds, never < 1
    z = np.abs(y - loo_mean) / np.where(loo_sd > 0, loo_sd, np.inf)
    spread = max(1.0, float(np.sqrt(np.mean(z**2))))
    reach = EXTERNAL_FACTOR * float(norm.isf(OUTLIER_ALPHA / 2.0)) * sd_y * spread
    return float(mean[0]) - reach, float(mean[0]) + reach


def _refuse_live_run_trial(opt, target: int | dict) -> None:
    """Refuse to report a result for a pending trial that a live run is evaluating (``target``: its
    id, or the settings of the pending trial ``--params`` matched): the run's own result would then be
    dropped when it ends (a user test: ``observe --trial 1`` on a running ``optimize``'s trial replaced
    the command's measurement without a word, where ``--withdraw`` was refused)."""
    from .optimizer import live_run_trials

    live = live_run_trials(opt.study)
    if not live:
        return
    pending = {t.id: t for t in opt.study.trials(("pending",))}
    ids = [target] if isinstance(target, int) else [i for i, t in pending.items() if t.params == target]
    for trial_id in ids:
        if trial_id in live and trial_id in pending:
            raise ValueError(
                f"trial {trial_id} is being evaluated by a live run ({pending[trial_id].worker}, heartbeat "
                f"{live[trial_id]:.0f} s ago), which records its own result when the evaluation ends: "
                "reporting one now would drop the run's. Check the trial id; to replace the run's result, "
                "wait until it is recorded and use --amend, or stop the run first"
            )


def _pending_match(opt, point: dict, typed: dict, storage: str) -> tuple[int | dict, str]:
    """What ``observe --params`` completes: the pending suggestion at exactly ``point``, else the one
    pending suggestion ``point`` matches at the digits printed or typed (settings copied from what
    ``suggest`` or ``status`` printed, rounded: :func:`_matches_as_typed`), else ``point`` as a new
    trial; with the words saying which. Several pending suggestions matching are refused, naming them
    and the ``--trial`` form.
    """
    pending = opt.study.trials(("pending",))
    exact = [t for t in pending if t.params == point]
    if exact:
        return point, f" (suggested at these settings as trial {exact[0].id})"
    close = [t for t in pending if _matches_as_typed(t.params, point, typed, opt.space)]
    if len(close) == 1:
        t = close[0]
        return t.id, (
            f" (suggested as trial {t.id} at {_shown(t.params, opt.space)}: the settings typed, to the "
            "digits shown; stored as suggested)"
        )
    if close:
        listed = "; ".join(f"trial {t.id} at {_shown(t.params, opt.space)}" for t in close)
        raise ValueError(
            f"the settings in --params match {len(close)} pending suggestions to the digits shown: {listed}. "
            f"Say which one with --trial: warmbo observe --storage {_study_arg(storage)} --trial "
            f"{close[0].id} --value V (or type the settings with more digits)"
        )
    resolved = opt._resolve(point)  # (what tell itself completes: a suggestion's settings rounded)
    if resolved is not None:
        shown = _shown(opt.study.trial(resolved).params, opt.space)
        return resolved, (
            f" (suggested as trial {resolved} at {shown}: the settings given, to 6 significant digits; "
            "stored as suggested)"
        )
    if pending:  # (a suggestion left pending beside the new trial was easy to miss)
        ids = ", ".join(str(t.id) for t in pending)
        # the nearest, as the experiment run at other settings than suggested most likely replaced
        # it (a user test had to find and close it by hand among all the pending ones)
        near, _ = _nearest(opt.space, pending, point)
        return point, (
            f" (a new trial: no pending suggestion has these settings; pending: trial(s) {ids}; the nearest "
            f"is trial {near.id} at {_shown(near.params, opt.space)}: if this experiment was run instead of "
            f"it, withdraw it with warmbo observe --storage {_study_arg(storage)} --trial {near.id} "
            f"--withdraw --note 'run at other settings: {_NEW_TRIAL}')"
        )
    return point, " (a new trial)"


#: where ``observe``'s advice names the trial it is storing, before its id is known
_NEW_TRIAL = "\x00new trial\x00"


def _typed_numbers(text: str) -> dict:
    """The numbers of a ``--params`` object (valid JSON, read by :func:`_parse_params` first) as
    :class:`~decimal.Decimal` with the digits typed: ``85.70`` keeps its last 0."""
    from decimal import Decimal

    point = json.loads(text, parse_float=Decimal, parse_int=Decimal)
    return {name: v for name, v in point.items() if isinstance(v, Decimal)}


def _matches_as_typed(params: dict, point: dict, typed: dict, space) -> bool:
    """Whether stored ``params`` read as the validated ``point`` at the digits typed (``typed``, from
    :func:`_typed_numbers`) or printed, whichever are more: each float parameter within half a unit
    of that last digit, every other one equal. ``85.7312`` (as tables print ``85.73124``) matches it,
    and so does ``85.73124``; ``85.7`` does not (a setting chosen by hand is meant as typed)."""
    from decimal import Decimal

    if set(params) != set(point):  # (a conditional space: other parameters active)
        return False
    for p in space.params:
        if p.name not in params:
            continue
        stored, given = params[p.name], typed.get(p.name)
        if p.kind == "float" and given is not None and isinstance(stored, float) and given.is_finite():
            digit = min(given.as_tuple().exponent, Decimal(p.text(stored)).as_tuple().exponent)
            if abs(Decimal(stored) - given) > Decimal(5).scaleb(digit - 1):
                return False
        elif stored != point[p.name]:
            return False
    return True


def _shown_result(t, tasks) -> str:
    if tasks:
        shown = ", ".join(f"{name}={v:.6g}" for name, v in zip(tasks, t.values, strict=True))
        return f"{shown} (utility {t.value:.6g})"
    return f"value {t.value:.6g}"


def _shown(params: dict, space) -> str:
    off = space.inactive(params)  # (a conditional space: the parameters the point does not use left out)
    pairs = zip(space.names, _texts(space, params), strict=True)
    return ", ".join(f"{name}={text}" for name, text in pairs if name not in off)


def _parse_values(text: str, n_tasks: int | None, task_names=()) -> list[float]:
    """``--value``: one plain number, or (``n_tasks``) that many separated by commas, a bad one named
    by its task (``task_names``; it said only "got '70,nan,2'", where Python names the task)."""
    from .data import NUMERAL  # a plain decimal numeral (float() also reads "4_2" as 42)

    items = [text] if n_tasks is None else _split(text, "--value")
    if n_tasks is not None and len(items) != n_tasks:
        named = f" ({', '.join(task_names)})" if task_names else ""
        raise ValueError(f"--value must be {n_tasks} numbers{named} separated by commas, got {text!r}")
    numbers = []
    for k, item in enumerate(items):
        word = item.strip()
        if n_tasks is not None:
            task = repr(task_names[k]) if k < len(task_names) else str(k + 1)
            which = f"task {task}'s value {word!r} in {text!r}"
        else:
            which = repr(text)
        if word.lower().lstrip("+-") in ("nan", "inf", "infinity"):
            raise ValueError(
                f"--value must hold finite numbers, got {which}; report a failed experiment with --failed"
            )
        if not NUMERAL.fullmatch(word):  # (warmbo.data's: a prior's cells are read alike)
            if "_" in word:
                hint = "write it without underscores (4_2 is not read as 42)"
            elif n_tasks is None and "," in word:
                hint = "use a decimal point (52.1, not 52,1) and no thousands separator"
            else:
                hint = "digits 0-9, an optional decimal point and exponent, e.g. 52.1 or -1.5e-3"
            raise ValueError(f"--value must be a number, got {which}: {hint}")
        number = float(word)
        if not math.isfinite(number):
            raise ValueError(f"--value {text!r} is too large for a float (over 1.8e308)")
        numbers.append(number)
    return numbers


def _parse_params(text: str, space, option: str = "--params", partial: bool = False) -> dict:
    """``--params``: a JSON object of parameter values, validated against the study's space; with
    ``partial`` (``suggest --fixed``, ``enqueue --params``) it may name some of the parameters only."""
    from ._user_json import plainly, point_problem
    from .fixed import fix

    example = ", ".join(f'"{name}": ...' for name in space.names[: 1 if partial else None])
    try:
        point = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{option} must be a JSON object such as '{{{example}}}' (in single quotes in the shell); "
            f"invalid JSON at column {exc.colno}: {exc.msg}"
        ) from None
    except _DuplicateKey as exc:
        raise ValueError(f"{option}: {exc}") from None
    if not isinstance(point, dict):
        raise ValueError(f"{option} must be a JSON object such as '{{{example}}}', got {text!r}")
    some = partial and bool(space.missing(point))
    problem = point_problem(point, space, some)  # (in the words typed; the library's speak Python)
    if problem is not None:
        if "outside its range" in problem or "not on its grid" in problem:
            # (a chemist user test ran 82 degC on a 5-degree grid, and 105 above the range: the study
            # refused the experiment, and said nothing of how to keep it)
            problem += (
                ". A study's space cannot change (Optuna refuses such values too); to keep experiments "
                "outside it, start a new study with a wider or finer space that reads this one's trials "
                "as its own: warmbo suggest --space WIDER.json --storage NEW.db --prior THIS.db "
                "--transfer none"
            )
        raise ValueError(f"{option}: {problem}")
    try:
        return fix(space, point).params if some else space.validate(point)
    except ValueError as exc:
        raise ValueError(f"{option}: {plainly(str(exc).removeprefix('fixed: '))}") from None


#: ``status`` lists every trial up to this many, else the last 50 (``--last``, ``--all``)
STATUS_ROWS = 200
#: ``status`` audits (it fits the model) up to this many complete trials (a walkthrough: 60 s at 5000
#: trials). A multi-task model is audited in closed form like the GP (3 tasks x 1000 trials: 0.3 s),
#: except without one (``task_similarity="uniform"``, ``budget_eps``): it refits per held-out trial,
#: so its limit is lower (24 s for 3 x 2000 trials before the closed form)
STATUS_AUDIT_MAX = {"single": 1000, "multi-task": 1000, "multi-task refit": 300}


@app.command()
@friendly
def enqueue(
    study: StudyArgument = None,
    storage: StorageOption = None,
    params: Annotated[
        list[str] | None,
        typer.Option(
            "--params",
            help='A configuration to evaluate first, as a JSON object (repeatable), e.g. \'{"temp_C": 86, '
            '"catalyst": "Pd"}\'; naming some parameters only, the suggestion that takes it chooses '
            "the others.",
        ),
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option(
            "--file",
            help="Configurations to evaluate first, in order: a CSV file with a column per parameter "
            "(other columns are ignored) or a .json file (an object or a list of objects).",
        ),
    ] = None,
    delimiter: Annotated[
        str, typer.Option("--delimiter", help="Field separator of a CSV --file, e.g. ';' (default ',').")
    ] = ",",
    clear: Annotated[
        bool, typer.Option("--clear", help="Remove the configurations still waiting in the queue.")
    ] = False,
    failed: Annotated[
        bool,
        typer.Option(
            "--failed",
            help="Queue every failed trial's configuration again (a crash that may not recur: a "
            "full disk, a preempted node), oldest first.",
        ),
    ] = False,
    space_file: NewSpaceOption = None,
    maximize: NewDirectionOption = None,
    seed: NewSeedOption = None,
    n_initial: NewDesignOption = None,
    create: CreateOption = False,
) -> None:
    """Queue configurations to evaluate first (known good ones, a default that works): the next
    `suggest` calls, or an `optimize` run, return them in order before the design or the model
    chooses; --failed tries the failed trials' configurations again. Without --params, --file,
    --failed or --clear, shows the queue."""
    storage = _the_study(study, storage)
    from .data import read_points
    from .optimizer import Optimizer
    from .storage import Study, study_exists

    if clear and (params or file is not None or failed):
        raise ValueError("--clear empties the queue: give it alone, or --params/--file/--failed alone")
    space = None if space_file is None else load_space(space_file)

    def configurations(space) -> list[dict]:
        points = [_parse_params(text, space, partial=True) for text in params or ()]
        return points + ([] if file is None else read_points(file, space, delimiter))

    if not study_exists(storage):
        if space is None:  # (the store's own message names `suggest`)
            _say_what_the_file_is(storage)
            raise ValueError(
                f"no study at {redacted(storage)!r}: create it with the configurations, "
                f"`warmbo enqueue --storage {_study_arg(storage)} --space SPACE.json --params '{{...}}'` "
                "(--maximize, --seed and --n-initial as for `suggest --space`)"
            )
        _refuse_a_slip(storage, create)
        points = configurations(space)  # (checked first: a bad one must not leave an empty study behind)
        opt = Optimizer(space, maximize=bool(maximize), seed=seed, n_initial=n_initial, storage=storage)
        direction = "maximise" if opt.maximize else "minimise"
        errors.print(f"created study {redacted(storage)} ({direction}; seed {opt.seed})", highlight=False)
    else:
        if space is not None or maximize is not None or seed is not None or n_initial is not None:
            stored = Study(storage)
            try:
                _check_creation_options(stored, storage, space, maximize, seed, n_initial)
            finally:
                stored.close()
        opt = load_optimizer(storage, transfer="none")
        points = configurations(opt.space)
    if clear:
        removed = opt.clear_queue()
        console.print(f"removed {_count(removed, 'configuration')} from the queue", highlight=False)
        return
    if failed:
        again = [t.params for t in opt.study.trials() if t.state == "failed"]
        if not again:
            console.print("the study has no failed trial to try again", highlight=False)
        points += again
    if points:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always", UserWarning)
            queued = opt.enqueue(points)
        for warning in said:
            errors.print(f"note: {warning.message}", highlight=False, soft_wrap=True, markup=False)
        console.print(
            f"queued {_count(len(queued), 'configuration')}" if queued else "queued nothing", highlight=False
        )
    waiting = opt.queued()
    if not waiting:
        console.print("the queue is empty: suggestions come from the design and the model", highlight=False)
        return
    _print_params("queued, next first", list(enumerate(waiting, start=1)), opt.space, "#")
    these = "suggestion is this one" if len(waiting) == 1 else f"{len(waiting)} suggestions are these"
    if any(len(point) < len(opt.space.names) for point in waiting):
        these += " (a (chosen) value is chosen by that suggestion, with the configuration's others held)"
    console.print(
        f"the next {these}: warmbo suggest --storage {_study_arg(storage)}",
        highlight=False,
        soft_wrap=True,
    )


@app.command()
@friendly
def status(
    study: StudyArgument = None,
    storage: StorageOption = None,
    last: Annotated[
        int | None,
        typer.Option(
            "--last",
            help=f"Show only the last N trials (default: all up to {STATUS_ROWS}, else the last 50).",
        ),
    ] = None,
    all_rows: Annotated[bool, typer.Option("--all", help="Show every trial, however many.")] = False,
) -> None:
    """Show the trials of a study as a table, and the best one (the study is opened read-only)."""
    storage = _the_study(study, storage)
    if last is not None and last < 1:
        raise ValueError(f"--last must be a positive number of trials, got {last}")
    if last is not None and all_rows:  # (--last won without a word)
        raise ValueError(f"give --last {last} or --all, not both")
    opt = load_optimizer(storage, readonly=True)
    total = len(opt.study)
    if last is None and not all_rows and total > STATUS_ROWS:
        last = 50
    _print_table(_trials_table(opt, limit=last))
    if last is not None and total > last:
        console.print(f"(the last {last} of {total} trials; --last N or --all shows more)", highlight=False)
    counts = {s: opt.study.count(s) for s in ("complete", "pending", "failed")}
    console.print(", ".join(f"{v} {k}" for k, v in counts.items()))
    withdrawn = _withdrawn_line(opt.study)
    if withdrawn:
        console.print(withdrawn, markup=False, highlight=False, soft_wrap=True)
    waiting = len(opt.queued())
    if waiting:  # (`warmbo enqueue`)
        console.print(
            f"{_count(waiting, 'queued configuration')} wait: the next suggestions return "
            f"{'it' if waiting == 1 else 'them'} first (warmbo enqueue {_study_arg(storage)} lists them)",
            highlight=False,
            soft_wrap=True,
        )
    _print_best(opt)
    estimate = _estimate_line(opt)
    if estimate is not None:
        console.print(estimate, markup=False, highlight=False, soft_wrap=True)
    _print_workers(opt)
    console.print(_audit_line(opt, storage), markup=False, highlight=False, soft_wrap=True)
    shown = opt.stored_transfer_report() if hasattr(opt, "stored_transfer_report") else None
    if shown is not None:  # the last model ask's, or the sources before one (warmbo.transfer.transfer_report)
        console.print(str(shown), markup=False, highlight=False)


@app.command()
@friendly
def export(
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="CSV file to write; - (the default) writes to stdout."),
    ] = Path("-"),
    study: StudyArgument = None,
    storage: StorageOption = None,
    complete: Annotated[
        bool, typer.Option("--complete", help="Only the complete trials (a file --prior reads as it is).")
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file.")] = False,
) -> None:
    """Write the study's trials as CSV, to stdout or a file (--out; the study is opened read-only):
    trial, state, one column per parameter, y (the value; a multi-task study's task values follow),
    worker, created, completed, error, amended (what an amended trial held before), note."""
    storage = _the_study(study, storage)
    from .data import trials_to_csv

    to_stdout = str(out) == "-"
    if not to_stdout and out.is_dir():  # (before: "exists: give --force", then "Is a directory")
        raise ValueError(f"{out} is a folder: give a file name, e.g. --out {Path(out) / 'trials.csv'}")
    if not to_stdout and out.exists() and not force:
        raise ValueError(f"{out} exists: give --force to replace it, or another --out")
    opt = load_optimizer(storage, readonly=True, transfer="none")
    if not to_stdout and out.exists():
        # --force replaces an existing file, never the study itself (or its journal): `--out lab.db`
        # for `--out lab.csv`, recalled with --force, wrote the CSV over every trial of the study
        path = getattr(opt.study, "path", None)
        db = Path(path) if path and path != ":memory:" and Path(path).exists() else None
        if db is not None and any(
            Path(f"{db}{suffix}").exists() and os.path.samefile(out, f"{db}{suffix}")
            for suffix in ("", "-wal", "-shm", "-journal")
        ):
            raise ValueError(f"--out {out} is the study's own file: give another --out (a .csv file)")
    trials = [t for t in opt.history if t.is_complete or not complete]
    value = trials_to_csv(
        sys.stdout if to_stdout else out,
        trials,
        opt.space,
        tuple(getattr(opt, "task_names", ())),
        amendments=opt.study.amendments(),
        notes=opt.study.notes(),
    )
    said = errors if to_stdout else console  # stdout holds only the CSV
    said.print(
        f"wrote {_count(len(trials), 'trial')} to {'stdout' if to_stdout else out}",
        markup=False,
        highlight=False,
    )
    if value != "y":  # a parameter or task is named y
        said.print(
            f"the values are in column {value!r}: import them with --prior-y {value}",
            markup=False,
            highlight=False,
        )
    if complete and opt.maximize and not getattr(opt, "task_names", None):
        # a CSV holds no direction: a --prior file's values are read in the new study's direction
        # (said with --complete, the form meant for --prior: a chemist user test read it on every
        # export written up for a lab book)
        said.print(
            f"the values were maximised (higher is better); a --prior file is read in the new study's "
            "direction: give --maximize when you create a study from it (without it the study minimises "
            "and takes the lowest values for the best); for a study that minimises give the study itself, "
            f"--prior {_study_arg(storage)}, which knows its direction (or negate the values)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


@app.command("audit")
@friendly
def audit_command(
    study: StudyArgument = None,
    storage: StorageOption = None,
    levels: Annotated[
        str | None,
        typer.Option(
            "--levels", help="Nominal levels in (0, 1), comma-separated (default 0.5,0.8,0.9,0.95,0.99)."
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Folder for audit.json and calibration.png.")
    ] = None,
    max_held_out: Annotated[
        int,
        typer.Option(
            "--max-held-out", help="Cap on held-out trials for models that must be refitted.", min=1
        ),
    ] = 50,
) -> None:
    """Check the study's confidence intervals: leave-one-out coverage and width at each level, the
    GP-UCB schedule's row, and warnings (the study is opened read-only)."""
    storage = _the_study(study, storage)
    from .report import audit_header, audit_rows, plot_calibration

    parsed = None
    if levels is not None:
        try:
            parsed = [float(v) for v in _split(levels, "--levels")]
        except ValueError as exc:
            raise ValueError(
                f"--levels must be numbers in (0, 1) separated by commas, got {levels!r}"
            ) from exc
    opt = load_optimizer(storage, readonly=True)
    from .optimizer import LargeStudyWarning

    _large_study_note(opt, "the audit")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=LargeStudyWarning)
        result = study_audit(opt, parsed, max_held_out)
    audits = result if isinstance(result, dict) else {"": result}
    for name, audit in audits.items():
        title = f"{name}: " if name else ""
        table = Table(title=f"{title}{audit.held_out} of {audit.n} trials held out ({audit.method})")
        for column in audit_header(audit):
            table.add_column(column, justify="left" if column == "interval" else "right")
        for row in audit_rows(audit):
            table.add_row(*row)
        console.print(table)
        console.print(f"{title}{audit.summary()}", markup=False, highlight=False)
        for message in audit.warnings:
            console.print(
                f"warning: {message}", markup=False, highlight=False, style="yellow", soft_wrap=True
            )
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        content = (
            {name: a.to_dict() for name, a in result.items()}
            if isinstance(result, dict)
            else result.to_dict()
        )
        (out / "audit.json").write_text(json.dumps(content, indent=2))
        figure = plot_calibration(result)
        figure.savefig(out / "calibration.png", dpi=100)
        console.print(f"wrote {out / 'audit.json'} and {out / 'calibration.png'}")


def _large_study_note(opt, what: str) -> None:
    """Say that a command fits its model on all of a large study's trials, in place of the optimizer's
    :class:`~warmbo.optimizer.LargeStudyWarning`, which speaks of asks and of ``--max-trials``, an
    option of optimize and suggest (the command filters that warning out)."""
    from .optimizer import LARGE_STUDY, PRIOR_WORKER

    own = sum(1 for t in opt.history if t.is_complete and t.worker != PRIOR_WORKER)
    if own > LARGE_STUDY and getattr(opt, "max_trials", None) is None:
        errors.print(
            f"fitting the model on all {own} trials for {what}: an exact GP, which takes a while at "
            "this size",
            highlight=False,
        )


def study_audit(opt, levels=None, max_held_out: int | None = None, target_only: bool = False):
    """The confidence audit of a reopened study: one :class:`~warmbo.audit.Audit`, or a dict by task
    for a multi-task study. A single-objective study's GP-UCB schedule is read from its stored
    acquisition (:func:`warmbo.bounds.parse_schedule`) when the optimizer does not run GP-UCB.
    ``target_only``: a transfer study's own GP (:meth:`~warmbo.Optimizer.audit`)."""
    from .acquisition import UCB
    from .audit import LEVELS, MAX_HELD_OUT
    from .bounds import parse_schedule

    levels = LEVELS if levels is None else levels
    max_held_out = MAX_HELD_OUT if max_held_out is None else max_held_out
    if getattr(opt, "task_names", None):
        return opt.audit(levels, max_held_out)
    schedule = None
    if not isinstance(opt.acquisition, UCB):
        schedule = parse_schedule(opt.study.settings.get("acquisition", ""))
    return opt.audit(levels, max_held_out, schedule=schedule, target_only=target_only)


def _audit_line(opt, storage: str) -> str:
    """``status``'s line: the 95% coverage of the audit, or why there is none (kept fast: refitted
    models are audited on at most 20 held-out trials, the exact GP and the multi-task models with a
    closed form on all, and a large study is not audited here at all: ``warmbo audit`` does it)."""
    from .audit import MIN_HELD_OUT

    complete = opt.study.count("complete")
    if complete < MIN_HELD_OUT:
        # (a chemist user test read "audit" as a check of their own records: say what it checks)
        return (
            f"audit (whether the model's error bars hold on results it has not seen): from "
            f"{MIN_HELD_OUT} results on ({complete} so far)"
        )
    kind = "single"
    if getattr(opt, "task_names", None):
        kind = "multi-task" if getattr(opt.model, "loo_closed_form", False) else "multi-task refit"
    limit = STATUS_AUDIT_MAX[kind]
    if complete > limit:
        return (
            f"audit: not run by status at {complete} complete trials (it fits the model, which takes a "
            f"while at this size): warmbo audit --storage {_study_arg(storage)} runs it"
        )
    try:
        # a transfer study: this study's own GP, as the estimate line above (the ensemble's
        # intervals mix the sources' scales, and a chemist user test read "cover 0%" as a fault);
        # `warmbo audit` audits the ensemble that chose the points
        result = study_audit(opt, max_held_out=20, target_only=True)
    except (ValueError, ArithmeticError) as exc:
        return f"audit: not available ({exc})"
    if isinstance(result, dict):
        # each task's outlier warning too, as for one objective (a user test: the report had it,
        # status not)
        said = "; ".join(f"{name}: {a.summary()}" for name, a in result.items())
        outliers = [
            f"warning: {name}: {w}"
            for name, a in result.items()
            for w in a.warnings
            if w.startswith("outlier")
        ]
        if outliers:
            outliers.append(
                f"to correct a trial: warmbo observe --storage {_study_arg(storage)} --trial ID "
                "--value V1,V2,... --amend (or --failed --amend --note WHY)"
            )
        return "\n".join([said, *outliers])
    outliers = [f"warning: {w}" for w in result.warnings if w.startswith("outlier")]  # a typo to fix
    if outliers:  # (the warning says "amend", Python's word: the command that does it)
        outliers.append(
            f"to correct a trial: warmbo observe --storage {_study_arg(storage)} --trial ID --value V "
            "--amend (or --failed --amend --note WHY; --withdraw --note WHY for a result recorded twice)"
        )
    summary = result.summary()
    if getattr(result, "subject", "") == "the transfer ensemble":  # (a user test read "cover 0%" as a misfit)
        summary += " (its means mix the tasks' standardised scales by design: `warmbo audit` says more)"
    elif getattr(result, "subject", ""):
        summary += " (`warmbo audit` audits the transfer model that chooses the suggestions)"
    return "\n".join([summary, *outliers])


#: ``status`` gives the model's estimate at the best trial from this many complete trials on: after
#: two results a GP's "54.28 (sd 0.29)" at a measured 54.3 reads as knowledge it does not have (a
#: chemist user test); from five, as ``observe``'s check of a new value (:data:`SURPRISE_MIN`)
ESTIMATE_MIN = 5


def _with_sd(mean: float, sd: float) -> str:
    """``61.9 (sd 2.2)``: an estimate to the decimals of its sd's first two digits (a chemist user test
    read ``61.8589 (sd 2.15)`` as more precise than any yield measurement); 6 significant digits
    where the sd is zero, not finite, or far below the mean's own digits."""
    mean, sd = float(mean), float(sd)
    if not (math.isfinite(mean) and math.isfinite(sd) and sd > 0):
        return f"{mean:.6g} (sd {sd:.3g})"
    decimals = max(0, 1 - math.floor(math.log10(sd)))
    if decimals > 9 or abs(mean) >= 1e12:
        return f"{mean:.6g} (sd {sd:.2g})"
    return f"{mean:.{decimals}f} (sd {sd:.{decimals}f})"


def _estimate_line(opt) -> str | None:
    """``status``'s line on the model's estimates: the posterior mean (and sd) of the objective at
    the best measured trial and, when the model ranks another setting first, at that one (with a
    transfer ensemble, of the study's own GP: ``predict(target_only=True)``, in the user's units). Under noise
    the best single measurement is optimistic (the luckiest draw); the model's mean pools every
    trial, repeats included. None for a multi-task study, below :data:`ESTIMATE_MIN` complete
    trials, and above the size at which status leaves the model to ``warmbo audit``."""
    best = opt.best
    if getattr(opt, "task_names", None) or best is None:
        return None
    complete = opt.study.trials(("complete",))
    if not ESTIMATE_MIN <= len(complete) <= STATUS_AUDIT_MAX["single"]:
        return None
    import numpy as np

    try:
        # (the study's own GP, which warns of nothing: a transfer ensemble's mean is a weighted sum of
        # standardised GPs, and a user read its 94.1 beside a best yield of 83.3 as "94 % is reachable")
        # Values near the float limit (1e308) overflow the standardisation: no estimate then, rather
        # than numpy's "overflow encountered in multiply" on stderr (a user test)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mean, sd = opt.predict([t.params for t in complete], target_only=True)
    except (ValueError, ArithmeticError):
        return None
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(sd))):
        return None
    here = next(i for i, t in enumerate(complete) if t.params == best.params and t.value == best.value)
    top = max(range(len(complete)), key=lambda i: mean[i] if opt.maximize else -mean[i])
    line = f"model's estimate there: {_with_sd(mean[here], sd[here])}"
    if complete[top].params != best.params:
        line += (
            f"; {'highest' if opt.maximize else 'lowest'} estimate: {_with_sd(mean[top], sd[top])} "
            f"at trial {complete[top].id}, {_shown(complete[top].params, opt.space)}"
        )
    transferring = getattr(opt, "_source", None) is not None and getattr(opt, "_refuted", None) is None
    if transferring and opt.transfer in ("auto", "rgpe"):
        line += " (this study's own GP, in your units: the transfer ensemble ranks settings on its own scale)"
    return line


def _duration(seconds: float) -> str:
    """A time span as a person reads it: ``45 s``, ``12 min``, ``3 h 25 min``, ``2 d 4 h`` (a lab's
    suggestion pending since yesterday read ``86412 s``)."""
    seconds = max(0.0, float(seconds))
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h" + (f" {minutes} min" if minutes else "")
    days, hours = divmod(round(seconds / 3600), 24)
    return f"{days} d" + (f" {hours} h" if hours else "")


def _print_workers(opt) -> None:
    """Workers with pending trials and the age of their last heartbeat; trials reclaimed from
    silent workers (``heartbeat_grace``)."""
    import time as _time

    try:
        beats = opt.study.last_beats()
    except Exception:  # noqa: BLE001 - a study written before heartbeats existed has no such column
        beats = {}
    try:
        running = set(opt.study.last_beats(beating_only=True))
    except Exception:  # noqa: BLE001 - (as above)
        running = set()
    now = _time.time()
    from .optimizer import _dead_here, live_run_trials

    try:
        live = set(live_run_trials(opt.study, now))
    except Exception:  # noqa: BLE001 - (as above)
        live = running
    workers: dict[tuple[bool, str], list[float]] = {}
    ids: dict[tuple[bool, str], list[int]] = {}
    for trial in opt.study.trials(("pending",)):
        # a run's trials by the run (its process); suggestions waiting for a person by the person
        key = (
            trial.id in running,
            (trial.worker or "?") if trial.id in running else _who(trial.worker) or "?",
        )
        workers.setdefault(key, []).append(now - beats.get(trial.id, trial.created))
        ids.setdefault(key, []).append(trial.id)
    for (run, worker), ages in sorted(workers.items()):
        # which trials: a list of the table's pending rows was left to the reader (a status of
        # --last 20 does not even show them all)
        shown = ", ".join(str(i) for i in ids[run, worker][:10]) + (
            ", ..." if len(ids[run, worker]) > 10 else ""
        )
        plural = "s" if len(ages) > 1 else ""
        # a run killed (kill -9, a machine lost) or stopped keeps its trials pending: listed as if it
        # still ran (19 such lines after 30 kills, a user test); said, with what clears them
        # (a process of this machine that no longer exists is gone at once: a Python run ended by
        # SIGTERM records no stop, and read as live for 30 s, a user test)
        gone = run and (not any(i in live for i in ids[run, worker]) or _dead_here(worker))
        line = (
            f"run {worker}: {len(ages)} pending (trial{plural} {shown}), "
            f"last heartbeat {_duration(min(ages))} ago"
            + (
                " - stopped or killed: `warmbo clean-pending` marks its trials failed, "
                "`warmbo optimize --retry-pending` evaluates them again"
                if gone
                else ""
            )
            if run
            else f"{worker}: {len(ages)} suggestion{plural} waiting for a result (trial{plural} {shown}), "
            f"the latest taken {_duration(min(ages))} ago"
        )
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    reclaimed = opt.study.meta_items("reclaimed:")
    if reclaimed:
        last = [json.loads(v) for v in reclaimed.values()][-3:]
        shown = "; ".join(
            f"{r['from']} -> {r['to']} ({r['mode']}, silent {_duration(r['silent_s'])})" for r in last
        )
        console.print(
            f"reclaimed from silent workers: {len(reclaimed)} trial(s); {shown}",
            markup=False,
            highlight=False,
        )


prior_app = typer.Typer(
    help="Prior data imported into a study: list the imports, remove them.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)
app.add_typer(prior_app, name="prior")


@prior_app.command("list")
@friendly
def prior_list(study: StudyArgument = None, storage: StorageOption = None) -> None:
    """The tagged prior imports of a study and their numbers of rows."""
    storage = _the_study(study, storage)
    opt = load_optimizer(storage, readonly=True)
    priors = opt.priors()
    n_rows = sum(t.worker == "prior" for t in opt.history)
    table = Table(title=f"{n_rows} prior rows in {redacted(storage)}")
    for column in ("tag", "rows", "trial ids", "imported"):
        table.add_column(column)
    table.add_column("from", overflow="fold")  # a file's absolute path: whole, over several lines
    for tag, record in sorted(priors.items(), key=lambda item: float(item[1].get("imported") or 0)):
        imported = record.get("imported")
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(imported))) if imported else "-"
        ids = f"{record['first']}-{record['last']}" if record.get("first") is not None else "-"
        origin = str(record.get("source") or "-")
        if record.get("skipped"):
            origin += f" ({record['skipped']} rows already imported skipped)"
        table.add_row(*_plain(tag, str(record.get("rows", "-")), ids, when, origin))
    console.print(table)
    sources = getattr(opt, "prior", None)
    if sources is not None and getattr(opt, "transfer", "none") != "none":
        # (`suggest --prior old.csv` stores the file as a transfer source, not as imported rows: the
        # table alone said "0 prior rows" of a study that transfers from it)
        console.print(
            f"the study also transfers from {max(1, len(sources.tasks))} source task(s) of "
            f"{len(sources)} rows (transfer {opt.transfer}), stored with it by --prior rather than "
            "imported as trials; `warmbo status` shows how they are weighed",
            highlight=False,
            soft_wrap=True,
        )


@prior_app.command("remove")
@friendly
def prior_remove(
    study: StudyArgument = None,
    storage: StorageOption = None,
    tag: Annotated[str | None, typer.Option("--tag", help="Remove the rows of this import.")] = None,
    file: Annotated[
        str | None,
        typer.Option(
            "--file",
            help="Remove the rows of every import of this CSV file or study (each version of it).",
        ),
    ] = None,
    all_rows: Annotated[bool, typer.Option("--all", help="Remove every prior row and tag.")] = False,
) -> None:
    """Remove imported prior rows (one import by --tag, every import of a file by --file, or --all),
    in one transaction."""
    storage = _the_study(study, storage)
    if sum((tag is not None, file is not None, all_rows)) != 1:
        raise ValueError(
            "say what to remove, one of: --tag TAG (see 'warmbo prior list'), --file FILE or --all"
        )
    opt = load_optimizer(storage, transfer="none")  # removing rows needs no transfer sources
    if all_rows:
        removed = opt.remove_prior()
    elif file is not None:
        from .prior import import_source

        removed = opt.remove_prior(source=import_source(file))
    else:
        removed = opt.remove_prior(tag)
    console.print(f"removed {removed} prior rows from {redacted(storage)}")


@app.command("clean-pending")
@friendly
def clean_pending(
    study: StudyArgument = None,
    storage: StorageOption = None,
    older_than: Annotated[
        float | None,
        typer.Option(
            "--older-than",
            help="Trials silent for at least this many seconds (since their worker's last heartbeat, "
            "or since they were suggested), suggestions waiting for a person included.",
        ),
    ] = None,
    all_: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Every pending trial no live run is evaluating, suggestions waiting for a person "
            "included however young (a colleague's experiment in progress too).",
        ),
    ] = False,
) -> None:
    """Mark pending trials failed: by default those of runs that are gone (killed `warmbo optimize`
    or Python runs: their heartbeat stopped, or the run said it stopped: Ctrl-C, SIGTERM, an error).

    A suggestion waiting for a person (`warmbo suggest`, no heartbeat) may be a colleague's
    experiment in progress, so it is kept unless `--older-than` or `--all` says otherwise; the
    command lists what it keeps, whose and how old. A live run's trials (a heartbeat within the last
    30 s, from a run that has not said it stopped) are never failed by default. A value
    reported later for a cleared trial still completes it (`observe` does this on purpose). To
    evaluate them again, use `optimize --retry-pending` instead. A failed trial steers the model away
    from its settings; a suggestion that will simply not be run is better withdrawn (`observe --trial
    N --withdraw`), which the model does not read.
    """
    storage = _the_study(study, storage)
    from .optimizer import HEARTBEAT_INTERVAL, LIVE_BEATS, RUN_ENDED_PREFIX, live_run_trials
    from .storage import Study

    if older_than is not None and not (math.isfinite(older_than) and older_than >= 0):
        raise ValueError(f"--older-than must be a non-negative number of seconds, got {older_than!r}")
    if older_than is not None and all_:
        raise ValueError("give --older-than SECONDS or --all, not both (--all clears the young ones too)")
    live = LIVE_BEATS * HEARTBEAT_INTERVAL
    study = Study(storage)
    with study.transaction():
        now = time.time()
        pending = study.trials(("pending",))
        beats = study.last_beats()  # the heartbeat, else creation
        beating = study.last_beats(beating_only=True)  # trials a run looks after

        running = live_run_trials(study, now)  # (a stopped run is not live, whatever its heartbeat)

        def silent(t) -> float:
            return now - beats.get(t.id, t.created)

        ended = {}  # worker -> when its run stopped (Ctrl-C, SIGTERM, an error: Optimizer.run says so)
        for key, value in study.meta_items(RUN_ENDED_PREFIX).items():
            with contextlib.suppress(ValueError):
                ended[key[len(RUN_ENDED_PREFIX) :]] = float(value)

        def run_ended(t) -> bool:  # its run stopped after the trial's last heartbeat (said in the list)
            return t.worker in ended and ended[t.worker] >= beats.get(t.id, t.created)

        def live_run(t) -> bool:
            return t.id in running

        def clears(t) -> bool:
            if live_run(t):
                return older_than is not None and silent(t) >= older_than  # a live run's trial
            if older_than is not None:
                return silent(t) >= older_than
            return all_ or t.id in beating  # a run's trial whose heartbeat stopped: the run is gone

        stale = [t for t in pending if clears(t)]
        for t in stale:
            study.fail(
                t.id,
                error=f"cleared by warmbo clean-pending after {_duration(now - t.created)} pending "
                "(its run was killed or its suggestion was never observed)",
            )
    kept = [t for t in pending if t not in stale]
    ids = ", ".join(str(t.id) for t in stale)
    console.print(
        f"marked {len(stale)} pending trial(s) failed: {ids}" if stale else "no pending trial cleared",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    for t in stale:  # (whose and how old, as for those kept: the line gave the ids only)
        if t.id in beating and run_ended(t):
            why = "its run has stopped (interrupted, or stopped by an error)"
        elif t.id in beating and silent(t) <= live and older_than is not None:
            why = f"silent {_duration(silent(t))}, --older-than {older_than:g} s"
        elif t.id in beating:
            why = f"its run's heartbeat stopped {_duration(silent(t))} ago"
        else:
            why = f"a suggestion waiting for a result, {_duration(silent(t))} old"
        console.print(
            f"failed: trial {t.id} (worker {t.worker or '?'}): {why}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    for t in kept:
        if live_run(t):
            # (a killed run's beat looks the same for a while: "live" was wrong there, a user test)
            why = (
                f"its run's last heartbeat was {_duration(silent(t))} ago: it may still be evaluating it "
                f"(a run killed since is cleared once its heartbeat is {_duration(live)} old)"
            )
        elif older_than is not None:
            why = f"silent {_duration(silent(t))}, under --older-than {older_than:g} s"
        else:
            why = f"a suggestion waiting for a result, {_duration(silent(t))} old"
        console.print(
            f"kept pending: trial {t.id} (worker {t.worker or '?'}): {why}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    waiting = [t for t in kept if t.id not in beating and older_than is None]
    if waiting:
        console.print(
            "suggestions waiting for a person may be experiments in progress: to clear them, give "
            "--older-than SECONDS (those older than that) or --all",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def _check_report_paths(storage: str, out: Path | None) -> None:
    """Refuse, with what to do instead, a folder given as the study (the output folder of `warmbo
    reproduce` or `demo`, whose report.html is already written, or of an earlier report) and an
    --out that is a file: the storage layer would say "no study at FOLDER: create one with warmbo
    suggest --storage FOLDER", which cannot work, and mkdir "[Errno 17] File exists"."""
    given = Path(storage).expanduser()
    if "://" not in storage and given.is_dir():
        page = given / "report.html"
        hint = (
            f"; it holds {str(page)!r}, a report already written (by warmbo reproduce, demo or report): "
            "open that in a browser"
            if page.is_file()
            else ""
        )
        raise ValueError(
            f"{storage!r} is a folder, not a study: give the study's file (e.g. study.db) or URL{hint}"
        )
    if "://" not in storage and given.suffix == ".json" and given.is_file():
        page = given.with_name("report.html")
        hint = f" ({str(page)!r}, beside it, is that run's report)" if page.is_file() else ""
        raise ValueError(
            f"{storage!r} is a JSON file, not a study: `warmbo report` takes a study's file (e.g. "
            f"study.db) or URL; a results.json of warmbo reproduce or demo comes with its report.html{hint}"
        )
    if out is not None and out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file: give a folder for report.html and the PNGs")


def _file_name(label: str) -> str:
    """``label`` (a study's name) as one file name in the current folder: every character but
    letters, digits, ``.``, ``-`` and ``_`` becomes ``_``, and leading dots go. A PostgreSQL study's
    name is anybody's text: ``warmbo report`` of a study named ``../escape`` wrote
    ``../escape-report`` outside the folder, ``/tmp/x`` an absolute path (PostgreSQL user test)."""
    import re

    return re.sub(r"[^\w.-]", "_", label).lstrip(".") or "study"


@app.command()
@friendly
def report(
    study: StudyArgument = None,
    storage: StorageOption = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Output folder (default: the study's name with -report, e.g. lab-report)."
        ),
    ] = None,
) -> None:
    """Write an HTML report (self-contained, plots embedded) and PNGs for a study (opened read-only)."""
    storage = _the_study(study, storage)
    from .storage import redacted, study_label

    _check_report_paths(storage, out)
    opt = load_optimizer(storage, readonly=True)
    out = out or Path(_file_name(study_label(storage)) + "-report")
    from .optimizer import LargeStudyWarning

    _large_study_note(opt, "the slices and the calibration")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        try:
            path = opt.report(out, title=f"warmbo study {redacted(storage)}")  # (a page to share)
        except KeyboardInterrupt:  # (the report is made in memory and written at the end)
            was = "as it was" if out.exists() else "not created"
            errors.print(f"stopped by Ctrl-C: no report written ({out} is {was})", highlight=False)
            raise typer.Exit(130) from None
        except OSError as exc:
            if _STATE["debug"] or not exc.strerror:
                raise
            said = _os_reason(exc) if exc.filename in (out, str(out)) else _error_words(exc)
            raise OSError(f"cannot write the report into {str(out)!r}: {said}") from None
    for warning in caught:  # the audit could not run: said on stderr; other warnings as usual
        if issubclass(warning.category, LargeStudyWarning):
            continue
        if "report without the calibration section" in str(warning.message):
            errors.print(str(warning.message), highlight=False)
        else:
            warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)
    console.print(f"wrote {path}")


@app.command()
@friendly
def bench(
    peers: Annotated[
        bool, typer.Option("--peers", help="Run every installed peer (BoTorch, Optuna) next to warmbo.")
    ] = False,
    peer: Annotated[
        list[str] | None, typer.Option("--peer", help="Run this peer (repeatable), e.g. botorch-logei.")
    ] = None,
    section: Annotated[
        list[str] | None, typer.Option("--section", help="Run only this section (repeatable).")
    ] = None,
    quick: Annotated[bool, typer.Option("--quick", help="Smaller sizes (a few minutes).")] = False,
    tiny: Annotated[bool, typer.Option("--tiny", help="Smallest sizes (seconds; a smoke test).")] = False,
    threads: Annotated[int, typer.Option("--threads", help="BLAS and torch threads.", min=1)] = 1,
    runs: Annotated[
        int | None, typer.Option("--runs", help="Quality runs (seeds) instead of the preset's.", min=2)
    ] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Results folder.")] = Path("bench/results"),
    readme: Annotated[Path, typer.Option("--readme", help="Markdown summary to regenerate.")] = Path(
        "bench/README.md"
    ),
) -> None:
    """Benchmark suite: ask overhead and simple regret, next to BoTorch and Optuna (bench/README.md)."""
    from .benchmarks import DEFAULT_PEERS, run_suite

    if quick and tiny:
        raise ValueError("give at most one of --quick and --tiny")
    preset = "tiny" if tiny else "quick" if quick else "full"
    names = list(DEFAULT_PEERS) if peers else list(peer or [])
    written = run_suite(
        out, readme, section or None, preset=preset, peers=names, threads=threads, log=console.log, runs=runs
    )
    table = Table(title="Targets of issue 8")
    for column in ("target", "measured", "met"):
        table.add_column(column)
    for name, path in written.items():
        if name == "readme":
            continue
        for t in json.loads(path.read_text())["targets"]:
            met = {True: "yes", False: "no", None: "not measured"}[t["met"]]
            table.add_row(t["target"], t["measured"] or "-", met)
    console.print(table)


def _reproduce_texts() -> tuple[str, str, str]:
    """The experiment names, the --part help and the files written, from the registry (so they stay
    true when a part or an experiment is added)."""
    from .experiments.registry import REPRODUCTIONS

    entries = list(REPRODUCTIONS.values())
    names = ", ".join(e.name for e in entries[:-1]) + f" or {entries[-1].name}"
    with_parts = [e for e in entries if e.parts]
    parts = (
        " and ".join(e.name for e in with_parts)
        + ", repeatable. "
        + "; ".join(f"{e.name}: {', '.join(e.parts)}" for e in with_parts)
        + " (comma-separated too). Default: all; a part named here fails when its data or package is "
        "missing instead of being skipped."
    )
    no_html = [e.name for e in entries if not e.report_html]
    files = "a summary table, results.json, PNG plots and report.html"
    if no_html:
        files += f" ({' and '.join(no_html)}: no report.html)"
    return names, parts, files


_REPRODUCE_NAMES, _REPRODUCE_PARTS, _REPRODUCE_FILES = _reproduce_texts()


def _check_out_folder(out: Path, what: str) -> None:
    """Refuse, before any run, an --out folder that cannot be made or written: a file, a path under
    a file, or a folder without write permission (the whole run was made, then mkdir or the first
    write failed: '[Errno 20] Not a directory', and the results were lost)."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file: give a folder for {what}")
    existing = out.absolute()
    while not existing.exists():  # the folder, or the nearest ancestor that exists (mkdir makes the rest)
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"--out {str(out)!r} is under {str(existing)!r}, a file: give a folder for {what}")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"--out {str(out)!r}: no permission to write in {str(existing)!r}")


def _check_reproduce_out(out: Path, force: bool) -> None:
    """Refuse, before any run, an --out that cannot take the results: a file (mkdir failed with
    "[Errno 17] File exists" after the whole run), or a folder holding an earlier run's results.json
    without --force (it was overwritten without a word, and a run of other --parts replaced it)."""
    _check_out_folder(out, "the results")
    earlier = out / "results.json"
    if earlier.exists() and not force:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(earlier.stat().st_mtime))
        raise ValueError(
            f"--out {str(out)!r} holds the results of an earlier run (results.json of {when}): "
            "give another --out, or --force to replace them"
        )


def _earlier_figures(out: Path) -> dict[Path, int]:
    """The figures of an earlier run in ``out`` with their modification times: the PNG files its
    report.html shows (each embedded there byte for byte, as base64), so that a file of the user's
    in the folder is never taken for one. Those a new run does not write again are of parts not rerun."""
    import base64

    report = out / "report.html"
    if not (out / "results.json").is_file() or not report.is_file():
        return {}
    shown = report.read_text(encoding="utf-8", errors="replace")
    return {
        path: path.stat().st_mtime_ns
        for path in sorted(out.glob("*.png"))
        if base64.b64encode(path.read_bytes()).decode("ascii") in shown
    }


def _remove_stale_figures(earlier: dict[Path, int]) -> list[str]:
    """Remove the earlier run's figures that this run did not write again (``--force`` with other
    parts: they were left beside the new results.json and report.html, which do not show them);
    returns their names."""
    removed = []
    for path, mtime in earlier.items():
        try:
            if path.stat().st_mtime_ns == mtime:
                path.unlink()
                removed.append(path.name)
        except FileNotFoundError:
            continue
    return removed


@app.command(
    help=f"Reproduce a paper's experiments: {_REPRODUCE_FILES}, and tables.md (the tables of the "
    "documentation page, where it has generated ones)."
)
@friendly
def reproduce(
    experiment: Annotated[str, typer.Argument(help=f"Which paper's experiments: {_REPRODUCE_NAMES}.")],
    runs: Annotated[
        int | None,
        typer.Option("--runs", help="Runs of every experiment (default: the paper's numbers).", min=1),
    ] = None,
    workers: Annotated[int, typer.Option("--workers", help="Processes running the runs.", min=1)] = 1,
    quick: Annotated[
        bool,
        typer.Option("--quick", help="A few small runs to check the pipeline (--runs still sets how many)."),
    ] = False,
    seed: Annotated[int, typer.Option("--seed", help="Seed of every random draw.", min=0)] = 0,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Output folder (default: warmbo-reproduce/EXPERIMENT); one holding an earlier run's "
            "results needs --force.",
        ),
    ] = None,
    part: Annotated[
        list[str] | None,
        typer.Option(
            "--part",
            "--parts",
            help=_REPRODUCE_PARTS,
        ),
    ] = None,
    method: Annotated[
        list[str] | None,
        typer.Option("--method", help="envelope only, repeatable: methods to run (default: all)."),
    ] = None,
    acquisition: Annotated[
        list[str] | None,
        typer.Option(
            "--acquisition",
            help="envelope only, repeatable: EI and/or GP-UCB for the tuning parts (default both).",
        ),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir",
            help="envelope and multitask: shared data folder (default $WARMBO_DATA or ../shared/data).",
        ),
    ] = None,
    update_docs: Annotated[
        Path | None,
        typer.Option(
            "--update-docs",
            help="Write the run's tables into this documentation page's generated blocks, stamped with "
            "the command and the git revision (docs/reproductions/NAME.md).",
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace the results of an earlier run in --out.")
    ] = False,
) -> None:
    """Reproduce a paper's experiments (help text: :func:`_reproduce_texts`, from the registry)."""
    from .experiments.registry import REPRODUCTIONS, reproduction

    entry = reproduction(experiment)
    given = {"parts": part, "methods": method, "acquisitions": acquisition, "data_dir": data_dir}
    for option, value in given.items():
        if value and option not in entry.options:
            takers = [name for name, r in REPRODUCTIONS.items() if option in r.options]
            flag = {"parts": "--part", "methods": "--method", "acquisitions": "--acquisition"}.get(
                option, "--data-dir"
            )
            raise ValueError(
                f"{flag} is not an option of 'reproduce {experiment}': options of that kind apply to "
                f"'reproduce {' / '.join(takers)}' only"
            )
    out = out or Path("warmbo-reproduce") / experiment
    _check_reproduce_out(out, force)
    if update_docs is not None and not update_docs.is_file():  # (before the run, not after it)
        missing = "is a folder" if update_docs.is_dir() else "does not exist"
        raise ValueError(f"--update-docs {str(update_docs)!r} {missing}: give the Markdown page to update")
    earlier = _earlier_figures(out)  # (with --force: the run replaces the results of an earlier one)
    options = {k: v for k, v in given.items() if k in entry.options}
    received: list[int] = []

    def stop(signum, _frame) -> None:
        # SIGTERM (and SIGHUP) end the run as Ctrl-C does: before, warmbo died at once and the
        # --workers processes it had spawned were left behind, orphaned
        received.append(signum)
        raise KeyboardInterrupt

    previous = {}
    if threading.current_thread() is threading.main_thread():  # signals reach only the main thread
        previous = {sig: signal.signal(sig, stop) for sig in _stopping_signals() if sig != signal.SIGINT}
    try:
        with progress_display(console) as progress:
            result = entry.run(
                out, runs=runs, workers=workers, quick=quick, seed=seed, progress=progress, **options
            )
    except KeyboardInterrupt:  # it ended with status 130 and no word, the finished parts lost
        kept = "left as it was" if (out / "results.json").exists() else "not written"
        errors.print(
            f"interrupted: the runs made so far are lost ({out} is {kept}); a reproduction writes its "
            "results when every run has finished. Rerun the command, with fewer --runs or --part to "
            "shorten it",
            highlight=False,
        )
        raise typer.Exit(128 + received[0] if received else 130) from None
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    for item in entry.summary(result, out):
        if isinstance(item, Table):  # at its natural width (piped, rich cut the cells to "0.0…")
            _print_table(item)
        else:
            console.print(item)
    stale = _remove_stale_figures(earlier)
    if stale:
        console.print(f"removed the earlier run's figures of parts not rerun: {', '.join(stale)}")
    tables = entry.doc_tables(result)
    if update_docs is not None and not tables:
        raise ValueError(f"'reproduce {experiment}' has no generated documentation tables yet")
    if tables:
        from .experiments.doc_tables import git_revision, update_page, write_tables

        flags = (
            [f"--runs {runs}"] * (runs is not None) + [f"--seed {seed}"] * (seed != 0) + ["--quick"] * quick
        )
        flags += [f"--part {p}" for p in part or []]
        # every option that changes which runs are made, so the stamp reruns the same tables
        flags += [f"--method '{m}'" if " " in m else f"--method {m}" for m in method or []]
        flags += [f"--acquisition {a}" for a in acquisition or []]
        command = " ".join([f"warmbo reproduce {experiment}", *flags])
        revision = git_revision()
        console.print(f"tables: {write_tables(out, tables, command, revision)}")
        if update_docs is not None:
            names = update_page(update_docs, tables, command, revision, partial=bool(part))
            console.print(f"updated {len(names)} tables in {update_docs} (git {revision})")


# Optuna's command line says `optuna ask` and `optuna tell`: the same words reach `suggest` and
# `observe` (hidden from the command list; a user test typed `warmbo tell` and got "No such command"
# with no hint, while a typo such as `sugest` got "Did you mean 'suggest'?")
app.command("ask", hidden=True, help="Another name of `suggest` (Optuna's CLI says ask).")(suggest)
app.command("tell", hidden=True, help="Another name of `observe` (Optuna's CLI says tell).")(observe)


# a user test typed `warmbo history` (the Python API's opt.history) and got "No such command"
@app.command("history", hidden=True)
def history(study: StudyArgument = None, storage: StorageOption = None) -> None:
    """Every trial of a study: `warmbo status --all` (`warmbo export` writes them as a CSV file)."""
    status(study=study, storage=storage, last=None, all_rows=True)


if __name__ == "__main__":
    app()
