"""Memory stores behind the API: Mem0 long-term memory."""
