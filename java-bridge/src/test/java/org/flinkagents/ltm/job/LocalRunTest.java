package org.flinkagents.ltm.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.java.tuple.Tuple2;
import org.flinkagents.ltm.runtime.memory.TestLtm;
import org.junit.jupiter.api.Test;

/**
 * The Java example exactly as {@code make java-demo} runs it: {@code java-bridge/run-local}
 * runs MemoryAgentJob on the Python demo's bundled messages, on a mini-cluster made of
 * PyFlink's jars, in a JVM of its own.
 */
class LocalRunTest {

    @Test
    void testTheJavaDemoAnswersEveryBundledMessageWithNoRecallOfAnotherCustomer()
            throws Exception {
        Path scratch = TestLtm.home().resolve(TestLtm.unique("local-run")).toAbsolutePath();
        List<Tuple2<String, String>> messages = MemoryAgentJob.read(
                LocalRun.repo().resolve("flink_agents_ltm").resolve("examples")
                        .resolve("customer_messages.jsonl"));

        LocalRun run = LocalRun.run(scratch, Map.of(), "java-bridge/run-local",
                "--base-dir", scratch.resolve("ltm").toString());

        assertEquals(0, run.exitCode, run.toString());
        MemoryAgentJob.Summary summary = MemoryAgentJob.Summary.of(messages, run.replyLines());
        assertEquals(messages.size(), summary.replies, run.toString());
        assertEquals(0, summary.foreign, run.toString());
        assertEquals(0, summary.outOfOrder, run.toString());
        assertTrue(summary.recalled > 0, "the demo recalls something: " + run);
        assertTrue(run.stdout.contains(summary + "\n"), "the printed summary: " + run);
        assertTrue(run.stderr.contains("opened long-term memory"), run.toString());
    }
}
