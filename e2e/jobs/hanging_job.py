"""A bounded job whose every durable call hangs: ``--calls`` inputs (one key each), each
one call that sleeps ``--hang-s`` and leaves ``<folder>/started-<key>`` when it starts;
durable-async capacity ``--capacity``, call timeout ``--timeout-s``. The input ends at once,
so the keyed tasks wait in the end-of-input drain (or in a submit to a full pool) until
the job is cancelled. Submit it detached:

    scripts/flink-cluster run -d -py e2e/jobs/hanging_job.py -pyfs e2e/jobs \\
        --name hang --mode thread --folder /tmp/markers
"""

import argparse
import os
import sys

from pyflink.common import Configuration, Types
from pyflink.datastream import StreamExecutionEnvironment

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hanging_agents import HangingCallsAgent

from flink_agents_ltm.api.execution_environment import (
    AgentsExecutionEnvironment,
    AgentsOptions,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", required=True, help="the job's name (pipeline.name)")
    parser.add_argument("--folder", required=True, help="where the calls leave their markers")
    parser.add_argument("--mode", default="process", choices=["process", "thread"])
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--calls", type=int, default=8)
    parser.add_argument("--capacity", type=int, default=4)
    parser.add_argument("--timeout-s", type=float, default=600)
    parser.add_argument("--hang-s", type=float, default=3600)
    args = parser.parse_args()

    config = Configuration()
    for key, value in {
        "pipeline.name": args.name,
        "python.execution-mode": args.mode,
        "python.fn-execution.bundle.size": "1",
        "restart-strategy.type": "none",
    }.items():
        config.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(args.parallelism)
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents = agents_env.get_config()
    agents.set(AgentsOptions.JOB_ID, args.name)
    agents.set(AgentsOptions.ASYNC_CAPACITY, args.capacity)
    agents.set(AgentsOptions.ASYNC_TIMEOUT_MS, int(args.timeout_s * 1000))

    inputs = env.from_collection(
        [(f"k{n}", args.folder, args.hang_s) for n in range(args.calls)],
        type_info=Types.TUPLE([Types.STRING(), Types.STRING(), Types.DOUBLE()]))
    outputs = (agents_env.from_datastream(inputs, key_selector=lambda r: r[0])
               .apply(HangingCallsAgent()).to_datastream())
    outputs.print()
    env.execute(args.name)


if __name__ == "__main__":
    main()
