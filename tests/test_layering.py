"""The package's layers hold, and its modules import each other without a cycle.

``lint-imports`` checks the contracts of pyproject.toml on the import graph it builds from
import statements. The tests below build the graph themselves from every module's ``ast``,
with the edges import statements cannot show: a module named in a string (the argument of
``importlib.import_module`` or ``__import__``, a ``module:attr`` path such as an entry
point's or a factory table's). Any edge from ``api`` to another layer, from ``runtime`` to
``integrations``, to ``testing`` from inside the package, or any cycle fails them: there is
no list of known exceptions. Two things are not edges of the layers: an import under ``if
TYPE_CHECKING:`` (it never runs; the cycle check counts it all the same) and a logger's name
(a string passed to ``getLogger`` or held by a ``..._LOGGER`` constant names a logger, not a
module to import)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "flink_agents_ltm"
# What each part of the package may not reach (the contracts in pyproject.toml).
FORBIDDEN = {
    "api": ("runtime", "integrations", "bridge", "examples", "testing"),
    "runtime": ("integrations", "bridge", "examples", "testing"),
    "bridge": ("integrations", "examples", "testing"),
    "integrations": ("bridge", "examples", "testing"),
    "examples": ("testing",),
    "testing": ("integrations", "bridge", "examples"),
}
_MODULE_NAME = re.compile(r"flink_agents_ltm(?:\.\w+)+")


def test_the_import_contracts_of_the_layers_are_kept():
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


# ------------------------------------------------------------- the graph, strings included


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _type_checking_only(tree: ast.AST) -> set[int]:
    """The nodes under ``if TYPE_CHECKING:``."""
    return {id(inner) for node in ast.walk(tree) if isinstance(node, ast.If)
            and (ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"))
            for statement in node.body for inner in ast.walk(statement)}


def _logger_names(tree: ast.AST) -> set[int]:
    """String constants that name a logger."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("getLogger"):
            found.update(id(arg) for arg in node.args)
        elif isinstance(node, ast.Assign) and all(
                isinstance(t, ast.Name) and t.id.endswith("_LOGGER") for t in node.targets):
            found.add(id(node.value))
    return found


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef
                          | ast.AsyncFunctionDef)
            and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)}


def named_modules(source: str, tree: ast.AST, *, type_only: bool = False
                  ) -> Iterator[tuple[str, str]]:
    """``(module named, how)`` for each import statement of ``tree`` (function-level ones
    included; those under ``if TYPE_CHECKING:`` too when ``type_only``) and each module of
    ours a string names (docstrings aside)."""
    package = source if source in _packages() else source.rpartition(".")[0]
    skipped = set() if type_only else _type_checking_only(tree)
    not_modules = _docstrings(tree) | _logger_names(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, "import"
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([base] if base else [])])
            yield base, "import"
            for alias in node.names:  # ``from package import module``
                yield f"{base}.{alias.name}", "import of a submodule"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in not_modules:
            for name in _MODULE_NAME.findall(node.value):
                yield name, f"string {node.value[:60]!r}"


def _packages() -> set[str]:
    return {name for name, path in modules().items() if path.name == "__init__.py"}


def graph(*, type_only: bool = False) -> dict[str, dict[str, str]]:
    """``{module: {module it imports or names: how}}`` over the package's modules (with
    the imports made for type checking only when ``type_only``)."""
    known = modules()
    edges: dict[str, dict[str, str]] = {name: {} for name in known}
    for source, path in known.items():
        for named, how in named_modules(source, ast.parse(path.read_text(), str(path)),
                                        type_only=type_only):
            while named not in known and named.count(".") > 1:  # "pkg.mod.Class": pkg.mod
                named = named.rsplit(".", 1)[0]
            if named in known and named != source:
                edges[source].setdefault(named, how)
    return edges


def _part(module: str) -> str:
    return module.split(".")[1] if module.count(".") else ""


def forbidden_edges(edges: dict[str, dict[str, str]]) -> list[str]:
    return [f"{source} -> {target} ({how})"
            for source, targets in sorted(edges.items())
            for target, how in sorted(targets.items())
            if _part(target) in FORBIDDEN.get(_part(source), ())]


def cycles(edges: dict[str, dict[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges[node]:
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

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_part_of_the_package_reaches_one_it_may_not_even_through_a_string():
    assert forbidden_edges(graph()) == []


def test_no_modules_of_the_package_import_each_other_in_a_cycle():
    assert cycles(graph()) == []


def test_not_even_through_imports_made_for_type_checking():
    """A cycle that only type checkers follow still means two modules that cannot be
    read, changed or moved apart (the chat loop names what it needs of its caller in a
    protocol instead of importing the runner context)."""
    assert cycles(graph(type_only=True)) == []


def test_the_graph_sees_imports_in_functions_and_modules_named_by_strings():
    """The walk itself: each kind of edge it must see, in a module of its own."""
    tree = ast.parse("""
import importlib
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from flink_agents_ltm.testing import AgentHarness
def build():
    from flink_agents_ltm.runtime import agent_operator
    return importlib.import_module("flink_agents_ltm.runtime.durable")
FACTORY = "flink_agents_ltm.integrations.mem0.long_term_memory:Mem0LongTermMemory.from_config"
log = logging.getLogger("flink_agents_ltm.runtime.keyed_runs")
""")
    named = {name for name, _ in named_modules("flink_agents_ltm.api.probe", tree)}
    assert {"flink_agents_ltm.runtime.agent_operator", "flink_agents_ltm.runtime.durable",
            "flink_agents_ltm.integrations.mem0.long_term_memory"} <= named
    assert not named & {"flink_agents_ltm.runtime.harness", "flink_agents_ltm.runtime.keyed_runs"}


def test_mem0_long_term_memory_has_one_home_and_no_shim_under_runtime():
    assert not (PACKAGE / "runtime" / "memory" / "mem0_long_term_memory.py").exists()
    from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory

    assert Mem0LongTermMemory.__module__ == "flink_agents_ltm.integrations.mem0.long_term_memory"
