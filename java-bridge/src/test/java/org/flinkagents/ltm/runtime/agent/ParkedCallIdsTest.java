package org.flinkagents.ltm.runtime.agent;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.flinkagents.ltm.api.Action;
import org.flinkagents.ltm.api.Agent;
import org.flinkagents.ltm.api.AgentSettings;
import org.flinkagents.ltm.api.DurableCallable;
import org.flinkagents.ltm.api.Event;
import org.flinkagents.ltm.api.InputEvent;
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
 * A parked step's attempt ends (Python forgets its replay-stable id counters) while its durable
 * call may already run on the worker pool. A call that adds twice to one set, with the attempt
 * ending between the two adds, must still mint two ids: the reset must not reach a call in
 * flight. On the mini-cluster with the real Python long-term memory.
 */
class ParkedCallIdsTest {
    static final CountDownLatch CALL_STARTED = new CountDownLatch(1);
    static final CountDownLatch FIRST_ADDED = new CountDownLatch(1);
    static final List<List<String>> CALL_IDS = new CopyOnWriteArrayList<>();
    static final List<List<String>> BODY_IDS = new CopyOnWriteArrayList<>();

    /** Adds a note in its body, then two in one async call, 200 ms apart. */
    public static class TwoAdds extends Agent {
        private static final long serialVersionUID = 1L;

        @Action(listenEvents = {InputEvent.class})
        public void remember(Event event, RunnerContext ctx) throws Exception {
            @SuppressWarnings("unchecked")
            String note = ((Tuple2<String, String>) ((InputEvent) event).getInput()).f1;
            MemorySet notes = ctx.getLongTermMemory().getMemorySet("notes");
            BODY_IDS.add(notes.add(note + " (body)")); // runs in both attempts: same id
            ArrayList<String> ids;
            try {
                ids = ctx.durableExecuteAsync(DurableCallable.of("store", () -> {
                    CALL_STARTED.countDown();
                    ArrayList<String> added = new ArrayList<>(notes.add(note + " (first)"));
                    FIRST_ADDED.countDown();
                    Thread.sleep(200); // the operator parks the step and ends the attempt
                    added.addAll(notes.add(note + " (second)"));
                    CALL_IDS.add(added);
                    return added;
                }));
            } catch (Error park) {
                // The runtime's signal, held back a moment and rethrown: a slow mailbox thread
                // (a loaded machine, the GIL held by the call). If the call already runs, the
                // attempt ends only after the call's first add, as it can in production.
                if (CALL_STARTED.await(1, TimeUnit.SECONDS)) {
                    FIRST_ADDED.await(60, TimeUnit.SECONDS);
                }
                throw park;
            }
            ctx.sendEvent(new OutputEvent(ctx.getKey() + "|" + ids));
        }
    }

    @Test
    void testAParkedAttemptEndingDuringItsCallLosesNoneOfTheCallsAdds() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        String jobId = TestLtm.unique("parked-call-ids");
        Map<String, Object> memoryConfig = Map.of("long-term-memory.embedded.base-dir",
                TestLtm.home().resolve(TestLtm.unique("job")).toString());
        AgentSettings settings = new AgentSettings(PythonSettings.fromEnvironment(), jobId,
                memoryConfig, 4, 10);
        KeyedStream<Tuple2<String, String>, String> keyed = env
                .fromData(List.of(Tuple2.of("ann", "ann note"))).keyBy(t -> t.f0);
        List<String> lines = new ArrayList<>();
        try (CloseableIterator<Object> out = keyed.transform("agent", Types.GENERIC(Object.class),
                new AgentOperator<String, Tuple2<String, String>, Object>(
                        AgentPlan.of(new TwoAdds()), settings,
                        keyed.getType().createSerializer(
                                keyed.getExecutionConfig().getSerializerConfig())))
                .executeAndCollect("java-agent-parked-call-ids-test")) {
            out.forEachRemaining(o -> lines.add((String) o));
        }

        List<String> rows = new ArrayList<>();
        TreeSet<String> ids = new TreeSet<>();
        PythonLongTermMemory ltm = PythonLongTermMemory.open(TestLtm.runtime(), jobId,
                memoryConfig, MailboxThreadChecker.ofCurrentThread());
        try {
            ltm.switchContext("ann", null, true);
            for (MemorySetItem item : ltm.getMemorySet("notes").get()) {
                rows.add(item.getValue());
                ids.add(item.getId());
            }
        } finally {
            ltm.close();
        }
        rows.sort(null);
        List<String> callIds = CALL_IDS.isEmpty() ? List.of() : CALL_IDS.get(0);
        List<String> bodyIds = BODY_IDS.isEmpty() ? List.of() : BODY_IDS.get(0);
        TreeSet<String> added = new TreeSet<>(callIds);
        added.addAll(bodyIds);
        // All checked, so that a failure shows every consequence at once.
        assertAll(
                () -> assertEquals(1, CALL_IDS.size(), "the call ran once: " + CALL_IDS),
                () -> assertEquals(2, new HashSet<>(callIds).size(), "the call's two adds got "
                        + "one id: the attempt's end reset the call's counter in flight: "
                        + callIds),
                () -> assertEquals(List.of("ann|" + callIds), lines,
                        "the last attempt got the call's recorded result"),
                () -> assertEquals(List.of(bodyIds, bodyIds), BODY_IDS, "the body's add, in the "
                        + "parked attempt and the last one, minted the same id"),
                () -> assertEquals(List.of("ann note (body)", "ann note (first)",
                        "ann note (second)"), rows, "one row per add, none lost, none doubled"),
                () -> assertEquals(added, ids, "the rows carry the ids the adds returned"));
    }
}
