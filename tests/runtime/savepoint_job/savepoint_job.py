"""The job of the savepoint fixture, runnable by this build and by the build that wrote the
fixture: inputs ``--first`` .. ``--first + --events - 1`` over ``--keys`` keys through
:class:`savepoint_agents.SavepointAgent`, each output appended to
``$SAVEPOINT_JOB_DIR/outputs.log``.

    SAVEPOINT_JOB_DIR=D python savepoint_job.py --events 240 --stop-after 80 --savepoint-dir S
    SAVEPOINT_JOB_DIR=D python savepoint_job.py --events 240 --restore S/savepoint-...

``--stop-after N``: once N outputs are written, stop with a savepoint into
``--savepoint-dir`` and print ``SAVEPOINT <path>``; else run to the end. The long-term
memory is the embedded store under ``$SAVEPOINT_JOB_DIR``, the action-state store SQLite
beside it.
"""

import argparse
import os
import sys
import time

from pyflink.common import Configuration, Types, WatermarkStrategy
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.connectors.number_seq import NumberSequenceSource

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from savepoint_agents import FOLDER, SavepointAgent

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions

JOB_ID = "savepoint-fixture"


def written_so_far(path: str) -> int:
    if not os.path.exists(path):
        return 0
    with open(path) as written:
        return sum(1 for _ in written)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--events", type=int, default=240)
    parser.add_argument("--keys", type=int, default=16)
    parser.add_argument("--rate", type=float, default=16)
    parser.add_argument("--hold-ms", type=int, default=500)
    parser.add_argument("--stop-after", type=int)
    parser.add_argument("--savepoint-dir")
    parser.add_argument("--restore")
    args = parser.parse_args()
    folder = os.environ[FOLDER]

    config = Configuration()
    config.set_string("python.fn-execution.bundle.size", "1")
    config.set_string("execution.checkpointing.interval", "1 s")
    if args.restore:
        config.set_string("execution.savepoint.path", args.restore)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.set_max_parallelism(16)

    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents = agents_env.get_config()
    agents.set(AgentsOptions.JOB_ID, JOB_ID)
    agents.set(AgentsOptions.ACTION_STATE_STORE, "sqlite")
    agents.set(LongTermMemoryOptions.EMBEDDING_MODEL_SETUP, "hashing")
    agents.set(LongTermMemoryOptions.BASE_DIR, folder)

    pause_s, hold_s, keys = 2 / args.rate, args.hold_ms / 1000, args.keys

    def throttled(n):
        import time
        time.sleep(pause_s)
        return (f"k{n % keys}", n, hold_s)

    outputs_log = os.path.join(folder, "outputs.log")

    def written(line):
        fd = os.open(outputs_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a") as out:
            out.write(line + "\n")
        return line

    numbers = env.from_source(NumberSequenceSource(args.first, args.first + args.events - 1),
                              WatermarkStrategy.no_watermarks(), "numbers").uid("numbers")
    inputs = numbers.map(throttled, output_type=Types.TUPLE(
        [Types.STRING(), Types.LONG(), Types.DOUBLE()])).uid("throttle")
    results = (agents_env.from_datastream(inputs, key_selector=lambda r: r[0])
               .apply(SavepointAgent()).to_datastream()).uid("agent")
    (results.map(written, output_type=Types.STRING()).uid("outputs")
     .filter(lambda line: False).uid("nothing").print())
    if args.stop_after is None:
        env.execute("savepoint-fixture")
        return
    client = env.execute_async("savepoint-fixture")
    while written_so_far(outputs_log) < args.stop_after:
        time.sleep(0.1)
    from pyflink.java_gateway import get_gateway

    canonical = get_gateway().jvm.org.apache.flink.core.execution.SavepointFormatType.CANONICAL
    # (PyFlink's JobClient.stop_with_savepoint passes the arguments of an older Flink)
    path = client._j_job_client.stopWithSavepoint(False, args.savepoint_dir, canonical).get()
    print(f"SAVEPOINT {path}", flush=True)


if __name__ == "__main__":
    main()
