package org.flinkagents.ltm.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.flinkagents.ltm.api.PythonSettings;
import org.flinkagents.ltm.runtime.memory.TestLtm;
import org.junit.jupiter.api.Test;

/** The Java agent job end to end on Flink's local mini-cluster, with the real Python LTM. */
class MemoryAgentJobTest {
    private static final List<String> KEYS = List.of("Aa", "BB", "carol", "dave");
    private static final int NOTES_PER_KEY = 4;
    private static final String[] TOPICS = {"green tea", "a late parcel", "an invoice", "a dog"};

    @Test
    void testJavaAgentJobRemembersPerKeyOnTheMiniCluster() throws Exception {
        List<Tuple2<String, String>> notes = new ArrayList<>();
        for (int i = 0; i < NOTES_PER_KEY; i++) {
            for (String key : KEYS) {
                notes.add(Tuple2.of(key, key + " note " + i + " about " + TOPICS[i]));
            }
        }
        Configuration config = new Configuration();
        config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 1);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(2); // two mailbox threads, two Java LTMs on one shared Python Mem0

        Map<String, Object> memoryConfig = new HashMap<>();
        memoryConfig.put("long-term-memory.embedded.base-dir",
                TestLtm.home().resolve(TestLtm.unique("job")).toString());
        List<String> lines = new ArrayList<>();
        try (CloseableIterator<String> results = MemoryAgentJob.agent(
                        env.fromData(notes), PythonSettings.fromEnvironment(), "java-agent-job-test",
                        memoryConfig, 3)
                .executeAndCollect("java-memory-agent-test")) {
            results.forEachRemaining(lines::add);
        }

        assertEquals(notes.size(), lines.size(), String.join("\n", lines));
        Map<String, List<Integer>> itemCounts = new LinkedHashMap<>();
        for (String line : lines) {
            String[] fields = line.split("\t");
            assertEquals(6, fields.length, line);
            String key = fields[0];
            assertTrue(fields[1].startsWith(key + " note "), line);
            String[] hits = fields[2].substring("hits=".length()).split("\\|");
            assertTrue(hits.length >= 1, line);
            for (String hit : hits) {
                assertTrue(hit.startsWith(key + " note "), "another key's note in " + line);
            }
            assertEquals(fields[1], hits[0], "the note just added is its own best match: " + line);
            itemCounts.computeIfAbsent(key, k -> new ArrayList<>())
                    .add(Integer.parseInt(fields[3].substring("items=".length())));
            assertEquals("observed=add,search,get", fields[4], line);
            assertTrue(fields[5].equals("subtask=0") || fields[5].equals("subtask=1"), line);
        }
        // Each key's actions ran in input order, each on its own key's memory only.
        for (String key : KEYS) {
            assertEquals(List.of(1, 2, 3, 4), itemCounts.get(key), key + ": " + itemCounts);
        }
    }
}
