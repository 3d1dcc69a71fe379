"""A ReAct agent whose tools are an MCP server's, on a bounded, throttled stream.

    scripts/flink-cluster run -py e2e/jobs/react_mcp_job.py -pyfs e2e/jobs -- \\
        --job-id my-job --events 120 --keys 12 --rate 6 --settings-file settings.json

``--settings-file`` (keep it 0600) holds ``{"endpoint": ..., "bearer_token": ...,
"vector_store": {...}}``: the order server's streamable HTTP endpoint and token (a file, so
that the token is in no command line and no environment Flink logs) and the pgvector store
that the PostgreSQL action-state store writes to. Input ``n`` is the question
``"c{n % keys} O-{n}"`` on key ``c{n % keys}``; the scripted model (``react_mcp_model``)
asks for ``lookup_order("O-{n}")``, which the server counts, and answers with the
question and the tool's answer. With ``--start-file`` each source subtask waits for that
file after its first input. Prints one ``RESULT {json}`` line per output (exactly once per
input with checkpointing on, as the results arrive) and ``DONE`` at the end.
"""

import argparse
import json
import os
import sys

from pyflink.common import Types, WatermarkStrategy
from pyflink.datastream.connectors.number_seq import NumberSequenceSource

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from failover import failover_environment
from react_mcp_model import respond

from flink_agents_ltm.api.agents.react_agent import ReActAgent
from flink_agents_ltm.api.execution_environment import (
    AgentsExecutionEnvironment,
    AgentsOptions,
)
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.resources import ResourceDescriptor, ResourceType
from flink_agents_ltm.integrations.chat_models.scripted import ScriptedChatModelSetup
from flink_agents_ltm.integrations.mcp import MCPServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     allow_abbrev=False)
    parser.add_argument("--job-id", required=True)
    parser.add_argument("--events", type=int, default=120)
    parser.add_argument("--keys", type=int, default=12)
    parser.add_argument("--rate", type=float, default=6, help="inputs per second")
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--checkpoint-interval-ms", type=int, default=1000)
    parser.add_argument("--settings-file", required=True, metavar="FILE")
    parser.add_argument("--start-file", metavar="FILE",
                        help="after its first input, each source subtask waits until FILE "
                             "exists (the test makes it once the server saw a call: the "
                             "agent's operator takes a while to open, and a source that ran "
                             "ahead meanwhile would give no steady pace)")
    parser.add_argument("--action-state-store", default="postgres",
                        help="AgentsOptions.ACTION_STATE_STORE (postgres, none, ...)")
    args = parser.parse_args()
    with open(args.settings_file) as file:
        settings = json.load(file)

    env = failover_environment(mode="process", bundle_size=1,
                               checkpoint_interval_ms=args.checkpoint_interval_ms,
                               parallelism=args.parallelism)

    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents = agents_env.get_config()
    agents.set(AgentsOptions.JOB_ID, args.job_id)
    agents.set(AgentsOptions.ACTION_STATE_STORE, args.action_state_store)
    agents.set(LongTermMemoryOptions.VECTOR_STORE, settings["vector_store"])
    agents_env.add_resource("orders", ResourceType.MCP_SERVER, ResourceDescriptor(
        MCPServer, endpoint=settings["endpoint"], bearer_token=settings["bearer_token"],
        timeout=20))
    agents_env.add_resource("assistant", ResourceType.CHAT_MODEL,
                            ResourceDescriptor(ScriptedChatModelSetup, respond=respond))

    pause_s = args.parallelism / args.rate  # each source subtask emits its share

    def throttled(n, keys=args.keys, pause_s=pause_s, start_file=args.start_file,
                  emitted=[]):  # noqa: B006  # per source subtask: its worker's copy
        import os
        import time
        while start_file and len(emitted) == 1 and not os.path.exists(start_file):
            time.sleep(0.05)  # the subtask's second input waits
        if len(emitted) < 2:
            emitted.append(n)
        time.sleep(pause_s)
        return f"c{n % keys} O-{n}"

    numbers = env.from_source(NumberSequenceSource(0, args.events - 1),
                              WatermarkStrategy.no_watermarks(), "numbers")
    questions = numbers.map(throttled, output_type=Types.STRING())
    answers = (agents_env.from_datastream(questions, key_selector=lambda q: q.split()[0])
               .apply(ReActAgent(chat_model="assistant", tools=["orders"]))
               .to_datastream())
    with answers.execute_and_collect(f"react-mcp-{args.job_id}") as lines:
        for line in lines:
            print("RESULT " + json.dumps(line), flush=True)
    print("DONE", flush=True)


if __name__ == "__main__":
    main()
