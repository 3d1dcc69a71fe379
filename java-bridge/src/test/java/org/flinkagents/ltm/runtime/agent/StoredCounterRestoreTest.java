package org.flinkagents.ltm.runtime.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.flink.api.connector.source.util.ratelimit.RateLimiter;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.flinkagents.ltm.api.Action;
import org.flinkagents.ltm.api.Agent;
import org.flinkagents.ltm.api.DurableCallable;
import org.flinkagents.ltm.api.Event;
import org.flinkagents.ltm.api.InputEvent;
import org.flinkagents.ltm.api.OutputEvent;
import org.flinkagents.ltm.api.RunnerContext;
import org.flinkagents.ltm.api.memory.MemorySet;
import org.flinkagents.ltm.api.memory.MemorySetItem;
import org.flinkagents.ltm.runtime.memory.PythonLongTermMemory;
import org.junit.jupiter.api.Test;

/**
 * A key's input counter survives a restore that replays a recorded durable call which stored
 * an item. The key's first input stores a note in an awaited durable call ("store"), then
 * awaits a second call ("wait", gated); a checkpoint is taken while "wait" runs, so the record
 * holds "store" and the run has not ended, and the job fails right after it. After the
 * restore the replayed attempt gets "store"'s result from the record (nothing stored again),
 * the run ends and the key is idle; only then does the key's second input arrive. It must not
 * run under the first input's observation id (whose ids it would reuse, overwriting the row).
 *
 * <p>Two things keep the counter here: the attempt that parked on "wait" ended after "store"
 * was recorded, so its {@code endAction} counted "store"'s add and set the record's {@code
 * keepsCounter} before the record was written; and the recorded "store" says it stored. Either
 * alone passes (so the rule of reverted d5b4b58, which has only the first, passes too); the test
 * fails when the restore drops the record's flag and the recorded calls are not read either.
 */
class StoredCounterRestoreTest {
    private static final String FIRST = "ann note 0";
    private static final String SECOND = "ann note 1";

    static final Map<String, Integer> STORE_CALLS = new ConcurrentHashMap<>();
    static final Map<String, Integer> WAIT_CALLS = new ConcurrentHashMap<>();
    static final Map<String, List<String>> IDS = new ConcurrentHashMap<>();
    /** Opens when the first input's replayed run ended after the restore. */
    static final CountDownLatch REPLAYED = new CountDownLatch(1);
    static final AtomicBoolean FIRST_RELEASED = new AtomicBoolean();

    /** Stores each note in a durable call; the first input then awaits the gate. */
    public static class Notes extends Agent {
        private static final long serialVersionUID = 1L;

        @Action(listenEvents = {InputEvent.class})
        public void remember(Event event, RunnerContext ctx) throws Exception {
            @SuppressWarnings("unchecked")
            String note = ((Tuple2<String, String>) ((InputEvent) event).getInput()).f1;
            MemorySet notes = ctx.getLongTermMemory().getMemorySet("notes");
            ArrayList<String> ids = ctx.durableExecuteAsync(DurableCallable.of("store", () -> {
                STORE_CALLS.merge(note, 1, Integer::sum);
                return new ArrayList<>(notes.add(note));
            }));
            if (note.equals(FIRST)) {
                ctx.durableExecuteAsync(DurableCallable.of("wait", () -> {
                    WAIT_CALLS.merge(note, 1, Integer::sum);
                    FailAfterCheckpoint.waiting();
                    AgentRestoreTest.await(FailAfterCheckpoint.GATE);
                    return 0;
                }));
            }
            IDS.put(note, ids);
            ctx.sendEvent(new OutputEvent(note + "|" + ids));
            if (note.equals(FIRST) && FailAfterCheckpoint.injected()) {
                REPLAYED.countDown(); // the run ends in this callback: the key is idle next
            }
        }
    }

    /**
     * The first input goes at once; the second waits until the first input's run ended after
     * the restore. Raw types as in {@link AgentRestoreTest.HoldTheLast} (Flink 1.20 and 2.x).
     */
    @SuppressWarnings("rawtypes")
    static final class HoldTheSecond implements RateLimiterStrategy {
        private static final long serialVersionUID = 1L;

        @Override
        public RateLimiter createRateLimiter(int parallelism) {
            return new RateLimiter() {
                public CompletionStage<Void> acquire() {
                    return acquire(1);
                }

                public CompletionStage<Void> acquire(int requestSize) {
                    if (!FIRST_RELEASED.getAndSet(true) || REPLAYED.getCount() == 0) {
                        return CompletableFuture.completedFuture(null);
                    }
                    return CompletableFuture.runAsync(() -> AgentRestoreTest.await(REPLAYED));
                }
            };
        }
    }

    @Test
    void testAKeyWhoseReplayedRecordedCallStoredAnItemKeepsItsCounterSoItsNextInputGetsNewIds()
            throws Exception {
        List<Tuple2<String, String>> inputs = List.of(Tuple2.of("ann", FIRST),
                Tuple2.of("ann", SECOND));
        FailAfterCheckpoint.Ran ran = FailAfterCheckpoint.run("stored-counter-restore", new Notes(), inputs,
                new HoldTheSecond());

        assertTrue(FailAfterCheckpoint.injected(),
                "the job failed right after the checkpoint that held 'store'");
        assertEquals(1, STORE_CALLS.get(FIRST), "the recorded 'store' was not called again");
        assertEquals(2, WAIT_CALLS.get(FIRST), "the unrecorded 'wait' ran again after restore");
        assertEquals(0, REPLAYED.getCount(), "the replayed run ended before the second input");
        assertEquals(2, ran.lines().size(), "one output per input: " + ran.lines());
        List<String> first = IDS.get(FIRST);
        List<String> second = IDS.get(SECOND);
        assertTrue(Collections.disjoint(first, second), "the second input reused the first "
                + "input's ids (its key dropped its input counter): " + first + " " + second);
        PythonLongTermMemory ltm = ran.openMemory();
        try {
            ltm.switchContext("ann", null, true);
            List<String> rows = new ArrayList<>();
            for (MemorySetItem item : ltm.getMemorySet("notes").get()) {
                rows.add(item.getValue());
            }
            rows.sort(null);
            assertEquals(List.of(FIRST, SECOND), rows, "both inputs' rows remain");
        } finally {
            ltm.close();
        }
        AgentOperator.Footprint left = FootprintProbe.AT_FINISH.get(
                FootprintProbe.AT_FINISH.size() - 1);
        assertTrue(left.isEmpty(), "engine state left after the work ended: " + left);
        assertEquals(Set.of("ann"), FootprintProbe.COUNTERS_AT_FINISH,
                "the key that stored items keeps its input counter");
    }
}
