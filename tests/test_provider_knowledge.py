"""What a vector store provider is and does is known in one place: its backend
(``integrations/mem0/providers/``); Mem0's and qdrant-client's private members are touched
in one file (``integrations/mem0/private_api.py``); and the integrations' subpackages
import each other one way only. These tests read the package's code (its syntax trees),
so a decision by a provider's name, a private member or an import that comes back
anywhere else fails here, naming the file and line."""

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "flink_agents_ltm"
BACKENDS = PACKAGE / "integrations" / "mem0" / "providers"
PRIVATE_API = PACKAGE / "integrations" / "mem0" / "private_api.py"

# Attributes a store may or may not have, which only a backend may probe for.
STORE_CAPABILITIES = frozenset({"delete_many", "upserts_on_insert"})


def _providers() -> tuple[frozenset[str], frozenset[str]]:
    """Every provider name Mem0's factory knows (ours included, registered on import),
    and the names of the store classes it makes."""
    from mem0.utils.factory import VectorStoreFactory

    from flink_agents_ltm.integrations.mem0 import providers  # noqa: F401 - registers ours

    table = VectorStoreFactory.provider_to_class
    classes = {path.rsplit(".", 1)[1] for path in table.values()} | {"QdrantLocal"}
    return frozenset(table), frozenset(classes)


PROVIDER_NAMES, STORE_CLASSES = _providers()


def _modules(root: Path) -> Iterator[tuple[str, ast.AST]]:
    for path in sorted((root / "flink_agents_ltm").rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        yield relative, ast.parse(path.read_text(), relative)


def _outside_adapters(relative: str) -> bool:
    return not (relative.startswith("flink_agents_ltm/integrations/mem0/providers/")
                or relative == "flink_agents_ltm/integrations/mem0/private_api.py")


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _provider_constants(tree: ast.AST) -> set[str]:
    """Names this module gives a provider constant (``PROVIDER``, ``... as EMBEDDED``)."""
    names = {"PROVIDER"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.update(alias.asname for alias in node.names
                         if alias.name == "PROVIDER" and alias.asname)
    return names


def _names_a_provider(node: ast.AST, constants: set[str]) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in PROVIDER_NAMES
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_names_a_provider(element, constants) for element in node.elts)
    return _name(node) in constants


def _sniffs_a_store_class(node: ast.Compare) -> bool:
    """``type(x).__name__ == "PGVector"`` and the like."""
    operands = [node.left, *node.comparators]
    named = any(isinstance(o, ast.Attribute) and o.attr == "__name__" for o in operands)
    return named and any((isinstance(o, ast.Constant) and o.value in STORE_CLASSES)
                         or (isinstance(o, ast.Tuple | ast.List | ast.Set)
                         and any(isinstance(e, ast.Constant) and e.value in STORE_CLASSES
                                 for e in o.elts)) for o in operands)


def provider_decisions(root: Path = ROOT) -> list[str]:
    """``file:line: what`` for every decision by a provider outside the backends: a
    comparison with a provider's name, a table keyed by providers, a store class's name
    compared or checked with ``isinstance``, a probe for a store capability."""
    found = []
    for relative, tree in _modules(root):
        if not _outside_adapters(relative):
            continue
        constants = _provider_constants(tree)
        for node in ast.walk(tree):
            what = None
            if isinstance(node, ast.Compare):
                if any(_names_a_provider(o, constants) for o in (node.left, *node.comparators)):
                    what = "compares with a provider's name"
                elif _sniffs_a_store_class(node):
                    what = "compares a store class's name"
            elif isinstance(node, ast.Dict) and any(
                    isinstance(k, ast.Constant) and k.value in PROVIDER_NAMES
                    for k in node.keys):
                what = "a table keyed by provider"
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                args = node.args
                if node.func.id == "isinstance" and len(args) == 2 and any(
                        _name(c) in STORE_CLASSES for c in (
                            args[1].elts if isinstance(args[1], ast.Tuple) else [args[1]])):
                    what = "isinstance of a store class"
                elif node.func.id in ("hasattr", "getattr") and len(args) >= 2 \
                        and isinstance(args[1], ast.Constant) \
                        and args[1].value in STORE_CAPABILITIES:
                    what = f"probes a store for {args[1].value!r}"
            if what is not None:
                found.append(f"{relative}:{node.lineno}: {what}")
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _reaches_mem0(relative: str) -> bool:
    """Whether a module may hold Mem0's or qdrant-client's objects: ``api``, ``runtime``,
    ``bridge`` and ``testing`` may not reach them (pyproject's import contracts, run by
    ``test_layering``), ``flink_compat`` is PyFlink's facade; the integrations and the other
    top-level modules (the command line) may."""
    parts = relative.split("/")
    return parts[1] == "integrations" or (
        len(parts) == 2 and relative != "flink_agents_ltm/flink_compat.py")


def private_member_uses(root: Path = ROOT) -> list[str]:
    """``file:line: member`` for every private member of another object (not ``self``,
    ``cls`` or ``super()``) that a module which may hold Mem0's objects touches outside the
    facade, by attribute, by ``getattr``/``setattr``/``hasattr`` or by importing it from
    Mem0 or qdrant-client."""
    found = []
    for relative, tree in _modules(root):
        if not (_reaches_mem0(relative) and _outside_adapters(relative)):
            continue
        for node in ast.walk(tree):
            member = None
            if isinstance(node, ast.Attribute) and _private(node.attr):
                owner = node.value
                own = (isinstance(owner, ast.Name) and owner.id in ("self", "cls")) or (
                    isinstance(owner, ast.Call) and _name(owner.func) == "super")
                member = None if own else node.attr
            elif isinstance(node, ast.Call) and _name(node.func) in (
                    "getattr", "setattr", "hasattr") and len(node.args) >= 2 \
                    and isinstance(node.args[1], ast.Constant) \
                    and isinstance(node.args[1].value, str) and _private(node.args[1].value):
                member = node.args[1].value
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in (
                    "mem0", "qdrant_client"):
                member = next((a.name for a in node.names if _private(a.name)), None)
            if member is not None:
                found.append(f"{relative}:{node.lineno}: {member}")
    return found


def _integration_imports(root: Path = ROOT) -> dict[str, set[str]]:
    """Subpackage (or module) of ``integrations`` -> the others it imports, at any depth
    of the code (imports inside functions count)."""
    prefix = "flink_agents_ltm.integrations."
    edges: dict[str, set[str]] = {}
    for relative, tree in _modules(root):
        parts = relative.removesuffix(".py").split("/")
        if parts[:2] != ["flink_agents_ltm", "integrations"] or len(parts) < 3:
            continue
        source = parts[2]
        if source == "__init__":
            continue
        for node in ast.walk(tree):
            named = []
            if isinstance(node, ast.Import):
                named = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                named = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for module in named:
                if module.startswith(prefix):
                    target = module[len(prefix):].split(".")[0]
                    if target != source:
                        edges.setdefault(source, set()).add(target)
    return edges


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    visiting: list[str] = []
    done: set[str] = set()

    def visit(node: str) -> list[str] | None:
        if node in visiting:
            return [*visiting[visiting.index(node):], node]
        if node in done:
            return None
        visiting.append(node)
        for target in sorted(edges.get(node, ())):
            cycle = visit(target)
            if cycle:
                return cycle
        visiting.pop()
        done.add(node)
        return None

    for node in sorted(edges):
        cycle = visit(node)
        if cycle:
            return cycle
    return None


# ------------------------------------------------------------- the tests


def test_no_module_outside_the_backends_decides_by_a_vector_store_providers_name():
    found = provider_decisions()
    assert not found, ("decisions by a vector store provider belong in its backend "
                       f"(integrations/mem0/providers/): {found}")


def test_only_the_facade_touches_private_members_of_mem0_or_qdrant_client():
    found = private_member_uses()
    assert not found, ("private members of Mem0 or qdrant-client are used through "
                       f"integrations/mem0/private_api.py only: {found}")


def test_the_integrations_subpackages_import_each_other_without_a_cycle():
    edges = _integration_imports()
    assert _cycle(edges) is None, f"import cycle between integrations: {_cycle(edges)}"


def test_every_provider_mem0_knows_gets_a_backend_and_the_tested_ones_their_own():
    from flink_agents_ltm.integrations.mem0.providers import backend_for
    from flink_agents_ltm.integrations.mem0.providers.generic import GenericBackend

    own = {p: type(backend_for(p)).__name__ for p in ("qdrant", "pgvector", "faiss", "chroma",
                                                        "flink_agents_embedded", "flink_agents")}
    assert not [p for p, kind in own.items() if kind == "GenericBackend"], own
    assert type(backend_for("milvus")) is GenericBackend


def test_a_missing_private_member_fails_with_an_error_naming_it_and_the_versions():
    from flink_agents_ltm.integrations.mem0.private_api import PrivateApiChangedError, pg_cursor

    class NotPgVector:
        pass

    with pytest.raises(PrivateApiChangedError, match=r"NotPgVector has no member "
                       r"'_get_cursor'.*mem0ai \d.*private_api\.py"):
        pg_cursor(NotPgVector())


def test_the_class_members_the_facade_relies_on_exist_in_the_installed_mem0():
    from mem0.vector_stores import pgvector
    from mem0.vector_stores.configs import VectorStoreConfig
    from mem0.vector_stores.faiss import FAISS

    from flink_agents_ltm.integrations.mem0 import private_api

    missing = [f"{owner.__name__}.{name}" for owner, name in (
        (pgvector.PGVector, "_get_cursor"), (pgvector.PGVector, "_ensure_collection"),
        (pgvector.PGVector, "_col"), (pgvector, "_build_filter_conditions"),
        (FAISS, "_save"), (FAISS, "_should_normalize"),
        (VectorStoreConfig, "_provider_configs")) if not hasattr(owner, name)]
    assert not missing, f"Mem0 changed; follow it in private_api.py: {missing}"
    assert "qdrant" in private_api.provider_config_classes()


@pytest.mark.parametrize("line, found_by", [
    ('if store["provider"] == "pgvector":\n    pass\n', provider_decisions),
    ('if type(store).__name__ == "Qdrant":\n    pass\n', provider_decisions),
    ("KEYS = {'qdrant': ('host',)}\n", provider_decisions),
    ("from flink_agents_ltm.integrations.mem0.providers.embedded.store import PROVIDER as P\n"
     "if provider == P:\n    pass\n", provider_decisions),
    ("if hasattr(store, 'delete_many'):\n    pass\n", provider_decisions),
    ("x = memory._entity_store\n", private_member_uses),
    ("x = getattr(client, '_client', None)\n", private_member_uses),
    ("from mem0.vector_stores.pgvector import _build_filter_conditions\n",
     private_member_uses),
])
@pytest.mark.parametrize("where", ["integrations/mem0/put_back.py", "cli.py"])
def test_the_checks_find_a_line_of_each_kind_put_back(tmp_path, line, found_by, where):
    """In the integrations and in the command line's modules alike."""
    module = tmp_path / "flink_agents_ltm" / where
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_text(line)
    found = found_by(tmp_path)
    assert len(found) == 1 and found[0].startswith(f"flink_agents_ltm/{where}:"), found


def test_a_cycle_between_integrations_is_found(tmp_path):
    for source, target in (("mem0", "rerankers"), ("rerankers", "mem0")):
        module = tmp_path / "flink_agents_ltm" / "integrations" / source / "m.py"
        module.parent.mkdir(parents=True)
        module.write_text(f"from flink_agents_ltm.integrations.{target} import m\n")
    assert _cycle(_integration_imports(tmp_path)) in (["mem0", "rerankers", "mem0"],
                                                      ["rerankers", "mem0", "rerankers"])


if __name__ == "__main__":  # the counts, for a tree given as argument (default: this one)
    tree = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    print("\n".join(provider_decisions(tree)))
    print(len(provider_decisions(tree)), "provider decisions outside the backends")
    print("\n".join(private_member_uses(tree)))
    print(len(private_member_uses(tree)), "private member uses outside the facade")
