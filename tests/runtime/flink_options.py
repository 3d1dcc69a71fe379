"""Flink options and sources the cluster tests share."""


def checkpointing(work_dir, **options):
    """Flink options of a job that checkpoints into ``<work_dir>/checkpoints`` every 200 ms;
    unaligned, so that checkpoints complete while a slow action holds back the input."""
    return {
        "execution.checkpointing.interval": "200 ms",
        "execution.checkpointing.dir": f"file://{work_dir}/checkpoints",
        "execution.checkpointing.unaligned.enabled": "true",
        **options,
    }


def inputs_with_a_trigger(env, work_dir, keys, inputs, trigger):
    """A source of ``inputs`` records ``(n % keys, n, work_dir, is_trigger)``, 2 ms apart so
    that they spread over a few checkpoints; ``is_trigger`` holds for ``(key, n) == trigger``
    (the input whose action fails once, see ``agents_for_tests``)."""
    from pyflink.common import Types, WatermarkStrategy
    from pyflink.datastream.connectors.number_seq import NumberSequenceSource

    def to_input(n, work_dir=work_dir):
        import time
        time.sleep(0.002)
        return (n % keys, n, work_dir, (n % keys, n) == trigger)

    numbers = env.from_source(NumberSequenceSource(0, inputs - 1),
                              WatermarkStrategy.no_watermarks(), "numbers")
    return numbers.map(to_input, output_type=Types.PICKLED_BYTE_ARRAY())
