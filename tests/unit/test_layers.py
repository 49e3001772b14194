"""The layers hold, imports inside functions included, and nothing imports in a circle.

The contracts live in pyproject.toml ``[tool.importlinter]`` (cli > tui | spark | consumer |
exporter > reclaim | demo > render > core > config > redis > base, and no cycle between the
siblings of any package); ``lint-imports`` checks them on grimp's import graph, which counts
every import statement, the lazy ones in function bodies too. No contract lists an exception.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
LAYERS = [
    "pelctl.cli",
    "pelctl.tui | pelctl.spark | pelctl.consumer | pelctl.exporter",
    "pelctl.reclaim | pelctl.demo",
    "pelctl.render",
    "pelctl.core",
    "pelctl.config",
    "pelctl.redis",
    "pelctl.base",
]


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def test_the_contracts_are_kept() -> None:
    lint = Path(sys.executable).parent / "lint-imports"
    proc = subprocess.run(
        [str(lint), "--no-cache", "--config", str(ROOT / "pyproject.toml")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 kept, 0 broken" in proc.stdout


def test_the_contracts_are_the_layers_with_no_exceptions() -> None:
    contracts = _config()["contracts"]
    assert [c["type"] for c in contracts] == ["layers", "acyclic_siblings"]
    assert contracts[0]["layers"] == LAYERS
    assert contracts[1]["ancestors"] == ["pelctl"]
    for contract in contracts:
        assert contract.get("ignore_imports", []) == [], contract["name"]
        assert "unmatched_ignore_imports_alerting" not in contract


def _graph() -> grimp.ImportGraph:
    return grimp.build_graph("pelctl", include_external_packages=False)


def test_lazy_imports_are_in_the_graph() -> None:
    """The contracts see imports made inside functions (how the CLI keeps start-up fast)."""
    graph = _graph()
    # `pelctl inspect` imports the command layer in its function body, never at module level
    assert graph.direct_import_exists(importer="pelctl.cli.inspect", imported="pelctl.core.inspect")
    source = (ROOT / "pelctl/cli/inspect.py").read_text()
    assert "\nfrom pelctl.core.inspect" not in source and "\nimport pelctl.core" not in source


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0

    def imports(module: str):
        return iter(sorted(graph.find_modules_directly_imported_by(module)))

    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, imports(root))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append(
                        (child, iter(sorted(graph.find_modules_directly_imported_by(child))))
                    )
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
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
    return found


def test_no_module_imports_itself_through_others() -> None:
    """No cycle at all in the module graph (a package and its own modules included, which the
    siblings contract does not compare)."""
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_cycles() -> None:
    graph = grimp.ImportGraph()
    for name in ("p", "p.a", "p.b", "p.c"):
        graph.add_module(name)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.c")
    graph.add_import(importer="p.c", imported="p.a")
    graph.add_import(importer="p", imported="p.a")
    assert _cycles(graph) == [["p.a", "p.b", "p.c"]]


def test_base_imports_nothing_else_of_pelctl() -> None:
    graph = _graph()
    base = {"pelctl.base"} | graph.find_descendants("pelctl.base")
    outside = {
        (module, imported)
        for module in base
        for imported in graph.find_modules_directly_imported_by(module)
        if imported not in base
    }
    assert outside == set()
