"""The query vector of a search reaches pgvector as text, and as the very vector Mem0's
``ARRAY`` of floats gave the server: the text costs a fraction of the client time, the
ranking does not change."""

import numpy as np

from flink_agents_ltm.integrations.mem0.long_term_memory import Mem0LongTermMemory
from flink_agents_ltm.integrations.mem0.providers.pgvector.search import vector_text
from tests.pgvector.recording import selects
from tests.pgvector.test_pgvector_server import connect


def test_long_term_memory_searches_send_the_query_vector_as_text_not_as_an_array(
        filled_store, sent):
    memory, _ = filled_store
    ltm = Mem0LongTermMemory("job", memory)
    ltm.switch_context("k7", "obs", False)
    assert len(ltm.get_memory_set("notes").search("note", limit=5)) == 5
    [search] = selects(sent, "ORDER BY distance")
    assert "ARRAY[" not in search, search[:300]
    assert "vector <=> '[" in search and "]'::vector" in search, search[:300]


def test_the_text_of_a_vector_is_the_vector_the_server_got_from_the_array(pgvector_store):
    rng = np.random.default_rng(3)
    vectors = [rng.standard_normal(384).tolist() for _ in range(20)]
    vectors.append((rng.standard_normal(384) * 1e-30).tolist())  # tiny numbers, exponents
    vectors.append(rng.standard_normal(384).astype(np.float32).tolist())  # a float32 model's
    differing = []
    with connect(pgvector_store) as conn, conn.cursor() as cur:
        for vector in vectors:
            cur.execute("SELECT %s::vector = %s::vector, %s::vector::text", (
                vector_text(vector), vector, vector_text(vector)))
            same, text = cur.fetchone()
            if not same:
                differing.append((vector_text(vector)[:80], text[:80]))
    assert len(vectors) == 22 and differing == []
    conn.close()
