package org.flinkagents.ltm.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.flinkagents.ltm.job.MemoryAgentJob.Arguments;
import org.junit.jupiter.api.Test;

/** The job's arguments, parsed on the client (no cluster, no Python). */
class MemoryAgentJobArgumentsTest {
    private static final String PGVECTOR =
            "{\"provider\":\"pgvector\",\"config\":{\"host\":\"127.0.0.1\",\"port\":5433,"
                    + "\"collection_name\":\"notes\"}}";

    @Test
    void testTheVectorStoreJsonReachesThePythonMemoryUnderTheVectorStoreOption() {
        Arguments arguments = Arguments.parse("--vector-store", PGVECTOR, "--base-dir", "/ltm");

        assertEquals(
                Map.of("long-term-memory.vector-store", PGVECTOR,
                        "long-term-memory.embedded.base-dir", "/ltm"),
                arguments.memoryConfig());
    }

    @Test
    void testWithoutAVectorStoreThePythonMemoryGetsOnlyTheEmbeddedBaseDir() {
        assertEquals(Map.of("long-term-memory.embedded.base-dir", "/ltm"),
                Arguments.parse("--base-dir", "/ltm").memoryConfig());
        assertEquals(Map.of(), Arguments.parse().memoryConfig());
    }

    @Test
    void testMalformedVectorStoreJsonIsRefusedNamingTheOption() {
        for (String malformed : List.of("{\"provider\": \"pgvector\",", "{provider: pgvector}",
                "{\"provider\":\"pgvector\"} trailing")) {
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                    () -> Arguments.parse("--vector-store", malformed));
            assertTrue(refused.getMessage().startsWith("--vector-store is not valid JSON ("),
                    refused.getMessage());
            assertTrue(refused.getMessage().endsWith("): " + malformed), refused.getMessage());
            assertTrue(refused.getMessage().contains(" at line 1, column "), refused.getMessage());
        }
    }

    @Test
    void testAVectorStoreThatIsNotAnObjectNamingAProviderIsRefused() {
        for (String notAStore : List.of("pgvector", "[\"pgvector\"]", "{\"config\":{}}",
                "{\"provider\":5}")) {
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                    () -> Arguments.parse("--vector-store", notAStore));
            assertEquals("--vector-store must be a Mem0 vector store, a JSON object "
                    + "{\"provider\": <name>, \"config\": {...}}; got: " + notAStore,
                    refused.getMessage());
        }
    }

    @Test
    void testAnUnknownArgumentIsRefusedSoATypoNeverFallsBackToTheEmbeddedStore() {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> Arguments.parse("--vectorstore", PGVECTOR));
        assertTrue(refused.getMessage().startsWith("unknown argument --vectorstore; "),
                refused.getMessage());
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> Arguments.parse("--base-dir", "/ltm", "--vector-store"));
        assertEquals("--vector-store needs a value (see --help)", missing.getMessage());
    }

    @Test
    void testHelpIsAFlagAndTheUsageNamesEveryArgument() {
        assertTrue(Arguments.parse("--input", "notes.csv", "--help").help());
        assertFalse(Arguments.parse("--input", "notes.csv").help());
        for (String name : Arguments.NAMES) {
            assertTrue(MemoryAgentJob.USAGE.contains("--" + name + " "), name);
        }
    }
}
