"""An agent job for the standalone cluster: keys' notes in long-term memory.

    scripts/pgvector-server status --output store.json      # 0600, password inside
    scripts/flink-cluster run -py e2e/jobs/ltm_agent_job.py -pyfs e2e/jobs -- \\
        --job-id my-job --keys 8 --notes 4 [--vector-store-file store.json] [--base-dir DIR]

The vector store comes from a file, never from argv (``ps`` shows it to every user, and
Flink's client logs the Python driver's command line) nor from an environment variable
(Flink's client logs the Python driver's whole environment).

Prints one ``RESULT {json}`` line per input (key, n, id, the key's notes as read back,
the PID of the Python worker that ran the action).
"""

import argparse
import json
import os
import sys

from pyflink.common import Configuration, Types
from pyflink.datastream import StreamExecutionEnvironment

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ltm_agents import NoteTakingAgent

from flink_agents_ltm.api.execution_environment import (
    AgentsExecutionEnvironment,
    AgentsOptions,
)
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions


def vector_store_of(args: argparse.Namespace, parser: argparse.ArgumentParser) -> dict | None:
    if not args.vector_store_file:
        return None
    with open(args.vector_store_file) as file:
        text = file.read()
    try:
        return json.loads(text)
    except ValueError as error:  # the text holds the password: say where, not what
        parser.error(f"{args.vector_store_file} is not valid JSON ({error})")
    return None


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False)  # --vector-store is no file name
    parser.add_argument("--job-id", required=True)
    parser.add_argument("--keys", type=int, default=8)
    parser.add_argument("--notes", type=int, default=4)
    parser.add_argument("--hold-ms", type=int, default=100)
    parser.add_argument("--mode", default="process", choices=["process", "thread"])
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--vector-store-file", metavar="FILE",
                        help="JSON file holding LongTermMemoryOptions.VECTOR_STORE (keep it "
                             "0600: `scripts/pgvector-server status --output FILE`)")
    parser.add_argument("--base-dir", help="LongTermMemoryOptions.BASE_DIR")
    parser.add_argument("--rendezvous", help="a folder where the first actions of two Python "
                        "workers wait for each other, so both hold their store at once")
    args = parser.parse_args()

    config = Configuration()
    config.set_string("python.execution-mode", args.mode)
    config.set_string("restart-strategy.type", "none")  # a failure fails the job, once
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(args.parallelism)

    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents = agents_env.get_config()
    agents.set(AgentsOptions.JOB_ID, args.job_id)
    vector_store = vector_store_of(args, parser)
    if vector_store is not None:
        agents.set(LongTermMemoryOptions.VECTOR_STORE, vector_store)
    if args.base_dir:
        agents.set(LongTermMemoryOptions.BASE_DIR, args.base_dir)

    hold_s = args.hold_ms / 1000
    meet = [args.rendezvous] if args.rendezvous else []
    inputs = [json.dumps([f"key-{k:02d}", n, hold_s, *meet])
              for n in range(args.notes) for k in range(args.keys)]
    stream = env.from_collection(inputs, type_info=Types.STRING())
    results = (agents_env.from_datastream(stream, key_selector=lambda r: json.loads(r)[0])
               .apply(NoteTakingAgent()).to_datastream())
    with results.execute_and_collect(f"ltm-agent-{args.job_id}") as lines:
        for line in lines:
            print("RESULT " + line, flush=True)


if __name__ == "__main__":
    main()
