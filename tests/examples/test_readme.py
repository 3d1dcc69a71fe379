"""What the README shows a newcomer works as shown."""

import ast
import re

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from tests.job_runner import ROOT

README = (ROOT / "README.md").read_text()


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, re.S)


def section(heading: str) -> str:
    start = README.index(f"\n{heading}\n")
    end = README.find("\n#", start + len(heading) + 2)
    return README[start:end]


def test_every_import_the_readme_shows_works():
    imports = [node for block in blocks("python") for node in ast.walk(ast.parse(block))
               if isinstance(node, ast.ImportFrom) and node.module.startswith("flink_agents_ltm")]
    assert len(imports) >= 12
    for node in imports:
        exec(compile(ast.Module([node], []), "README.md", "exec"), {})


def test_the_harness_example_runs_as_shown_on_the_readmes_own_support_agent(monkeypatch,
                                                                             tmp_path):
    monkeypatch.setenv("FLINK_AGENTS_LTM_HOME", str(tmp_path))  # the job's memory starts empty
    (agent,) = [block for block in blocks("python") if "class SupportAgent(" in block]
    (example,) = re.findall(r"```python\n(.*?)```", section("### Testing an agent without "
                                                            "Flink"), re.S)
    namespace: dict = {"__name__": "readme"}
    exec(compile(agent, "README.md", "exec"), namespace)
    reply = {"customer": "ann", "message": 1, "recalled": []}
    checked = []
    try:
        for statement in ast.parse(example).body:  # the README's lines, one at a time
            exec(compile(ast.Module([statement], []), "README.md", "exec"), namespace)
            line = ast.get_source_segment(example, statement)
            harness = namespace.get("harness")
            if line.startswith("harness.process_element("):  # parks on its durable call
                assert harness.outputs == [] and len(harness.pool.pending()) == 1
            elif line.startswith("harness.pool.complete_all("):
                assert harness.pool.pending() == [] and harness.outputs == []
            elif line.startswith("harness.advance("):  # resumes and completes
                assert harness.outputs == [reply]
            elif line.startswith("restored.end_input("):
                # Replayed from the checkpoint: the counter is not counted twice, the
                # recall sees what the first attempt stored, and stores it only once.
                restored = namespace["restored"]
                assert restored.outputs == [dict(reply, recalled=["hi"])]
                memory = restored.memory.get()
                memory.switch_context("ann", None, True)
                assert [i.value for i in memory.get_memory_set("conversation").get()] == ["hi"]
            else:
                continue
            checked.append(line.split("(")[0])
    finally:
        for name in ("harness", "restored"):
            if name in namespace:
                namespace[name].close()
    assert checked == ["harness.process_element", "harness.pool.complete_all",
                       "harness.advance", "restored.end_input"]


def test_the_options_tables_list_every_option_with_its_default():
    rows = dict(re.findall(r"^\| `([a-z.-]+)` \| ([^|]+) \|", README, re.M))
    for option in AgentsOptions.all() + LongTermMemoryOptions.all():
        assert option.key in rows, f"{option.key} is missing from the README's tables"
    shown = 0
    for option in AgentsOptions.all() + LongTermMemoryOptions.all():
        if isinstance(option.default, bool):
            assert rows[option.key].strip() == str(option.default).lower(), option.key
        elif isinstance(option.default, int | float):
            assert rows[option.key].strip() == str(option.default), option.key
        else:
            continue
        shown += option in LongTermMemoryOptions.all()
    assert shown == 7  # the four size limits, the search threshold and two audit switches


def test_the_yaml_file_the_readme_shows_loads(tmp_path):
    (yaml_text,) = re.findall(r"```yaml\n(.*?)```", section("### Options and resources in a "
                                                           "YAML file"), re.S)
    path = tmp_path / "agents.yaml"
    path.write_text(yaml_text)
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=object())
    agents_env.load_yaml(path)
    assert agents_env.get_config().get(AgentsOptions.JOB_ID) == "support-bot"
    assert agents_env.get_config().get(AgentsOptions.ASYNC_TIMEOUT_MS) == 30_000
    assert sorted(agents_env.resources) == ["assistant", "embedder", "shared"]


def test_every_make_target_the_readme_names_exists():
    makefile = (ROOT / "Makefile").read_text()
    named = set(re.findall(r"`make ([a-z0-9-]+)", README))
    assert {"demo", "test", "example-first-agent", "example-support-chat",
            "example-recovery"} <= named
    for target in named:
        assert re.search(rf"^{target}:", makefile, re.M), target
