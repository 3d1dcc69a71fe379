package org.flinkagents.ltm.api;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * Where Java agents join a Flink job:
 *
 * <pre>{@code
 * AgentsExecutionEnvironment agents = AgentsExecutionEnvironment.getExecutionEnvironment(env)
 *         .withLongTermMemory(python, "my-job", Map.of());       // only if actions use it
 * DataStream<Object> out = agents.fromDataStream(stream, r -> r.customer)
 *         .apply(new MyAgent())
 *         .toDataStream();
 * }</pre>
 */
public final class AgentsExecutionEnvironment {
    private final StreamExecutionEnvironment env;
    private PythonSettings python;
    private String memoryJobId;
    private final HashMap<String, Object> memoryConfig = new HashMap<>();
    private int workers = AgentSettings.DEFAULT_WORKERS;
    private JobSubmission submission;

    private AgentsExecutionEnvironment(StreamExecutionEnvironment env) {
        this.env = Objects.requireNonNull(env, "the StreamExecutionEnvironment must not be null");
    }

    public static AgentsExecutionEnvironment getExecutionEnvironment(
            StreamExecutionEnvironment env) {
        return new AgentsExecutionEnvironment(env);
    }

    public StreamExecutionEnvironment getStreamExecutionEnvironment() {
        return env;
    }

    /**
     * The long-term memory {@link RunnerContext#getLongTermMemory()} gives: the Python memory of
     * job id {@code memoryJobId} (Mem0's {@code user_id}) with the options of {@code config}
     * (the Python {@code long-term-memory.*} options; empty: the embedded default), reached
     * through the embedded Python of {@code python}. Opened in a subtask when an action first
     * asks for it.
     */
    public AgentsExecutionEnvironment withLongTermMemory(
            PythonSettings python, String memoryJobId, Map<String, Object> config) {
        this.python = Objects.requireNonNull(python, "python");
        if (memoryJobId == null || memoryJobId.isBlank()) {
            throw new IllegalArgumentException("the long-term memory's job id must not be empty: "
                    + "it scopes the memory (Mem0 user_id); use a stable name of the job");
        }
        this.memoryJobId = memoryJobId;
        this.memoryConfig.clear();
        this.memoryConfig.putAll(config);
        return this;
    }

    /** Threads of each subtask's pool for {@link RunnerContext#durableExecuteAsync} calls. */
    public AgentsExecutionEnvironment withWorkers(int workers) {
        if (workers < 1) {
            throw new IllegalArgumentException("workers must be at least 1, got " + workers);
        }
        this.workers = workers;
        return this;
    }

    /**
     * The agent's input: every record of {@code input} starts a run of the agent for its key;
     * the runs of one key happen one after another, in input order.
     */
    public <T, K> AgentBuilder fromDataStream(DataStream<T> input, KeySelector<T, K> keySelector) {
        Objects.requireNonNull(input, "input");
        Objects.requireNonNull(keySelector, "keySelector: an agent runs per key; pass the "
                + "KeySelector that gives each record's key");
        return new AgentBuilder(input.keyBy(keySelector), settings());
    }

    /**
     * This run of the job ({@link JobSubmission}), named once, from the Flink configuration
     * ({@code $internal.pipeline.job-id}, else a fresh UUID) when first asked: the agents of
     * one job share it, and long-term memory tells its items from those of the job's other
     * runs by it.
     */
    public JobSubmission submission() {
        if (submission == null) {
            submission = JobSubmission.of(env.getConfiguration());
        }
        return submission;
    }

    AgentSettings settings() {
        return new AgentSettings(python, memoryJobId, memoryConfig, workers,
                AgentSettings.DEFAULT_POLL_MILLIS, submission());
    }
}
