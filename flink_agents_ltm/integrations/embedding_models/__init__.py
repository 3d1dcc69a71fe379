"""Embedding model clients over HTTP: OpenAI-compatible servers and Ollama."""
