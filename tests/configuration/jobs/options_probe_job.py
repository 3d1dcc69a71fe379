"""A job whose outputs show which agent options reached its operator.

The tests run it with ``flink run``, with options in ``config.yaml``, on ``-D``
and in the job's own ``Configuration`` below. Inputs: a 12-character item, one
that fails (kept only under ``agents.error-handling: ignore``), a 16-character
item (refused when ``long-term-memory.max-item-length`` is below 16).
"""

from pyflink.common import Configuration
from pyflink.datastream import StreamExecutionEnvironment

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment


class OptionsProbeAgent(Agent):
    @action(InputEvent)
    def probe(event, ctx):
        if event.input == "boom":
            raise RuntimeError("this input fails on purpose")
        notes = ctx.long_term_memory.get_memory_set("notes")
        try:
            notes.add(event.input)
            ctx.send_event(OutputEvent(f"stored {len(event.input)} characters"))
        except ValueError as error:
            ctx.send_event(OutputEvent(f"refused: {error}"))


def main():
    config = Configuration()
    config.set_string("long-term-memory.max-item-length", "15")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(1)
    items = env.from_collection(["x" * 12, "boom", "y" * 16])
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    outputs = (agents_env.from_datastream(items, key_selector=lambda item: item[0])
               .apply(OptionsProbeAgent()).to_datastream())
    with outputs.execute_and_collect("options-probe") as results:
        for line in results:
            print(line)


if __name__ == "__main__":
    main()
