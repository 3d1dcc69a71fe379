package org.flinkagents.ltm.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource.NumberSequenceSplit;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiter;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;
import org.flinkagents.ltm.api.memory.MemorySet;
import org.flinkagents.ltm.api.memory.MemorySetItem;
import org.flinkagents.ltm.runtime.memory.MailboxThreadChecker;
import org.flinkagents.ltm.runtime.memory.PythonLongTermMemory;
import org.flinkagents.ltm.api.PythonSettings;
import org.flinkagents.ltm.runtime.memory.TestLtm;
import org.junit.jupiter.api.Test;

/**
 * The Java agent's observation ids survive a restore from a checkpoint: the job fails right
 * after a checkpoint that holds an action still running on a worker, and after the restore that
 * action runs again under the observation id it had, as does every input the source replays.
 *
 * <p>Each stored note carries the id of the observation that wrote it (metadata {@code
 * observation}). The Python long-term memory mints item ids from the set's binding (observation
 * id included), so the re-run action rewrites its note's row: exactly one row per note.
 */
class MemoryAgentReplayTest {
    private static final List<String> KEYS = List.of("ann", "ben", "cho", "dev");
    private static final int NOTES_PER_KEY = 4;
    /** The key's third note: held on its worker while a checkpoint is taken. */
    private static final String GATED_NOTE = "ann note 2";

    private static final AtomicBoolean GATE_USED = new AtomicBoolean();
    private static final CountDownLatch GATE = new CountDownLatch(1);
    private static final AtomicInteger GATED_SUBTASK = new AtomicInteger(-1);
    private static final AtomicLong GATED_CHECKPOINT = new AtomicLong(-1);
    private static final AtomicBoolean FAIL_NOW = new AtomicBoolean();
    private static final AtomicInteger GATED_RUNS = new AtomicInteger();
    private static final AtomicBoolean INJECTED = new AtomicBoolean();
    private static final AtomicBoolean GATE_TIMED_OUT = new AtomicBoolean();

    /** Waits for {@link #GATE}; a failure of this test's own logic must not hang the build. */
    private static void awaitGate() {
        try {
            if (!GATE.await(120, TimeUnit.SECONDS)) {
                GATE_TIMED_OUT.set(true);
                throw new IllegalStateException("the gated action's checkpoint never completed");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Releases the notes as fast as the job takes them but holds the last one back until the
     * gate opened: the input cannot end (and drain the held action at the final watermark)
     * before the failure.
     */
    static final class HoldTheLastNote implements RateLimiterStrategy<NumberSequenceSplit> {
        private static final long serialVersionUID = 1L;
        private final int notes;

        HoldTheLastNote(int notes) {
            this.notes = notes;
        }

        @Override
        public RateLimiter<NumberSequenceSplit> createRateLimiter(int parallelism) {
            return new RateLimiter<>() {
                private int released;

                @Override
                public CompletionStage<Void> acquire(int requestSize) {
                    released += requestSize;
                    if (released < notes || GATE.getCount() == 0) {
                        return CompletableFuture.completedFuture(null);
                    }
                    return CompletableFuture.runAsync(MemoryAgentReplayTest::awaitGate);
                }
            };
        }
    }

    /**
     * The job's agent with a fault injected: the first run of {@link #GATED_NOTE} waits on its
     * worker until a checkpoint taken meanwhile (by its own subtask) completes; then the next
     * timer fails the task, so the job restores that checkpoint with the action unfinished.
     */
    static final class GatedAgentFunction extends MemoryAgentFunction
            implements CheckpointedFunction, CheckpointListener {
        private static final long serialVersionUID = 1L;

        GatedAgentFunction(PythonSettings python, String jobId, Map<String, Object> config) {
            super(python, jobId, config, "notes", 2);
        }

        @Override
        protected String act(MemorySet notes, String note) {
            if (note.equals(GATED_NOTE)) {
                GATED_RUNS.incrementAndGet();
                if (GATE_USED.compareAndSet(false, true)) {
                    GATED_SUBTASK.set(getRuntimeContext().getTaskInfo().getIndexOfThisSubtask());
                    awaitGate();
                }
            }
            return super.act(notes, note);
        }

        @Override
        public void snapshotState(FunctionSnapshotContext context) {
            if (GATED_SUBTASK.get() == getRuntimeContext().getTaskInfo().getIndexOfThisSubtask()) {
                GATED_CHECKPOINT.compareAndSet(-1, context.getCheckpointId());
            }
        }

        @Override
        public void initializeState(FunctionInitializationContext context) {}

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            if (checkpointId == GATED_CHECKPOINT.get() && GATE.getCount() > 0) {
                FAIL_NOW.set(true);
                GATE.countDown();
            }
        }

        @Override
        public void onTimer(long timestamp, OnTimerContext ctx, Collector<String> out)
                throws Exception {
            if (FAIL_NOW.compareAndSet(true, false)) {
                INJECTED.set(true);
                throw new IllegalStateException("injected failure after checkpoint "
                        + GATED_CHECKPOINT.get());
            }
            super.onTimer(timestamp, ctx, out);
        }
    }

    @Test
    void testARestoreReplaysEveryInputUnderTheObservationIdItHadBefore() throws Exception {
        List<Tuple2<String, String>> notes = new ArrayList<>();
        for (int n = 0; n < NOTES_PER_KEY; n++) {
            for (String key : KEYS) {
                notes.add(Tuple2.of(key, key + " note " + n));
            }
        }
        Configuration config = new Configuration();
        config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 1);
        config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(2);
        env.enableCheckpointing(100);
        DataGeneratorSource<Tuple2<String, String>> source = new DataGeneratorSource<>(
                index -> notes.get(index.intValue()), notes.size(),
                new HoldTheLastNote(notes.size()), Types.TUPLE(Types.STRING, Types.STRING));
        String jobId = TestLtm.unique("replay-job");
        Map<String, Object> memoryConfig = Map.of("long-term-memory.embedded.base-dir",
                TestLtm.home().resolve(TestLtm.unique("job")).toString());

        List<String> lines = new ArrayList<>();
        try (CloseableIterator<String> results = env
                .fromSource(source, WatermarkStrategy.noWatermarks(), "notes").setParallelism(1)
                .keyBy(new MemoryAgentJob.NoteKey())
                .process(new GatedAgentFunction(PythonSettings.fromEnvironment(), jobId,
                        memoryConfig))
                .executeAndCollect("java-memory-agent-replay-test")) {
            results.forEachRemaining(lines::add);
        }

        assertTrue(INJECTED.get() && !GATE_TIMED_OUT.get(),
                "the failure came right after the checkpoint that held the gated action");
        assertEquals(2, GATED_RUNS.get(), "the action the checkpoint held ran again");
        // Every note was answered exactly once.
        TreeSet<String> answered = new TreeSet<>();
        for (String line : lines) {
            assertTrue(answered.add(line.split("\t")[1]), "answered twice: " + line);
        }
        assertEquals(notes.stream().map(n -> n.f1).collect(TreeSet::new, TreeSet::add, TreeSet::addAll),
                answered);

        // Every stored note carries the observation id of its input: key#<n-th input>#0.
        PythonLongTermMemory ltm = PythonLongTermMemory.open(TestLtm.runtime(), jobId,
                memoryConfig, MailboxThreadChecker.ofCurrentThread());
        try {
            for (String key : KEYS) {
                ltm.switchContext(key, null, true);
                Map<String, TreeSet<String>> idsOfNote = new TreeMap<>();
                List<MemorySetItem> rows = ltm.getMemorySet("notes").get();
                assertEquals(NOTES_PER_KEY, rows.size(), key + ": one row per note, none twice");
                for (MemorySetItem item : rows) {
                    idsOfNote.computeIfAbsent(item.getValue(), v -> new TreeSet<>())
                            .add(String.valueOf(item.getMetadata()
                                    .get(MemoryAgentFunction.OBSERVATION_METADATA)));
                }
                Map<String, TreeSet<String>> expected = new TreeMap<>();
                for (int n = 0; n < NOTES_PER_KEY; n++) {
                    expected.put(key + " note " + n, new TreeSet<>(
                            List.of(MemoryAgentFunction.observationId(key, n + 1, 0))));
                }
                assertEquals(expected, idsOfNote, key);
            }
        } finally {
            ltm.close();
        }
    }
}
