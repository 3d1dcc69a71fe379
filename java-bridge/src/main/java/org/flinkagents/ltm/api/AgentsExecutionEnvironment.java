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
        Map<String, String> options = agentOptions();
        PythonSettings embedded = python;
        if (embedded == null && actionStateStoreOn(options)) {
            try {
                embedded = PythonSettings.fromEnvironment();
            } catch (RuntimeException e) {
                throw new IllegalStateException(ACTION_STATE_PREFIX + "store needs the embedded "
                        + "Python (the store is Python's): " + e.getMessage(), e);
            }
        }
        // The store's keys go to the store only: the memory refuses keys that are not its own.
        Map<String, Object> memory = new HashMap<>(memoryConfig);
        memory.keySet().removeIf(key -> key.startsWith(ACTION_STATE_PREFIX));
        return new AgentSettings(embedded, memoryJobId, memory, workers,
                AgentSettings.DEFAULT_POLL_MILLIS, submission(), options);
    }

    /** Options of the action-state store, the keys the Python runtime reads too. */
    static final String ACTION_STATE_PREFIX = "agents.action-state.";
    static final String JOB_ID = "agents.job-id";

    /**
     * The agent options the Java runtime takes, as the Python runtime reads them: the {@code
     * agents.action-state.*} keys of the job's Flink configuration ({@code config.yaml}, {@code
     * -D}, the job's {@code Configuration}), over which those given in {@link
     * #withLongTermMemory}'s config win; and {@code agents.job-id}, the long-term memory's job id
     * when there is one (the rows of the store are the job's), else the configuration's.
     */
    Map<String, String> agentOptions() {
        Map<String, String> options = new HashMap<>();
        env.getConfiguration().toMap().forEach((key, value) -> {
            if (key.startsWith(ACTION_STATE_PREFIX) || key.equals(JOB_ID)) {
                options.put(key, value);
            }
        });
        memoryConfig.forEach((key, value) -> {
            if (key.startsWith(ACTION_STATE_PREFIX) && value != null) {
                options.put(key, String.valueOf(value));
            }
        });
        if (memoryJobId != null) {
            options.put(JOB_ID, memoryJobId);
        }
        return options;
    }

    static boolean actionStateStoreOn(Map<String, String> options) {
        String store = options.get(ACTION_STATE_PREFIX + "store");
        return store != null && !store.isBlank() && !store.trim().equals("none");
    }
}
