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
C encoder in one piece, and raises when a write fails. Like Mem0, it does not
``fsync``, so a power loss may still lose the last writes.

Both files are written before either is renamed, so the two renames follow each
other within microseconds, but they are two steps. A store opened after a cut
between them is checked: an index ahead of its docstore by the rows of an insert
that never returned loses those rows again (with a warning); any other
disagreement (a cut delete renumbers every later row) is refused with the counts,
instead of answering with the wrong documents.

:func:`save_safely` also gives the store an ``insert`` that takes its rows out
of memory again when the save fails (so a failed write is not visible in the
process either), and a ``delete_many`` that removes all ids in one pass and one
save (Mem0's ``delete`` rebuilds the whole index and saves for every id: 100 of
3 000 documents took 3.7 s, now 36 ms); long-term memory uses ``delete_many``
when a store has it.

Threading: called under the store's lock (FAISS stores are serialized, see
:mod:`.serialized_store`).
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from flink_agents_ltm.api.errors import FlinkAgentsLtmError
from flink_agents_ltm.integrations.mem0 import private_api

log = logging.getLogger(__name__)


class TornCollectionError(FlinkAgentsLtmError, RuntimeError):
    """A FAISS collection's index and docstore disagree (a write was cut between them)."""


def save_safely(store: Any) -> None:
    """Check a Mem0 FAISS store just opened, then make its saves go through :func:`save`
    and give it the ``insert`` and ``delete_many`` described above. The files Mem0 wrote
    when it created the collection (with the umask) become private now, not at the
    first write."""
    _check_whole(store)
    if store.path:
        for suffix in (".faiss", ".json"):
            file = Path(store.path) / f"{store.collection_name}{suffix}"
            if file.exists():
                file.chmod(0o600)
    mem0_insert = store.insert
    private_api.faiss_replace_save(store, lambda: save(store))
    store.insert = lambda vectors, payloads=None, ids=None: _insert(
        store, mem0_insert, vectors, payloads, ids)
    store.delete_many = lambda ids: delete_many(store, ids)


def _check_whole(store: Any) -> None:
    if store.index is None:
        return
    rows, named = store.index.ntotal, len(store.index_to_id)
    prefix = sorted(store.index_to_id) == list(range(named))
    if rows > named and prefix:  # an insert's index was saved, its docstore not
        import faiss

        store.index.remove_ids(faiss.IDSelectorRange(named, rows))
        log.warning("FAISS collection '%s' in %s: dropped %d vectors of an insert that did "
                    "not complete (its process stopped between saving the index and the "
                    "docstore)", store.collection_name, store.path, rows - named)
    elif rows != named or not prefix:
        raise TornCollectionError(
            f"FAISS collection '{store.collection_name}' in {store.path} is torn: its index "
            f"holds {rows} vectors but its docstore names {named} positions, so a write was "
            "cut between its two files. Restore both files from a backup, or remove them to "
            "start the collection anew")


def _insert(store: Any, mem0_insert: Any, vectors: Any, payloads: Any, ids: Any) -> None:
    import faiss

    start = 0 if store.index is None else store.index.ntotal
    replaced = {i: store.docstore[i] for i in ids or () if i in store.docstore}
    try:
        mem0_insert(vectors, payloads, ids)
    except Exception:
        if store.index is not None and store.index.ntotal > start:
            store.index.remove_ids(faiss.IDSelectorRange(start, store.index.ntotal))
        for position in [p for p in store.index_to_id if p >= start]:
            store.docstore.pop(store.index_to_id.pop(position), None)
        store.docstore.update(replaced)
        raise


def delete_many(store: Any, ids: Any) -> None:
    """All ``ids`` out of the index and the docstore, then one save. When the save fails
    the error is raised and the ids are already gone from this process; deleting them
    again is a no-op, and the next save writes it."""
    import faiss
    import numpy as np

    doomed = set(ids)
    positions = sorted(p for p, vector_id in store.index_to_id.items() if vector_id in doomed)
    if not positions and not doomed & store.docstore.keys():
        return
    if store.index is not None and positions:
        store.index.remove_ids(faiss.IDSelectorBatch(np.array(positions, dtype=np.int64)))
    kept = [vector_id for _, vector_id in sorted(store.index_to_id.items())
            if vector_id not in doomed]  # remove_ids keeps the others in order
    store.index_to_id = dict(enumerate(kept))
    for vector_id in doomed:
        store.docstore.pop(vector_id, None)
    private_api.faiss_save(store)


def save(store: Any) -> None:
    """Write the store's index and docstore where Mem0's FAISS reads them."""
    if not store.path or store.index is None:
        return
    import faiss

    folder = Path(store.path)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    name = store.collection_name
    docstore = json.dumps({"docstore": store.docstore,
                           "index_to_id": {str(k): v for k, v in store.index_to_id.items()}})
    written: list[tuple[str, Path]] = []
    try:
        written.append((_written(folder, lambda path: faiss.write_index(store.index, path)),
                        folder / f"{name}.faiss"))
        written.append((_written(folder, lambda path: Path(path).write_text(docstore, "utf-8")),
                        folder / f"{name}.json"))
        for temporary, target in written:  # the index first: see _check_whole
            os.replace(temporary, target)
    except BaseException:
        for temporary, _ in written:
            Path(temporary).unlink(missing_ok=True)
        raise


def _written(folder: Path, write: Any) -> str:
    """A new 0600 file in ``folder`` that ``write(path)`` filled."""
    handle, temporary = tempfile.mkstemp(prefix=".saving.", dir=folder)
    os.close(handle)  # mkstemp made it 0600; the writer reopens it by name
    try:
        write(temporary)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return temporary
