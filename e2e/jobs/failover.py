"""The execution environment of the e2e jobs that survive a TaskManager kill: checkpoints
at an interval, and a fixed-delay restart strategy with enough attempts to outlast the
cluster's heartbeat timeout (20 s) after a TaskManager died (the jobs and their tests share
this)."""

from pyflink.common import Configuration
from pyflink.datastream import StreamExecutionEnvironment


def failover_environment(*, mode: str, bundle_size: int, checkpoint_interval_ms: int,
                         parallelism: int) -> StreamExecutionEnvironment:
    config = Configuration()
    for key, value in {
        "python.execution-mode": mode,
        "python.fn-execution.bundle.size": str(bundle_size),
        "execution.checkpointing.interval": f"{checkpoint_interval_ms} ms",
        "restart-strategy.type": "fixed-delay",
        "restart-strategy.fixed-delay.attempts": "15",
        "restart-strategy.fixed-delay.delay": "2 s",
    }.items():
        config.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(parallelism)
    return env
