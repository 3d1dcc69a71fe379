package org.flinkagents.ltm.runtime.agent;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.CloseableIterator;
import org.flinkagents.ltm.api.Action;
import org.flinkagents.ltm.api.Agent;
import org.flinkagents.ltm.api.AgentSettings;
import org.flinkagents.ltm.api.AgentsExecutionEnvironment;
import org.flinkagents.ltm.api.Event;
import org.flinkagents.ltm.api.InputEvent;
import org.flinkagents.ltm.api.DurableCallable;
import org.flinkagents.ltm.api.JobSubmission;
import org.flinkagents.ltm.api.OutputEvent;
import org.flinkagents.ltm.api.PythonSettings;
import org.flinkagents.ltm.api.RunnerContext;
import org.flinkagents.ltm.api.memory.MemorySet;
import org.flinkagents.ltm.api.memory.MemorySetItem;
import org.flinkagents.ltm.runtime.memory.MailboxThreadChecker;
import org.flinkagents.ltm.runtime.memory.PythonLongTermMemory;
import org.flinkagents.ltm.runtime.memory.TestLtm;
import org.junit.jupiter.api.Test;

/**
 * Runs of one job (issue 32): each submission of the job starts without state, so every key's
 * input counter starts at 0 again; its long-term-memory items must not take the ids of the last
 * run's and overwrite them. On Flink's local mini-cluster with the real Python long-term memory,
 * one memory job id for all runs. The item ids are checked against the rule itself (Python's
 * uuid5 of the binding, the observation id, the write position and the ordinal), so the
 * observation ids the runs used are seen from the rows.
 */
class RunsOfAJobTest {
    /** Python's {@code ITEM_ID_NAMESPACE} (flink_agents_ltm.api.memory.long_term_memory). */
    static final UUID ITEM_IDS = UUID.fromString("5f0c1e3a-8a9e-4d47-9a51-1f6c0b2a7d10");

    /** Adds each input's note in the action's body and answers the ids. */
    public static class Notes extends Agent {
        private static final long serialVersionUID = 1L;

        @Action(listenEvents = {InputEvent.class})
        public void remember(Event event, RunnerContext ctx) throws Exception {
            @SuppressWarnings("unchecked")
            Tuple2<String, String> input = (Tuple2<String, String>) ((InputEvent) event).getInput();
            List<String> ids = ctx.getLongTermMemory().getMemorySet("notes").add(input.f1);
            ctx.sendEvent(new OutputEvent(input.f0 + "|" + String.join(",", ids)));
        }
    }

    /** The id Python mints for the first add in an action's body under {@code observation}. */
    static String itemId(String jobId, String key, String observation) throws Exception {
        String name = "[\"" + jobId + "\", \"" + key + "\", \"notes\", \"" + observation
                + "\", \"body\", 0]"; // json.dumps of the binding, position and ordinal
        MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
        sha1.update(ByteBuffer.allocate(16).putLong(ITEM_IDS.getMostSignificantBits())
                .putLong(ITEM_IDS.getLeastSignificantBits()).array());
        byte[] h = sha1.digest(name.getBytes(StandardCharsets.UTF_8));
        h[6] = (byte) ((h[6] & 0x0f) | 0x50); // version 5
        h[8] = (byte) ((h[8] & 0x3f) | 0x80); // IETF variant
        ByteBuffer bits = ByteBuffer.wrap(h, 0, 16);
        return new UUID(bits.getLong(), bits.getLong()).toString();
    }

    static Map<String, Object> memoryConfig() {
        return Map.of("long-term-memory.embedded.base-dir",
                TestLtm.home().resolve(TestLtm.unique("job")).toString());
    }

    /** The ids of the rows of {@code key}'s set "notes", sorted. */
    static TreeSet<String> rows(String jobId, Map<String, Object> memoryConfig, String key) {
        TreeSet<String> ids = new TreeSet<>();
        PythonLongTermMemory ltm = PythonLongTermMemory.open(TestLtm.runtime(), jobId,
                memoryConfig, MailboxThreadChecker.ofCurrentThread());
        try {
            ltm.switchContext(key, null, true);
            for (MemorySetItem item : ltm.getMemorySet("notes").get()) {
                ids.add(item.getId());
            }
        } finally {
            ltm.close();
        }
        return ids;
    }

    /**
     * One submission of the job, built as a user builds it: {@code flinkJobId} is the job id
     * the deployment fixed ({@code $internal.pipeline.job-id}; null: none, a fresh UUID names
     * the run). Answers the submission's name.
     */
    static String submit(String flinkJobId, String jobId, Map<String, Object> memoryConfig,
            List<Tuple2<String, String>> inputs, List<String> lines) throws Exception {
        Configuration config = new Configuration();
        if (flinkJobId != null) {
            config.set(JobSubmission.JOB_ID, flinkJobId);
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(1);
        AgentsExecutionEnvironment agents = AgentsExecutionEnvironment.getExecutionEnvironment(env)
                .withLongTermMemory(PythonSettings.fromEnvironment(), jobId, memoryConfig);
        try (CloseableIterator<Object> out = agents.fromDataStream(env.fromData(inputs), t -> t.f0)
                .apply(new Notes()).toDataStream().executeAndCollect("java-runs-of-a-job-test")) {
            out.forEachRemaining(o -> lines.add((String) o));
        }
        return agents.submission().name();
    }

    @Test
    void testEachSubmissionOfAJobAddsItemsOfItsOwnAndAllRunsItemsRemain() throws Exception {
        String jobId = TestLtm.unique("runs-of-a-job");
        Map<String, Object> memoryConfig = memoryConfig();
        List<Tuple2<String, String>> inputs = List.of(Tuple2.of("ann", "first note"),
                Tuple2.of("ann", "second note"));
        // Two runs whose job id the deployment fixed, one a fresh UUID names.
        List<String> fixed = List.of("0123456789abcdef0123456789abcdef",
                "fedcba9876543210fedcba9876543210");
        List<String> submissions = new ArrayList<>();
        List<List<String>> outputs = new ArrayList<>();
        for (String flinkJobId : new String[] {fixed.get(0), fixed.get(1), null}) {
            List<String> lines = new ArrayList<>();
            submissions.add(submit(flinkJobId, jobId, memoryConfig, inputs, lines));
            outputs.add(lines);
        }

        TreeSet<String> expected = new TreeSet<>();
        List<String> perRun = new ArrayList<>();
        for (int run = 0; run < 3; run++) {
            String incarnation = Incarnation.of(submissions.get(run));
            List<String> ids = new ArrayList<>();
            for (int seq = 0; seq < 2; seq++) {
                ids.add("ann|" + itemId(jobId, "ann",
                        "ann@" + incarnation + "#" + seq + "#0"));
            }
            expected.addAll(ids.stream().map(l -> l.substring(4)).toList());
            perRun.add(ids.toString());
        }
        TreeSet<String> stored = rows(jobId, memoryConfig, "ann");
        assertAll(
                () -> assertEquals(fixed, submissions.subList(0, 2), "a run is named by the job "
                        + "id the deployment fixed"),
                () -> assertTrue(submissions.get(2).matches("[0-9a-f]{32}"), "else a fresh "
                        + "UUID: " + submissions.get(2)),
                () -> assertEquals(perRun, outputs.stream().map(List::toString).toList(),
                        "each run's inputs ran at ann@<its incarnation>#<seq>#0"),
                () -> assertEquals(6, expected.size(), "3 runs x 2 adds: 6 distinct ids"),
                () -> assertEquals(expected, stored, "every run's items remain"));
    }

    /**
     * The real operator, where the keys named "old..." find an input counter (5) left in keyed
     * state by a build before incarnations, without {@code agent-incarnation} beside it: what a
     * restore from such a build's savepoint or checkpoint gives them.
     */
    static final class EarlierBuildState<K, IN, OUT> extends FootprintProbe<K, IN, OUT> {
        private static final long serialVersionUID = 1L;
        static final Set<Object> SEEDED = ConcurrentHashMap.newKeySet();
        private transient ValueState<Long> counter;

        EarlierBuildState(AgentPlan plan, AgentSettings settings, TypeSerializer<IN> inputs) {
            super(plan, settings, inputs);
        }

        @Override
        public void open() throws Exception {
            super.open();
            counter = getRuntimeContext().getState(new ValueStateDescriptor<>(NEXT_SEQ, Types.LONG));
        }

        @Override
        public void processElement(StreamRecord<IN> element) throws Exception {
            Object key = getCurrentKey();
            if (String.valueOf(key).startsWith("old") && SEEDED.add(key)) {
                counter.update(5L);
            }
            super.processElement(element);
        }
    }

    @Test
    void testAKeyWhoseCounterAnEarlierBuildKeptGoesOnInTheLegacyLineANewKeyInItsSubmissions()
            throws Exception {
        FootprintProbe.reset();
        EarlierBuildState.SEEDED.clear();
        String jobId = TestLtm.unique("earlier-build");
        Map<String, Object> memoryConfig = memoryConfig();
        JobSubmission submission = JobSubmission.fresh();
        AgentSettings settings = new AgentSettings(PythonSettings.fromEnvironment(), jobId,
                memoryConfig, 4, 10, submission);
        List<Tuple2<String, String>> inputs = List.of(Tuple2.of("old", "o1"), Tuple2.of("new", "n1"),
                Tuple2.of("old", "o2"), Tuple2.of("new", "n2"));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        KeyedStream<Tuple2<String, String>, String> keyed = env.fromData(inputs).keyBy(t -> t.f0);
        List<String> lines = new ArrayList<>();
        try (CloseableIterator<Object> out = keyed.transform("agent", Types.GENERIC(Object.class),
                new EarlierBuildState<String, Tuple2<String, String>, Object>(
                        AgentPlan.of(new Notes()), settings, keyed.getType().createSerializer(
                                keyed.getExecutionConfig().getSerializerConfig())))
                .executeAndCollect("java-earlier-build-test")) {
            out.forEachRemaining(o -> lines.add((String) o));
        }

        String incarnation = Incarnation.of(submission.name());
        TreeSet<String> old = new TreeSet<>(List.of(itemId(jobId, "old", "old#5#0"),
                itemId(jobId, "old", "old#6#0")));
        TreeSet<String> fresh = new TreeSet<>(List.of(
                itemId(jobId, "new", "new@" + incarnation + "#0#0"),
                itemId(jobId, "new", "new@" + incarnation + "#1#0")));
        AgentOperator.Footprint left = FootprintProbe.AT_FINISH.get(0);
        assertAll(
                () -> assertEquals(Set.of("old"), EarlierBuildState.SEEDED),
                () -> assertEquals(old, rows(jobId, memoryConfig, "old"), "the earlier build's "
                        + "key goes on at old#<seq>, its ids as before: " + lines),
                () -> assertEquals(fresh, rows(jobId, memoryConfig, "new"), "a key without "
                        + "state counts in this submission: " + lines),
                () -> assertTrue(left.isEmpty(), "engine state left: " + left),
                () -> assertEquals(2L, left.keysPerState.get(AgentOperator.NEXT_SEQ)),
                () -> assertEquals(1L, left.keysPerState.get(AgentOperator.INCARNATION),
                        "the new key keeps its incarnation beside its counter; the legacy key "
                                + "writes none"));
    }

    static final String GATED = "ann's first note";
    static final List<List<String>> GATED_IDS = new CopyOnWriteArrayList<>();

    /** Adds each note in a durable call; the call of {@link #GATED} then waits for the gate. */
    public static class AddThenWait extends Agent {
        private static final long serialVersionUID = 1L;

        @Action(listenEvents = {InputEvent.class})
        public void remember(Event event, RunnerContext ctx) throws Exception {
            @SuppressWarnings("unchecked")
            Tuple2<String, String> input = (Tuple2<String, String>) ((InputEvent) event).getInput();
            MemorySet notes = ctx.getLongTermMemory().getMemorySet("notes");
            ArrayList<String> ids = ctx.durableExecuteAsync(DurableCallable.of("store", () -> {
                ArrayList<String> added = new ArrayList<>(notes.add(input.f1));
                if (input.f1.equals(GATED)) {
                    GATED_IDS.add(added);
                    if (GATED_IDS.size() == 1) {
                        FailAfterCheckpoint.waiting();
                        AgentRestoreTest.await(FailAfterCheckpoint.GATE);
                    }
                }
                return added;
            }));
            ctx.sendEvent(new OutputEvent(input.f0 + "|" + ids));
        }
    }

    /**
     * A key busy with its first input (its counter not kept for good yet) when the checkpoint
     * is taken: after the restore its call runs again in the same line, so its add rewrites the
     * same row. Were the key's incarnation not in the checkpoint, the restored key would read as
     * legacy (a counter without an incarnation) and the add would write a second row.
     */
    @Test
    void testAKeyRestoredWhileBusyWithItsFirstInputGoesOnInItsOwnLine() throws Exception {
        GATED_IDS.clear();
        List<Tuple2<String, String>> inputs = List.of(Tuple2.of("ann", GATED),
                Tuple2.of("ben", "ben's first note")); // held until the gate opened
        FailAfterCheckpoint.Ran ran = FailAfterCheckpoint.run("busy-first-input",
                new AddThenWait(), inputs, new AgentRestoreTest.HoldTheLast(inputs.size()));

        assertTrue(FailAfterCheckpoint.injected(),
                "the job failed right after the checkpoint that held ann's call in flight");
        TreeSet<String> stored = rows(ran.jobId(), ran.memoryConfig(), "ann");
        assertAll(
                () -> assertEquals(2, GATED_IDS.size(), "the call ran again after the restore"),
                () -> assertEquals(GATED_IDS.get(0), GATED_IDS.get(1),
                        "the re-run add minted the same ids"),
                () -> assertEquals(new TreeSet<>(GATED_IDS.get(0)), stored,
                        "one row, the first attempt's: " + ran.lines()));
    }
}
