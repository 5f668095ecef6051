"""Every package imports on its own, in a fresh process, and importing writes nothing.

Guards the import cycle between compaction and summarizers (each imports the other's
helpers) and the rule that importing palimpsest does no work: no files, no network.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest

MODULES = [
    "palimpsest",
    "palimpsest.summarizers",
    "palimpsest.summarizers.extractive",
    "palimpsest.safety.redact",
    "palimpsest.safety.threats",
    "palimpsest.compaction",
    "palimpsest.providers",
    "palimpsest.storage",
    "palimpsest.memory",
    "palimpsest.cli",
    "palimpsest.integrations",
    "palimpsest.integrations.mcp_server",
    "palimpsest.messages.history_files",
    "palimpsest.storage.history_import",
    "palimpsest.integrations.langchain",
    "palimpsest.integrations.pydantic_ai",
    "palimpsest.integrations.openai_agents",
]


@pytest.mark.parametrize("module", MODULES)
def test_module_imports_alone_and_writes_nothing(module: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"PALIMPSEST_HOME": str(home), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, "-W", "error", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert not home.exists()


SRC = Path(__file__).resolve().parents[1] / "src" / "palimpsest"


@functools.cache
def _import_statements(path: Path) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """The import statements of a source file, parsed once for every test that reads them
    (three tests walk the whole package; the nodes are only read)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return tuple(node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom))


def _imports_of(path: Path) -> list[str]:
    """Absolute dotted names a module imports (relative imports resolved)."""
    # The package a module's relative imports start from: its folder, for __init__ too.
    package = ["palimpsest", *path.relative_to(SRC).parent.parts]
    names: list[str] = []
    for node in _import_statements(path):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - (node.level - 1)] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            names.append(module)
            names.extend(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return names


def test_safety_is_below_every_other_layer() -> None:
    """safety/ may import only itself and palimpsest.errors, so nothing can cycle through it."""
    for path in (SRC / "safety").rglob("*.py"):
        for name in _imports_of(path):
            if name.startswith("palimpsest."):
                assert name.startswith(("palimpsest.safety", "palimpsest.errors")), (
                    f"{path.relative_to(SRC)} imports {name}"
                )


def test_nothing_imports_redaction_or_the_scanner_from_their_old_places() -> None:
    old = ("palimpsest.compaction.redact", "palimpsest.memory.threats")
    assert not (SRC / "compaction" / "redact.py").exists()
    assert not (SRC / "memory" / "threats").exists()
    for path in SRC.rglob("*.py"):
        for name in _imports_of(path):
            assert not name.startswith(old), f"{path.relative_to(SRC)} imports {name}"


# -- the module graph: every import, lazy and TYPE_CHECKING ones included -------------------


def _module_name(path: Path) -> str:
    parts = ["palimpsest", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULE_FILES = {_module_name(p): p for p in SRC.rglob("*.py")}


def _owning_module(name: str) -> str | None:
    """The palimpsest module a dotted import name lands in (``pkg.mod.Class`` -> ``pkg.mod``)."""
    while name and name not in MODULE_FILES:
        name = name.rpartition(".")[0]
    return name or None


def _module_graph() -> dict[str, set[str]]:
    """Each module's palimpsest imports, wherever they sit: module level, inside a
    function, or under ``if TYPE_CHECKING:`` (a type-only import is still a dependency
    a reader and mypy must follow)."""
    graph: dict[str, set[str]] = {}
    for module, path in MODULE_FILES.items():
        targets = {_owning_module(name) for name in _imported_names(path)}
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


def _imported_names(path: Path) -> list[str]:
    """What each import statement names: ``from .x import y`` names ``pkg.x.y`` (a
    submodule, or a name in ``pkg.x``), not the package ``pkg`` it passes through (which
    is already importing when its own modules run)."""
    package = ["palimpsest", *path.relative_to(SRC).parent.parts]
    names: list[str] = []
    for node in _import_statements(path):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - (node.level - 1)] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            names.extend(f"{module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return names


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


KNOWN_CYCLES = [
    # A lazy import in a function: facts' entry point runs the walk, the walk uses facts' types.
    {"palimpsest.summarizers.facts", "palimpsest.summarizers.walk"},
    # SessionStore's import/export methods import transfer lazily; transfer uses the store.
    {"palimpsest.storage.sessions", "palimpsest.storage.transfer"},
    # The output store and its index/retention helpers name each other's types.
    {"palimpsest.outputs.index", "palimpsest.outputs.retention", "palimpsest.outputs.store"},
    # Typer sub-commands register themselves on sessions_app by being imported from it.
    {
        "palimpsest.cli.sessions",
        "palimpsest.cli.sessions_edit",
        "palimpsest.cli.sessions_import",
        "palimpsest.cli.sessions_maintain",
    },
]
"""Cycles that exist outside agent/ today (issue 24's report); none may grow or be added."""


def test_cycle_finder_finds_a_cycle_through_a_type_checking_import() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [{"a", "b", "c"}]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    assert _owning_module("palimpsest.agent.state.AgentState") == "palimpsest.agent.state"
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .loop import Agent\n"
    tree = ast.parse(source)
    assert any(isinstance(n, ast.ImportFrom) and n.module == "loop" for n in ast.walk(tree))


def test_the_agent_package_has_no_import_cycle() -> None:
    """Issue 24: the step modules take agent/state.py's AgentState; none imports loop.py,
    not even for a type, so the package's imports form no cycle."""
    graph = _module_graph()
    in_agent = [c for c in _cycles(graph) if any(m.startswith("palimpsest.agent.") for m in c)]
    assert in_agent == []
    importers = sorted(m for m, targets in graph.items() if "palimpsest.agent.loop" in targets)
    steps = {"ahead", "binding", "commands", "compaction_step", "status", "tool_round", "turn"}
    assert not {f"palimpsest.agent.{s}" for s in [*steps, "undo", "state"]} & set(importers)


def test_no_new_import_cycle_anywhere_in_the_package() -> None:
    cycles = _cycles(_module_graph())
    new = [sorted(c) for c in cycles if not any(c <= known for known in KNOWN_CYCLES)]
    assert new == [], f"new import cycles: {new}"
