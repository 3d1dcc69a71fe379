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


def inputs_with_a_lone_key(env, work_dir, keys, inputs, lone_inputs, slow_tail=200):
    """Like :func:`inputs_with_a_trigger`, but the inputs numbered ``lone_inputs`` (first,
    last) go to one more key, ``keys``, which gets no other input. Its first input is the
    trigger: the action fails once while that input is mid-action, so the restored
    checkpoint holds the key's first memory-writing input half done. Its last input must
    arrive after the replay has finished the first one: it is the input that, with a key
    that forgot it stored items, would run under the first one's observation id again.
    So until the failure (a marker file) the last ``slow_tail`` inputs come 50 ms apart
    (10 s for the two checkpoints the trigger waits for; never blocking, so checkpoints
    go on), the last one is dropped before the failure (it comes again after the
    restore) and let through after it only after a pause (each time logged in
    ``<work_dir>/last-input.log``)."""
    from pyflink.common import Types, WatermarkStrategy
    from pyflink.datastream.connectors.number_seq import NumberSequenceSource

    first, last = lone_inputs

    def to_inputs(n, work_dir=work_dir):
        import os
        import time
        failed = os.path.exists(os.path.join(work_dir, "failed-once"))
        time.sleep(0.05 if n >= inputs - slow_tail and not failed else 0.002)
        if n == last:
            with open(os.path.join(work_dir, "last-input.log"), "a") as log:
                log.write("let through\n" if failed else "dropped\n")
            if not failed:
                return  # dropped: the source passed it before the failure
            time.sleep(0.3)
        key = keys if n in (first, last) else n % keys
        yield (key, n, work_dir, n == first)

    numbers = env.from_source(NumberSequenceSource(0, inputs - 1),
                              WatermarkStrategy.no_watermarks(), "numbers")
    return numbers.flat_map(to_inputs, output_type=Types.PICKLED_BYTE_ARRAY())
