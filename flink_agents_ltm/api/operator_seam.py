"""The one seam between what users import and the runtime: ``to_datastream`` builds the
agent operator through :func:`build_agent_stream`, which calls the builder the package's
root registered (``flink_agents_ltm/__init__.py`` registers the runtime's, imported only
when a job is built). So the api imports nothing of the runtime, not even by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["StreamBuilder", "build_agent_stream", "register_stream_builder"]

# (env, stream, key_selector, agent, config, resources) -> the operator's output stream
StreamBuilder = Callable[..., Any]
_builder: list[StreamBuilder] = []


def register_stream_builder(builder: StreamBuilder) -> None:
    """Make ``builder`` the one that builds agent operators (the last registered wins)."""
    _builder[:] = [builder]


def build_agent_stream(*args: Any) -> Any:
    if not _builder:
        raise RuntimeError("no agent operator builder is registered: import flink_agents_ltm "
                           "(its package root registers the runtime's)")
    return _builder[0](*args)
