package org.flinkagents.ltm.job;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs a command from the repository root the way a user types it (e.g. {@code
 * java-bridge/run-local --input notes.csv}), in its own process, and keeps what it printed.
 */
final class LocalRun {
    final int exitCode;
    final String stdout;
    final String stderr;

    private LocalRun(int exitCode, String stdout, String stderr) {
        this.exitCode = exitCode;
        this.stdout = stdout;
        this.stderr = stderr;
    }

    static Path repo() {
        return Paths.get(System.getProperty("flink.agents.ltm.repo", "..")).toAbsolutePath()
                .normalize();
    }

    /** Runs {@code command} in {@code scratch} files' company, with {@code environment} added. */
    static LocalRun run(Path scratch, Map<String, String> environment, String... command)
            throws IOException, InterruptedException {
        Files.createDirectories(scratch);
        Path out = scratch.resolve("stdout.txt");
        Path err = scratch.resolve("stderr.txt");
        ProcessBuilder builder = new ProcessBuilder(List.of(command)).directory(repo().toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile());
        builder.environment().putAll(environment);
        // The classes of this build (target/classes, or another Flink's target-flink-<v>).
        String classes = System.getProperty("flink.agents.ltm.classes");
        if (classes != null) {
            builder.environment().put("FLINK_AGENTS_LTM_CLASSES", classes);
        }
        String python = System.getProperty("flink.agents.ltm.python");
        if (python != null) {
            builder.environment().put("FLINK_AGENTS_LTM_PYTHON", python);
        }
        Process process = builder.start();
        if (!process.waitFor(10, TimeUnit.MINUTES)) {
            process.destroyForcibly().waitFor();
            fail(String.join(" ", command) + " did not end within 10 minutes");
        }
        return new LocalRun(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }

    /** The JSON reply lines of MemoryAgentJob on stdout. */
    List<String> replyLines() {
        List<String> lines = new ArrayList<>();
        for (String line : stdout.split("\n")) {
            if (line.startsWith("{\"customer\"")) {
                lines.add(line);
            }
        }
        return lines;
    }

    @Override
    public String toString() {
        return "exit code " + exitCode + "\n--- stdout\n" + stdout + "\n--- stderr\n" + stderr;
    }
}
