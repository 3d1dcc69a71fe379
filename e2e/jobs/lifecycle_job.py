"""One run of a job in its ordinary life: inputs ``--first`` .. ``--first + --events - 1``,
throttled, through an agent that counts, charges (a slow durable call) and remembers each.

    scripts/flink-cluster run [-s SAVEPOINT] -py e2e/jobs/lifecycle_job.py -pyfs e2e/jobs -- \\
        --job-id my-job --first 0 --events 600 --keys 16 --rate 100 --base-dir DIR

Each output is appended to ``<base-dir>/outputs.log`` as one JSON line by the operator after
the agent (not through ``execute_and_collect``, whose sink cannot resume from a savepoint), so
the job can be stopped with a savepoint and resumed (``-s``) at another parallelism. Charges
and memory writes are logged in ``<base-dir>/calls.log`` (:mod:`ltm_agents`). Without
``--vector-store-file`` the memory is the embedded store under ``--base-dir``.
"""

import argparse
import json
import os
import sys

from pyflink.common import Configuration, Types, WatermarkStrategy
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.connectors.number_seq import NumberSequenceSource

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ltm_agents import LifecycleAgent

from flink_agents_ltm.api.execution_environment import (
    AgentsExecutionEnvironment,
    AgentsOptions,
)
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--job-id", required=True)
    parser.add_argument("--first", type=int, default=0, help="the first input's number")
    parser.add_argument("--events", type=int, default=600)
    parser.add_argument("--keys", type=int, default=16)
    parser.add_argument("--rate", type=float, default=100, help="events per second")
    parser.add_argument("--hold-ms", type=int, default=1000, help="how long a charge takes")
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--mode", default="process", choices=["process", "thread"])
    parser.add_argument("--base-dir", required=True, help="LongTermMemoryOptions.BASE_DIR")
    parser.add_argument("--vector-store-file",
                        help="a file holding LongTermMemoryOptions.VECTOR_STORE as JSON")
    parser.add_argument("--action-state-store", default="sqlite")
    args = parser.parse_args()

    config = Configuration()
    for key, value in {
        "python.execution-mode": args.mode,
        "python.fn-execution.bundle.size": "1",
        "execution.checkpointing.interval": "1 s",
    }.items():
        config.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(args.parallelism)
    env.set_max_parallelism(16)  # the same key groups whatever the parallelism of a run

    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents = agents_env.get_config()
    agents.set(AgentsOptions.JOB_ID, args.job_id)
    agents.set(AgentsOptions.ACTION_STATE_STORE, args.action_state_store)
    agents.set(AgentsOptions.ASYNC_CAPACITY, 64)
    agents.set(LongTermMemoryOptions.EMBEDDING_MODEL_SETUP, "hashing")
    agents.set(LongTermMemoryOptions.BASE_DIR, args.base_dir)
    if args.vector_store_file:
        with open(args.vector_store_file) as store:
            agents.set(LongTermMemoryOptions.VECTOR_STORE, json.load(store))

    pause_s = args.parallelism / args.rate  # each source subtask emits its share
    hold_s = args.hold_ms / 1000
    keys = args.keys
    log_dir = args.base_dir

    def throttled(n):
        import time
        time.sleep(pause_s)
        return (f"k{n % keys}", n, hold_s, log_dir)

    outputs_log = os.path.join(args.base_dir, "outputs.log")

    def written(line):
        fd = os.open(outputs_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a") as out:
            out.write(line + "\n")
        return line

    numbers = env.from_source(NumberSequenceSource(args.first, args.first + args.events - 1),
                              WatermarkStrategy.no_watermarks(), "numbers").uid("numbers")
    inputs = numbers.map(throttled, output_type=Types.TUPLE(
        [Types.STRING(), Types.LONG(), Types.DOUBLE(), Types.STRING()])).uid("throttle")
    results = (agents_env.from_datastream(inputs, key_selector=lambda r: r[0])
               .apply(LifecycleAgent()).to_datastream())
    results.uid("agent")
    (results.map(written, output_type=Types.STRING()).uid("outputs")
     .filter(lambda line: False).print())
    env.execute(f"lifecycle-{args.job_id}")


if __name__ == "__main__":
    main()
