"""The package's layers hold: api imports no other layer, runtime does not import the
integrations, bridge only api and runtime (contracts in pyproject.toml, checked by
import-linter on the real import graph, and here on the strings the graph cannot see)."""

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_import_contracts_of_the_layers_are_kept():
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


# ------------------------------------------------------------- imports by name (strings)
# import-linter sees only import statements; a module reached through a string
# (importlib.import_module("..."), __import__, a "module:callable" table) is invisible to it.
# These tests read every string of the package instead.

PACKAGE = ROOT / "flink_agents_ltm"
# What each layer may not reach, as the contracts in pyproject.toml say.
FORBIDDEN = {
    "api": ("runtime", "integrations", "bridge", "examples"),
    "runtime": ("integrations", "bridge", "examples"),
    "bridge": ("integrations", "examples"),
}
# Known edges through strings, (module, module it names). Each is a crossing to remove; the
# list only shrinks.
KNOWN_STRING_EDGES = {
    # The options live in api/execution_environment.py, whose to_datastream builds the
    # operator: the api reaches the runtime by name (issue 22: options to api/options.py).
    ("flink_agents_ltm.api.execution_environment", "flink_agents_ltm.runtime.agent_operator"),
    # agents.yaml's class aliases ("openai", "qdrant", ...) name integration classes.
    ("flink_agents_ltm.api.agents_yaml", "flink_agents_ltm.integrations"),
    # The factory table names the Mem0 memory ("mem0", the default); to go once "mem0" is an
    # entry point of the group flink_agents_ltm.long_term_memory.
    ("flink_agents_ltm.runtime.memory.factories",
     "flink_agents_ltm.integrations.mem0.long_term_memory"),
}
_MODULE_NAME = re.compile(r"flink_agents_ltm(?:\.\w+)+")


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _strings(tree: ast.AST) -> Iterator[str]:
    """Every string constant of ``tree`` but docstrings (f-strings' literal parts included)."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef
                                | ast.AsyncFunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings:
            yield node.value


def _string_edges() -> set[tuple[str, str]]:
    """(module, module of a layer it may not reach that one of its strings names)."""
    modules = _modules()
    edges = set()
    for source, path in modules.items():
        layer = source.split(".")[1] if source.count(".") else ""
        forbidden = tuple(f"flink_agents_ltm.{other}" for other in FORBIDDEN.get(layer, ()))
        for text in _strings(ast.parse(path.read_text(), str(path))):
            for named in _MODULE_NAME.findall(text):
                # the longest prefix that is a module ("pkg.mod.Class" names "pkg.mod")
                while named not in modules and named.count(".") > 1:
                    named = named.rsplit(".", 1)[0]
                if named in modules and (named + ".").startswith(
                        tuple(f + "." for f in forbidden)):
                    edges.add((source, named))
    return edges


def test_no_layer_reaches_a_forbidden_one_through_a_string_but_the_known_edges():
    new = _string_edges() - KNOWN_STRING_EDGES
    assert not new, (f"modules name a layer they may not import, in a string (importlib, "
                     f"__import__, a table of paths): {sorted(new)}")


def test_the_list_of_known_string_edges_names_only_edges_that_still_exist():
    gone = KNOWN_STRING_EDGES - _string_edges()
    assert not gone, f"edges removed from the code: drop them from KNOWN_STRING_EDGES: {gone}"


def test_mem0_long_term_memory_has_one_home_and_no_shim_under_runtime():
    assert not (PACKAGE / "runtime" / "memory" / "mem0_long_term_memory.py").exists()
    from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory

    assert Mem0LongTermMemory.__module__ == "flink_agents_ltm.integrations.mem0.long_term_memory"
