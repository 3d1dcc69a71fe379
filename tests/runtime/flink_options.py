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


def inputs_with_a_lone_key(env, work_dir, keys, inputs, lone_inputs):
    """Like :func:`inputs_with_a_trigger`, but the inputs numbered ``lone_inputs`` (first,
    last) go to one more key, ``keys``, which gets no other input. Its first input is the
    trigger: the action fails once while that input is mid-action, so the restored
    checkpoint holds the key's first memory-writing input half done. Its last input is
    let through only after the failure (a marker file) and a pause, so that it arrives
    after the replay has finished the first one: the input that, with a key that forgot
    it stored items, would run under the first one's observation id again."""
    from pyflink.common import Types, WatermarkStrategy
    from pyflink.datastream.connectors.number_seq import NumberSequenceSource

    first, last = lone_inputs

    def to_inputs(n, work_dir=work_dir):
        import os
        import time
        time.sleep(0.002)
        if n == last:
            if not os.path.exists(os.path.join(work_dir, "failed-once")):
                return  # before the failure: dropped (it comes again after the restore)
            time.sleep(0.3)
        key = keys if n in (first, last) else n % keys
        yield (key, n, work_dir, n == first)

    numbers = env.from_source(NumberSequenceSource(0, inputs - 1),
                              WatermarkStrategy.no_watermarks(), "numbers")
    return numbers.flat_map(to_inputs, output_type=Types.PICKLED_BYTE_ARRAY())
