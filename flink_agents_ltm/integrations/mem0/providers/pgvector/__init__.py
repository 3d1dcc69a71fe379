"""PostgreSQL + pgvector: the backend, its search, the connection rules, schema and self-check."""
