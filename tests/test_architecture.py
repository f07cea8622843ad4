"""The package's import graph, read from the source with ``ast``: no module imports itself
through a cycle, nothing imports a layer above its own, and only tests/cli/ and tests/fuzz/ (the
hostile-input runs of every command) import the command line."""

from __future__ import annotations

import ast
import importlib
import itertools
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "confeval"
TESTS = Path(__file__).resolve().parent

LAYERS = [
    {"__init__", "_jit", "_lazy", "_numeric", "_registry", "_text", "_threads", "_untrusted",
     "_validation", "taxonomy", "records", "runs", "images"},
    {"metrics", "parse", "measures", "conformal", "tasks", "guarantee", "judge",
     "validity"},
    {"evaluate", "backends", "perturb", "simulate", "ingest"},
    {"report"},
    {"suites"},
    {"integrations"},
    {"verbs"},
    {"cli"},
]
"""Top-level parts of ``confeval`` from the bottom up: a part may import its own layer's and
lower layers' parts, never a higher one."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every confeval module this file imports (module level or inside functions)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("confeval")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("confeval"):
                found.add(target)
                # "from . import x" imports the submodule x
                found |= {f"{target}.{a.name}" for a in node.names}
    return found


MODULES = {_module_name(p): p for p in SRC.rglob("*.py")}
GRAPH = {name: {m for m in _imports(path) if m in MODULES and m != name}
         for name, path in MODULES.items()}


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _layer(module: str) -> int:
    part = _part(module)
    for i, layer in enumerate(LAYERS):
        if part in layer:
            return i
    raise AssertionError(f"{module}: part {part!r} is in no layer of this test")


def test_every_part_has_a_layer():
    for module in MODULES:
        _layer(module)


def test_nothing_imports_upward():
    upward = [(m, t) for m, targets in GRAPH.items() for t in targets
              if _layer(t) > _layer(m)]
    assert not upward, f"imports of a higher layer: {upward}"


def test_no_import_cycles():
    done, path, cycles = set(), [], []

    def visit(node):
        if node in path:
            cycles.append([*path[path.index(node):], node])
            return
        if node in done:
            return
        path.append(node)
        for nxt in sorted(GRAPH[node]):
            # a package's __init__ importing its own submodules is not a cycle of behaviour
            if nxt.startswith(node + "."):
                continue
            visit(nxt)
        path.pop()
        done.add(node)

    for module in sorted(GRAPH):
        visit(module)
    real = [c for c in cycles if not all(b.startswith(a + ".") or a.startswith(b + ".")
                                         for a, b in itertools.pairwise(c))]
    assert not real, f"import cycles: {real[:3]}"


@pytest.mark.parametrize("path", sorted(p for p in TESTS.rglob("test_*.py")
                                        if not {"cli", "fuzz"} & set(p.relative_to(TESTS).parts)),
                         ids=lambda p: str(p.relative_to(TESTS)))
def test_only_cli_tests_import_the_command_line(path):
    assert not any(m == "confeval.cli" or m.startswith("confeval.cli.")
                   for m in _imports_of_test(path))


def _imports_of_test(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_command_modules_stay_small():
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines())
             for p in (SRC / "cli").glob("*.py")}
    assert max(sizes.values()) <= 300, sizes


SUITE_PACKAGES = {p.parent.name for p in (SRC / "suites").glob("*/__init__.py")}
"""The suite packages (``confeval.suites.<name>``, one per suite)."""


def _suite_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "suites" and \
        parts[2] in SUITE_PACKAGES else None


def _imported_names(path: Path) -> list[tuple[str, str]]:
    """(module, name) of every ``from X import name`` of a file, relative imports resolved."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] \
                if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found.extend((module, alias.name) for alias in node.names)
    return found


def test_the_cross_suite_commands_reach_into_no_suite():
    """``confeval.verbs`` is written against the suite object (``confeval.suites``,
    ``.base``, ``.options``): it imports no module of a suite package and no private name of
    one. (The demo's simulated sections take a suite's public scoring of arrays from its
    package face, as any Python caller would.)"""
    reaching = []
    for module, path in MODULES.items():
        if _part(module) != "verbs":
            continue
        for target, name in _imported_names(path):
            suite = _suite_of(target)
            if suite and (target != f"confeval.suites.{suite}" or name.startswith("_")):
                reaching.append((module, f"{target}.{name}"))
    assert not reaching, f"verbs reaching into a suite: {reaching}"


def test_no_suite_package_imports_another():
    """A suite package imports its own modules and the shared ones (``suites/base``,
    ``options``, ``_seeds``, ``_judge``, ...), never another suite's."""
    crossing = sorted((m, t) for m, targets in GRAPH.items() if _suite_of(m)
                      for t in targets if _suite_of(t) not in (None, _suite_of(m)))
    assert not crossing, f"suites importing each other: {crossing}"


def test_every_suite_package_is_registered_once():
    """Each suite package exports a ``SUITE`` registered under its package's name."""
    from confeval.suites import SUITES

    assert set(SUITES) == SUITE_PACKAGES
    for name in SUITE_PACKAGES:
        assert importlib.import_module(f"confeval.suites.{name}").SUITE is SUITES[name]
