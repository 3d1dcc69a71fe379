"""Which key each input of the counting job goes to (the job and its tests share this).

Input ``n`` goes to key ``k{n % keys}``, except the inputs of the *late keys*
``late0``, ``late1``, ...: each gets two inputs, the first spread over the middle of the
stream (where a failover test kills a TaskManager) and held mid-action after its memory
write, the second only near the end of the stream. So some late key's first
memory-writing input is likely mid-action at the restored checkpoint, its add recorded,
and its next input arrives after the recovery: the shape of issue 19's overwrite.

The source (a NumberSequenceSource) splits the numbers into ``runs`` equal runs, one per
source subtask, emitted side by side; positions are placed within each run, so that "the
middle" and "the end" hold in time, not only in number.
"""


def late_inputs(events: int, late_keys: int, runs: int = 2) -> dict[int, str]:
    """``{n: key}`` for the late keys' inputs: per run, ``late_keys // runs`` keys with
    their first input between 3/16 and 13/16 of the run and their second among the
    run's last inputs."""
    if late_keys <= 0:
        return {}
    per_run, keys_per_run = events // runs, late_keys // runs
    if keys_per_run == 0 or late_keys % runs or per_run < 8 * keys_per_run:
        raise ValueError(f"--late-keys {late_keys} does not fit {events} events in {runs} runs "
                         f"(a multiple of {runs}, at most {events // 8})")
    start, stride = per_run * 3 // 16, (per_run * 10 // 16) // keys_per_run
    late = {}
    for run in range(runs):
        base = run * per_run
        for j in range(keys_per_run):
            key = f"late{run * keys_per_run + j}"
            late[base + start + j * stride] = key
            late[base + per_run - keys_per_run + j] = key
    return late


def key_of(n: int, keys: int, late: dict[int, str]) -> str:
    return late.get(n) or f"k{n % keys}"


def first_inputs(late: dict[int, str]) -> set[int]:
    """The late keys' first inputs (the ones held mid-action)."""
    firsts = {key: n for n, key in sorted(late.items(), reverse=True)}  # the lowest wins
    return set(firsts.values())
