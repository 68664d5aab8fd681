"""Every Python example in README.md, docs/ and examples/ runs as written."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def markdown_blocks():
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for i, block in enumerate(BLOCK.findall(path.read_text())):
            yield pytest.param(block, id=f"{path.relative_to(ROOT)}#{i}")


def test_there_are_examples():
    assert len(list(markdown_blocks())) >= 5


@pytest.mark.parametrize("code", list(markdown_blocks()))
def test_markdown_example_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "<example>", "exec"), {"__name__": "__example__"})


@pytest.mark.parametrize("script", sorted((ROOT / "examples").glob("*.py")), ids=lambda p: p.name)
def test_example_script_runs(script, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(script), run_name="__main__")
