package org.flinkagents.ltm.runtime.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.flink.api.connector.source.util.ratelimit.RateLimiter;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.flinkagents.ltm.api.Action;
import org.flinkagents.ltm.api.Agent;
import org.flinkagents.ltm.api.DurableCallable;
import org.flinkagents.ltm.api.Event;
import org.flinkagents.ltm.api.InputEvent;
import org.flinkagents.ltm.api.MemoryObject;
import org.flinkagents.ltm.api.OutputEvent;
import org.flinkagents.ltm.api.RunnerContext;
import org.flinkagents.ltm.api.memory.MemorySet;
import org.flinkagents.ltm.api.memory.MemorySetItem;
import org.flinkagents.ltm.runtime.memory.PythonLongTermMemory;
import org.junit.jupiter.api.Test;

/**
 * A restore from a checkpoint taken while an action awaits a durable call, on Flink's local
 * mini-cluster with the real Python long-term memory: the job fails right after that checkpoint
 * completes. The action's first call (recorded before the checkpoint) is not called again; its
 * second call (in flight, not recorded) is, and its long-term-memory add rewrites the same row.
 * Meanwhile the other keys' inputs ran to their end.
 */
class AgentRestoreTest {
    private static final List<String> KEYS = List.of("ann", "ben", "cho");
    private static final String GATED = "ann note 1";
    private static final String LAST = "ann note 2";
    private static final int OTHER_INPUTS = 6;

    static final Map<String, Integer> FIRST_CALLS = new ConcurrentHashMap<>();
    static final Map<String, Integer> SECOND_CALLS = new ConcurrentHashMap<>();
    static final List<List<String>> GATED_IDS = new CopyOnWriteArrayList<>();
    static final CountDownLatch OTHERS_DONE = new CountDownLatch(OTHER_INPUTS);
    static final AtomicBoolean OTHERS_DONE_WHILE_GATED = new AtomicBoolean();

    static void await(CountDownLatch latch) {
        try {
            if (!latch.await(120, TimeUnit.SECONDS)) {
                throw new IllegalStateException("a latch of the test never opened");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Per input: count it (short-term), stamp it (sync call), store it (async call). */
    public static class Notes extends Agent {
        private static final long serialVersionUID = 1L;

        @Action(listenEvents = {InputEvent.class})
        public void remember(Event event, RunnerContext ctx) throws Exception {
            @SuppressWarnings("unchecked")
            String note = ((Tuple2<String, String>) ((InputEvent) event).getInput()).f1;
            MemoryObject stm = ctx.getShortTermMemory();
            long count = stm.get("count") == null ? 1 : (Long) stm.get("count") + 1;
            stm.set("count", count);
            String stamp = ctx.durableExecute(DurableCallable.of("stamp", () -> {
                FIRST_CALLS.merge(note, 1, Integer::sum);
                return "#" + count;
            }));
            MemorySet notes = ctx.getLongTermMemory().getMemorySet("notes");
            ArrayList<String> ids = ctx.durableExecuteAsync(DurableCallable.of("store", () -> {
                SECOND_CALLS.merge(note, 1, Integer::sum);
                ArrayList<String> added = new ArrayList<>(notes.add(note));
                if (note.equals(GATED)) {
                    GATED_IDS.add(added);
                    if (GATED_IDS.size() == 1) {
                        await(OTHERS_DONE);
                        OTHERS_DONE_WHILE_GATED.set(!FailAfterCheckpoint.gateOpen());
                        FailAfterCheckpoint.waiting();
                        await(FailAfterCheckpoint.GATE);
                    }
                }
                return added;
            }));
            ctx.sendEvent(new OutputEvent(ctx.getKey() + "|" + note + "|" + stamp + "|" + ids));
            if (!note.startsWith("ann")) {
                OTHERS_DONE.countDown();
            }
        }
    }

    /**
     * The last input waits until the gate opened, so the input cannot end before the failure.
     * Raw types on purpose: the rate-limiter interfaces are generic in the split from Flink 2.0
     * (whose readers call {@code acquire()}, a default that asks {@code acquire(1)}) and not in
     * Flink 1.20 (whose {@code acquire()} is abstract); this class compiles against both.
     */
    @SuppressWarnings("rawtypes")
    static final class HoldTheLast implements RateLimiterStrategy {
        private static final long serialVersionUID = 1L;
        private final int inputs;

        HoldTheLast(int inputs) {
            this.inputs = inputs;
        }

        @Override
        public RateLimiter createRateLimiter(int parallelism) {
            return new RateLimiter() {
                private int released;

                public CompletionStage<Void> acquire() {
                    return acquire(1);
                }

                public CompletionStage<Void> acquire(int requestSize) {
                    released += requestSize;
                    if (released < inputs || FailAfterCheckpoint.gateOpen()) {
                        return CompletableFuture.completedFuture(null);
                    }
                    return CompletableFuture.runAsync(() -> await(FailAfterCheckpoint.GATE));
                }
            };
        }
    }

    @Test
    void testARestoreCallsOnlyWhatWasNotRecordedRewritesItsRowsAndCountsEachInputOnce()
            throws Exception {
        List<Tuple2<String, String>> inputs = new ArrayList<>();
        for (int n = 0; n < 3; n++) {
            for (String key : KEYS) {
                if (!(key + " note " + n).equals(LAST)) {
                    inputs.add(Tuple2.of(key, key + " note " + n));
                }
            }
        }
        inputs.add(Tuple2.of("ann", LAST)); // held back until the gate opened
        FailAfterCheckpoint.Ran ran = FailAfterCheckpoint.run("agent-restore", new Notes(), inputs,
                new HoldTheLast(inputs.size()));

        assertTrue(FailAfterCheckpoint.injected(),
                "the job failed right after the checkpoint that held the call");
        assertTrue(OTHERS_DONE_WHILE_GATED.get(),
                "the other keys' inputs ran to their end while ann's call was in flight");
        assertEquals(1, FIRST_CALLS.get(GATED), "the call recorded before the checkpoint ran once");
        assertEquals(2, SECOND_CALLS.get(GATED), "the call not recorded ran again after restore");
        assertEquals(2, GATED_IDS.size());
        assertEquals(GATED_IDS.get(0), GATED_IDS.get(1), "the re-run add minted the same ids");

        // Each input answered once; the short-term counter counted each input once, in order.
        Map<String, List<String>> perKey = new TreeMap<>();
        for (String line : ran.lines()) {
            String[] f = line.split("\\|");
            perKey.computeIfAbsent(f[0], k -> new ArrayList<>()).add(f[1] + f[2]);
        }
        for (String key : KEYS) {
            assertEquals(List.of(key + " note 0#1", key + " note 1#2", key + " note 2#3"),
                    perKey.get(key), key + ": " + ran.lines());
        }
        // Exactly one row per input in each key's long-term memory.
        PythonLongTermMemory ltm = ran.openMemory();
        try {
            for (String key : KEYS) {
                ltm.switchContext(key, null, true);
                List<String> rows = new ArrayList<>();
                for (MemorySetItem item : ltm.getMemorySet("notes").get()) {
                    rows.add(item.getValue());
                }
                rows.sort(null);
                assertEquals(List.of(key + " note 0", key + " note 1", key + " note 2"), rows, key);
            }
        } finally {
            ltm.close();
        }
        AgentOperator.Footprint left = FootprintProbe.AT_FINISH.get(
                FootprintProbe.AT_FINISH.size() - 1);
        assertTrue(left.isEmpty(), "engine state left after the work ended: " + left);
        assertEquals(3L, left.keysPerState.get(AgentOperator.NEXT_SEQ),
                "keys that stored long-term memory keep their input counter");
    }
}
