"""Tables in and out (issue 34 item 6): a SQL source read with ``from_table(table,
key=...)``, the agent's outputs written with ``to_table(...)`` into a SQL sink, on the
mini-cluster; and the clear errors of a wrong key column or a missing output type."""

import csv

import pytest
from pyflink.common import Types

from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment
from runtime.table_agents import TableAgent

pytestmark = pytest.mark.cluster

ROWS = [("ann", "hi"), ("bob", "yo"), ("ann", "again"), ("cid", "hey"), ("bob", "more")]
OUT = Types.ROW_NAMED(["customer", "n", "answer"], [Types.STRING(), Types.INT(), Types.STRING()])


def source(t_env):
    values = ", ".join(f"('{c}', '{t}')" for c, t in ROWS)
    return t_env.sql_query(f"SELECT * FROM (VALUES {values}) AS requests(customer, text)")


def test_a_sql_source_runs_through_the_agent_into_a_sql_sink(flink_env, tmp_path):
    from pyflink.table import StreamTableEnvironment

    env = flink_env()
    t_env = StreamTableEnvironment.create(stream_execution_environment=env)
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env, t_env=t_env)
    answers = (agents_env.from_table(source(t_env), key="customer").apply(TableAgent())
               .to_table(output_type=OUT))
    t_env.execute_sql(f"""
        CREATE TEMPORARY TABLE answers (customer STRING, n INT, answer STRING)
        WITH ('connector' = 'filesystem', 'path' = '{tmp_path / "answers"}',
              'format' = 'csv')""")
    answers.execute_insert("answers").wait()

    written = sorted(tuple(line) for part in (tmp_path / "answers").rglob("*")
                     if part.is_file() and not part.name.startswith(".")
                     for line in csv.reader(part.open()))
    assert written == sorted([("ann", "1", "HI"), ("bob", "1", "YO"), ("ann", "2", "AGAIN"),
                              ("cid", "1", "HEY"), ("bob", "2", "MORE")])


def test_a_key_column_the_table_lacks_and_a_missing_output_type_are_named(flink_env):
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=flink_env())
    table = source(agents_env.t_env)
    with pytest.raises(ValueError, match="^from_table: the table has no column 'client' to key "
                                         "by; its columns are customer, text$"):
        agents_env.from_table(table, key="client")
    with pytest.raises(TypeError, match="exactly one of them"):
        agents_env.from_table(table)
    builder = agents_env.from_table(table, key_selector=lambda row: row[0]).apply(TableAgent())
    with pytest.raises(TypeError, match="^to_table needs output_type, the row type of the "
                                        "outputs"):
        builder.to_table()
