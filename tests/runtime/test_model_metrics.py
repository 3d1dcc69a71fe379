"""Token usage and model latency per action and chat model, and the user metric groups,
on the in-memory harness with the scripted chat model (which reports usage in words)."""

import pytest

from flink_agents_ltm.runtime.metric_groups import RuntimeMetricGroup
from flink_agents_ltm.testing import AgentHarness
from runtime.event_log_agents import MeteredChatAgent

MODEL = "action.answer.model.assistant."
QUESTION = "where is order 7"  # 4 words


@pytest.fixture
def harnesses():
    made = []
    yield made
    for harness in made:
        harness.close()


def chat_until_the_second_model_call(harnesses, **kwargs):
    harness = AgentHarness(MeteredChatAgent(), config={"agents.job-id": "metered"}, **kwargs)
    harnesses.append(harness)
    harness.process_element(("a", QUESTION))
    harness.clock.advance(0.25)
    harness.pool.run()  # the model asks for the tool, after 250 ms
    harness.advance(0.01)  # the tool runs inline; the second model call is submitted
    return harness


def test_tokens_calls_and_latency_of_each_model_call_are_counted_per_action_and_model(
        harnesses):
    harness = chat_until_the_second_model_call(harnesses)
    harness.clock.advance(0.5)
    harness.pool.run()  # the answer, after 500 ms
    harness.advance(0.01)

    values = harness.metrics.values()
    assert harness.outputs == ["order 7 has shipped"]
    # call 1: 4 prompt words, 1 tool call; call 2: 4 + 0 + 3 ("order 7 shipped"), 4 words
    assert {name: values[MODEL + name] for name in (
        "promptTokens", "completionTokens", "modelCalls", "modelLatencyMsTotal")} == {
        "promptTokens": 4 + 7, "completionTokens": 1 + 4, "modelCalls": 2,
        "modelLatencyMsTotal": 250 + 500}


def test_a_model_answer_replayed_after_a_restore_is_not_counted_again(harnesses):
    harness = chat_until_the_second_model_call(harnesses)
    snapshot = harness.snapshot()
    restored = AgentHarness.restore(snapshot, MeteredChatAgent(),
                                    config={"agents.job-id": "metered"}, run_on_wait=True)
    harnesses.append(restored)
    restored.end_input()

    values = restored.metrics.values()
    assert restored.outputs == ["order 7 has shipped"]
    assert (values[MODEL + "modelCalls"], values[MODEL + "promptTokens"],
            values[MODEL + "completionTokens"]) == (1, 7, 4)


def test_user_metrics_of_the_agent_and_the_action_group_are_kept_by_name(harnesses):
    harness = AgentHarness(MeteredChatAgent(), config={"agents.job-id": "metered"},
                           sync=True)
    harnesses.append(harness)
    harness.process_element(("a", QUESTION))
    harness.process_element(("b", "where is my parcel now please"))

    values = harness.metrics.values()
    assert (values["numInputs"], values["numInputsPerSec"]) == (2, 2)
    assert values["action.answer.textChars"] == [16, 29]
    assert values["action.answer.lastTextChars"] == 29


def test_a_metric_name_is_one_kind_and_a_plain_sub_group_name_has_no_equals_sign():
    group = RuntimeMetricGroup()
    group.get_counter("calls").inc(3)
    assert group.get_counter("calls").get_count() == 3  # the same counter
    with pytest.raises(ValueError, match="metric 'calls' of this group is a counter, not a "
                                         "gauge"):
        group.get_gauge("calls")
    with pytest.raises(ValueError, match="must not contain '='"):
        group.get_sub_group("model=x")
    histogram = group.get_sub_group("action", "a").get_histogram("sizes", window_size=2)
    for value in (10, 2, 6):
        histogram.update(value)
    assert (histogram.get_min(), histogram.get_max(), histogram.get_mean()) == (2, 6, 4.0)
