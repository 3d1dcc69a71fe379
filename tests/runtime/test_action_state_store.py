"""The action-state store on the in-memory harness: durable results written ahead outside
Flink's checkpoints (``agents.action-state.store=sqlite``).

A "failure" is a harness closed without its last work reaching a snapshot, then a fresh
harness restored from the snapshot taken before: what Flink does after a crash."""

import collections
import logging
import os
import sqlite3
import stat
import threading
import time

import pytest

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.chat_models import ChatMessage, tool
from flink_agents_ltm.api.events import InputEvent, OutputEvent
from flink_agents_ltm.api.execution_environment import AgentsConfiguration
from flink_agents_ltm.api.resources import ResourceDescriptor, chat_model_setup
from flink_agents_ltm.api.runner_context import CALL_AGAIN
from flink_agents_ltm.integrations.chat_models.scripted import ScriptedChatModelSetup
from flink_agents_ltm.runtime.action_state.journal import ActionJournal
from flink_agents_ltm.runtime.action_state.sqlite import FILE_NAME, SqliteActionStateStore
from flink_agents_ltm.runtime.action_state.store import open_action_state_store
from flink_agents_ltm.runtime.keyed_runs import AgentActionError
from flink_agents_ltm.testing import AgentHarness

sent: list = []  # the side effects: e-mails sent


def send_email(n):
    sent.append(n)
    return f"sent #{n}"


def already_sent(n):
    """The reconciler: asks the "mail server" whether e-mail n went out."""
    return f"sent #{n}" if n in sent else CALL_AGAIN


@pytest.fixture(autouse=True)
def nothing_sent_yet():
    sent.clear()
    yield
    sent.clear()


class MailAgent(Agent):
    @action(InputEvent)
    async def mail(event, ctx):
        key, n = event.input
        receipt = await ctx.durable_execute_async(send_email, n)
        ctx.send_event(OutputEvent((key, receipt)))


class ReconcilingMailAgent(Agent):
    @action(InputEvent)
    async def mail(event, ctx):
        key, n = event.input
        receipt = await ctx.durable_execute_async(send_email, n, reconciler=lambda: already_sent(n))
        ctx.send_event(OutputEvent((key, receipt)))


class InlineMailAgent(Agent):
    @action(InputEvent)
    def mail(event, ctx):
        key, n = event.input
        ctx.send_event(OutputEvent((key, ctx.durable_execute(send_email, n))))


@pytest.fixture
def config(tmp_path):
    return {"agents.action-state.store": "sqlite", "agents.job-id": "mail-job",
            "long-term-memory.embedded.base-dir": str(tmp_path)}


OFF = {"agents.action-state.store": "none"}


def finish(harness):
    """Let every call run and every parked action go on."""
    for _ in range(5):
        harness.pool.complete_all()
        harness.advance(0.01)
    return harness.outputs


def harness(agent, config, **kwargs):
    return AgentHarness(agent, key_selector=lambda r: r[0], config=config, **kwargs)


def crash_after_the_call_completed(agent, config):
    """The call parks; a snapshot is taken; the call completes and the action finishes;
    the process dies before the next checkpoint. Answers the restored harness, finished."""
    first = harness(agent, config)
    first.process_element(("a", 1))
    snapshot = first.snapshot()
    assert finish(first) == [("a", "sent #1")]
    first.close()
    restored = AgentHarness.restore(snapshot, agent, key_selector=lambda r: r[0], config=config)
    finish(restored)
    restored.close()
    return restored


def test_a_call_completed_after_the_snapshot_is_not_run_again_after_restore_with_the_store_on(
        config):
    restored = crash_after_the_call_completed(MailAgent(), config)
    assert sent == [1]
    assert restored.outputs == [("a", "sent #1")]
    assert restored.stats.durable_calls_replayed == 1
    assert restored.pool.submitted == []


def test_a_call_completed_after_the_snapshot_runs_again_after_restore_with_the_store_off():
    restored = crash_after_the_call_completed(MailAgent(), OFF)
    assert sent == [1, 1]
    assert restored.outputs == [("a", "sent #1")]


def test_an_input_that_arrived_after_the_snapshot_reads_its_result_when_delivered_again(config):
    first = harness(MailAgent(), config, sync=True)
    snapshot = first.snapshot()
    first.process_element(("a", 1))  # runs and ends within the callback, after the snapshot
    first.close()
    restored = AgentHarness.restore(snapshot, MailAgent(), key_selector=lambda r: r[0],
                                    config=config, sync=True)
    assert restored.process_element(("a", 1)) == [("a", "sent #1")]  # the source replays it
    restored.close()
    assert sent == [1]


def test_an_inline_durable_call_completed_after_the_snapshot_is_not_run_again(config):
    first = harness(InlineMailAgent(), config)
    snapshot = first.snapshot()
    first.process_element(("a", 7))
    first.close()
    restored = AgentHarness.restore(snapshot, InlineMailAgent(), key_selector=lambda r: r[0],
                                    config=config)
    assert restored.process_element(("a", 7)) == [("a", "sent #7")]
    restored.close()
    assert sent == [7]


def test_a_later_input_of_the_key_is_not_answered_by_an_earlier_inputs_result(config):
    run = harness(MailAgent(), config, sync=True)
    run.process_element(("a", 1))
    run.process_element(("a", 2))
    run.close()
    assert sent == [1, 2]
    assert run.outputs == [("a", "sent #1"), ("a", "sent #2")]


def replayed_in_another_order(agent, config, before, after):
    """Inputs ``before`` run and end after a snapshot; the process dies; the restored job
    receives them again in the order ``after`` (two upstream subtasks interleave anew)."""
    first = harness(agent, config, sync=True)
    snapshot = first.snapshot()
    for value in before:
        first.process_element(value)
    first.close()
    restored = AgentHarness.restore(snapshot, agent, key_selector=lambda r: r[0],
                                    config=config, sync=True)
    for value in after:
        restored.process_element(value)
    restored.close()
    return restored


def test_inputs_replayed_in_another_order_each_read_their_own_result(config):
    restored = replayed_in_another_order(MailAgent(), config, [("a", 1), ("a", 2)],
                                         [("a", 2), ("a", 1)])
    assert restored.outputs == [("a", "sent #2"), ("a", "sent #1")]
    assert sent == [1, 2]


def test_a_new_input_in_a_replayed_inputs_place_runs_and_leaves_that_inputs_result(config):
    # input 2 never comes back (the source moved on); input 3 takes its place in the key's
    # sequence, then input 2 arrives after all
    restored = replayed_in_another_order(MailAgent(), config, [("a", 1), ("a", 2)],
                                         [("a", 1), ("a", 3), ("a", 2)])
    assert restored.outputs == [("a", "sent #1"), ("a", "sent #3"), ("a", "sent #2")]
    assert sent == [1, 2, 3]


def test_identical_inputs_replayed_each_take_one_result_of_their_kind(config):
    restored = replayed_in_another_order(MailAgent(), config, [("a", 1), ("a", 2), ("a", 1)],
                                         [("a", 2), ("a", 1), ("a", 1)])
    assert restored.outputs == [("a", "sent #2"), ("a", "sent #1"), ("a", "sent #1")]
    assert sent == [1, 2, 1]


def test_an_input_again_after_the_restored_checkpoint_is_not_answered_by_its_earlier_run(
        config):
    # ("a", 1) ran before the snapshot (covered by it); the same input again afterwards is a
    # new input, not a replay: its call runs
    first = harness(MailAgent(), config, sync=True)
    first.process_element(("a", 1))
    snapshot = first.snapshot()
    first.close()
    restored = AgentHarness.restore(snapshot, MailAgent(), key_selector=lambda r: r[0],
                                    config=config, sync=True)
    restored.process_element(("a", 1))
    restored.close()
    assert sent == [1, 1]


def test_a_fresh_start_of_the_job_calls_again_instead_of_reading_an_earlier_runs_results(config):
    for _ in range(2):
        run = harness(MailAgent(), config, sync=True)
        run.process_element(("a", 1))
        run.close()
    assert sent == [1, 1]


# ---------------------------------------------------------------------- killed mid-call


def crash_mid_call(agent, config, effect_happened):
    """The call started (its marker written ahead) and the process died inside it, after its
    side effect or before it; no result was ever recorded. Answers the restored harness."""
    first = harness(agent, config)
    first.process_element(("a", 1))
    snapshot = first.snapshot()
    if effect_happened:
        send_email(1)  # what the call did before the kill; it never returned
    first.close()
    restored = AgentHarness.restore(snapshot, agent, key_selector=lambda r: r[0], config=config)
    finish(restored)
    restored.close()
    return restored


def test_a_call_killed_after_its_side_effect_with_a_reconciler_has_the_effect_once(config):
    restored = crash_mid_call(ReconcilingMailAgent(), config, effect_happened=True)
    assert sent == [1]
    assert restored.outputs == [("a", "sent #1")]


def test_a_call_killed_after_its_side_effect_without_a_reconciler_has_the_effect_twice(config):
    restored = crash_mid_call(MailAgent(), config, effect_happened=True)
    assert sent == [1, 1]
    assert restored.outputs == [("a", "sent #1")]


def test_a_reconciler_that_finds_no_effect_lets_the_call_run_again(config):
    restored = crash_mid_call(ReconcilingMailAgent(), config, effect_happened=False)
    assert sent == [1]
    assert restored.outputs == [("a", "sent #1")]


def send_then_fail(n):
    sent.append(n)
    raise TimeoutError("the mail server did not answer")


class FlakyMailAgent(Agent):
    @action(InputEvent)
    async def mail(event, ctx):
        key, n = event.input
        receipt = await ctx.durable_execute_async(send_then_fail, n,
                                                  reconciler=lambda: already_sent(n))
        ctx.send_event(OutputEvent((key, receipt)))


def test_a_call_that_raised_after_its_side_effect_asks_its_reconciler_on_the_replay(config):
    first = harness(FlakyMailAgent(), config)
    first.process_element(("a", 1))
    snapshot = first.snapshot()
    with pytest.raises(AgentActionError, match="TimeoutError"):
        finish(first)  # the job fails (agents.error-handling: fail)
    first.close()
    restored = AgentHarness.restore(snapshot, FlakyMailAgent(), key_selector=lambda r: r[0],
                                    config=config)
    finish(restored)
    restored.close()
    assert sent == [1]
    assert restored.outputs == [("a", "sent #1")]


def test_a_reconciler_is_not_asked_on_a_first_run(config):
    asked = []

    class Agent_(Agent):
        @action(InputEvent)
        async def mail(event, ctx):
            receipt = await ctx.durable_execute_async(
                send_email, event.input[1], reconciler=lambda: asked.append(1) or "no")
            ctx.send_event(OutputEvent(receipt))

    run = harness(Agent_(), config, sync=True)
    assert run.process_element(("a", 3)) == ["sent #3"]
    run.close()
    assert asked == []


# ------------------------------------------------- what the mailbox thread pays per input


class CountingStore:
    """The job's real store, counting each operation and the threads it ran on."""

    def __init__(self, store):
        self.store = store
        self.calls = collections.Counter()
        self.threads = collections.defaultdict(set)

    def __getattr__(self, name):
        operation = getattr(self.store, name)

        def counted(*args, **kwargs):
            self.calls[name] += 1
            self.threads[name].add(threading.current_thread().name)
            return operation(*args, **kwargs)

        return counted


def counting(run):
    run.journal.store = CountingStore(run.journal.store)
    return run.journal.store


def test_a_fresh_jobs_calls_look_nothing_up_in_the_store(config):
    run = harness(MailAgent(), config, sync=True)
    store = counting(run)
    for n in range(50):
        run.process_element((f"k{n}", n))
    assert store.calls["started"] == store.calls["completed"] == 50
    assert store.calls["lookup"] == store.calls["run_state"] == store.calls["runs_of"] == 0
    run.close()


def test_after_a_recovery_only_runs_with_rows_of_before_the_failure_look_their_calls_up(config):
    first = harness(MailAgent(), config)
    first.process_element(("a", 1))
    snapshot = first.snapshot()
    finish(first)
    first.close()
    restored = AgentHarness.restore(snapshot, MailAgent(), key_selector=lambda r: r[0],
                                    config=config, sync=True)
    store = counting(restored)
    finish(restored)  # input 1 of key a: its result is in the store
    for n in range(2, 12):  # new inputs: nothing of theirs was written before
        restored.process_element((f"k{n}", n))
    assert store.calls["lookup"] == 1
    assert sent == [1, *range(2, 12)]
    restored.close()


def test_done_marks_reach_the_store_in_batches_and_all_of_them_before_a_snapshot(config):
    run = harness(MailAgent(), config, sync=True)
    store = counting(run)
    for n in range(200):
        run.process_element((f"k{n}", n))
    assert 1 <= store.calls["steps_done"] <= 4  # 200 steps in batches of 64: three so far
    run.snapshot()  # a crash from here on leaves no row of a step the snapshot covers
    with sqlite3.connect(store.store.path) as db:
        assert db.execute("SELECT COUNT(*) FROM durable_calls_v2 WHERE done_mark IS NULL"
                          ).fetchone() == (0,)
    assert run.notify_checkpoint_complete() == 200
    assert store.store.row_count() == 0
    run.close()


def test_a_calls_started_marker_and_result_are_written_on_the_thread_that_runs_it(config):
    from flink_agents_ltm.runtime.action_state.journal import open_journal
    from flink_agents_ltm.runtime.durable import DurableCall
    from flink_agents_ltm.runtime.worker_pool import ThreadWorkerPool

    journal = open_journal(AgentsConfiguration(config), 0, first_attempt=True,
                           incarnation="0" * 16)
    store = CountingStore(journal.store)
    journal.store = store
    pool = ThreadWorkerPool(2, 10.0, "mail-worker")
    call = DurableCall(send_email, (7,), {})
    _, call.on_start, call.on_result = journal.start(journal.run_of("k", "", 0, "7"), "k#0#0",
                                                     "call0", call.name)
    assert store.calls["started"] == 0  # submitting writes nothing on this thread
    handle = pool.submit(call, "call0")
    pool.wait([handle], time.monotonic() + 10)
    assert handle.outcome() == ("sent #7", None)
    assert threading.current_thread().name not in store.threads["started"] | store.threads[
        "completed"]
    assert store.calls["started"] == store.calls["completed"] == 1
    pool.close(1.0)
    journal.close()


# ---------------------------------------------------------------------- pruning


def test_a_completed_checkpoint_prunes_the_rows_it_covers_leaving_those_in_flight(config):
    run = harness(MailAgent(), config, sync=True)
    for n in range(2000):
        run.process_element((f"k{n}", n))
    run.pool.sync = False
    for n in range(3):  # parked on their calls when the snapshot is taken
        run.process_element((f"parked{n}", n))
    store = run.journal.store
    assert store.row_count() == 2003
    run.snapshot()
    assert run.notify_checkpoint_complete() == 2000
    assert store.row_count() == 3
    finish(run)
    run.snapshot()
    run.notify_checkpoint_complete()
    assert store.row_count() == 0
    run.close()


KEYS = int(os.environ.get("FLINK_AGENTS_LTM_BOUNDED_KEYS", "20000"))  # 100000: about 1 min


def test_the_store_stays_bounded_over_many_keys_with_checkpoints_completing(config):
    """KEYS keys (20,000 here; the issue's 100,000 with FLINK_AGENTS_LTM_BOUNDED_KEYS=100000,
    the same at a constant ~1 ms per key), each processed once, a checkpoint completing
    after every tenth of them, and three keys parked on their calls all along: the rows
    never pile up past what one checkpoint interval wrote, and each completed checkpoint
    leaves only the in-flight."""
    run = harness(MailAgent(), config, sync=True)
    store = run.journal.store
    run.pool.sync = False
    for n in range(3):
        run.process_element((f"parked{n}", n))
    run.pool.sync = True
    interval, after_checkpoints = KEYS // 10, []
    for n in range(KEYS):
        run.process_element((f"k{n}", n))
        if n % interval == interval - 1:
            assert store.row_count() == interval + 3
            run.snapshot()
            run.notify_checkpoint_complete()
            after_checkpoints.append(store.row_count())
    assert after_checkpoints == [3] * 10
    run.outputs.clear()
    finish(run)
    run.snapshot()
    run.notify_checkpoint_complete()
    assert store.row_count() == 0
    run.close()


def test_rows_done_after_a_snapshot_wait_for_a_later_checkpoint(config):
    run = harness(MailAgent(), config, sync=True)
    run.snapshot()
    run.process_element(("a", 1))
    run.notify_checkpoint_complete()  # checkpoint 1 was taken before the call
    assert run.journal.store.row_count() == 1
    run.close()


def test_without_checkpoint_notifications_rows_go_after_the_retention(tmp_path):
    now = [1000.0]
    store = SqliteActionStateStore(tmp_path / FILE_NAME, "job")
    journal = ActionJournal(store, 0, checkpoints=False, retention_s=60,
                            wall_clock=lambda: now[0])
    for key in ("a", "b"):
        _, write_started, _ = journal.start(journal.run_of(key, "", 0, "input"), f"{key}#0#0",
                                            "call0", "send")
        write_started()
    journal.step_done("a#0#0")
    now[0] += 61
    journal.step_done("b#0#0")  # prunes what ended more than 60 s ago
    assert store.lookup("a#0#0", "call0") is None
    assert store.lookup("b#0#0", "call0") is not None
    journal.close()


# ---------------------------------------------------------------------- files, options, logs


def test_the_store_is_a_private_file_in_a_private_folder_next_to_the_jobs_files(config, tmp_path):
    run = harness(MailAgent(), config, sync=True)
    run.process_element(("a", 1))
    run.close()
    path = tmp_path / "mail-job" / FILE_NAME
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    for sibling in path.parent.iterdir():
        assert stat.S_IMODE(os.stat(sibling).st_mode) & 0o077 == 0, sibling.name


def test_the_store_is_off_by_default_and_writes_no_file(tmp_path):
    run = harness(MailAgent(), {"long-term-memory.embedded.base-dir": str(tmp_path)}, sync=True)
    run.process_element(("a", 1))
    run.close()
    assert run.journal is None
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_store_name_is_a_one_line_error_naming_it():
    with pytest.raises(ValueError, match=r"'sqlit' is not a known store \(known: none, "
                       r"postgres, sqlite, or 'module:callable'\)") as error:
        open_action_state_store("sqlit", "job", AgentsConfiguration({}))
    assert "\n" not in str(error.value)


def test_results_and_arguments_are_never_logged(config, caplog):
    secret = "sk-live-0123456789abcdef"

    def leak(token):
        return {"token": token}

    class SecretAgent(Agent):
        @action(InputEvent)
        async def act(event, ctx):
            ctx.send_event(OutputEvent(await ctx.durable_execute_async(leak, event.input[1])))

    caplog.set_level(logging.DEBUG)
    first = harness(SecretAgent(), config)
    first.process_element(("a", secret))
    snapshot = first.snapshot()
    finish(first)
    first.close()
    restored = AgentHarness.restore(snapshot, SecretAgent(), key_selector=lambda r: r[0],
                                    config=config)
    finish(restored)
    restored.close()
    assert restored.outputs == [{"token": secret}]
    assert restored.stats.durable_calls_replayed == 1
    assert caplog.records  # the replay logged
    assert secret not in caplog.text


# ------------------------------------------------------------------ ctx.chat written ahead

model_calls: list = []  # what the "paid model" was asked: one entry per call


def paid_model(messages, tools):
    """The scripted model: asks for the mail tool once, then answers with its receipt."""
    model_calls.append(len(messages))
    if not any(m.role == "tool" for m in messages):
        return {"tool_calls": [{"name": "send_mail", "arguments": {"n": 1}}]}
    return f"done: {messages[-1].content}"


@tool
def send_mail(n: int) -> str:
    """Sends e-mail n."""
    return send_email(n)


class ChatMailAgent(Agent):
    @chat_model_setup
    def assistant():
        return ResourceDescriptor(ScriptedChatModelSetup, respond=paid_model)

    @action(InputEvent)
    async def mail(event, ctx):
        key, _ = event.input
        reply = await ctx.chat([ChatMessage("user", "send it")], model="assistant",
                               tools=[send_mail])
        ctx.send_event(OutputEvent((key, reply.content)))


@pytest.fixture
def no_model_calls_yet():
    model_calls.clear()
    yield
    model_calls.clear()


def test_a_chats_model_and_tool_calls_completed_after_the_snapshot_are_not_made_again(
        config, no_model_calls_yet):
    restored = crash_after_the_chat_completed(config)
    assert restored.outputs == [("a", "done: sent #1")]
    assert (len(model_calls), sent) == (2, [1])  # two model calls, one e-mail, in all
    assert restored.pool.submitted == []


def test_without_the_store_a_chat_completed_after_the_snapshot_calls_model_and_tool_again(
        no_model_calls_yet):
    restored = crash_after_the_chat_completed(OFF)
    assert restored.outputs == [("a", "done: sent #1")]
    assert (len(model_calls), sent) == (4, [1, 1])


def crash_after_the_chat_completed(config):
    """The chat's first model call parks; a snapshot; the model, the tool and the model again
    complete and the action ends; the process dies before the next checkpoint."""
    agent = ChatMailAgent()
    first = harness(agent, config)
    first.process_element(("a", 1))
    snapshot = first.snapshot()
    assert finish(first) == [("a", "done: sent #1")]
    assert (len(model_calls), sent) == (2, [1])
    first.close()
    restored = AgentHarness.restore(snapshot, agent, key_selector=lambda r: r[0], config=config)
    finish(restored)
    restored.close()
    return restored
