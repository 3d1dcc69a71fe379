"""Which keys hold a secret is one table (``flink_agents_ltm/api/secret_keys.json``), read by
the Python rule and by Java's (java-bridge's ConfigSecretsTest checks the same examples)."""

import json
from importlib import resources

import pytest

from flink_agents_ltm.api.redaction import is_secret_key, redact
from flink_agents_ltm.api.resources import ResourceDescriptor

TABLE = json.loads(resources.files("flink_agents_ltm.api").joinpath("secret_keys.json")
                   .read_text("utf-8"))


@pytest.mark.parametrize(("key", "secret"), sorted(TABLE["examples"].items()))
def test_each_example_of_the_table_is_what_the_rule_says(key, secret):
    assert is_secret_key(key) is secret


@pytest.mark.parametrize("word", TABLE["secret_words"])
def test_every_secret_word_of_the_table_is_secret_alone_and_as_a_last_word(word):
    assert is_secret_key(word) and is_secret_key(f"my_{word}")
    assert not is_secret_key(f"{word}_env")


def test_a_dsn_is_masked_in_a_resources_repr_and_in_a_redacted_config():
    # dsn was secret in the log masking but shown in a resource's repr
    descriptor = ResourceDescriptor(dict, dsn="hunter2", user="u")
    assert "hunter2" not in repr(descriptor) and "'u'" in repr(descriptor)
    assert redact({"dsn": "host=h password=hunter2"}) == {"dsn": "***"}
