"""Three runs of one job id on the mini-cluster, each a new submission without state, with
messages that name their run: every run's items stay, each under an id of its own, and the
third run recalls what the first remembered. On the embedded store and on pgvector."""

import copy
import uuid

import pytest
from pyflink.common import Types

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.execution_environment import AgentsExecutionEnvironment
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.resources import ResourceDescriptor, embedding_model_setup
from flink_agents_ltm.integrations.mem0.hashing_embedder import HashingEmbedding
from runtime import embedded_rows
from tests.pgvector.server import rows_in_postgres

pytestmark = pytest.mark.cluster

KEYS = ("alice", "bob")
RUNS = 3


def recall_then_remember(conversation, text):
    """On a worker thread: what the key's memory holds, then the message added to it."""
    recalled = sorted(item.value for item in conversation.search(text, limit=20))
    return recalled, conversation.add(text)


class RememberingAgent(Agent):
    """Input ``(key, text)``: outputs ``(key, text, recalled, ids)``."""

    @embedding_model_setup
    def hashing():
        return ResourceDescriptor(HashingEmbedding)

    @action(InputEvent)
    async def remember(event, ctx):
        key, text = event.input
        conversation = ctx.long_term_memory.get_memory_set("conversation")
        recalled, ids = await ctx.durable_execute_async(recall_then_remember, conversation,
                                                        text)
        ctx.send_event(OutputEvent((key, text, recalled, ids)))


def message(key, n, run):
    return f"{key}: message {n} of run {run}"


@pytest.fixture(scope="module", params=["embedded", "pgvector"])
def three_runs(request, tmp_path_factory, flink_env):
    """The three runs on one store: (each run's outputs, the store's rows: id -> text)."""
    job = f"runs-{uuid.uuid4().hex[:8]}"
    base_dir = tmp_path_factory.mktemp("runs")
    options = {"agents.job-id": job, LongTermMemoryOptions.EMBEDDING_MODEL_SETUP.key: "hashing",
               LongTermMemoryOptions.BASE_DIR.key: str(base_dir)}
    if request.param == "pgvector":
        vector_store = copy.deepcopy(request.getfixturevalue("pgvector_session")[0])
        vector_store["config"]["collection_name"] = f"runs_{uuid.uuid4().hex[:10]}"
        options[LongTermMemoryOptions.VECTOR_STORE.key] = vector_store
    runs = [one_run(flink_env, options, run) for run in range(1, RUNS + 1)]
    if request.param == "pgvector":
        rows = {id_: payload["data"] for id_, payload in rows_in_postgres(vector_store).items()}
    else:
        rows = embedded_rows.rows(job, base_dir)
    return runs, rows


def one_run(flink_env, options, run):
    """A new submission of the job: two messages per key, one after the other."""
    env = flink_env()
    agents_env = AgentsExecutionEnvironment.get_execution_environment(env=env)
    for key, value in options.items():
        agents_env.get_config().set(key, value)
    inputs = [(key, message(key, n, run)) for n in (1, 2) for key in KEYS]
    stream = env.from_collection(inputs, type_info=Types.TUPLE([Types.STRING(), Types.STRING()]))
    out = agents_env.from_datastream(stream, key_selector=lambda r: r[0]).apply(
        RememberingAgent())
    return list(out.to_datastream().execute_and_collect())


def test_three_runs_keep_every_runs_items_each_under_an_id_of_its_own(three_runs):
    runs, stored = three_runs
    outputs = [o for run in runs for o in run]
    every_message = {message(key, n, run) for key in KEYS for n in (1, 2)
                     for run in range(1, RUNS + 1)}
    assert sorted(stored.values()) == sorted(every_message)  # 2 per key per run: 12
    ids = [id_ for *_, added in outputs for id_ in added]
    assert len(ids) == len(set(ids)) == len(every_message)
    assert {id_: stored[id_] for _, text, _, added in outputs for id_ in added} == {
        added[0]: text for _, text, _, added in outputs}


def test_the_third_run_recalls_what_the_first_remembered(three_runs):
    runs, _ = three_runs
    [recalled] = [r for key, text, r, _ in runs[2] if text == message("alice", 2, 3)]
    assert recalled == sorted([message("alice", n, run) for n in (1, 2) for run in (1, 2)]
                              + [message("alice", 1, 3)])
