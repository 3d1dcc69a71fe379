"""Saving Mem0's FAISS collections whole, private and loud.

Mem0's FAISS store rewrites ``<collection>.faiss`` and ``<collection>.json``
after every insert, update and delete. Its own save truncates the files and
writes them in place (a process killed in between leaves a torn docstore that
the next open cannot read), with the permissions of the process's umask, and
logs a warning instead of failing when the write fails. It also encodes the
docstore with ``json.dump(..., indent=2)``, Python's pure-Python encoder: at
a few thousand documents that took most of an insert's time.

:func:`save_safely` gives a store a save that writes each file under a temporary
name in the same folder (mode 0600) and renames it over the old one, index
first (a crash between the two renames leaves rows the docstore does not name,
which searches skip, never names without rows), encodes the docstore with the
C encoder in one piece, and raises when a write fails. A rename is atomic
against a killed process; like Mem0, it does not ``fsync``, so a power loss may
still lose the last writes.

Threading: called under the store's lock (FAISS stores are serialized, see
:mod:`.serialized_store`).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def save_safely(store: Any) -> None:
    """Make every later save of this Mem0 FAISS store go through :func:`save`."""
    store._save = lambda: save(store)


def save(store: Any) -> None:
    """Write the store's index and docstore where Mem0's FAISS reads them."""
    if not store.path or store.index is None:
        return
    import faiss

    folder = Path(store.path)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    name = store.collection_name
    _replace(folder / f"{name}.faiss", lambda path: faiss.write_index(store.index, path))
    docstore = json.dumps({"docstore": store.docstore,
                           "index_to_id": {str(k): v for k, v in store.index_to_id.items()}})
    _replace(folder / f"{name}.json", lambda path: Path(path).write_text(docstore, "utf-8"))


def _replace(target: Path, write: Any) -> None:
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(handle)  # mkstemp made it 0600; the writer reopens it by name
    try:
        write(temporary)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
