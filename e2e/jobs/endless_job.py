"""A job that never ends and runs no Python worker: a datagen table (one row per second)
into a blackhole sink, on ``--parallelism`` slots, named ``--name``. The e2e tests use it to
hold a cluster's slots, as the job of a test that failed would.

    scripts/flink-cluster run -d -py e2e/jobs/endless_job.py -- --name held --parallelism 2
"""

import argparse

from pyflink.table import EnvironmentSettings, TableEnvironment


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", required=True, help="the job's name (pipeline.name)")
    parser.add_argument("--parallelism", type=int, default=1)
    args = parser.parse_args()

    tables = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = tables.get_config()
    config.set("pipeline.name", args.name)
    config.set("parallelism.default", str(args.parallelism))
    tables.execute_sql("CREATE TABLE ticks (n BIGINT) WITH ("
                       "'connector' = 'datagen', 'rows-per-second' = '1')")
    tables.execute_sql("CREATE TABLE nowhere (n BIGINT) WITH ('connector' = 'blackhole')")
    tables.execute_sql("INSERT INTO nowhere SELECT n FROM ticks")  # submits, returns at once


if __name__ == "__main__":
    main()
