"""The public API: what agent authors import. Nothing here imports the runtime."""
