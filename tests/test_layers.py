"""The floors of DESIGN.md, read from the source: imports run downward only, and nothing cycles.

    1  proofsmith                 the front door
    2  training, eval
    3  generator, meta_verifier
    4  verifier
    5  engine, data               the ground

Every import counts, including those inside functions (a lazy import is still an arrow).
A module may import from its own floor, as long as no cycle forms: neither between
modules nor between packages.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FLOORS = {"proofsmith": 1, "training": 2, "eval": 2, "generator": 3, "meta_verifier": 3, "verifier": 4, "engine": 5, "data": 5}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    return {module_name(path): path for package in FLOORS for path in sorted((REPO / package).rglob("*.py"))}


def imported_modules(path: Path, name: str, known: set[str]) -> Iterator[tuple[str, int]]:
    """(project module, line) for every import in ``path``; ``from package import module`` names the module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            if target.split(".")[0] in FLOORS:
                yield target, node.lineno


def import_graph() -> dict[str, dict[str, int]]:
    modules = project_modules()
    known = set(modules)
    return {name: {target: line for target, line in imported_modules(path, name, known) if target != name}
            for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_every_project_package_has_a_floor() -> None:
    packages = {path.parent.name for path in REPO.glob("*/__init__.py")}
    assert packages - {"tests", "benchmarks"} <= set(FLOORS), "a new top-level package needs a floor in DESIGN.md and here"


def test_no_import_runs_up_a_floor() -> None:
    upward = [
        f"{module} (floor {FLOORS[module.split('.')[0]]}) imports {target} (floor {FLOORS[target.split('.')[0]]}), line {line}"
        for module, targets in import_graph().items()
        for target, line in targets.items()
        if FLOORS[target.split(".")[0]] < FLOORS[module.split(".")[0]]
    ]
    assert upward == []


def test_no_module_import_cycles() -> None:
    graph = import_graph()
    assert cycles({module: set(targets) for module, targets in graph.items()}) == []


def test_no_package_import_cycles() -> None:
    """Two packages on one floor may not lean on each other (``training`` ↔ ``eval``, say)."""
    packages: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        top = module.split(".")[0]
        packages.setdefault(top, set()).update(target.split(".")[0] for target in targets if target.split(".")[0] != top)
    assert cycles(packages) == []


@pytest.mark.parametrize("source, expected", [
    ("from training.config import TrainConfig", ["training.config"]),
    ("from training import config", ["training.config"]),
    ("import verifier.parse as parse", ["verifier.parse"]),
    ("from . import rule", ["training.auto_labeling.rule"]),
    ("from .rule import decide", ["training.auto_labeling.rule"]),
    ("import torch", []),
])
def test_imports_are_read_as_modules(source: str, expected: list[str], tmp_path: Path) -> None:
    """The reader itself: absolute, relative and package-relative forms name the imported module."""
    known = set(project_modules())
    probe = tmp_path / "probe.py"
    probe.write_text(source + "\n", encoding="utf-8")
    found = [target for target, _ in imported_modules(probe, "training.auto_labeling.pipeline", known)]
    assert found == expected


def test_cycles_are_found() -> None:
    """The cycle finder itself, on a small graph with one cycle of three and a tail."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}) == [["a", "b", "c"]]
