"""User objectives for the command line: ``module:function`` and command templates.

- :func:`load_callable` imports ``package.module:function`` (the current folder is importable).
- :class:`CommandObjective` runs a command template such as ``"python train.py --lr {lr}"``:
  the template is split into an argument list with :func:`shlex.split` first and ``{name}`` is then
  replaced inside each argument by the parameter's value, so a value can never add arguments or
  reach a shell (``"; touch pwned"`` stays one literal argument). The process runs without a shell;
  the last number printed on its standard output is the objective value. A non-zero exit status, a
  timeout or an output without a number raises :class:`ObjectiveError` (the trial is marked failed).
"""

from __future__ import annotations

import importlib
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ObjectiveError", "CommandObjective", "load_callable", "last_number", "last_numbers"]

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)\b", re.IGNORECASE)


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
        raise ValueError(f"cannot import module {module_name!r} for objective {spec!r}: {exc}") from None
    function = getattr(module, function_name, None)
    if not callable(function):
        raise ValueError(f"module {module_name!r} has no function {function_name!r}")
    return function


def last_number(text: str) -> float | None:
    """The last number in ``text`` (integers, decimals, exponents, inf, nan), or None."""
    matches = _NUMBER.findall(text)
    return float(matches[-1]) if matches else None


def last_numbers(text: str, n: int) -> list[float] | None:
    """The last n numbers in ``text`` (a multi-task command prints one per task), or None if fewer."""
    matches = _NUMBER.findall(text)
    return [float(m) for m in matches[-n:]] if len(matches) >= n else None


@dataclass(frozen=True)
class CommandObjective:
    """Objective that runs a command template without a shell and reads the last number printed.

    Parameters
    ----------
    template : str
        Command line with ``{name}`` placeholders for the parameters.
    names : tuple of str
        Parameter names of the space; every placeholder must be one of them.
    timeout : float, optional
        Seconds before the command is killed and the trial failed.
    n_values : int
        Numbers to read (the last ``n_values`` printed) for a multi-task study, one per task.
    """

    template: str
    names: tuple[str, ...]
    timeout: float | None = None
    n_values: int = 1

    def __post_init__(self):
        try:
            argv = shlex.split(self.template)
        except ValueError as exc:
            raise ValueError(f"cannot parse --cmd {self.template!r}: {exc}") from None
        if not argv:
            raise ValueError("--cmd is empty")
        unknown = sorted({m for arg in argv for m in _PLACEHOLDER.findall(arg)} - set(self.names))
        if unknown:
            raise ValueError(f"--cmd uses unknown parameter(s) {unknown}; the space has {list(self.names)}")

    def argv(self, params: dict) -> list[str]:
        """The argument list for one evaluation (placeholders replaced inside each argument)."""
        return [
            _PLACEHOLDER.sub(lambda m: str(params[m.group(1)]), arg) for arg in shlex.split(self.template)
        ]

    def __call__(self, params: dict):
        argv = self.argv(params)
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=self.timeout, check=False)
        except FileNotFoundError:
            raise ObjectiveError(f"command not found: {argv[0]!r}") from None
        except subprocess.TimeoutExpired:
            raise ObjectiveError(f"command timed out after {self.timeout} s") from None
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
            raise ObjectiveError(f"command exited with status {done.returncode}: {tail[0][:200]}")
        if self.n_values > 1:
            values = last_numbers(done.stdout, self.n_values)
            if values is None:
                raise ObjectiveError(f"command printed fewer than {self.n_values} numbers (one per task)")
            return values
        value = last_number(done.stdout)
        if value is None:
            raise ObjectiveError("command printed no number on standard output")
        return value
