package org.flinkagents.ltm.runtime.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;

import org.apache.flink.api.java.tuple.Tuple2;
import org.flinkagents.ltm.api.Action;
import org.flinkagents.ltm.api.Agent;
import org.flinkagents.ltm.api.DurableCallable;
import org.flinkagents.ltm.api.Event;
import org.flinkagents.ltm.api.InputEvent;
import org.flinkagents.ltm.api.OutputEvent;
import org.flinkagents.ltm.api.Reconciler;
import org.flinkagents.ltm.api.RunnerContext;
import org.junit.jupiter.api.Test;

/**
 * The action-state store for Java durable calls ({@code agents.action-state.store: sqlite},
 * Python's store through Pemja), on Flink's local mini-cluster: the job fails right after a
 * checkpoint taken while a key's "charge" call is in flight, so that no checkpoint ever holds
 * that call's result. With the store on, a call that completed after that checkpoint is
 * answered from the store after the restore, not charged again; with it off it is charged
 * again; a call a failure cut off mid-call (started, never returned) goes to its reconciler.
 */
class ActionStateStoreTest {
    private static final String GATED = "ann order 0";
    private static final Map<String, String> SQLITE = Map.of("agents.action-state.store",
            "sqlite");

    /** Charges per order (the side effect), and reconciler calls per order, in this JVM. */
    static final Map<String, Integer> CHARGES = new ConcurrentHashMap<>();
    static final Map<String, Integer> RECONCILED = new ConcurrentHashMap<>();
    /** Synchronous calls per order (written ahead on the mailbox thread). */
    static final Map<String, Integer> STAMPS = new ConcurrentHashMap<>();
    /** How the gated charge ends once the failure was injected: returns, or dies mid-call. */
    static volatile boolean dieMidCall;

    /** Waits for the gate even if the pool is being shut down (the task fails meanwhile). */
    static void awaitGate(CountDownLatch gate) {
        while (true) {
            try {
                AgentRestoreTest.await(gate);
                return;
            } catch (IllegalStateException e) {
                if (!(e.getCause() instanceof InterruptedException)) {
                    throw e;
                }
                Thread.interrupted();
            }
        }
    }

    /** Per order: charge it (a durable call, with a reconciler), answer the receipt. */
    public static class Orders extends Agent {
        private static final long serialVersionUID = 1L;

        @Action(listenEvents = {InputEvent.class})
        public void charge(Event event, RunnerContext ctx) throws Exception {
            @SuppressWarnings("unchecked")
            String order = ((Tuple2<String, String>) ((InputEvent) event).getInput()).f1;
            String stamp = ctx.durableExecute(DurableCallable.of("stamp", () -> {
                STAMPS.merge(order, 1, Integer::sum);
                return "#";
            }));
            String receipt = stamp + ctx.durableExecuteAsync(DurableCallable.of("charge", () -> {
                int charged = CHARGES.merge(order, 1, Integer::sum);
                if (order.equals(GATED) && charged == 1) {
                    FailAfterCheckpoint.waiting();
                    awaitGate(FailAfterCheckpoint.GATE);
                    if (dieMidCall) { // the process died before the call returned
                        throw new IllegalStateException("died mid-call");
                    }
                }
                return "receipt of " + order;
            }, () -> {
                RECONCILED.merge(order, 1, Integer::sum);
                return CHARGES.containsKey(order) ? "reconciled " + order
                        : Reconciler.callAgain();
            }));
            ctx.sendEvent(new OutputEvent(order + "|" + receipt));
        }
    }

    private static List<String> run(String name, Map<String, String> options) throws Exception {
        CHARGES.clear();
        RECONCILED.clear();
        STAMPS.clear();
        List<Tuple2<String, String>> inputs = new ArrayList<>();
        for (int n = 0; n < 2; n++) {
            for (String key : List.of("ann", "ben")) {
                inputs.add(Tuple2.of(key, key + " order " + n));
            }
        }
        FailAfterCheckpoint.Ran ran = FailAfterCheckpoint.run(name, new Orders(), inputs,
                new AgentRestoreTest.HoldTheLast(inputs.size()), options);
        assertTrue(FailAfterCheckpoint.injected(),
                "the job failed right after the checkpoint taken during the gated charge");
        List<String> lines = new ArrayList<>(ran.lines());
        lines.sort(null);
        List<String> expected = new ArrayList<>();
        for (Tuple2<String, String> input : inputs) {
            expected.add(input.f1 + "|#" + (input.f1.equals(GATED) && dieMidCall
                    ? "reconciled " : "receipt of ") + input.f1);
        }
        expected.sort(null);
        assertEquals(expected, lines, "every order answered once");
        if (!options.isEmpty()) { // off, a stamp made after the checkpoint is made again
            for (Tuple2<String, String> input : inputs) {
                assertEquals(1, STAMPS.get(input.f1), "the synchronous call of " + input.f1
                        + " ran once (the checkpoint or the store holds it)");
            }
        }
        if (!options.isEmpty()) {
            Path base = Path.of((String) ran.memoryConfig().get(
                    "long-term-memory.embedded.base-dir"));
            try (Stream<Path> files = Files.walk(base)) {
                Path file = files.filter(p -> p.endsWith("action-state.sqlite")).findFirst()
                        .orElseThrow(() -> new AssertionError("no SQLite store under " + base));
                assertEquals("rw-------", PosixFilePermissions.toString(
                        Files.getPosixFilePermissions(file)), "the store is private");
            }
        }
        return lines;
    }

    @Test
    void testACallThatCompletedAfterTheLastCheckpointIsNotChargedAgainWithTheStoreOn()
            throws Exception {
        dieMidCall = false;
        run("store-on", SQLITE);
        assertEquals(1, CHARGES.get(GATED), "the store's result answered the replayed call");
        assertEquals(Map.of(), RECONCILED, "a call with a result asks no reconciler");
        for (String order : List.of("ann order 1", "ben order 0", "ben order 1")) {
            assertEquals(1, CHARGES.get(order), order);
        }
    }

    @Test
    void testWithTheStoreOffTheSameCallIsChargedAgain() throws Exception {
        dieMidCall = false;
        run("store-off", Map.of());
        assertEquals(2, CHARGES.get(GATED), "without the store the replay calls again");
    }

    @Test
    void testACallCutOffMidCallGoesToItsReconcilerInsteadOfRunningAgain() throws Exception {
        dieMidCall = true;
        try {
            run("store-reconciler", SQLITE);
        } finally {
            dieMidCall = false;
        }
        assertEquals(1, CHARGES.get(GATED), "the reconciler answered: no second charge");
        assertEquals(Map.of(GATED, 1), RECONCILED, "only the started, unrecorded call is "
                + "reconciled");
    }
}
