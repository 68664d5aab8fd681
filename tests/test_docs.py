"""Every Python example in README.md, docs/ and examples/ runs as written."""

from __future__ import annotations

import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)
SHELL = re.compile(r"```bash\n(.*?)```", re.S)
SETUP_ONLY = {"README.md"}  # its bash block is the set-up itself (make demo / make test)
# pages whose examples start worker processes (Dask, Ray): they run as script files, as a user runs
# them, since a worker process imports the script again (hence their `if __name__ == "__main__":`)
AS_SCRIPTS = {"scale.md"}


def markdown_blocks(scripts: bool = False):
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        if (path.name in AS_SCRIPTS) != scripts:
            continue
        for i, block in enumerate(BLOCK.findall(path.read_text())):
            yield pytest.param(block, id=f"{path.relative_to(ROOT)}#{i}")


def test_there_are_examples():
    assert len(list(markdown_blocks())) >= 5


@pytest.mark.parametrize("code", list(markdown_blocks()))
def test_markdown_example_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "<example>", "exec"), {"__name__": "__example__"})


def test_there_are_script_examples():
    assert len(list(markdown_blocks(scripts=True))) >= 3


@pytest.mark.parametrize("code", list(markdown_blocks(scripts=True)))
def test_markdown_script_runs(code, tmp_path, request):
    """A block of an AS_SCRIPTS page, saved as example.py and run with this Python as __main__
    (a block that reads WARMBO_POSTGRES_URL gets a study on the session's PostgreSQL server)."""
    (tmp_path / "example.py").write_text(code)
    env = dict(os.environ)
    if "WARMBO_POSTGRES_URL" in code:
        env["WARMBO_POSTGRES_URL"] = request.getfixturevalue("postgres_url")
    done = subprocess.run(
        [sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.mark.parametrize("script", sorted((ROOT / "examples").glob("*.py")), ids=lambda p: p.name)
def test_example_script_runs(script, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(script), run_name="__main__")


def shell_pages():
    pages = sorted((ROOT / "docs").glob("*.md"))
    return [
        pytest.param(p, id=p.name) for p in pages if p.name not in SETUP_ONLY and SHELL.search(p.read_text())
    ]


def test_there_are_shell_examples():
    assert len(shell_pages()) >= 1


@pytest.mark.parametrize("page", shell_pages())
def test_shell_examples_run_in_order(page, tmp_path):
    """A page's bash blocks run one after the other in a scratch folder, failing on any error."""
    script = "set -euo pipefail\n" + "\n".join(SHELL.findall(page.read_text()))
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


# a bullet that opens with a module, "- `warmbo.x.y`: ...": the names in backticks that follow on the
# bullet, up to the next module named, are that module's (docs/multitask.md listed the regrets of
# warmbo.problems.pareto under warmbo.pareto)
MODULE_BULLET = re.compile(r"^- (`warmbo(?:\.\w+)*`:.*?)(?=^- |^\n|\Z)", re.S | re.M)
NAME = re.compile(r"`((?:warmbo(?:\.\w+)+)|[A-Za-z_]\w*)`")


def test_names_listed_under_a_module_are_in_it():
    import importlib

    checked = 0
    for path in sorted((ROOT / "docs").glob("*.md")):
        for bullet in MODULE_BULLET.findall(path.read_text()):
            module = None
            for name in NAME.findall(bullet):
                if name.startswith("warmbo."):
                    try:
                        module = importlib.import_module(name)
                    except ImportError:
                        module = None  # warmbo.kernels.tabulated.Tabulated: a class path, not a module
                    continue
                if module is not None:
                    assert hasattr(module, name), f"{path.name}: {module.__name__} has no {name!r}"
                    checked += 1
    assert checked >= 5  # the multi-task page: warmbo.pareto (2 names), warmbo.problems.pareto (3)
