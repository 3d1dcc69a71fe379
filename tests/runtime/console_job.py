"""Two jobs the console test runs in a fresh Python process, as a user would run theirs:
``python console_job.py thread|process``: one that succeeds, then one whose action fails.
Nothing here configures logging."""

import os
import sys
import sysconfig
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent


def main(mode: str) -> None:
    sys.path[:0] = [str(ROOT), str(TESTS)]
    from pyflink.common import Configuration, Types
    from pyflink.datastream import StreamExecutionEnvironment

    from flink_agents_ltm.api.execution_environment import (
        AgentsExecutionEnvironment,
        AgentsOptions,
    )
    from runtime.agents_for_tests import BadInputAgent, SleepyAgent

    conf = Configuration()
    for key, value in {
        "python.execution-mode": mode,
        "python.pythonpath": os.pathsep.join([sysconfig.get_paths()["purelib"], str(ROOT),
                                              str(TESTS)]),
        "python.executable": sys.executable,
        "python.client.executable": sys.executable,
        "restart-strategy.type": "none",
        "parallelism.default": "1",
    }.items():
        conf.set_string(key, value)
    for agent, inputs, types in [
        (SleepyAgent(), [(k, n, 0.2) for n in range(3) for k in range(3)],
         [Types.INT(), Types.INT(), Types.FLOAT()]),
        (BadInputAgent(), [("k", 0, "raise")], [Types.STRING(), Types.INT(), Types.STRING()]),
    ]:
        env = StreamExecutionEnvironment.get_execution_environment(conf)
        agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
        agents_env.get_config().set(AgentsOptions.PROGRESS_INTERVAL_MS, 100)
        stream = env.from_collection(inputs, type_info=Types.TUPLE(types))
        out = agents_env.from_datastream(stream, key_selector=lambda r: r[0]).apply(agent)
        print("RESULTS", len(list(out.to_datastream().execute_and_collect())), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
