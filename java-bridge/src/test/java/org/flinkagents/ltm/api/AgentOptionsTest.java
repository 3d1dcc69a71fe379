package org.flinkagents.ltm.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Map;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;

/**
 * The action-state store's options reach a Java agent under the Python keys: from the job's
 * Flink configuration, overridden by withLongTermMemory's config, and never handed to the
 * memory (which refuses keys not its own).
 */
class AgentOptionsTest {
    private static StreamExecutionEnvironment env(Map<String, String> flink) {
        Configuration config = new Configuration();
        flink.forEach(config::setString);
        return StreamExecutionEnvironment.getExecutionEnvironment(config);
    }

    @Test
    void testTheStoreIsReadFromTheFlinkConfigurationUnderThePythonKeys() {
        AgentSettings settings = AgentsExecutionEnvironment.getExecutionEnvironment(env(Map.of(
                "agents.action-state.store", "sqlite", "agents.job-id", "orders",
                "agents.action-state.retention-ms", "5000", "pipeline.name", "x")))
                .settings();
        assertEquals(Map.of("agents.action-state.store", "sqlite", "agents.job-id", "orders",
                "agents.action-state.retention-ms", "5000"), settings.agentOptions());
        assertNotNull(settings.python(), "the store is Python's: the embedded Python is found");
        assertFalse(settings.hasLongTermMemory());
    }

    @Test
    void testWithLongTermMemoryItsConfigWinsItsJobIdIsTheStoresAndTheMemoryGetsNoStoreKey() {
        AgentSettings settings = AgentsExecutionEnvironment.getExecutionEnvironment(env(Map.of(
                "agents.action-state.store", "none", "agents.job-id", "other")))
                .withLongTermMemory(PythonSettings.fromEnvironment(), "orders-memory", Map.of(
                        "agents.action-state.store", "postgres",
                        "long-term-memory.embedded.base-dir", "/tmp/x"))
                .settings();
        assertEquals(Map.of("agents.action-state.store", "postgres",
                "agents.job-id", "orders-memory"), settings.agentOptions());
        assertEquals(Map.of("long-term-memory.embedded.base-dir", "/tmp/x"),
                settings.memoryConfig());
    }

    @Test
    void testWithoutTheStoreNoPythonIsAskedFor() {
        AgentSettings settings = AgentsExecutionEnvironment.getExecutionEnvironment(env(Map.of()))
                .settings();
        assertNull(settings.python());
        assertEquals(Map.of(), settings.agentOptions());
    }
}
