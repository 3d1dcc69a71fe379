package org.flinkagents.ltm.runtime.agent;

import org.flinkagents.ltm.api.AgentSettings;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.flinkagents.ltm.api.Action;
import org.flinkagents.ltm.api.Agent;
import org.flinkagents.ltm.api.DurableCallable;
import org.flinkagents.ltm.api.Event;
import org.flinkagents.ltm.api.InputEvent;
import org.flinkagents.ltm.api.MemoryObject;
import org.flinkagents.ltm.api.OutputEvent;
import org.flinkagents.ltm.api.PythonSettings;
import org.flinkagents.ltm.api.RunnerContext;
import org.flinkagents.ltm.api.memory.MemorySet;
import org.flinkagents.ltm.runtime.memory.TestLtm;
import org.junit.jupiter.api.Test;

/**
 * The agent operator on Flink's local mini-cluster (the operator test harness of
 * flink-streaming-java's test-jar is not available offline): event routing, per-key order,
 * short-term memory, durable async calls and the end-of-input drain, with the operator's
 * footprint read from Flink's own state backend and timer service.
 */
class AgentOperatorTest {
    /** A user event. */
    public static class Asked extends Event {
        private static final long serialVersionUID = 1L;
        final String text;

        Asked(String text) {
            this.text = text;
        }
    }

    /** InputEvent -> Asked -> (a 30 ms durable call) -> OutputEvent. */
    public static class Relay extends Agent {
        private static final long serialVersionUID = 1L;

        @Action(listenEvents = {InputEvent.class})
        public void ask(Event event, RunnerContext ctx) {
            @SuppressWarnings("unchecked")
            Tuple2<String, String> input = (Tuple2<String, String>) ((InputEvent) event).getInput();
            ctx.getSensoryMemory().set("seen-by", "ask");
            ctx.sendEvent(new Asked(input.f1));
        }

        @Action(listenEvents = {Asked.class})
        public void answer(Event event, RunnerContext ctx) throws Exception {
            String text = ((Asked) event).text;
            MemoryObject memory = ctx.getShortTermMemory();
            Long count = (Long) memory.get("count");
            long now = count == null ? 1 : count + 1;
            memory.set("count", now);
            String loud = ctx.durableExecuteAsync(DurableCallable.of("shout", () -> {
                Thread.sleep(30);
                return text.toUpperCase();
            }));
            ctx.sendEvent(new OutputEvent(ctx.getKey() + "|" + now + "|" + loud + "|"
                    + ctx.getSensoryMemory().get("seen-by")));
        }
    }

    /**
     * Per key: "reader" only searches and reads (in its body and inside an awaited durable
     * call); "body-writer" adds in its body; "call-writer" adds inside an awaited durable call,
     * which runs after its parked attempt ended.
     */
    public static class WritersAndReader extends Agent {
        private static final long serialVersionUID = 1L;

        @Action(listenEvents = {InputEvent.class})
        public void note(Event event, RunnerContext ctx) throws Exception {
            @SuppressWarnings("unchecked")
            Tuple2<String, String> input = (Tuple2<String, String>) ((InputEvent) event).getInput();
            MemorySet notes = ctx.getLongTermMemory().getMemorySet("notes");
            int n;
            switch (input.f0) {
                case "reader":
                    n = notes.search(input.f1, 5).size() + notes.get().size();
                    n += ctx.durableExecuteAsync(DurableCallable.of("look", () -> {
                        Thread.sleep(20);
                        return notes.search(input.f1, 5).size();
                    }));
                    break;
                case "body-writer":
                    n = notes.add(input.f1).size();
                    break;
                default:
                    n = ctx.durableExecuteAsync(DurableCallable.of("store", () -> {
                        Thread.sleep(20);
                        return notes.add(input.f1).size();
                    }));
            }
            ctx.sendEvent(new OutputEvent(input.f0 + "|" + n));
        }
    }

    static <K, T> DataStream<Object> probed(KeyedStream<T, K> keyed, Agent agent) {
        return keyed.transform("probed agent", Types.GENERIC(Object.class),
                new FootprintProbe<K, T, Object>(AgentPlan.of(agent),
                        new AgentSettings(null, null, Map.of(), 4, 10),
                        keyed.getType().createSerializer(
                                keyed.getExecutionConfig().getSerializerConfig())));
    }

    @Test
    void testActionsRunPerEventTypeInInputOrderPerKeyAndTheEndOfInputDrainsEveryKeyLeavingNoState()
            throws Exception {
        FootprintProbe.reset();
        List<Tuple2<String, String>> inputs = new ArrayList<>();
        for (int n = 0; n < 5; n++) {
            for (String key : List.of("ann", "ben", "cho", "dev")) {
                inputs.add(Tuple2.of(key, key + " says " + n));
            }
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        List<String> lines = new ArrayList<>();
        try (CloseableIterator<Object> out = probed(
                env.fromData(inputs).keyBy(t -> t.f0), new Relay()).executeAndCollect()) {
            out.forEachRemaining(o -> lines.add((String) o));
        }

        Map<String, List<String>> perKey = new TreeMap<>();
        for (String line : lines) {
            perKey.computeIfAbsent(line.split("\\|")[0], k -> new ArrayList<>()).add(line);
        }
        for (String key : List.of("ann", "ben", "cho", "dev")) {
            List<String> expected = new ArrayList<>();
            for (int n = 0; n < 5; n++) {
                expected.add(key + "|" + (n + 1) + "|" + (key + " says " + n).toUpperCase()
                        + "|ask");
            }
            assertEquals(expected, perKey.get(key), "one output per input, in input order");
        }
        assertTrue(FootprintProbe.AT_END_OF_INPUT.stream().anyMatch(f -> f.keysInMemory > 0),
                "the input ended while keys still had work: " + FootprintProbe.AT_END_OF_INPUT);
        assertEquals(2, FootprintProbe.AT_FINISH.size());
        for (AgentOperator.Footprint left : FootprintProbe.AT_FINISH) {
            assertTrue(left.isEmpty() && left.keysPerState.get(AgentOperator.NEXT_SEQ) == 0
                    && left.processingTimers == 0, "engine state left: " + left);
        }
    }

    @Test
    void testOnlyKeysWhoseActionsStoredLongTermMemoryItemsKeepTheirInputCounter()
            throws Exception {
        FootprintProbe.reset();
        List<Tuple2<String, String>> inputs = new ArrayList<>();
        for (int n = 0; n < 2; n++) {
            for (String key : List.of("reader", "body-writer", "call-writer")) {
                inputs.add(Tuple2.of(key, "note " + n));
            }
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        KeyedStream<Tuple2<String, String>, String> keyed = env.fromData(inputs).keyBy(t -> t.f0);
        AgentSettings settings = new AgentSettings(PythonSettings.fromEnvironment(),
                TestLtm.unique("counters"), TestLtm.config(), 4, 10);
        List<String> lines = new ArrayList<>();
        try (CloseableIterator<Object> out = keyed.transform("agent", Types.GENERIC(Object.class),
                new FootprintProbe<String, Tuple2<String, String>, Object>(
                        AgentPlan.of(new WritersAndReader()), settings,
                        keyed.getType().createSerializer(
                                keyed.getExecutionConfig().getSerializerConfig())))
                .executeAndCollect()) {
            out.forEachRemaining(o -> lines.add((String) o));
        }

        lines.sort(null);
        assertEquals(List.of("body-writer|1", "body-writer|1", "call-writer|1", "call-writer|1",
                "reader|0", "reader|0"), lines, "the writers stored each input, the reader none");
        AgentOperator.Footprint left = FootprintProbe.AT_FINISH.get(0);
        assertTrue(left.isEmpty(), "engine state left: " + left);
        assertEquals(java.util.Set.of("body-writer", "call-writer"),
                FootprintProbe.COUNTERS_AT_FINISH, "the writers keep their input counter (their "
                        + "items' ids contain it); the reader, which only searched and read, "
                        + "does not: " + left);
    }
}
