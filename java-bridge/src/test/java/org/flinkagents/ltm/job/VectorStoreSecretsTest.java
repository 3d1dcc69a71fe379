package org.flinkagents.ltm.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.flinkagents.ltm.job.MemoryAgentJob.Arguments;
import org.flinkagents.ltm.runtime.memory.CapturedLogs;
import org.flinkagents.ltm.runtime.memory.MailboxThreadChecker;
import org.flinkagents.ltm.runtime.memory.PythonLongTermMemory;
import org.flinkagents.ltm.runtime.memory.TestLtm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A deliberately wrong password for a real pgvector server ({@code scripts/pgvector-server},
 * started for this class on a free port of 127.0.0.1), given the ways the README shows, never
 * shows up in any exception text or log line of the Java side, nor in anything the local run
 * prints; the failure itself is reported.
 */
class VectorStoreSecretsTest {
    private static final String WRONG_PASSWORD = "wrong-" + UUID.randomUUID();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static Path server;
    private static String wrongStore;

    @BeforeAll
    static void startPgvector() throws Exception {
        // Beside the LTM home, not in it: the home is private (0700) and the server runs as
        // another user ('postgres') when the tests run as root.
        server = TestLtm.home().toAbsolutePath().getParent().resolve(TestLtm.unique("pgvector"));
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        LocalRun started = pgvectorServer("start", "--dir", server.toString(), "--port",
                String.valueOf(port));
        assertEquals(0, started.exitCode, started.toString());
        LocalRun status = pgvectorServer("status", "--dir", server.toString(), "--json");
        assertEquals(0, status.exitCode, status.toString());
        ObjectNode store = (ObjectNode) JSON.readTree(status.stdout);
        ObjectNode config = (ObjectNode) store.get("config");
        assertNotEquals(WRONG_PASSWORD, config.get("password").asText());
        config.put("password", WRONG_PASSWORD);
        config.put("collection_name", "secrets_" + UUID.randomUUID().toString().substring(0, 8));
        wrongStore = JSON.writeValueAsString(store);
    }

    @AfterAll
    static void stopPgvector() throws Exception {
        if (server != null) {
            LocalRun stopped = pgvectorServer("stop", "--dir", server.toString());
            assertEquals(0, stopped.exitCode, stopped.toString());
        }
    }

    private static LocalRun pgvectorServer(String... arguments) throws Exception {
        String[] command = new String[arguments.length + 2];
        command[0] = System.getProperty("flink.agents.ltm.python");
        command[1] = "scripts/pgvector-server";
        System.arraycopy(arguments, 0, command, 2, arguments.length);
        return LocalRun.run(server.resolveSibling(server.getFileName() + "-script"), Map.of(),
                command);
    }

    private static Path privateFile(String text) throws IOException {
        Path file = server.resolveSibling(TestLtm.unique("store") + ".json");
        Files.writeString(file, text, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        return file;
    }

    private static String everything(Throwable thrown, List<String> logLines) {
        StringWriter text = new StringWriter();
        thrown.printStackTrace(new PrintWriter(text)); // message, causes, Python tracebacks
        return text + "\n" + String.join("\n", logLines);
    }

    @Test
    void testAWrongPasswordFromAFileOrTheVariableNeverShowsInAnExceptionOrALogLine()
            throws Exception {
        Path file = privateFile(wrongStore);
        for (Arguments arguments : List.of(
                Arguments.parse(Map.of(), "--vector-store-file", file.toString()),
                Arguments.parse(Map.of(MemoryAgentJob.VECTOR_STORE_VARIABLE, wrongStore)))) {
            Map<String, Object> config = new HashMap<>(arguments.memoryConfig());
            config.put("long-term-memory.embedded.base-dir",
                    server.resolveSibling(TestLtm.unique("ltm")).toString());
            String text;
            try (CapturedLogs logs = new CapturedLogs()) {
                RuntimeException failed = assertThrows(RuntimeException.class,
                        () -> PythonLongTermMemory.open(TestLtm.runtime(), TestLtm.unique("job"),
                                config, MailboxThreadChecker.ofCurrentThread()));
                text = everything(failed, logs.lines());
            }
            assertTrue(text.contains("password authentication failed"), text);
            assertFalse(text.contains(WRONG_PASSWORD), arguments.vectorStoreSource() + ":\n" + text);
        }
    }

    @Test
    void testAStoreConfigPythonRefusesNeverEchoesItsPasswordInJava() throws Exception {
        ObjectNode store = (ObjectNode) JSON.readTree(wrongStore);
        ((ObjectNode) store.get("config")).put("not_a_pgvector_option", true);
        Map<String, Object> config = new HashMap<>(
                Arguments.parse(Map.of(), "--vector-store-file",
                        privateFile(JSON.writeValueAsString(store)).toString()).memoryConfig());
        config.put("long-term-memory.embedded.base-dir",
                server.resolveSibling(TestLtm.unique("ltm")).toString());

        String text;
        try (CapturedLogs logs = new CapturedLogs()) {
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                    () -> PythonLongTermMemory.open(TestLtm.runtime(), TestLtm.unique("job"),
                            config, MailboxThreadChecker.ofCurrentThread()));
            text = everything(refused, logs.lines());
        }
        assertTrue(text.contains("not_a_pgvector_option"), text);
        assertFalse(text.contains(WRONG_PASSWORD), text);
    }

    @Test
    void testTheLocalRunWithAWrongPasswordFailsWithoutPrintingIt() throws Exception {
        Path file = privateFile(wrongStore);
        Path scratch = server.resolveSibling(TestLtm.unique("local-run"));

        LocalRun run = LocalRun.run(scratch, Map.of(), "java-bridge/run-local",
                "--vector-store-file", file.toString(), "--base-dir", scratch.toString());

        assertNotEquals(0, run.exitCode, run.toString());
        assertTrue(run.stderr.contains("password authentication failed"), run.toString());
        assertTrue(run.stderr.contains("\"password\":\"***\""), run.toString()); // the job's log
        assertFalse(run.stdout.contains(WRONG_PASSWORD) || run.stderr.contains(WRONG_PASSWORD),
                run.toString());
    }
}
