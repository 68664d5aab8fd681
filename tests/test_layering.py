"""The package's layering: models and transfer below the optimizer, problems beside it, no cycles.

Read from the source with ``ast`` (module-level and function-level imports alike), so an import
hidden inside a function counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "warmbo"


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The warmbo modules ``path`` imports (absolute names)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("warmbo"):
                out.add(target)
                out.update(f"{target}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names if alias.name.startswith("warmbo"))
    return out


GRAPH = {_module_name(p): _imports(p) for p in SRC.rglob("*.py")}


def _importers_of(prefix: str, within: str) -> list[str]:
    return sorted(
        m
        for m, targets in GRAPH.items()
        if m.startswith(within) and any(t == prefix or t.startswith(prefix + ".") for t in targets)
    )


def test_models_and_transfer_do_not_import_the_optimizers():
    for layer in ("warmbo.models", "warmbo.transfer", "warmbo.kernels"):
        for loop in ("warmbo.optimizer", "warmbo.multitask_optimizer", "warmbo.cli"):
            assert _importers_of(loop, layer) == [], (layer, loop)


def test_the_optimizers_do_not_import_problems():
    for module in ("warmbo.optimizer", "warmbo.multitask_optimizer", "warmbo.suggest", "warmbo.report"):
        assert _importers_of("warmbo.problems", module) == [], module


def test_the_graph_is_read():
    # guards against a parser that finds nothing: the optimizer imports the model and the search
    assert "warmbo.suggest" in GRAPH["warmbo.optimizer"]
    assert "warmbo.models" in GRAPH["warmbo.optimizer"]
    assert "warmbo.models.gp" in GRAPH["warmbo.models"]


def test_no_import_cycles():
    modules = set(GRAPH)

    def owner(target: str) -> str | None:
        while target and target not in modules:
            target = target.rsplit(".", 1)[0] if "." in target else ""
        return target or None

    edges = {m: {owner(t) for t in targets} - {None, m} for m, targets in GRAPH.items()}
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for nxt in sorted(edges[module]):
            assert state.get(nxt) != 1, "import cycle: " + " -> ".join([*path, module, nxt])
            if nxt not in state:
                visit(nxt, [*path, module])
        state[module] = 2

    for module in sorted(modules):
        if module not in state:
            visit(module, [])
    assert len(state) == len(modules) > 50


def test_long_modules_say_why():
    """No module over ~600 lines without a reason in its docstring (issue 13's acceptance)."""
    unexplained = []
    for path in SRC.rglob("*.py"):
        text = path.read_text()
        if len(text.splitlines()) > 650 and "Why this file is long" not in (
            ast.get_docstring(ast.parse(text)) or ""
        ):
            unexplained.append(f"{path.relative_to(SRC)} ({len(text.splitlines())} lines)")
    assert not unexplained, f"long modules without a stated reason: {unexplained}"


def test_import_warmbo_loads_no_scipy():
    """`import warmbo` imports scipy's submodules where they are used, not at load time (issue 15:
    scipy.stats, .optimize, .special and .linalg made `import warmbo` cost 1.0 s of CPU, numpy
    alone 0.11 s). Checked in a fresh interpreter, so other tests' imports do not count."""
    import subprocess
    import sys

    code = "import sys, warmbo; print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
