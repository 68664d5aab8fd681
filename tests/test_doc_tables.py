"""Documentation tables are generated blocks stamped with the command and git revision (issue 17)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from warmbo.experiments.doc_tables import BLOCK, git_revision, render, update_page, write_tables

DOCS = Path(__file__).resolve().parents[1] / "docs" / "reproductions"
#: reproduction pages whose tables are all generated (the others still quote hand-copied tables)
GENERATED = ("metakel",)


def test_update_page_replaces_blocks_and_stamps_the_revision(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "intro\n\n" + render("a", ["| x |", "|---|", "| 1 |"], "old cmd", "0000000") + "\n\ntext\n\n"
        + render("b", ["| y |", "|---|", "| 2 |"], "old cmd", "0000000") + "\nend\n"
    )  # fmt: skip
    names = update_page(
        page, {"a": ["| x |", "|---|", "| 10 |"], "b": ["| y |", "|---|", "| 20 |"]}, "cmd", "abc1234"
    )
    assert names == ["a", "b"]
    text = page.read_text()
    assert "| 10 |" in text and "| 20 |" in text and "| 1 |" not in text
    assert text.startswith("intro\n\n") and "\n\ntext\n\n" in text and text.endswith("\nend\n")
    assert [m.group("rev") for m in BLOCK.finditer(text)] == ["abc1234", "abc1234"]
    assert all(m.group("command") == "cmd" for m in BLOCK.finditer(text))


def test_a_page_and_a_run_that_disagree_are_an_error_and_the_page_is_kept(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(render("a", ["| x |"], "cmd", "0000000") + "\n")
    before = page.read_text()
    with pytest.raises(ValueError, match=r"no block for b .*no table for the block\(s\) a"):
        update_page(page, {"b": ["| y |"]}, "cmd", "abc1234")
    assert page.read_text() == before
    with pytest.raises(ValueError, match="table name"):
        render("bad name", [], "cmd", "abc")


def test_tables_file_and_revision(tmp_path):
    path = write_tables(tmp_path, {"a": ["| x |"]}, "warmbo reproduce x", "abc1234")
    assert [m.group("name") for m in BLOCK.finditer(path.read_text())] == ["a"]
    assert re.fullmatch(r"[0-9a-f]{7,}(\+dirty)?|unknown", git_revision())
    assert git_revision(tmp_path) == "unknown"  # not a git checkout


@pytest.mark.parametrize("name", GENERATED)
def test_every_table_of_a_generated_page_is_a_stamped_block(name):
    text = (DOCS / f"{name}.md").read_text()
    blocks = list(BLOCK.finditer(text))
    assert blocks, f"{name}.md has no generated tables"
    for m in blocks:
        assert m.group("command").startswith(f"warmbo reproduce {name}"), m.group("command")
        assert "--quick" not in m.group("command")
        # a clean revision: the numbers come from committed code
        assert re.fullmatch(r"[0-9a-f]{7,}", m.group("rev")), (
            f"{name}.md table {m.group('name')}: {m.group('rev')}"
        )
    outside = BLOCK.sub("", text)
    hand = [line for line in outside.splitlines() if line.startswith("|---")]
    # the closing summary table of claims and verdicts is prose, not measurements
    assert len(hand) <= 1, f"{name}.md has hand-typed tables outside generated blocks"


def test_the_metakel_run_makes_exactly_the_pages_tables(tmp_path):
    from warmbo.experiments.metakel import run_metakel
    from warmbo.experiments.registry import reproduction

    result = run_metakel(tmp_path, quick=True)
    tables = reproduction("metakel").doc_tables(result)
    page = (DOCS / "metakel.md").read_text()
    assert set(tables) == {m.group("name") for m in BLOCK.finditer(page)}
    copy = tmp_path / "metakel.md"
    copy.write_text(page)
    update_page(copy, tables, "warmbo reproduce metakel --quick", "abc1234")
    assert copy.read_text().count("at git abc1234") == len(tables)


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_every_generated_block_of_every_reproduction_page_is_stamped(page):
    for m in BLOCK.finditer(page.read_text()):
        name = page.stem
        assert m.group("command").startswith(f"warmbo reproduce {name}"), m.group("command")
        assert re.fullmatch(r"[0-9a-f]{7,}", m.group("rev")), (
            f"{page.name} table {m.group('name')}: {m.group('rev')}"
        )
        assert m.group("body").count("\n|") >= 2, f"{page.name} table {m.group('name')} is empty"


def test_a_partial_run_keeps_the_blocks_it_did_not_make(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        render("a", ["| x |", "|---|", "| 1 |"], "c", "0000000")
        + "\n"
        + render("b", ["| y |"], "c", "0000000")
    )
    assert update_page(page, {"a": ["| x |", "|---|", "| 2 |"]}, "c --part a", "abc1234", partial=True) == [
        "a"
    ]
    blocks = {m.group("name"): m for m in BLOCK.finditer(page.read_text())}
    assert "| 2 |" in blocks["a"].group("body") and blocks["a"].group("rev") == "abc1234"
    assert blocks["b"].group("rev") == "0000000"  # untouched
    with pytest.raises(ValueError, match="no table for the block"):
        update_page(page, {"a": ["| x |"]}, "c", "abc1234")  # a full run must make every table
