"""What the README and the documentation site (docs/*.md) show a newcomer works as shown."""

import ast
import re
from importlib import resources
from pathlib import Path

import pyflink
import yaml

from flink_agents_ltm.api.execution_environment import (
    AgentsConfiguration,
    AgentsExecutionEnvironment,
    AgentsOptions,
)
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from tests.examples.docs_pages import DOCS, README, block_after, blocks, pages, section
from tests.job_runner import ROOT

FIRST_AGENT = resources.files("flink_agents_ltm.examples").joinpath("first_agent.py")


def test_every_import_the_pages_show_works():
    imports = [node for block in blocks("python") for node in ast.walk(ast.parse(block))
               if isinstance(node, ast.ImportFrom) and node.module.startswith("flink_agents_ltm")]
    assert len(imports) >= 12
    for node in imports:
        exec(compile(ast.Module([node], []), "docs", "exec"), {})


def test_the_readmes_agent_is_the_quickstarts_example_file_verbatim():
    (example,) = blocks("python", README)
    imports, body = re.match(r"((?:from .*\n)+)\n\n(.*)", example, re.S).groups()
    assert body.strip() and body in FIRST_AGENT.read_text()
    assert all(line in FIRST_AGENT.read_text() for line in imports.splitlines())


def test_the_harness_example_runs_as_shown_on_the_quickstarts_support_agent(monkeypatch,
                                                                            tmp_path):
    monkeypatch.setenv("FLINK_AGENTS_LTM_HOME", str(tmp_path))  # the job's memory starts empty
    (agent,) = [block for block in blocks("python", DOCS / "quickstart.md")
                if "class SupportAgent(" in block]
    example = block_after(DOCS / "writing-agents.md", "## Testing an agent without Flink")
    namespace: dict = {"__name__": "docs"}
    exec(compile(agent, "quickstart.md", "exec"), namespace)
    reply = {"customer": "ann", "message": 1, "recalled": []}
    checked = []
    try:
        for statement in ast.parse(example).body:  # the page's lines, one at a time
            exec(compile(ast.Module([statement], []), "writing-agents.md", "exec"), namespace)
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


def option_rows(page: Path) -> dict[str, str]:
    return dict(re.findall(r"^\| `([a-z.-]+)` \| ([^|]+) \|", page.read_text(), re.M))


def test_the_options_tables_list_every_option_with_its_default():
    """The runtime's options on the configuration page, long-term memory's on its page."""
    shown = 0
    for options, page in ((AgentsOptions.all(), "configuration.md"),
                          (LongTermMemoryOptions.all(), "long-term-memory.md")):
        rows = option_rows(DOCS / page)
        for option in options:
            assert option.key in rows, f"{option.key} is missing from the table of {page}"
            if isinstance(option.default, bool):
                assert rows[option.key].strip() == str(option.default).lower(), option.key
            elif isinstance(option.default, int | float):
                assert rows[option.key].strip() == str(option.default), option.key
            else:
                continue
            shown += option in LongTermMemoryOptions.all()
    assert shown == 9  # the four size limits, the search threshold, two audit switches,
    # refresh-on-read and the rerank candidates


def test_the_yaml_file_the_configuration_page_shows_loads(tmp_path):
    path = tmp_path / "agents.yaml"
    path.write_text(block_after(DOCS / "configuration.md",
                                "## Options and resources in a YAML file", "yaml"))
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=object())
    agents_env.load_yaml(path)
    assert agents_env.get_config().get(AgentsOptions.JOB_ID) == "support-bot"
    assert agents_env.get_config().get(AgentsOptions.ASYNC_TIMEOUT_MS) == 30_000
    assert sorted(agents_env.resources) == ["assistant", "embedder", "orders", "shared", "triage"]


def test_the_flink_deployment_runs_the_jar_pyflink_ships_with_known_options_and_no_secret():
    """What the Kubernetes manifest says that can be checked without a Kubernetes cluster."""
    (manifest,) = [yaml.safe_load(block) for block in blocks("yaml", DOCS / "cluster.md")
                   if "kind: FlinkDeployment" in block]
    assert manifest["apiVersion"] == "flink.apache.org/v1beta1"
    spec, job = manifest["spec"], manifest["spec"]["job"]
    assert job["entryClass"] == "org.apache.flink.client.python.PythonDriver"
    jar = job["jarURI"].removeprefix("local:///opt/flink/opt/")
    assert (Path(pyflink.__file__).parent / "opt" / jar).is_file(), jar
    assert job["args"][job["args"].index("-py") + 1].endswith("/my_job.py")
    assert job["args"][-2:] == ["--vector-store-file", "/opt/flink/secrets/store.json"]
    config = spec["flinkConfiguration"]
    assert all(isinstance(value, str) for value in config.values())  # the CRD's map of strings
    agents_config = AgentsExecutionEnvironment.get_execution_environment(env=object()).get_config()
    ours = {key: value for key, value in config.items()
            if key.startswith(("agents.", "long-term-memory."))}
    for key, value in ours.items():
        agents_config.set_string(key, value)  # refuses an unknown key or a wrong value
    assert agents_config.get(AgentsOptions.ASYNC_TIMEOUT_MS) == 30_000
    assert not re.search(r"password|secret:", str(config).lower())


def test_every_make_target_the_pages_name_exists():
    makefile = (ROOT / "Makefile").read_text()
    named = {target for page in pages()
             for target in re.findall(r"`make ([a-z0-9-]+)", page.read_text())}
    assert {"demo", "test", "docs", "example-first-agent", "example-support-chat",
            "example-recovery"} <= named
    for target in named:
        assert re.search(rf"^{target}:", makefile, re.M), target


def test_the_readme_is_a_landing_page_whose_links_reach_the_site():
    text = README.read_text()
    assert len(text.splitlines()) < 200
    assert "make demo" in section(README, "## Two commands")
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", text)
    assert len(links) >= 10
    for link in links:
        assert (ROOT / link).is_file(), link


COMING_FROM = DOCS / "coming-from-flink-agents.md"


def test_the_flink_agents_config_yaml_the_coming_from_page_shows_sets_what_it_says():
    from flink_agents_ltm.api.flink_options import read_agent_options

    def flat(tree, prefix=""):  # as Flink flattens config.yaml
        for key, value in tree.items():
            if isinstance(value, dict):
                yield from flat(value, f"{prefix}{key}.")
            else:
                yield f"{prefix}{key}", str(value).lower() if value is True else str(value)

    (document,) = blocks("yaml", COMING_FROM)
    config = AgentsConfiguration()
    read_agent_options(dict(flat(yaml.safe_load(document))), config, "config.yaml")
    assert config.to_dict() == {
        "agents.job-id": "support-bot", "agents.error-handling": "ignore",
        "agents.durable-async.capacity": 8, "agents.short-term-memory.ttl-ms": None,
        "long-term-memory.chat-model-setup": "my_chat_model",
        "long-term-memory.embedding-model-setup": "my_embedding_model",
        "long-term-memory.vector-store": "my_vector_store"}


def test_the_flink_agents_program_the_coming_from_page_shows_sets_our_options():
    (program,) = blocks("python", COMING_FROM)
    namespace: dict = {}
    exec(compile(program, COMING_FROM.name, "exec"), namespace)
    assert namespace["config"].to_dict() == {
        AgentsOptions.JOB_ID.key: "my_job",
        LongTermMemoryOptions.CHAT_MODEL_SETUP.key: "my_chat_model",
        LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key: "my_embedding_model",
        LongTermMemoryOptions.VECTOR_STORE.key: "my_vector_store"}
