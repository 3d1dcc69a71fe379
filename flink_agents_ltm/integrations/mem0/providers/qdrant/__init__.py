"""Qdrant (embedded or a server): the backend."""
