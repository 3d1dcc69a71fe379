package org.flinkagents.ltm.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;

import org.flinkagents.ltm.job.MemoryAgentJob.Arguments;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The job's arguments, parsed on the client (no cluster, no Python). */
class MemoryAgentJobArgumentsTest {
    private static final String PASSWORD = "wrong-Pa55word-7f3a";
    private static final String PGVECTOR =
            "{\"provider\":\"pgvector\",\"config\":{\"host\":\"127.0.0.1\",\"port\":5433,"
                    + "\"collection_name\":\"notes\"}}";
    private static final String PGVECTOR_WITH_PASSWORD =
            "{\"provider\":\"pgvector\",\"config\":{\"host\":\"127.0.0.1\",\"port\":5433,"
                    + "\"user\":\"mem0\",\"password\":\"" + PASSWORD + "\"}}";
    private static final Map<String, String> NO_VARIABLES = Map.of();

    @TempDir
    Path folder;

    private Path privateFile(String name, String text) throws IOException {
        Path file = folder.resolve(name);
        Files.writeString(file, text, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        return file;
    }

    @Test
    void testTheVectorStoreJsonReachesThePythonMemoryUnderTheVectorStoreOption() {
        Arguments arguments = Arguments.parse(NO_VARIABLES, "--vector-store", PGVECTOR,
                "--base-dir", "/ltm");

        assertEquals(
                Map.of("long-term-memory.vector-store", PGVECTOR,
                        "long-term-memory.embedded.base-dir", "/ltm"),
                arguments.memoryConfig());
        assertEquals("--vector-store", arguments.vectorStoreSource());
    }

    @Test
    void testTheVectorStoreFileReachesThePythonMemoryAsItsText() throws IOException {
        Path file = privateFile("store.json", PGVECTOR_WITH_PASSWORD + "\n");

        Arguments arguments = Arguments.parse(NO_VARIABLES, "--vector-store-file", file.toString());

        assertEquals(Map.of("long-term-memory.vector-store", PGVECTOR_WITH_PASSWORD + "\n"),
                arguments.memoryConfig());
        assertEquals("--vector-store-file " + file, arguments.vectorStoreSource());
    }

    @Test
    void testTheVectorStoreVariableIsUsedOnlyWhenNoArgumentNamesAStore() throws IOException {
        Map<String, String> variables =
                Map.of(MemoryAgentJob.VECTOR_STORE_VARIABLE, PGVECTOR_WITH_PASSWORD);

        assertEquals(Map.of("long-term-memory.vector-store", PGVECTOR_WITH_PASSWORD),
                Arguments.parse(variables).memoryConfig());
        assertEquals("$" + MemoryAgentJob.VECTOR_STORE_VARIABLE,
                Arguments.parse(variables).vectorStoreSource());
        Path file = privateFile("store.json", PGVECTOR);
        assertEquals(Map.of("long-term-memory.vector-store", PGVECTOR),
                Arguments.parse(variables, "--vector-store-file", file.toString()).memoryConfig());
        assertEquals(Map.of("long-term-memory.vector-store", PGVECTOR),
                Arguments.parse(variables, "--vector-store", PGVECTOR).memoryConfig());
        // An empty variable is no store: the embedded default.
        assertEquals(Map.of(), Arguments.parse(
                Map.of(MemoryAgentJob.VECTOR_STORE_VARIABLE, " ")).memoryConfig());
        assertNull(Arguments.parse(NO_VARIABLES).vectorStoreSource());
    }

    @Test
    void testAVectorStoreFileOthersMayReadIsRefusedWithoutBeingRead() throws IOException {
        Path file = privateFile("store.json", PGVECTOR_WITH_PASSWORD);
        for (String mode : List.of("rw-r--r--", "rw-r-----", "rw----r--", "rw--w----")) {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));

            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                    () -> Arguments.parse(NO_VARIABLES, "--vector-store-file", file.toString()));

            assertEquals("--vector-store-file " + file + " may be read or changed by other users ("
                    + mode + "); it holds the vector store's password: chmod 600 " + file,
                    refused.getMessage());
        }
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("r--------"));
        assertEquals(Map.of("long-term-memory.vector-store", PGVECTOR_WITH_PASSWORD),
                Arguments.parse(NO_VARIABLES, "--vector-store-file", file.toString())
                        .memoryConfig());
    }

    @Test
    void testAMissingVectorStoreFileIsRefusedNamingIt() {
        Path missing = folder.resolve("missing.json");
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> Arguments.parse(NO_VARIABLES, "--vector-store-file", missing.toString()));
        assertEquals("--vector-store-file " + missing + ": no such file", refused.getMessage());
    }

    @Test
    void testTheVectorStoreIsGivenOnceNotTwice() throws IOException {
        Path file = privateFile("store.json", PGVECTOR);
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> Arguments.parse(NO_VARIABLES, "--vector-store-file", file.toString(),
                        "--vector-store", PGVECTOR));
        assertEquals("give the vector store once: --vector-store-file or --vector-store, not both",
                refused.getMessage());
    }

    @Test
    void testWithoutAVectorStoreThePythonMemoryGetsOnlyTheEmbeddedBaseDir() {
        assertEquals(Map.of("long-term-memory.embedded.base-dir", "/ltm"),
                Arguments.parse(NO_VARIABLES, "--base-dir", "/ltm").memoryConfig());
        assertEquals(Map.of(), Arguments.parse(NO_VARIABLES).memoryConfig());
    }

    @Test
    void testMalformedVectorStoreJsonIsRefusedNamingItsSourceButNeverQuotingIt()
            throws IOException {
        String[] malformed = {
            "{\"provider\": \"pgvector\", \"password\": \"" + PASSWORD + "\",",
            "{\"provider\": \"pgvector\", \"password\": " + PASSWORD + "}",
            "{\"provider\":\"pgvector\"} {\"password\": \"" + PASSWORD + "\"}",
        };
        String[] reasons = {"the text ends too early", "unexpected text",
            "text follows the JSON object"};
        for (int i = 0; i < malformed.length; i++) {
            String text = malformed[i];
            Path file = privateFile("bad-" + i + ".json", text);
            Map<String, String> variables = Map.of(MemoryAgentJob.VECTOR_STORE_VARIABLE, text);
            List<IllegalArgumentException> refusals = List.of(
                    assertThrows(IllegalArgumentException.class, () -> Arguments.parse(
                            NO_VARIABLES, "--vector-store-file", file.toString())),
                    assertThrows(IllegalArgumentException.class, () -> Arguments.parse(
                            NO_VARIABLES, "--vector-store", text)),
                    assertThrows(IllegalArgumentException.class, () -> Arguments.parse(
                            variables)));
            List<String> sources = List.of("--vector-store-file " + file, "--vector-store",
                    "$" + MemoryAgentJob.VECTOR_STORE_VARIABLE);
            for (int s = 0; s < sources.size(); s++) {
                String message = refusals.get(s).getMessage();
                assertTrue(message.startsWith("the vector store of " + sources.get(s)
                        + " is not valid JSON (" + reasons[i] + " at line 1, column "), message);
                assertTrue(message.endsWith("; the text is not shown)"), message);
                assertFalse(message.contains(PASSWORD), message);
                assertNull(refusals.get(s).getCause(), "a cause would carry Jackson's quote");
            }
        }
    }

    @Test
    void testAVectorStoreThatIsNotAnObjectNamingAProviderIsRefusedWithoutQuotingIt() {
        Map<String, String> got = Map.of(
                PASSWORD, "text that is not a JSON object",
                "[\"" + PASSWORD + "\"]", "a JSON array",
                "{\"config\":{\"password\":\"" + PASSWORD + "\"}}",
                "an object without a \"provider\" name",
                "{\"provider\":5,\"password\":\"" + PASSWORD + "\"}",
                "an object without a \"provider\" name");
        for (Map.Entry<String, String> notAStore : got.entrySet()) {
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                    () -> Arguments.parse(NO_VARIABLES, "--vector-store", notAStore.getKey()));
            assertEquals("the vector store of --vector-store must be a Mem0 vector store, a JSON "
                    + "object {\"provider\": <name>, \"config\": {...}}; got "
                    + notAStore.getValue(), refused.getMessage());
        }
    }

    @Test
    void testAnUnknownArgumentIsRefusedSoATypoNeverFallsBackToTheEmbeddedStore() {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> Arguments.parse(NO_VARIABLES, "--vectorstore", PGVECTOR));
        assertTrue(refused.getMessage().startsWith("unknown argument --vectorstore; "),
                refused.getMessage());
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> Arguments.parse(NO_VARIABLES, "--base-dir", "/ltm", "--vector-store"));
        assertEquals("--vector-store needs a value (see --help)", missing.getMessage());
    }

    @Test
    void testAnUnknownArgumentIsNamedWithoutTheValueItMayCarry() {
        IllegalArgumentException glued = assertThrows(IllegalArgumentException.class,
                () -> Arguments.parse(NO_VARIABLES, "--vector-store=" + PGVECTOR_WITH_PASSWORD));
        assertTrue(glued.getMessage().startsWith("unknown argument --vector-store...; "),
                glued.getMessage());
        IllegalArgumentException positional = assertThrows(IllegalArgumentException.class,
                () -> Arguments.parse(NO_VARIABLES, "--base-dir", "/ltm", PASSWORD));
        assertTrue(positional.getMessage().startsWith("unknown argument #3 (not a --name); "),
                positional.getMessage());
        for (IllegalArgumentException refused : List.of(glued, positional)) {
            assertFalse(refused.getMessage().contains(PASSWORD), refused.getMessage());
        }
    }

    @Test
    void testHelpIsAFlagAndTheUsageNamesEveryArgument() {
        assertTrue(Arguments.parse(NO_VARIABLES, "--input", "notes.csv", "--help").help());
        assertFalse(Arguments.parse(NO_VARIABLES, "--input", "notes.csv").help());
        for (String name : Arguments.NAMES) {
            assertTrue(MemoryAgentJob.USAGE.contains("--" + name + " "), name);
        }
        assertTrue(MemoryAgentJob.USAGE.contains("$" + MemoryAgentJob.VECTOR_STORE_VARIABLE));
    }
}
