"""The agent of the secrets test (a module of its own: jobs pickle agents by reference, and
the embedded interpreter imports them by this name)."""

import time
from pathlib import Path

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent


class AnnounceThenRememberAgent(Agent):
    """Input ``(key, folder)``: creates ``folder/running``, waits (at most 5 minutes) for
    ``folder/go`` so the test can look at the running job, then uses long-term memory."""

    @action(InputEvent)
    def remember(event, ctx):
        key, folder = event.input
        Path(folder, "running").touch()
        deadline = time.monotonic() + 300
        while not Path(folder, "go").exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # another process decides: a file is all we can wait on
        ctx.long_term_memory.get_memory_set("notes").add(f"a note of {key}")
        ctx.send_event(OutputEvent(key))
