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


def test_the_options_tables_list_every_option_with_its_default():
    rows = dict(re.findall(r"^\| `([a-z.-]+)` \| ([^|]+) \|", README, re.M))
    for option in AgentsOptions.all() + LongTermMemoryOptions.all():
        assert option.key in rows, f"{option.key} is missing from the README's tables"
    for option in AgentsOptions.all():
        if isinstance(option.default, bool):
            assert rows[option.key].strip() == str(option.default).lower()
        elif isinstance(option.default, int):
            assert rows[option.key].strip() == str(option.default)


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
