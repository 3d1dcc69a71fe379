"""Reranking that does something, on every implementation: ``search(..., rerank=True)`` is
refused naming ``long-term-memory.reranker`` when no reranker is configured, and with one it
reorders rerank-candidates x limit candidates of the set's own scope (never another key's
or set's items). The reranker is a declared resource (``@reranker_setup``) that the option
names; the shipped ones (lexical BM25, an LLM through a declared chat model, a local
cross-encoder, Mem0's providers) each work or fail with a message that says what to do."""

import json

import pytest

from flink_agents_ltm.api.agent import Agent, action
from flink_agents_ltm.api.events import InputEvent
from flink_agents_ltm.api.execution_environment import AgentsConfiguration
from flink_agents_ltm.api.memory import LongTermMemoryError
from flink_agents_ltm.api.memory.long_term_memory import LongTermMemoryOptions
from flink_agents_ltm.api.memory.mailbox import MailboxThreadCheck
from flink_agents_ltm.api.rerankers import BaseReranker, RerankerError
from flink_agents_ltm.api.resources import (
    MissingResourceError,
    ResourceDescriptor,
    chat_model_setup,
    reranker_setup,
)
from flink_agents_ltm.integrations.chat_models.scripted import ScriptedChatModelSetup
from flink_agents_ltm.integrations.mem0.rerankers import Mem0Reranker
from flink_agents_ltm.integrations.rerankers.chat_model import ChatModelReranker
from flink_agents_ltm.integrations.rerankers.cross_encoder import CrossEncoderReranker
from flink_agents_ltm.integrations.rerankers.lexical import LexicalReranker
from flink_agents_ltm.runtime.memory.factories import build_long_term_memory
from flink_agents_ltm.runtime.resource_provider import ResourceProvider

RERANKER = LongTermMemoryOptions.RERANKER.key
TEA = ["green tea for alice", "alice likes green tea", "tea, green, for alice",
       "alice's green tea order", "more green tea", "zebra"]


class Preferring(BaseReranker):
    """Scores 1 for documents holding ``word``, 0 for the others; records what it saw."""

    def __init__(self, word="zebra"):
        self.word, self.seen = word, []

    def score(self, query, documents):
        self.seen.append(list(documents))
        return [1.0 if self.word in d else 0.0 for d in documents]


def bound(ltm, key="alice", set_name="notes"):
    ltm.switch_context(key, None)
    return ltm.get_memory_set(set_name)


def values(found):
    return [item.value for item in found]


def test_rerank_is_refused_naming_the_option_when_no_reranker_is_configured(impl):
    notes = bound(impl.ltm)
    notes.add(TEA)
    impl.record_core_calls()
    with pytest.raises(ValueError, match=r"^search\(\.\.\., rerank=True\) needs a reranker, "
                                         r"and none is configured: set 'long-term-memory\."
                                         r"reranker' to the name of a declared reranker"):
        notes.search("green tea", rerank=True)
    assert impl.core_calls == []  # refused before the store was asked
    assert len(notes.search("green tea", rerank=False, limit=2)) == 2


def test_a_reranker_reorders_the_stores_candidates(impl):
    notes = bound(impl.ltm)
    notes.add(TEA)
    assert "zebra" not in values(notes.search("green tea for alice", limit=2))
    impl.ltm.set_reranker(Preferring("zebra"))
    reranked = notes.search("green tea for alice", limit=2, rerank=True)
    assert len(reranked) == 2
    assert reranked[0].value == "zebra"
    assert reranked[1].value != "zebra"


def test_a_reranked_search_orders_rerank_candidates_times_limit_items(impl):
    notes = bound(impl.ltm)
    notes.add([f"green tea note {n}" for n in range(20)])
    reranker = Preferring()
    impl.ltm.set_reranker(reranker, candidates=3)
    assert len(notes.search("green tea", limit=2, rerank=True)) == 2
    assert [len(seen) for seen in reranker.seen] == [6]


def test_the_reranker_never_sees_nor_returns_another_keys_or_sets_items(impl):
    bound(impl.ltm, "bob").add(["zebra green tea of bob"] * 3)
    bound(impl.ltm, "alice", "other").add(["zebra green tea of another set"])
    notes = bound(impl.ltm, "alice")
    notes.add(["green tea for alice", "alice likes green tea"])
    reranker = Preferring("zebra")
    impl.ltm.set_reranker(reranker)
    found = notes.search("zebra green tea", limit=5, rerank=True)
    assert sorted(values(found)) == ["alice likes green tea", "green tea for alice"]
    assert all("zebra" not in document for seen in reranker.seen for document in seen)


def test_the_rerank_option_is_true_or_false(impl):
    impl.ltm.set_reranker(Preferring())
    with pytest.raises(TypeError, match="search option rerank is True or False, got 'yes'"):
        bound(impl.ltm).search("tea", rerank="yes")


def test_a_reranker_that_returns_a_score_per_document_wrongly_fails_the_search():
    class Short(BaseReranker):
        def score(self, query, documents):
            return [1.0]

    ltm = memory_with(None)
    notes = bound(ltm)
    notes.add(["tea", "green tea"])
    ltm.set_reranker(Short())
    with pytest.raises(LongTermMemoryError, match=r"rerank on memory set 'notes' of key 'alice' "
                                                  r"failed: RerankerError: Short\.score returned "
                                                  r"1 scores for 2 documents"):
        notes.search("tea", rerank=True)


# ---------------------------------------------------------------- declared, by the option

def agent_declaring(**setups):
    members = {"ignore": action(InputEvent)(lambda event, ctx: None), **setups}
    return type("RerankingAgent", (Agent,), members)()


def memory_with(reranker_name, **setups):
    config = AgentsConfiguration()
    if reranker_name is not None:
        config.set(LongTermMemoryOptions.RERANKER, reranker_name)
    provider = ResourceProvider(agent_declaring(**setups), lambda: None)
    return build_long_term_memory("in-memory", "test-job", config, MailboxThreadCheck(),
                                  resources=provider.for_long_term_memory)


LEXICAL = reranker_setup(lambda: ResourceDescriptor(LexicalReranker))


def test_the_option_names_a_declared_reranker_that_a_reranked_search_uses():
    ltm = memory_with("lexical", lexical=LEXICAL)
    assert isinstance(ltm.reranker, LexicalReranker)
    notes = bound(ltm)
    notes.add([f"order {n} for a teapot: it arrived late" for n in range(48210, 48220)])
    assert notes.search("what about order 48217?", limit=1, rerank=True)[0].value == (
        "order 48217 for a teapot: it arrived late")


def test_an_option_naming_no_declared_reranker_names_the_option_and_what_is_declared():
    assistant = chat_model_setup(lambda: ResourceDescriptor(ScriptedChatModelSetup,
                                                            answers=["hi"]))
    for name in ("lexicl", "assistant"):  # a typo; a chat model is not a reranker
        with pytest.raises(MissingResourceError, match=(
                rf"^option 'long-term-memory\.reranker': no reranker named '{name}' is "
                r"declared on agent RerankingAgent; declared: lexical \(reranker\), "
                r"assistant \(chat_model\)\. Declare it with .*@reranker_setup")):
            memory_with(name, lexical=LEXICAL, assistant=assistant)


def test_an_option_naming_a_reranker_where_no_resources_are_declared_is_refused():
    with pytest.raises(ValueError, match="option 'long-term-memory.reranker' names the reranker "
                                         "'lexical', but no declared resources are available"):
        build_long_term_memory("in-memory", "test-job", {RERANKER: "lexical"},
                               MailboxThreadCheck(), resources=None)


def test_an_option_naming_a_resource_that_is_not_a_reranker_is_refused():
    not_one = reranker_setup(lambda: ResourceDescriptor(dict))
    with pytest.raises(TypeError, match="option 'long-term-memory.reranker' names 'odd', a dict, "
                                        "which is not a BaseReranker"):
        memory_with("odd", odd=not_one)


def test_rerank_candidates_is_a_positive_option():
    config = AgentsConfiguration().set_string(LongTermMemoryOptions.RERANK_CANDIDATES, "6")
    assert LongTermMemoryOptions.reranking(config) == (None, 6)
    with pytest.raises(ValueError, match="rerank candidates must be a positive int, got 0"):
        memory_with(None).set_reranker(Preferring(), 0)


# ---------------------------------------------------------------- the shipped rerankers

def test_the_lexical_reranker_puts_the_candidate_with_the_querys_rare_words_first():
    documents = ["order 11 for a teapot arrived late", "order 12 for a teapot arrived late",
                 "the kettle arrived late", "order 13 for a teapot arrived late"]
    scores = LexicalReranker().score("where is order 12, the teapot?", documents)
    assert max(range(4), key=scores.__getitem__) == 1
    assert scores[2] < scores[0]  # shares only 'late'... and not even that with the query
    assert LexicalReranker().score("the a of", documents) == [0.0] * 4
    # A word most candidates hold counts for little, however often one repeats it.
    common = ["teapot teapot teapot order", "teapot order", "teapot order", "order 12 kettle"]
    scores = LexicalReranker().score("teapot order 12", common)
    assert max(range(4), key=scores.__getitem__) == 3


def ranking_by_last_word(messages, tools):
    """A chat model that ranks the items whose text ends in 'first' first."""
    items = [line for line in messages[-1].content.splitlines() if line.startswith("[")]
    first = [int(line[1:line.index("]")]) for line in items if line.endswith("first")]
    return json.dumps({"ranking": first})


def test_an_llm_reranker_ranks_through_a_declared_chat_model():
    ltm = memory_with("llm", ranker=chat_model_setup(lambda: ResourceDescriptor(
        ScriptedChatModelSetup, respond=ranking_by_last_word)),
        llm=reranker_setup(lambda: ResourceDescriptor(ChatModelReranker, chat_model="ranker")))
    notes = bound(ltm)
    notes.add(["green tea for alice", "alice likes green tea", "green tea, put me first"])
    found = notes.search("green tea for alice", limit=2, rerank=True)
    assert values(found)[0] == "green tea, put me first"
    assert len(found) == 2


def test_an_llm_reranker_whose_model_answers_no_ranking_fails_the_search_saying_so():
    ltm = memory_with("llm", ranker=chat_model_setup(lambda: ResourceDescriptor(
        ScriptedChatModelSetup, answers=["the second one, I think"])),
        llm=reranker_setup(lambda: ResourceDescriptor(ChatModelReranker, chat_model="ranker")))
    notes = bound(ltm)
    notes.add(["green tea for alice", "alice likes green tea"])
    with pytest.raises(LongTermMemoryError, match=r"RerankerError: the chat model did not "
                                                  r"answer \{\"ranking\": \[item numbers\]\}"):
        notes.search("green tea", rerank=True)


def test_an_llm_reranker_must_name_a_declared_chat_model():
    with pytest.raises(MissingResourceError, match="names the chat model 'nobody' in its "
                                                   "argument 'chat_model'"):
        memory_with("llm", llm=reranker_setup(lambda: ResourceDescriptor(
            ChatModelReranker, chat_model="nobody")))


def test_a_cross_encoder_is_loaded_from_a_local_folder_only(tmp_path):
    reranker = CrossEncoderReranker(str(tmp_path / "no-model"))
    with pytest.raises(FileNotFoundError, match="is not a folder holding a cross-encoder "
                                                r"\(no config\.json there\); models are loaded "
                                                "from local files only"):
        reranker.open(lambda *_: None)


def test_a_local_cross_encoder_scores_every_candidate_offline(tmp_path):
    """A tiny cross-encoder with random weights, saved as a real model folder: the loading
    and scoring path of CrossEncoderReranker, offline (the scores mean nothing)."""
    pytest.importorskip("sentence_transformers")
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    torch.manual_seed(0)  # the same tiny model every run

    folder = tmp_path / "tiny-cross-encoder"
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "green", "tea", "for", "alice"]
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n")
    BertTokenizerFast(vocab_file=str(tmp_path / "vocab.txt")).save_pretrained(folder)
    BertForSequenceClassification(BertConfig(
        vocab_size=len(words), hidden_size=8, num_hidden_layers=1, num_attention_heads=1,
        intermediate_size=8, num_labels=1, initializer_range=1.0)).save_pretrained(folder)
    reranker = CrossEncoderReranker(str(folder))
    reranker.open(lambda *_: None)
    ltm = memory_with(None)
    ltm.set_reranker(reranker)
    notes = bound(ltm)
    notes.add(["green tea for alice", "alice likes tea", "green"])
    scores = reranker.score("green tea", ["green tea for alice", "alice", "green"])
    assert len(scores) == 3 and all(isinstance(s, float) and 0 < s < 1 for s in scores)
    assert sorted(values(notes.search("green tea", rerank=True))) == sorted(
        ["green tea for alice", "alice likes tea", "green"])


def test_mem0s_reranker_providers_are_named_when_an_unknown_one_is_declared():
    with pytest.raises(ValueError, match="Mem0Reranker provider 'nope' is not one of Mem0's: "
                                         "cohere, huggingface, llm_reranker, "
                                         "sentence_transformer, zero_entropy"):
        Mem0Reranker("nope").open(lambda *_: None)
    with pytest.raises(RerankerError, match="Mem0Reranker is not open"):
        Mem0Reranker("cohere").score("q", ["d"])
