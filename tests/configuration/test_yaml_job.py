"""A user's project folder: a job script, its agent in a module next to it, and the agent's
options and chat model in a YAML file. It runs in thread mode with no python.* option."""

import ast
import textwrap

import pytest

from tests.job_runner import failure, run_python

pytestmark = pytest.mark.cluster

AGENTS_MODULE = '''
import os

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.chat_models import ChatMessage
from flink_agents_ltm.api.events import InputEvent, OutputEvent


class DeskAgent(Agent):
    @action(InputEvent)
    async def answer(event, ctx):
        reply = await ctx.chat([ChatMessage("user", event.input)], model="desk_model")
        notes = ctx.long_term_memory.get_memory_set("notes")
        try:
            notes.add(event.input)
            stored = "stored"
        except ValueError as error:
            stored = str(error)
        ctx.send_event(OutputEvent((event.input, reply.content, stored, os.getpid())))
'''

AGENTS_YAML = '''
config:
  agents:
    job-id: desk-from-yaml
  long-term-memory.max-item-length: "15"
chat_model_setups:
  - name: desk_model
    clazz: scripted
    answers: ["Hello from the model declared in YAML"]
'''

JOB = '''
import os
from pathlib import Path

from pyflink.common import Configuration
from pyflink.datastream import StreamExecutionEnvironment

from desk_agents import DeskAgent
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment

config = Configuration()
config.set_string("python.execution-mode", "thread")
env = StreamExecutionEnvironment.get_execution_environment(config)
env.set_parallelism(1)
agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
agents_env.load_yaml(Path(__file__).with_name("agents.yaml"))
questions = env.from_collection(["short question", "a much longer question"])
out = (agents_env.from_datastream(questions, key_selector=lambda q: q)
       .apply(DeskAgent()).to_datastream())
with out.execute_and_collect("yaml-project") as results:
    for question, reply, stored, worker_pid in results:
        print(repr((question, reply, stored, worker_pid == os.getpid())))
'''


def test_a_project_with_its_agent_module_and_yaml_runs_in_thread_mode(user_dirs):
    cwd, scratch, home = user_dirs
    project = cwd / "my-project"
    project.mkdir()
    (project / "desk_agents.py").write_text(textwrap.dedent(AGENTS_MODULE))
    (project / "agents.yaml").write_text(textwrap.dedent(AGENTS_YAML))
    (project / "job.py").write_text(textwrap.dedent(JOB))

    result = run_python([str(project / "job.py")], cwd, scratch, home)
    assert result.returncode == 0, failure(result)
    rows = sorted(ast.literal_eval(line) for line in result.stdout.splitlines()
                  if line.startswith("("))
    assert rows == [
        # the model is the YAML's; max-item-length "15" is the YAML's; False: the agent ran
        # in the TaskManager's JVM (thread mode), not in this client process
        ("a much longer question", "Hello from the model declared in YAML",
         "item 0 has 22 characters, more than the 15 allowed "
         "(long-term-memory.max-item-length); split or summarize it", False),
        ("short question", "Hello from the model declared in YAML", "stored", False),
    ]
    assert [p.name for p in home.iterdir()] == ["desk-from-yaml"]
