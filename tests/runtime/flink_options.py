"""Flink options the cluster tests share."""


def checkpointing(work_dir, **options):
    """Flink options of a job that checkpoints into ``<work_dir>/checkpoints`` every 200 ms;
    unaligned, so that checkpoints complete while a slow action holds back the input."""
    return {
        "execution.checkpointing.interval": "200 ms",
        "execution.checkpointing.dir": f"file://{work_dir}/checkpoints",
        "execution.checkpointing.unaligned.enabled": "true",
        **options,
    }
