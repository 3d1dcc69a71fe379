"""The bridge tests use the same real-Mem0 fixtures as the memory tests (hashing embedder,
in-memory Qdrant collection of their own)."""

from tests.memory.conftest import ltm, mem0_memory, recording_memory  # noqa: F401
