"""User objectives for the command line: ``module:function`` and command templates.

- :func:`load_callable` imports ``package.module:function`` (the current folder is importable).
- :class:`CommandObjective` runs a command template such as ``"python train.py --lr {lr}"``:
  the template is split into an argument list with :func:`shlex.split` first and ``{name}`` is then
  replaced inside each argument by the parameter's value, so a value can never add arguments or
  reach a shell (``"; touch pwned"`` stays one literal argument). Any parameter name works
  (``{learning-rate}``, ``{opt.lr}``, ``'{learning rate}'`` quoted); a ``{...}`` that names no
  parameter is refused, as is a brace that is part of no placeholder (``{lr`` or ``x}``: passed on
  as typed, the command would run with a value missing), and ``{{`` and ``}}`` are literal braces.
  The process runs without a shell, in its own process group, so a timeout kills everything it
  started; a watchdog process (:mod:`warmbo._lifeline`) stops the group if this process dies by
  SIGKILL (the out-of-memory killer) while it runs.
- :func:`parse_values` reads the value(s) from the command's standard output (docs/cli.md): the
  last non-empty line is one number (n numbers separated by spaces or commas for n tasks) or a JSON
  object (``{"value": 0.25}``, or by task name ``{"acc": 0.9, "lat": 3.1}``); with a value regex,
  the last match's capture group(s) give the value(s). Anything else, a non-zero exit status or a
  timeout raises :class:`ObjectiveError` (the trial is marked failed, with the reason).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from ._lifeline import release as _release_group
from ._lifeline import watch as _watch_group
from ._validation import check_seconds

__all__ = ["ObjectiveError", "CommandObjective", "load_callable", "parse_values", "terminate_running"]

# ``{{`` and ``}}`` are literal braces; any other ``{...}`` without braces inside is a placeholder
_TEMPLATE = re.compile(r"\{\{|\}\}|\{([^{}]+)\}")
_SEPARATORS = re.compile(r"[\s,]+")
_KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL of a timed-out command's process group


class ObjectiveError(RuntimeError):
    """An evaluation of the objective failed (the trial is marked failed, the run continues)."""


def load_callable(spec: str):
    """Import ``module:function`` and return the function."""
    if not isinstance(spec, str) or spec.count(":") != 1:
        raise ValueError(f"objective must look like 'module:function', got {spec!r}")
    module_name, function_name = spec.split(":")
    if not module_name or not function_name:
        raise ValueError(f"objective must look like 'module:function', got {spec!r}")
    cwd = str(Path.cwd())
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        # (a first-time user test: objective.py:loss, a path, another folder: the error alone said none)
        stem = Path(module_name).name.removesuffix(".py")
        hint = ""
        if module_name.endswith(".py") or os.sep in module_name:
            hint = f"; give the module's name, not its file: {stem}:{function_name}, run in its folder"
        elif not Path(f"{module_name.replace('.', os.sep)}.py").exists():
            hint = f"; warmbo imports it from the folder it runs in ({cwd}) or your PYTHONPATH"
        raise ValueError(
            f"cannot import module {module_name!r} for objective {spec!r}: {exc}{hint}"
        ) from None
    function = getattr(module, function_name, None)
    if not callable(function):
        import difflib

        names = [n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n, None))]
        close = difflib.get_close_matches(function_name, names, n=1) or [
            n for n in names if n.lower() == function_name.lower()
        ]
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"module {module_name!r} has no function {function_name!r}{hint}")
    return function


def _numeral(text: str) -> float | None:
    """``text`` as a number when it is a plain decimal numeral (or nan/inf, refused as not finite
    later), else None: ``float`` also reads ``1_5`` as 15 and Arabic-Indic digits (a user test: a
    command printing ``1_5`` stored 15), where ``--value`` and a CSV cell refuse them."""
    from .data import _NOT_FINITE_WORDS, NUMERAL

    if NUMERAL.fullmatch(text) or text.lower().lstrip("+-") in _NOT_FINITE_WORDS:
        return float(text)
    return None


def _number(text: str, what: str) -> float:
    value = _numeral(text)
    if value is None:
        raise ObjectiveError(f"{what} {text[:80]!r} is not a number")
    return value


#: warmbo's own words for output it cannot read, with the part that quotes the output (which differs
#: at every trial) replaced: what :func:`output_refusal_kind` compares
_OUTPUT_REFUSALS = (
    (
        re.compile(r"(the last line of the output must be .*?), got .*(; print the value last.*)", re.S),
        r"\1\2",
    ),
    (re.compile(r"the last line .* is not valid JSON: .*", re.S), "the last line is not valid JSON"),
    (re.compile(r"the last line .* must be a JSON object", re.S), "the last line must be a JSON object"),
    (re.compile(r"(the JSON value of .*) is .*, not a number", re.S), r"\1 is not a number"),
    (re.compile(r"(--value-regex captured) .* is not a number", re.S), r"\1 no number"),
)


def output_refusal_kind(message: str) -> str:
    """``message`` with the output a refusal of :func:`parse_values` quotes left out ("got 'loss
    0.0356'" differs at every trial, so a command printing ``loss 0.0356`` spent its whole budget on
    failures instead of stopping after three, a user test); any other message unchanged."""
    for pattern, kind in _OUTPUT_REFUSALS:
        if pattern.fullmatch(message):
            return pattern.sub(kind, message)
    return message


def parse_values(stdout: str, tasks: tuple[str, ...] = (), regex: re.Pattern | None = None):
    """The objective value(s) printed by a command (the output contract of docs/cli.md).

    Parameters
    ----------
    stdout : str
        The command's standard output.
    tasks : tuple of str
        Task names of a multi-task study (a list of ``len(tasks)`` values is returned); empty for a
        single objective (one float is returned).
    regex : compiled pattern, optional
        Searched over the whole output; the last match's first capture group (groups 1..n for n
        tasks) gives the value(s).

    Raises
    ------
    ObjectiveError
        When the output does not follow the contract; the message says what was found.
    """
    n = max(len(tasks), 1)
    if regex is not None:
        matches = list(regex.finditer(stdout))
        if not matches:
            raise ObjectiveError(f"--value-regex {shlex.quote(regex.pattern)} matched nothing in the output")
        groups = matches[-1].groups()[:n]
        if any(g is None for g in groups):
            raise ObjectiveError(
                f"--value-regex {shlex.quote(regex.pattern)}: a capture group took no part in the last match"
            )
        values = [_number(g.strip(), "--value-regex captured") for g in groups]
        return values if tasks else values[0]
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    if not lines:
        raise ObjectiveError(
            "the command printed nothing on standard output; its last line must be the value"
        )
    last = lines[-1]
    if last.startswith("{"):
        try:
            record = json.loads(last)
        except json.JSONDecodeError as exc:
            raise ObjectiveError(f"the last line {last[:80]!r} is not valid JSON: {exc.msg}") from None
        if not isinstance(record, dict):
            raise ObjectiveError(f"the last line {last[:80]!r} must be a JSON object")
        keys = list(tasks) if tasks else ["value"]
        missing = [k for k in keys if k not in record]
        if missing:
            raise ObjectiveError(
                f"the JSON object on the last line has no key(s) {json.dumps(missing)}; it has "
                f"{json.dumps(list(record))}"
            )
        values = []
        for key in keys:
            if isinstance(record[key], bool) or not isinstance(record[key], int | float):
                shown = json.dumps(record[key])[:80]  # (as the JSON wrote it: null, true, "0.5")
                raise ObjectiveError(f"the JSON value of {json.dumps(key)} is {shown}, not a number")
            values.append(float(record[key]))
        return values if tasks else values[0]
    tokens = [t for t in _SEPARATORS.split(last) if t]
    expected = f"{n} numbers (one per task: {', '.join(tasks)})" if tasks else "a single number"
    values = []
    for token in tokens if len(tokens) == n else ():
        value = _numeral(token)
        if value is None:
            break
        values.append(value)
    if len(values) != n:
        raise ObjectiveError(
            f"the last line of the output must be {expected}, got {last[:80]!r}; "
            "print the value last, or use --value-regex"
        )
    return values if tasks else values[0]


# the commands running now (of every CommandObjective, in every thread), for terminate_running;
# reentrant: a signal handler that calls terminate_running may interrupt the thread holding it
_RUNNING: set[subprocess.Popen] = set()
_RUNNING_LOCK = threading.RLock()


def terminate_running() -> int:
    """Stop the process group of every command running now (the CLI does it on SIGTERM and Ctrl-C, so
    that evaluations in worker threads stop with the run instead of outliving it): SIGTERM at once,
    SIGKILL after a grace period from a timer thread. It never waits, so a signal handler may call
    it. Returns how many commands it signalled."""
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for process in running:
        _signal_group(process, signal.SIGTERM)
    if running:

        def finish() -> None:
            for process in running:
                if process.returncode is None:  # not reaped yet (never waits on a lock)
                    _signal_group(process, signal.SIGKILL)

        timer = threading.Timer(_KILL_GRACE, finish)
        timer.daemon = True
        timer.start()
    return len(running)


def _signal_group(process: subprocess.Popen, sig: int) -> None:
    """``sig`` to the command's process group (the command alone where there are no groups)."""
    try:
        if os.name == "posix":
            os.killpg(process.pid, sig)
        else:
            process.kill()
    except (ProcessLookupError, PermissionError, OSError):
        pass  # gone already


def _kill_group(process: subprocess.Popen) -> None:
    """SIGTERM the command's whole process group, then SIGKILL whatever is left after a grace period."""
    if os.name != "posix":  # no process groups: the direct child only
        process.kill()
        return
    for sig, grace in ((signal.SIGTERM, _KILL_GRACE), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            return  # the group is gone
        if grace is not None:
            try:
                process.wait(grace)
            except subprocess.TimeoutExpired:
                pass
    process.wait()


@dataclass(frozen=True)
class CommandObjective:
    """Objective that runs a command template without a shell and reads the value it prints.

    Parameters
    ----------
    template : str
        Command line with ``{name}`` placeholders for the parameters (``{{``/``}}``: literal braces).
    names : tuple of str
        Parameter names of the space; every placeholder must be one of them.
    timeout : float, optional
        Seconds before the command's process group is killed and the trial failed.
    tasks : tuple of str
        Task names of a multi-task study: the command prints one value per task and a call returns
        a list; empty (default) for a single objective.
    value_regex : str, optional
        Regular expression whose capture group(s) in its last match give the value(s), instead of
        the last line of the output (see :func:`parse_values`).
    conditional : tuple of str
        The space's conditional parameters (``when=``): an argument holding one of them is left out
        where it is inactive, so it must carry its option with it (``--gamma={gamma}``); a
        placeholder standing alone as an argument is refused.
    """

    template: str
    names: tuple[str, ...]
    timeout: float | None = None
    tasks: tuple[str, ...] = ()
    value_regex: str | None = None
    conditional: tuple[str, ...] = ()

    def __post_init__(self):
        try:
            argv = shlex.split(self.template)
        except ValueError as exc:
            raise ValueError(f"cannot parse --cmd {self.template!r}: {exc}") from None
        if not argv:
            raise ValueError("--cmd is empty")
        spaced = [name for name in self.names if any(c.isspace() for c in name)]
        split = [
            name
            for name in spaced
            if "{" + name + "}" in self.template and not any("{" + name + "}" in arg for arg in argv)
        ]
        if split:  # ({learning rate} unquoted: shlex.split made it two arguments, "{learning" and "rate}")
            raise ValueError(
                f"--cmd: the placeholder {{{split[0]}}} has a space in its name, so the command line "
                f"splits it in two; quote it: '{{{split[0]}}}'"
            )
        stray = [arg for arg in argv if "{" in _TEMPLATE.sub("", arg) or "}" in _TEMPLATE.sub("", arg)]
        if stray:  # (passed on as typed, a brace left over meant a value stored under the wrong settings)
            raise ValueError(
                f"--cmd: the argument {stray[0]!r} has a brace that is not part of a placeholder; write "
                "{name} for a parameter's value (quoted if the name has a space), and {{ or }} for a "
                "literal brace"
            )
        used = [m.group(1) for arg in argv for m in _TEMPLATE.finditer(arg) if m.group(1) is not None]
        unknown = sorted(set(used) - set(self.names))
        if unknown:
            listed = ", ".join("{" + name + "}" for name in unknown)
            raise ValueError(
                f"--cmd uses {listed}, which name(s) no parameter; the space has {list(self.names)} "
                "(write {{ and }} for literal braces)"
            )
        alone = [
            m.group(1)
            for arg in argv[1:]
            if (m := _TEMPLATE.fullmatch(arg)) and m.group(1) in self.conditional
        ]
        if alone:  # (left out where inactive, "--gamma {gamma}" would leave "--gamma" without its value)
            raise ValueError(
                f"--cmd: {{{alone[0]}}} is a conditional parameter (when=) and stands alone as an argument; "
                f"an argument holding it is left out where it is inactive, so write it with its option as "
                f"one argument, e.g. --{alone[0]}={{{alone[0]}}}"
            )
        if self.timeout is not None:
            object.__setattr__(self, "timeout", check_seconds(self.timeout, "--timeout"))
        if self.value_regex is not None:
            pattern = self._pattern()
            n = max(len(self.tasks), 1)
            if pattern.groups < n:
                raise ValueError(
                    f"--value-regex {shlex.quote(self.value_regex)} has {pattern.groups} capture group(s); "
                    f"it needs {n} (one per value), e.g. 'loss[:= ]+(\\S+)'"
                )

    def _pattern(self) -> re.Pattern:
        try:
            return re.compile(self.value_regex)
        except re.error as exc:
            raise ValueError(
                f"--value-regex {shlex.quote(self.value_regex)} is not a regular expression: {exc}"
            ) from None

    def argv(self, params: dict) -> list[str]:
        """The argument list for one evaluation (placeholders replaced inside each argument; an
        argument holding a parameter the point lacks, an inactive conditional one, left out)."""

        def replace(match: re.Match) -> str:
            if match.group(1) is None:
                return match.group(0)[0]  # "{{" -> "{", "}}" -> "}"
            return str(params[match.group(1)])

        def absent(arg: str) -> bool:
            return any(m.group(1) is not None and m.group(1) not in params for m in _TEMPLATE.finditer(arg))

        return [_TEMPLATE.sub(replace, arg) for arg in shlex.split(self.template) if not absent(arg)]

    def __call__(self, params: dict):
        argv = self.argv(params)
        try:
            process = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",  # bytes that are not UTF-8 (a progress bar, a binary log) are not a failure
                start_new_session=os.name == "posix",  # its own process group, killed as a whole
            )
        except FileNotFoundError:
            raise ObjectiveError(f"command not found: {argv[0]!r}") from None
        with _RUNNING_LOCK:
            _RUNNING.add(process)
        if os.name == "posix":  # stopped by the watchdog should this process die by SIGKILL
            _watch_group(process.pid)
        try:
            stdout, stderr = process.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            raise ObjectiveError(
                f"command timed out after {self.timeout} s (its process group was killed)"
            ) from None
        except BaseException:  # e.g. Ctrl-C: the command is not in the terminal's process group
            _kill_group(process)
            raise
        finally:
            with _RUNNING_LOCK:
                _RUNNING.discard(process)
            if os.name == "posix":
                _release_group(process.pid)
            for stream in (process.stdout, process.stderr):
                stream.close()
        if process.returncode != 0:
            if process.returncode < 0:  # (Python's code for a signal: -9 read as a status, a user test)
                raise ObjectiveError(_killed_by(-process.returncode, stderr))
            tail = (stderr or stdout).strip().splitlines()[-1:] or [""]
            raise ObjectiveError(f"command exited with status {process.returncode}: {tail[0][:200]}")
        regex = None if self.value_regex is None else self._pattern()
        return parse_values(stdout, self.tasks, regex)


def _killed_by(signum: int, stderr: str) -> str:
    """A command ended by signal ``signum``, in words: its name, the usual cause of SIGKILL, and its
    stderr's last line if it wrote one (stdout's is its progress, not a reason)."""
    import signal

    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    why = " (the operating system's out-of-memory killer sends it, or a kill -9)" if name == "SIGKILL" else ""
    tail = stderr.strip().splitlines()[-1:]
    return f"command was killed by {name}{why}" + (f": {tail[0][:200]}" if tail else "")
