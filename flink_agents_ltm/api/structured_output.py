"""Structured output: a chat answer that must be JSON of a schema, validated into a value.

.. code-block:: python

    class Triage(BaseModel):
        urgent: bool
        team: str

    reply = await ctx.chat(prompt="triage", values={"input": event.input},
                           model="assistant", output_schema=Triage)
    triage: Triage = reply.structured      # validated; reply.content is the JSON text

``output_schema`` is a pydantic model class (the answer becomes an instance of it)
or a JSON schema given as a dict (the answer becomes a dict, validated with
``jsonschema``). A model that has native structured output (the built-in OpenAI,
Anthropic, Ollama and scripted models: ``supports_output_schema``) gets the
schema in its request; any other model gets the schema in a system message and
``json_mode=True``, and its answer is parsed the same way.

An answer that does not fit is sent back to the model with what was wrong
(``output_retries`` times, 1 by default); then the action fails with
:class:`StructuredOutputError`, a one-line message naming the model and the
schema. The answer's text is never in that message (it may hold what a user
wrote); code that catches the error finds it in ``raw_answer``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from flink_agents_ltm.api.errors import FlinkAgentsLtmError

__all__ = ["OutputSchema", "OutputSchemaMismatch", "StructuredOutputError"]

_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n(?P<body>.*?)\n?\s*```\s*$", re.DOTALL)
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")


class StructuredOutputError(FlinkAgentsLtmError, ValueError):
    """A chat model's answer still did not fit ``output_schema`` after the retries."""

    def __init__(self, message: str, *, model: str, schema: str, raw_answer: str = ""):
        super().__init__(message)
        self.model = model
        self.schema = schema
        self.raw_answer = raw_answer  # kept out of the message: it may hold user data


class OutputSchemaMismatch(FlinkAgentsLtmError, ValueError):
    """One answer does not fit; the message says where and why, never the answer's values."""


@dataclass(frozen=True)
class OutputSchema:
    """The schema of a structured answer: ``target`` is a pydantic model class or a JSON
    schema (a dict). Built by ``ctx.chat`` from its ``output_schema``; a model with native
    structured output reads :attr:`name` and :attr:`json_schema`."""

    target: Any
    json_schema: dict[str, Any] = field(init=False, compare=False)
    name: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        target = self.target
        if isinstance(target, type) and issubclass(target, BaseModel):
            schema = target.model_json_schema()
            name = target.__name__
        elif isinstance(target, Mapping):
            schema = json.loads(json.dumps(target))  # a plain copy; refuses what JSON cannot be
            # jsonschema comes with PyFlink (apache-beam requires it)
            from jsonschema.validators import validator_for

            try:
                validator_for(schema).check_schema(schema)
            except Exception as error:  # noqa: BLE001 - jsonschema's SchemaError, one line
                raise ValueError(f"output_schema is not a valid JSON schema: "
                                 f"{getattr(error, 'message', error)}") from None
            name = str(schema.get("title") or "output")
        else:
            raise TypeError("output_schema is a pydantic model class or a JSON schema dict, "
                            f"got {target!r}")
        object.__setattr__(self, "json_schema", schema)
        object.__setattr__(self, "name", _NAME_CHARS.sub("_", name)[:64] or "output")

    def instruction(self) -> str:
        """What a model without native structured output is told (a system message)."""
        return ("Answer with one JSON object and nothing else. It must fit this JSON schema: "
                + json.dumps(self.json_schema, separators=(",", ":")))

    def parse(self, text: str) -> Any:
        """The answer as a validated value: an instance of the model class, or a dict.
        Raises :class:`OutputSchemaMismatch` saying what is wrong."""
        fenced = _FENCE.match(text)
        body = fenced.group("body") if fenced else text
        try:
            value = json.loads(body)
        except json.JSONDecodeError as error:
            raise OutputSchemaMismatch(f"the answer is not JSON ({error.msg} at line "
                                       f"{error.lineno} column {error.colno})") from None
        if isinstance(self.target, type) and issubclass(self.target, BaseModel):
            try:
                return self.target.model_validate(value)
            except ValidationError as error:
                problems = [f"{'.'.join(str(p) for p in e['loc']) or 'the answer'}: {e['msg']}"
                            for e in error.errors(include_url=False, include_input=False)]
                raise OutputSchemaMismatch("; ".join(problems)) from None
        from jsonschema.validators import validator_for

        validator = validator_for(self.json_schema)(self.json_schema)
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.path))
        if errors:
            raise OutputSchemaMismatch("; ".join(
                f"{'.'.join(str(p) for p in e.path) or 'the answer'}: fails "
                f"'{e.validator}' ({json.dumps(e.validator_value)})" for e in errors[:5]))
        return value

    def correction(self, problem: OutputSchemaMismatch) -> str:
        """What the model is told when its answer did not fit."""
        return (f"Your answer does not fit the JSON schema '{self.name}': {problem}. Answer "
                "again with one JSON object that fits it, and nothing else.")
