"""Every test can fail: a test with no assertion, or whose assertions all sit inside a loop
over a collection that may be empty, passes whatever the code does. This reads the tests
(``tests/`` and ``e2e/``) and names each one of those.

What counts as checking: an ``assert`` outside any loop (a loop over a literal, non-empty
collection counts as outside), a ``pytest.raises``/``pytest.warns`` block, or a call to a
helper named ``check_*``, ``assert_*``, ``expect_*`` or ``verify_*`` (which asserts itself).
A test whose only asserts follow a ``pytest.skip`` is fine: it says why it did not check."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HELPERS = ("check", "assert", "expect", "verify")
CONTEXTS = ("raises", "warns", "deprecated_call")


def _literal(iterable: ast.expr) -> bool:
    """A collection the loop surely walks: a non-empty literal, ``range``/``enumerate``/
    ``zip`` of those or of constants, or a module constant (an UPPER_CASE name)."""
    if isinstance(iterable, ast.Tuple | ast.List | ast.Set):
        return bool(iterable.elts)
    if isinstance(iterable, ast.Call) and ast.unparse(iterable.func) in ("range", "enumerate",
                                                                          "zip"):
        return all(isinstance(a, ast.Constant) or _literal(a) for a in iterable.args)
    return isinstance(iterable, ast.Name) and iterable.id.isupper()


def _checking(node: ast.AST, in_loop: bool) -> bool:
    """``node`` checks: an assert outside a loop, a raises block or a check helper's call."""
    if isinstance(node, ast.Assert):
        return not in_loop
    if isinstance(node, ast.With | ast.AsyncWith):
        return any(name in ast.unparse(item.context_expr)
                   for item in node.items for name in CONTEXTS)
    if isinstance(node, ast.Call):
        return ast.unparse(node.func).rsplit(".", 1)[-1].startswith(HELPERS)
    return False


def checks(test: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """The test checks something whatever its data: see the module's doc."""
    found = False

    def walk(node: ast.AST, in_loop: bool) -> None:
        nonlocal found
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
                          | ast.ClassDef):
                continue
            if _checking(child, in_loop):
                found = True
            looping = isinstance(child, ast.For | ast.AsyncFor | ast.While | ast.comprehension)
            surely = isinstance(child, ast.For | ast.AsyncFor) and _literal(child.iter)
            walk(child, in_loop or (looping and not surely))

    walk(test, False)
    return found


def unfailing_tests(source: str, name: str = "<test>") -> list[str]:
    tree = ast.parse(source)
    return [f"{name}:{node.lineno} {node.name}" for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name.startswith("test") and not checks(node)]


def test_no_test_of_the_project_passes_whatever_the_code_does():
    found = [line for path in sorted([*ROOT.glob("tests/**/test_*.py"),
                                      *ROOT.glob("e2e/**/test_*.py")])
             for line in unfailing_tests(path.read_text(), str(path.relative_to(ROOT)))]
    assert found == []


def test_a_test_without_an_assertion_is_named():
    assert unfailing_tests("def test_x():\n    run()\n", "t.py") == ["t.py:1 test_x"]


def test_a_test_that_asserts_only_inside_a_loop_over_results_is_named():
    source = "def test_x(results):\n    for r in results:\n        assert r.ok\n"
    assert unfailing_tests(source) == ["<test>:1 test_x"]


def test_a_loop_over_a_literal_a_raises_block_or_a_check_helper_counts_as_checking():
    assert unfailing_tests(
        "def test_a():\n    for n in (1, 2):\n        assert n\n"
        "def test_b():\n    with pytest.raises(ValueError):\n        f()\n"
        "def test_c(run):\n    check_exactly_once(run)\n"
        "def test_d(results):\n    assert len(results) == 3\n    for r in results:\n"
        "        assert r\n") == []
