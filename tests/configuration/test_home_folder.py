"""Every file the project writes by default lives under one home folder, found by one rule:
the job's base-dir, else $FLINK_AGENTS_LTM_HOME, else ~/.flink-agents-ltm."""

import ast
from pathlib import Path

import pytest

import flink_agents_ltm
from flink_agents_ltm.api.event_log import default_file
from flink_agents_ltm.api.home import home, home_source
from flink_agents_ltm.api.job_errors import JobFailureShaper
from flink_agents_ltm.api.options import AgentsConfiguration, LongTermMemoryOptions
from flink_agents_ltm.integrations.mem0.memory_factory import StoreSpec
from flink_agents_ltm.runtime.action_state.sqlite import default_path

PACKAGE = Path(flink_agents_ltm.__file__).parent


def writers(base_dir):
    """Where each default file goes, for a job configured with ``base_dir`` (or none)."""
    values = {LongTermMemoryOptions.AUDIT_LOG.key: True}
    if base_dir:
        values[LongTermMemoryOptions.BASE_DIR.key] = str(base_dir)
    config = AgentsConfiguration(values)
    return {
        "action state": default_path("job", config),
        "event log": default_file(str(base_dir) if base_dir else None),
        "audit log": Path(LongTermMemoryOptions.audit_log(config).path),
        "embedded store": StoreSpec("job", base_dir=base_dir).job_dir(),
    }


def test_without_configuration_files_go_under_the_default_home(monkeypatch, tmp_path):
    monkeypatch.delenv("FLINK_AGENTS_LTM_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert home() == tmp_path / ".flink-agents-ltm"
    assert home_source() == "the default"
    for what, path in {**writers(None),
                       "job traces": JobFailureShaper("job", None).logs}.items():
        assert path.is_relative_to(tmp_path / ".flink-agents-ltm"), what


def test_the_variable_moves_every_file(monkeypatch, tmp_path):
    monkeypatch.setenv("FLINK_AGENTS_LTM_HOME", str(tmp_path / "elsewhere"))
    assert home_source() == "$FLINK_AGENTS_LTM_HOME"
    for what, path in {**writers(None),
                       "job traces": JobFailureShaper("job", None).logs}.items():
        assert path.is_relative_to(tmp_path / "elsewhere"), what


def test_a_jobs_base_dir_wins_over_the_variable(monkeypatch, tmp_path):
    monkeypatch.setenv("FLINK_AGENTS_LTM_HOME", str(tmp_path / "variable"))
    for what, path in writers(tmp_path / "base").items():
        assert path.is_relative_to(tmp_path / "base"), what
    assert home_source(tmp_path / "base") == "the configured base-dir"


def test_a_base_dir_with_a_tilde_is_the_users_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert StoreSpec("job", base_dir="~/memories").job_dir().is_relative_to(
        tmp_path / "memories")


@pytest.mark.parametrize("module", sorted(
    str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if p.name != "home.py"))
def test_no_other_module_knows_the_rule(module):
    tree = ast.parse((PACKAGE / module).read_text())
    literals = [node.value for node in ast.walk(tree)
                if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    docstrings = {ast.get_docstring(node, clean=False) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef
                                | ast.AsyncFunctionDef)}
    rules = [text for text in literals if text not in docstrings
             and text in ("FLINK_AGENTS_LTM_HOME", "~/.flink-agents-ltm", ".flink-agents-ltm")]
    assert not rules, f"{module} spells the home folder's rule itself; ask api.home"
