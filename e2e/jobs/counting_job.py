"""A bounded, throttled stream through an agent that counts and remembers every input.

    scripts/flink-cluster run -py e2e/jobs/counting_job.py -pyfs e2e/jobs -- \\
        --job-id my-job --events 3200 --keys 64 --rate 400 --vector-store-file store.json

The source is a NumberSequenceSource slowed by a Python map to about ``--rate`` events per
second; input n goes to key ``k{n % keys}``, or with ``--late-keys`` to one of the late keys
of ``stream_layout`` (whose first input holds ``--late-hold-ms`` after its memory write,
its calls logged in ``<base-dir>/calls.log``); with ``--base-dir`` every input is charged
once, a line in that log (the test's external counter). Prints one ``RESULT {json}`` line per output
(exactly once per input, checkpointing on, as the results arrive) and ``DONE`` at the end.
Without ``--vector-store-file`` the memory is the embedded store under ``--base-dir``.
"""

import argparse
import json
import os
import sys

from pyflink.common import Types, WatermarkStrategy
from pyflink.datastream.connectors.number_seq import NumberSequenceSource

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from failover import failover_environment
from ltm_agents import CountingAgent
from stream_layout import first_inputs, key_of, late_inputs

from flink_agents_ltm.api.execution_environment import (
    AgentsExecutionEnvironment,
    AgentsOptions,
)
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--job-id", required=True)
    parser.add_argument("--events", type=int, default=3200)
    parser.add_argument("--keys", type=int, default=64)
    parser.add_argument("--rate", type=float, default=400, help="events per second")
    parser.add_argument("--mode", default="process", choices=["process", "thread"])
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--checkpoint-interval-ms", type=int, default=1000)
    parser.add_argument("--bundle-size", type=int, default=1,
                        help="python.fn-execution.bundle.size (1: the worst case at the end)")
    parser.add_argument("--vector-store-file",
                        help="a file holding LongTermMemoryOptions.VECTOR_STORE as JSON (a file, "
                             "so that its password is in no command line); without it, the "
                             "embedded store under --base-dir")
    parser.add_argument("--base-dir", help="LongTermMemoryOptions.BASE_DIR")
    parser.add_argument("--late-keys", type=int, default=0,
                        help="keys with two inputs, the first mid-stream, the second at the end")
    parser.add_argument("--action-state-store", default="none",
                        help="AgentsOptions.ACTION_STATE_STORE (none, sqlite, module:callable)")
    parser.add_argument("--late-hold-ms", type=int, default=500,
                        help="how long a late key's first input stays mid-action after its add")
    args = parser.parse_args()
    if args.late_keys and not args.base_dir:
        parser.error("--late-keys needs --base-dir (the late keys' calls are logged there)")

    env = failover_environment(mode=args.mode, bundle_size=args.bundle_size,
                               checkpoint_interval_ms=args.checkpoint_interval_ms,
                               parallelism=args.parallelism)

    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents = agents_env.get_config()
    agents.set(AgentsOptions.JOB_ID, args.job_id)
    agents.set(AgentsOptions.ACTION_STATE_STORE, args.action_state_store)
    if args.vector_store_file:
        with open(args.vector_store_file) as store:
            agents.set(LongTermMemoryOptions.VECTOR_STORE, json.load(store))
    agents.set(LongTermMemoryOptions.EMBEDDING_MODEL_SETUP, "hashing")
    if args.base_dir:
        agents.set(LongTermMemoryOptions.BASE_DIR, args.base_dir)

    pause_s = args.parallelism / args.rate  # each source subtask emits its share
    late = late_inputs(args.events, args.late_keys, runs=args.parallelism)
    holds = dict.fromkeys(first_inputs(late), args.late_hold_ms / 1000)
    log_dir = args.base_dir or ""

    def throttled(n, keys=args.keys, pause_s=pause_s, late=late, holds=holds):
        import time
        time.sleep(pause_s)
        return (key_of(n, keys, late), n, holds.get(n, 0.0), log_dir)

    numbers = env.from_source(NumberSequenceSource(0, args.events - 1),
                              WatermarkStrategy.no_watermarks(), "numbers")
    inputs = numbers.map(throttled, output_type=Types.TUPLE(
        [Types.STRING(), Types.LONG(), Types.DOUBLE(), Types.STRING()]))
    results = (agents_env.from_datastream(inputs, key_selector=lambda r: r[0])
               .apply(CountingAgent()).to_datastream())
    with results.execute_and_collect(f"counting-{args.job_id}") as lines:
        for line in lines:
            print("RESULT " + line, flush=True)
    print("DONE", flush=True)


if __name__ == "__main__":
    main()
