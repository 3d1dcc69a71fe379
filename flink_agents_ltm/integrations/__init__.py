"""Adapters to third-party systems: Mem0 providers, models, vector stores."""
