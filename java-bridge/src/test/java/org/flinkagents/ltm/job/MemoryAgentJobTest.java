package org.flinkagents.ltm.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.flinkagents.ltm.api.PythonSettings;
import org.flinkagents.ltm.runtime.memory.TestLtm;
import org.junit.jupiter.api.Test;

/** The customer-memory example on the Java agent API, on Flink's mini-cluster, real Python LTM. */
class MemoryAgentJobTest {
    /** "Aa" and "BB" have the same String hash code: one partition, two customers. */
    private static final List<String> CUSTOMERS = List.of("Aa", "BB", "carol", "dave");
    private static final int MESSAGES_PER_CUSTOMER = 4;
    private static final String[] TOPICS = {"green tea", "a late parcel", "an invoice", "a dog"};

    @Test
    void testEachMessageGetsOneReplyRecallingOnlyItsOwnCustomersEarlierMessagesInOrder()
            throws Exception {
        List<Tuple2<String, String>> messages = new ArrayList<>();
        for (int i = 0; i < MESSAGES_PER_CUSTOMER; i++) {
            for (String customer : CUSTOMERS) {
                messages.add(Tuple2.of(customer, customer + " note " + i + " about " + TOPICS[i]));
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
        List<String> replies = new ArrayList<>();
        try (CloseableIterator<String> results = MemoryAgentJob.agent(
                        env.fromData(messages), PythonSettings.fromEnvironment(),
                        "java-agent-job-test", memoryConfig, 3)
                .executeAndCollect("customer-memory-test")) {
            results.forEachRemaining(replies::add);
        }

        MemoryAgentJob.Summary summary = MemoryAgentJob.Summary.of(messages, replies);
        String all = String.join("\n", replies);
        assertEquals(messages.size(), summary.replies, all);
        assertEquals(CUSTOMERS.size(), summary.customers, all);
        assertEquals(0, summary.foreign, all);
        assertEquals(0, summary.outOfOrder, "each customer's seq goes 1, 2, ...: " + all);
        ObjectMapper json = new ObjectMapper();
        for (String line : replies) {
            JsonNode reply = json.readTree(line);
            String customer = reply.get("customer").asText();
            int seq = reply.get("seq").asInt();
            assertEquals(customer + " note " + (seq - 1) + " about " + TOPICS[seq - 1],
                    reply.get("text").asText(), line);
            // Recall runs before remember: the message never recalls itself, only earlier ones.
            assertEquals(Math.min(seq - 1, CustomerMemoryAgent.RECALL_LIMIT),
                    reply.get("recalled").size(), line);
            for (JsonNode memory : reply.get("recalled")) {
                int earlier = Integer.parseInt(memory.asText()
                        .substring((customer + " note ").length()).split(" ")[0]);
                assertTrue(memory.asText().startsWith(customer + " note ") && earlier < seq - 1,
                        "not an earlier message of " + customer + ": " + line);
            }
        }
    }
}
