"""Mem0 wired for Flink: offline environment, local providers, one shared client per store.

Import :func:`import_mem0` (or anything here) before ``mem0`` itself: Mem0
reads its telemetry switch and home folder at import time.
"""
