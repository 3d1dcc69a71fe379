"""The embedded default store: its backend (the facts Mem0 needs) and the SQLite store itself."""
