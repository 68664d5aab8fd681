"""The wheel a user installs holds the whole package: every module, the py.typed marker that lets
type checkers read warmbo's hints, and the `warmbo` command. The tests run from an editable install,
so a subpackage missing from the wheel (a folder without ``__init__.py``) would pass them all."""

from __future__ import annotations

import inspect
import shutil
import subprocess
import sys
import typing
import zipfile
from collections.abc import Sequence
from pathlib import Path

from numpy.typing import ArrayLike

import warmbo as wb
import warmbo.problems as problems
from warmbo.space import Parameter

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_holds_every_module_the_typed_marker_and_the_command(tmp_path):
    shutil.copytree(
        ROOT / "src", tmp_path / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", "dist", "."],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("warmbo-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {p.relative_to(ROOT / "src").as_posix() for p in (ROOT / "src" / "warmbo").rglob("*.py")}
    assert len(modules) > 50 and modules <= names, sorted(modules - names)
    assert "warmbo/py.typed" in names
    (entry_points,) = (n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "warmbo = warmbo_command:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "warmbo_command.py" in names  # (the entry point lives outside the package: see its docstring)


def test_ctrl_c_while_the_command_loads_says_so_in_one_line():
    # a chemist user test: Ctrl-C in the first half second (numpy, scipy and warmbo loading) printed
    # Python's traceback of whatever module was loading. The Ctrl-C is raised here by an import hook
    # at warmbo.cli's import, where it lands in practice, so that the test does not race a timer
    hook = (
        "import sys\n"
        "class Stop:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'warmbo.cli':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Stop())\n"
        "sys.argv = ['warmbo', 'status', 'lab.db']\n"
        "import warmbo_command\n"
        "warmbo_command.main()\n"
    )
    done = subprocess.run([sys.executable, "-c", hook], capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, done.stderr
    assert done.stderr == "stopped by Ctrl-C while starting: nothing was done\n" and done.stdout == ""
    code = "import sys, warmbo_command; sys.argv = ['warmbo', '--help']; warmbo_command.main()"
    plain = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0 and "observe" in plain.stdout, plain.stderr


def test_the_hints_a_type_checker_reads_match_what_the_readme_does():
    # with py.typed, mypy reads the hints: ask() typed "Suggestion | list[Suggestion]" made
    # `opt.ask()["C"]` an error in every user's code, and Space's "tuple[Parameter, ...]" made the
    # README's `wb.Space([wb.Float(...), ...])` one
    shapes = [
        (str(inspect.signature(o).parameters["n"].annotation), inspect.signature(o).return_annotation)
        for o in typing.get_overloads(wb.Optimizer.ask)
    ]
    assert shapes == [("None", "Suggestion"), ("int", "list[Suggestion]")]
    assert typing.get_type_hints(wb.Space)["params"] == Sequence[Parameter]
    assert typing.get_type_hints(wb.Categorical)["choices"] == Sequence[typing.Any]  # docs pass lists
    assert typing.get_type_hints(problems.simple_regret)["values"] == ArrayLike  # the docs pass a list
    space = wb.Space([wb.Float("x", 0.0, 1.0)])
    assert isinstance(space.params, tuple)  # stored as a tuple whatever sequence was given
