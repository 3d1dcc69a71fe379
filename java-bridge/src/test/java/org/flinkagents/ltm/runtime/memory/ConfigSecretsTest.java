package org.flinkagents.ltm.runtime.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.jupiter.api.Test;

/** Which values of a memory configuration are secret, and how Java keeps them out of text. */
class ConfigSecretsTest {
    private static final String STORE = "long-term-memory.vector-store";

    @Test
    void testPasswordsApiKeysAndConnectionStringsAreMaskedInAPrintableCopy() {
        String json = "{\"provider\":\"pgvector\",\"config\":{\"host\":\"db\",\"port\":5433,"
                + "\"user\":\"mem0\",\"password\":\"s3cret-pw\",\"api_key\":\"sk-123456\","
                + "\"connection_string\":\"postgresql://mem0:s3cret-pw@db:5433/mem0\"}}";

        Map<String, Object> printable = ConfigSecrets.redact(Map.of(STORE, json,
                "long-term-memory.embedded.base-dir", "/ltm"));

        assertEquals("{\"provider\":\"pgvector\",\"config\":{\"host\":\"db\",\"port\":5433,"
                + "\"user\":\"mem0\",\"password\":\"***\",\"api_key\":\"***\","
                + "\"connection_string\":\"***\"}}", printable.get(STORE));
        assertEquals("/ltm", printable.get("long-term-memory.embedded.base-dir"));
    }

    @Test
    void testAPasswordInsideAnyUrlIsMaskedWhateverItsKey() {
        String json = "{\"provider\":\"qdrant\",\"config\":{\"url\":\"https://me:hunter2x@q:6333\"}}";
        assertEquals("{\"provider\":\"qdrant\",\"config\":{\"url\":\"https://me:***@q:6333\"}}",
                ConfigSecrets.redactJson(json));
        assertEquals("pg me:***@db", ConfigSecrets.of(Map.of(STORE, json)).scrub("pg me:hunter2x@db"));
    }

    @Test
    void testJsonThatDoesNotParseIsNeverPrinted() {
        assertEquals("<not valid JSON, not shown>",
                ConfigSecrets.redactJson("{\"password\": \"s3cret-pw\","));
        // As a secret, the whole malformed text is masked where it is quoted.
        String malformed = "{\"password\": s3cret-pw}";
        assertEquals("option is not valid JSON: ***",
                ConfigSecrets.of(Map.of(STORE, malformed))
                        .scrub("option is not valid JSON: " + malformed));
    }

    @Test
    void testEverySecretIsScrubbedFromTextWhereverItAppears() {
        Map<String, Object> config = Map.of(STORE, "{\"provider\":\"pgvector\",\"config\":{"
                + "\"password\":\"pa\\\"ss\",\"dsn\":\"host=db password='dsn pw' user=x\"},"
                + "\"token\":\"tok-9\",\"max_tokens\":2000}");
        String text = "failed {'password': 'pa\"ss', 'dsn': 'host=db password=''dsn pw'' user=x'}"
                + " json \"pa\\\"ss\" token tok-9 after 2000 tokens";

        String scrubbed = ConfigSecrets.of(config).scrub(text);

        for (String secret : List.of("pa\"ss", "dsn pw", "tok-9", "pa\\\"ss")) {
            assertFalse(scrubbed.contains(secret), secret + " in " + scrubbed);
        }
        assertTrue(scrubbed.contains("after 2000 tokens"), "a number is no secret: " + scrubbed);
    }

    @Test
    void testSecretNamesAreRecognisedWhateverTheirCaseOrSeparator() {
        for (String name : List.of("password", "PGPASSWORD", "db-password", "api_key", "apiKey",
                "OPENAI_API_KEY", "secret", "client_secret", "token", "access_token",
                "aws_secret_access_key", "connection_string", "credentials", "dsn")) {
            assertTrue(ConfigSecrets.isSecretName(name), name);
        }
        for (String name : List.of("host", "port", "user", "dbname", "collection_name",
                "max_tokens", "tokenizer", "embedding_model_dims", "path")) {
            assertFalse(ConfigSecrets.isSecretName(name), name);
        }
    }

    @Test
    void testEachExampleOfTheSharedTableOfSecretKeysIsWhatTheRuleSays() throws Exception {
        // the table Python reads too (flink_agents_ltm/api/secret_keys.json, in the jar)
        JsonNode examples;
        try (var table = ConfigSecrets.class.getResourceAsStream(ConfigSecrets.TABLE)) {
            examples = new ObjectMapper().readTree(table).get("examples");
        }
        List<String> wrong = new ArrayList<>();
        examples.fields().forEachRemaining(example -> {
            if (ConfigSecrets.isSecretName(example.getKey()) != example.getValue().asBoolean()) {
                wrong.add(example.getKey());
            }
        });
        assertTrue(examples.size() > 20, "examples: " + examples.size());
        assertEquals(List.of(), wrong);
    }
}
