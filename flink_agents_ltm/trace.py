"""``flink-agents-ltm trace``: a key's runs as a tree, read back from the event log.

.. code-block:: text

    input #0 of key 'alice' (InputEvent): "hello"
      action greet on InputEvent [alice#0#0]: completed in 12 ms
        call call0 chat model 'assistant': completed in 10 ms -> {"role": "assistant", ...}
        memory add on set 'notes': ids ['7f...']
        event Greeted: {"text": "hi"}
        output: "hi alice"
      action log_greeting on Greeted [alice#0#1]: completed in 0 ms
      run completed: 1 output(s)

The log is the ``file`` sink's JSON lines, or a Flink log file that the ``logging`` sink
wrote to (lines of the logger ``flink_agents_ltm.event_log``; other lines are skipped).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flink_agents_ltm.api.event_log import EVENT_LOGGER

__all__ = ["read_records", "render"]

_CHILDREN = ("call", "memory", "event", "output")


def read_records(path: Path, job_id: str, key: str) -> list[dict[str, Any]]:
    """The records of ``key`` (its text) of job ``job_id`` in the log at ``path``, in
    the order they were written."""
    found = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            record = _record(line)
            if record is not None and record.get("job") == job_id and \
                    record.get("key") == key:
                found.append(record)
    return found


def _record(line: str) -> dict[str, Any] | None:
    text = line.strip()
    if not text.startswith("{"):
        if EVENT_LOGGER not in text or "{" not in text:
            return None
        text = text[text.index("{"):]
    try:
        record = json.loads(text)
    except ValueError:
        return None  # a line cut short (a process killed mid-write) or not ours
    return record if isinstance(record, dict) and "record" in record else None


@dataclass
class _Step:
    first: dict[str, Any]
    end: dict[str, Any] | None = None
    children: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Run:
    inputs: list[dict[str, Any]] = field(default_factory=list)
    steps: dict[str, _Step] = field(default_factory=dict)
    ends: list[dict[str, Any]] = field(default_factory=list)


def render(records: Iterable[dict[str, Any]]) -> list[str]:
    """The tree's lines: each input of the key, its actions in order with their durable
    calls, memory operations, sent events and outputs, and how the run ended."""
    runs: dict[Any, _Run] = {}
    for record in records:
        run = runs.setdefault(record.get("input"), _Run())
        kind = record.get("record")
        if kind == "input":
            run.inputs.append(record)
        elif kind == "run":
            run.ends.append(record)
        elif kind == "action" or kind in _CHILDREN:
            observation = str(record.get("observation_id"))
            step = run.steps.setdefault(observation, _Step(record))
            if kind == "action":
                step.end = record
            else:
                step.children.append(record)
    lines: list[str] = []
    for seq, run in runs.items():
        lines.extend(_run_lines(seq, run))
    return lines


def _run_lines(seq: Any, run: _Run) -> list[str]:
    lines = []
    for record in run.inputs or [{}]:
        again = " (replayed after recovery)" if record.get("replayed") else ""
        head = f"input #{seq}{again}"
        if "key" in record:
            head += f" of key {record['key']!r} (InputEvent)"
        lines.append(head + _payload(record))
    for observation, step in run.steps.items():
        lines.append("  " + _action_line(observation, step))
        lines.extend("    " + _child_line(child) for child in step.children)
    for end in run.ends:
        line = f"  run {end.get('outcome')}"
        if end.get("outcome") == "completed":
            line += f": {end.get('outputs', 0)} output(s)"
        lines.append(line)
    if not run.ends:
        lines.append("  run not ended in this log (still running, or the job stopped)")
    return lines


def _action_line(observation: str, step: _Step) -> str:
    first = step.end or step.first  # a sent event's record names the sent event's type
    line = f"action {first.get('action')} on {first.get('event_type')} [{observation}]: "
    if step.end is None:
        return line + "did not end in this log"
    line += f"{step.end.get('outcome')} in {step.end.get('duration_ms')} ms"
    return line + _error(step.end)


def _child_line(record: dict[str, Any]) -> str:
    kind = record.get("record")
    if kind == "call":
        line = f"call {record.get('position')} {record.get('call')}: {record.get('outcome')}"
        if "duration_ms" in record:
            line += f" in {record['duration_ms']} ms"
        return line + _error(record) + _payload(record, " -> ")
    if kind == "memory":
        return f"memory {record.get('op')} on set {record.get('set')!r}: ids {record.get('ids')}"
    if kind == "event":
        return f"event {record.get('event_type')}" + _payload(record)
    return "output" + _payload(record)


def _error(record: dict[str, Any]) -> str:
    if "error" not in record:
        return ""
    return f" ({record['error']}: {record.get('error_message', '')})"


def _payload(record: dict[str, Any], sep: str = ": ") -> str:
    if "payload" not in record:
        return ""
    payload = record["payload"]
    text = payload if "payload_chars" in record else json.dumps(payload, ensure_ascii=False)
    cut = f" ({record['payload_chars']} chars, cut)" if "payload_chars" in record else ""
    return f"{sep}{text}{cut}"
