package org.flinkagents.ltm.runtime.memory;

import org.flinkagents.ltm.api.PythonSettings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * What the JUnit tests share in one JVM: the embedded Python and one Python long-term memory
 * on the embedded default (local MiniLM model, the embedded SQLite store in a folder of this run), loaded
 * once. Each test opens its own Java wrapper on the same job and store (the Mem0 client is
 * shared by reference count, so this costs no model load), with the test thread as mailbox
 * thread, and isolates itself with keys and set names of its own.
 */
public final class TestLtm {
    public static final String JOB_ID = "java-bridge-tests";
    private static final String RUN = UUID.randomUUID().toString().substring(0, 8);
    private static PythonLongTermMemory anchor;

    static {
        deleteOldRuns(); // before any test of this JVM creates its folders
    }

    private TestLtm() {}

    public static PythonRuntime runtime() {
        return PythonRuntime.get(PythonSettings.fromEnvironment());
    }

    public static Path home() {
        String configured = System.getProperty("flink.agents.ltm.test-home");
        return Paths.get(configured != null ? configured : "target/ltm-test-home");
    }

    public static Map<String, Object> config() {
        Map<String, Object> config = new HashMap<>();
        config.put("long-term-memory.embedded.base-dir", home().resolve("run-" + RUN).toString());
        return config;
    }

    /** A Java wrapper on the shared Python memory; the calling thread is its mailbox thread. */
    public static synchronized PythonLongTermMemory open() {
        if (anchor == null) {
            // Never closed: keeps the Mem0 client (and its loaded model) for the whole JVM.
            anchor = PythonLongTermMemory.open(runtime(), JOB_ID, config(), () -> {});
        }
        return PythonLongTermMemory.open(
                runtime(), JOB_ID, config(), MailboxThreadChecker.ofCurrentThread());
    }

    /** A fresh name, so that tests sharing the store never see each other's items. */
    public static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** Calls a function of a Python module from the calling thread's interpreter. */
    public static Object python(String module, String function, Object... args) {
        return runtime().call(module, function, args);
    }

    private static void deleteOldRuns() {
        Path home = home();
        if (!Files.isDirectory(home)) {
            return;
        }
        try (Stream<Path> runs = Files.list(home)) {
            runs.filter(p -> p.getFileName().toString().matches("(run|job)-.*"))
                    .forEach(TestLtm::deleteTree);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
