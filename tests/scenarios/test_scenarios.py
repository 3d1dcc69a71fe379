"""The scenario suite (tests/scenarios/README.md) on the Python keyed-run engine, driven by
the public harness (``flink_agents_ltm.testing``): Mem0 on the embedded store with the
hashing embedder, one store per scenario. The Java operator runs the same files
(``ScenarioSuiteTest.java``)."""

from __future__ import annotations

import json
import pickle
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import Event, InputEvent, OutputEvent
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.resources import ResourceDescriptor, embedding_model_setup
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from flink_agents_ltm.testing import AgentHarness

HERE = Path(__file__).parent
SCENARIOS = sorted(HERE.glob("*.json"))
ENGINE_STATES = ("busy", "pending", "run")
POLL_S = 0.05  # past the poll interval (5 ms): the parked keys' poll timers fire
TIMEOUT_MS = 1000

#: How often each call's body ran to its end: ``{"<text>/c<k>": n}``.
CALLS: Counter[str] = Counter()
#: How often each input's action reached its failure point: ``{text: n}`` (``first-attempts``).
ATTEMPTS: Counter[str] = Counter()


def call_body(key: str, notes: Any, text: str, index: int) -> str:
    """Durable call ``c<index>`` of an input: counts itself, adds ``text`` if asked."""
    if notes is not None:
        notes.add(text)
    CALLS[f"{text}/c{index}"] += 1
    return f"{text}/c{index}"


class Hop(Event):
    """A ``split`` input's second step: the rest of its work."""

    def __init__(self, key: str, spec: dict[str, Any], count: int):
        self.key, self.spec, self.count = key, spec, count


async def calls_and_output(ctx: Any, key: str, spec: dict[str, Any], count: int,
                           calls: range) -> None:
    text, add = spec["text"], spec.get("add", "none")
    notes = ctx.long_term_memory.get_memory_set("notes") \
        if add != "none" or spec.get("read") else None
    if spec.get("read"):
        notes.search(text, limit=5)
        notes.get()
    for index in calls:
        adds_here = notes if add == f"call{index}" else None
        await ctx.durable_execute_async(call_body, key, adds_here, text, index)
    if add == "body":
        notes.add(text)
    if spec.get("fail", "none") == "after-calls":
        raise ValueError(f"input {text} fails as the scenario says")
    if spec.get("fail", "none") == "first-attempts":
        ATTEMPTS[text] += 1
        if ATTEMPTS[text] <= spec["fail_attempts"]:
            raise ValueError(f"input {text} fails in attempt {ATTEMPTS[text]}, as the scenario "
                             "says")
    ctx.send_event(OutputEvent(f"{key}|{text}|{count}"))


class ScenarioAgent(Agent):
    """The scenario agent of the README: input ``(key, behaviour)``."""

    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    async def run(event, ctx):
        key, spec = event.input
        count = (ctx.short_term_memory.get("count") or 0) + 1
        ctx.short_term_memory.set("count", count)
        calls = spec.get("calls", 0)
        if not spec.get("split"):
            await calls_and_output(ctx, key, spec, count, range(calls))
            return
        if calls > 0:  # step 0 makes the first call, step 1 the rest
            await ctx.durable_execute_async(call_body, key, None, spec["text"], 0)
        ctx.send_event(Hop(key, spec, count))

    @action(Hop)
    async def hop(event, ctx):
        await calls_and_output(ctx, event.key, event.spec, event.count,
                               range(min(1, event.spec.get("calls", 0)),
                                     event.spec.get("calls", 0)))


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


class PythonRun:
    """One scenario on the harness: the script's steps as harness calls."""

    def __init__(self, scenario: dict[str, Any], base_dir: Path):
        self.config = {
            "agents.job-id": f"scenario-{uuid.uuid4().hex[:8]}",
            "agents.error-handling": scenario.get("error_handling", "fail"),
            "agents.durable-async.timeout-ms": TIMEOUT_MS,
            **{f"agents.error-handling.retry.{name}": value
               for name, value in scenario.get("retry", {}).items()},
            LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key: "hashing",
            LongTermMemoryOptions.BASE_DIR.key: str(base_dir)}
        self.steps = scenario["steps"]
        self.agent = ScenarioAgent()
        self.harness = self._harness()
        self.committed: list[str] = []  # outputs of earlier harnesses (jobs, attempts)
        self.snapshot: Any = None
        self.committed_at_snapshot: list[str] = []
        self.since_snapshot: list[Any] = []

    def _harness(self, **kwargs: Any) -> AgentHarness:
        # run_on_wait: the end-of-input drain runs the calls it waits for
        return AgentHarness(self.agent, config=self.config, run_on_wait=True, **kwargs)

    @property
    def outputs(self) -> list[str]:
        return self.committed + self.harness.outputs

    def step(self, step: dict[str, Any]) -> None:
        if "input" in step:
            spec = step["input"]
            value = (spec["key"], spec)
            self.since_snapshot.append(value)
            self.harness.process_element(value)
        elif "complete" in step:
            who = step["complete"]
            for handle in self.harness.pool.pending():
                if who == "all" or handle.call.args[0] == who:
                    self.harness.pool.run(handle)
            self.harness.advance(POLL_S)
        elif "snapshot" in step:
            self.snapshot = self.harness.snapshot()
            self.harness.notify_checkpoint_complete()
            self.committed_at_snapshot = list(self.outputs)
            self.since_snapshot = []
        elif "fail" in step:
            assert self.snapshot is not None, "the scenario fails without a snapshot before"
            self.harness.close()
            self.harness = AgentHarness.restore(self.snapshot, self.agent, config=self.config,
                                                run_on_wait=True)
            self.committed = list(self.committed_at_snapshot)
            for value in self.since_snapshot:  # the source replays them
                self.harness.process_element(value)
            self.harness.advance(POLL_S)
        elif "wait" in step:
            self.harness.advance(step["wait"] / 1000)
        elif "timeout" in step:
            self.harness.advance(TIMEOUT_MS / 1000 + 1)
        elif "end" in step:
            self.harness.end_input()
        elif "new_submission" in step:
            self.committed = list(self.outputs)
            self.harness.close()
            self.harness = self._harness()
            self.snapshot, self.since_snapshot = None, []
        elif "expect" in step:
            self.check(step["expect"], final=False)
        else:
            raise AssertionError(f"unknown step {step}")

    # ------------------------------------------------------------------ reading back

    def outputs_per_key(self) -> dict[str, list[str]]:
        per_key: dict[str, list[str]] = {}
        for line in self.outputs:
            per_key.setdefault(line.split("|")[0], []).append(line)
        return per_key

    def keys(self) -> list[str]:
        """Every key the scenario's inputs name."""
        return sorted({step["input"]["key"] for step in self.steps if "input" in step})

    def rows(self, key: str) -> list[str]:
        memory = self.harness.memory.get()
        memory.switch_context(key)
        return sorted(item.value for item in memory.get_memory_set("notes").get())

    def check(self, expect: dict[str, Any], final: bool) -> None:
        if "outputs" in expect:
            assert self.outputs_per_key() == expect["outputs"], "outputs per key"
        if "calls" in expect:
            assert dict(CALLS) == expect["calls"], "how often each call ran"
        if "short_term" in expect:
            found = {key: (self.harness.state_of(key, "short_term") or {}) for key in self.keys()}
            counts = {key: self.short_term_count(entries) for key, entries in found.items()}
            assert {k: v for k, v in counts.items() if v is not None} == expect["short_term"], \
                "short-term count per key"
        if "counters" in expect:
            kept = [k for k in self.keys() if self.harness.state_of(k, "next_seq") is not None]
            assert kept == expect["counters"], "the keys that keep their input counter"
        if "rows" in expect:
            keys = {*expect["rows"], *self.outputs_per_key()}
            rows = {key: self.rows(key) for key in sorted(keys)}
            assert {k: v for k, v in rows.items() if v} == expect["rows"], "rows per key"
        if final:
            left = {name: n for name, n in self.harness.state_entries().items()
                    if name in ENGINE_STATES and n}
            assert left == {}, f"engine state left at the end: {left}"
            assert self.harness.timers() == [], "timers left at the end"

    @staticmethod
    def short_term_count(entries: dict[Any, Any]) -> Any:
        for path, value in entries.items():
            if path == "count" or (isinstance(path, tuple) and path[-1] == "count"):
                return pickle.loads(value) if isinstance(value, bytes) else value
        return None


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario_on_the_python_engine(path, tmp_path):
    scenario = load(path)
    if "python" not in scenario.get("engines", ["python", "java"]):
        pytest.skip(f"{path.name} is for the Java engine only")
    CALLS.clear()
    ATTEMPTS.clear()
    run = PythonRun(scenario, tmp_path)
    try:
        for number, step in enumerate(scenario["steps"]):
            try:
                run.step(step)
            except AssertionError as error:
                raise AssertionError(f"step {number} {step}: {error}") from error
        run.check(scenario["expect"], final=True)
    finally:
        run.harness.close()


def test_the_suite_has_at_least_20_scenarios_and_few_are_for_one_engine():
    scenarios = [load(p) for p in SCENARIOS]
    one_engine = [s for s in scenarios if set(s.get("engines", ["python", "java"])) != {
        "python", "java"}]
    assert len(scenarios) >= 20
    assert all(s.get("python_only") for s in one_engine), "a one-engine scenario says why"
    assert len(one_engine) <= len(scenarios) // 5
    assert all(s["steps"][-1] == {"end": True} for s in scenarios), "every script ends"
