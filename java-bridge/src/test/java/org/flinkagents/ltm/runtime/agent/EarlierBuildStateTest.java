package org.flinkagents.ltm.runtime.agent;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.flinkagents.ltm.api.AgentSettings;
import org.flinkagents.ltm.api.JobSubmission;
import org.flinkagents.ltm.api.PythonSettings;
import org.flinkagents.ltm.api.memory.MemorySetItem;
import org.flinkagents.ltm.runtime.memory.MailboxThreadChecker;
import org.flinkagents.ltm.runtime.memory.PythonLongTermMemory;
import org.flinkagents.ltm.runtime.memory.TestLtm;
import org.junit.jupiter.api.Test;

/**
 * A savepoint taken by the Java agent operator of an earlier build (8a78e2d: before
 * incarnations, {@code agent-incarnation} did not exist) restores in this build, on Flink's
 * local mini-cluster with the real Python long-term memory. The fixture ({@code
 * src/test/resources/savepoint-8a78e2d/}, made by {@link MakeJavaStateFixture}) holds ann and
 * ben idle with their counters kept, cho parked in its first input's call with a second input
 * queued, dan parked in its second input's call, and the long-term memory's store of that run.
 * The restored job finishes the parked runs and the queued input, then takes new inputs for
 * every key and for eve, a key without state. It answers what the earlier build answered in one
 * uninterrupted run; the restored keys go on in the legacy line ({@code key#seq#step}), their
 * counters (input and short-term) where they were; eve counts in this run's incarnation; no
 * call recorded before the savepoint runs again, and every row is written once.
 */
class EarlierBuildStateTest {
    private static final String FIXTURE = "savepoint-8a78e2d";

    static Path fixture() throws Exception {
        return Paths.get(EarlierBuildStateTest.class.getResource("/" + FIXTURE + "/README.md")
                .toURI()).getParent();
    }

    static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> paths = Files.walk(from)) {
            for (Path p : (Iterable<Path>) paths::iterator) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target);
                }
            }
        }
    }

    static List<String> lines(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** An output without its ids: {@code key|note|#count|ECHO}. */
    static String answer(String line) {
        return line.substring(0, line.lastIndexOf('|'));
    }

    /** The outputs of each key, in order, without their ids. */
    static Map<String, List<String>> perKey(List<String> lines) {
        Map<String, List<String>> keys = new TreeMap<>();
        for (String line : lines) {
            keys.computeIfAbsent(line.split("\\|")[0], k -> new ArrayList<>()).add(answer(line));
        }
        return keys;
    }

    /** The rows of {@code key}'s set "notes": id -> value. */
    static Map<String, String> rows(Map<String, Object> memoryConfig, String key) {
        Map<String, String> rows = new TreeMap<>();
        PythonLongTermMemory ltm = PythonLongTermMemory.open(TestLtm.runtime(),
                MakeJavaStateFixture.MEMORY_JOB, memoryConfig,
                MailboxThreadChecker.ofCurrentThread());
        try {
            ltm.switchContext(key, null, true);
            for (MemorySetItem item : ltm.getMemorySet("notes").get()) {
                rows.put(item.getId(), item.getValue());
            }
        } finally {
            ltm.close();
        }
        return rows;
    }

    @Test
    void testASavepointOfTheEarlierBuildGoesOnWhereItStoppedAndRepeatsNoRecordedCall()
            throws Exception {
        Path fixture = fixture();
        Path work = TestLtm.home().resolve(TestLtm.unique("job"));
        copyTree(fixture.resolve("savepoint"), work.resolve("savepoint"));
        copyTree(fixture.resolve("store"), work.resolve("store"));
        List<String> before = lines(fixture.resolve("outputs-before.txt"));
        List<String> callsBefore = lines(fixture.resolve("calls-before.txt"));
        List<String> uninterrupted = lines(fixture.resolve("outputs-uninterrupted.txt"));

        FootprintProbe.reset();
        MakeJavaStateFixture.holding = false;
        MakeJavaStateFixture.CALLS.clear();
        MakeJavaStateFixture.OUT.clear();
        String restore = work.resolve("savepoint").toUri().toString();
        JobSubmission submission = new JobSubmission(
                JobSubmission.fresh().name(), restore);
        Map<String, Object> memoryConfig = MakeJavaStateFixture.memoryConfig(work.resolve("store"));
        AgentSettings settings = new AgentSettings(PythonSettings.fromEnvironment(),
                MakeJavaStateFixture.MEMORY_JOB, memoryConfig, 4, 10, submission);
        Configuration config = new Configuration();
        config.set(JobSubmission.RESTORE_PATH, restore);
        config.setString("execution.state-recovery.path", restore);
        // The earlier run's source (another uid) is not part of this job.
        config.setString("execution.state-recovery.ignore-unclaimed-state", "true");
        MakeJavaStateFixture.job(config, MakeJavaStateFixture.AFTER, false, "inputs-after",
                in -> new FootprintProbe<String, Tuple2<String, String>, Object>(
                        AgentPlan.of(new MakeJavaStateFixture.Notes()), settings, in))
                .execute("java-earlier-build-state-test");
        List<String> after = new ArrayList<>(MakeJavaStateFixture.OUT);
        List<String> calls = new ArrayList<>(MakeJavaStateFixture.CALLS);

        // What the earlier build answers for all inputs in one run, ids aside.
        List<String> both = new ArrayList<>(before);
        both.addAll(after);
        // The ids: each key's n-th input (from 0) added one item at <line>#n#0.
        String incarnation = Incarnation.of(submission.name());
        Map<String, Integer> seq = new LinkedHashMap<>();
        List<String> wrongIds = new ArrayList<>();
        Map<String, List<String>> idsOf = new TreeMap<>();
        for (String line : both) {
            String key = line.split("\\|")[0];
            int n = seq.merge(key, 1, Integer::sum) - 1;
            // Spelled out, not through Incarnation: the rule under test.
            String observation = (key.equals("eve") ? key + "@" + incarnation : key) + "#" + n
                    + "#0";
            String expected = RunsOfAJobTest.itemId(MakeJavaStateFixture.MEMORY_JOB, key,
                    observation);
            String id = line.substring(line.lastIndexOf('|') + 1);
            if (!id.equals(expected)) {
                wrongIds.add(line + " (expected " + observation + ": " + expected + ")");
            }
            idsOf.computeIfAbsent(key, k -> new ArrayList<>()).add(id);
        }
        // Calls: the held calls (in flight, not recorded) and the new inputs' calls, no other.
        List<String> expectedCalls = new ArrayList<>(List.of("echo cho 1!", "echo dan 2!",
                "stamp cho 2", "echo cho 2"));
        for (Tuple2<String, String> input : MakeJavaStateFixture.AFTER) {
            expectedCalls.add("stamp " + input.f1);
            expectedCalls.add("echo " + input.f1);
        }
        expectedCalls.sort(null);
        calls.sort(null);
        List<String> repeated = new ArrayList<>(calls);
        repeated.retainAll(callsBefore);
        AgentOperator.Footprint left = FootprintProbe.AT_FINISH.get(
                FootprintProbe.AT_FINISH.size() - 1);
        assertAll(
                () -> assertEquals(MakeJavaStateFixture.ANSWERED_BEFORE, before.size()),
                () -> assertEquals(perKey(uninterrupted), perKey(both), "each key answers, in "
                        + "order, what the earlier build answered without the savepoint: " + after),
                () -> assertEquals(uninterrupted.size(), both.size(), "one output per input"),
                () -> assertEquals(List.of(), wrongIds, "restored keys at key#seq#0, "
                        + "eve at eve@" + incarnation + "#seq#0"),
                () -> assertEquals(expectedCalls, calls, "only calls not recorded before the "
                        + "savepoint ran"),
                () -> assertEquals(List.of("echo cho 1!", "echo dan 2!"), repeated,
                        "of the calls before the savepoint only the two in flight ran again"),
                () -> {
                    for (Map.Entry<String, List<String>> key : idsOf.entrySet()) {
                        Map<String, String> rows = rows(memoryConfig, key.getKey());
                        assertEquals(new java.util.TreeSet<>(key.getValue()), rows.keySet(),
                                key.getKey() + ": one row per input, each written once: " + rows);
                    }
                },
                () -> assertEquals(true, left.isEmpty(), "engine state left: " + left),
                () -> assertEquals(5L, left.keysPerState.get(AgentOperator.NEXT_SEQ),
                        "every key keeps its input counter"),
                () -> assertEquals(1L, left.keysPerState.get(AgentOperator.INCARNATION),
                        "only eve writes an incarnation; restored keys stay legacy"));
    }
}
