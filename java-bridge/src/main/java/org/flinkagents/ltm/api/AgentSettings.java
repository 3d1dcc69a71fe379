package org.flinkagents.ltm.api;

import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * How an agent runs, as {@link AgentsExecutionEnvironment} collected it: its long-term memory
 * (optional), the worker pool of durable calls and the job's submission (which run of the job
 * this is: long-term memory tells its items from those of other runs by it). The runtime reads
 * it; users don't build it.
 */
public final class AgentSettings implements Serializable {
    private static final long serialVersionUID = 1L;
    public static final int DEFAULT_WORKERS = 8;
    public static final long DEFAULT_POLL_MILLIS = 10;

    private final PythonSettings python;
    private final String memoryJobId;
    private final HashMap<String, Object> memoryConfig;
    private final int workers;
    private final long pollMillis;
    private final JobSubmission submission;
    /** The agent options ({@code agents.action-state.*}) beside the memory's; may be empty. */
    private final HashMap<String, String> agentOptions;

    /** Settings of a submission of their own ({@link JobSubmission#fresh()}). */
    public AgentSettings(PythonSettings python, String memoryJobId,
            Map<String, Object> memoryConfig, int workers, long pollMillis) {
        this(python, memoryJobId, memoryConfig, workers, pollMillis, JobSubmission.fresh());
    }

    public AgentSettings(PythonSettings python, String memoryJobId,
            Map<String, Object> memoryConfig, int workers, long pollMillis,
            JobSubmission submission) {
        this(python, memoryJobId, memoryConfig, workers, pollMillis, submission, Map.of());
    }

    /**
     * {@code agentOptions}: the Python agent options the Java runtime reads, as text (today
     * {@code agents.action-state.*} and {@code agents.job-id}: the action-state store). With the
     * store on, {@code python} is the embedded Python of the store even without long-term
     * memory ({@code memoryJobId} null).
     */
    public AgentSettings(PythonSettings python, String memoryJobId,
            Map<String, Object> memoryConfig, int workers, long pollMillis,
            JobSubmission submission, Map<String, String> agentOptions) {
        this.agentOptions = new HashMap<>(Objects.requireNonNull(agentOptions, "agentOptions"));
        this.submission = Objects.requireNonNull(submission, "submission");
        this.python = python;
        this.memoryJobId = memoryJobId;
        this.memoryConfig = new HashMap<>(memoryConfig);
        this.workers = workers;
        this.pollMillis = pollMillis;
    }

    public boolean hasLongTermMemory() {
        return python != null && memoryJobId != null;
    }

    /** The agent options ({@code agents.action-state.*}, {@code agents.job-id}), a copy. */
    public Map<String, String> agentOptions() {
        return new HashMap<>(agentOptions);
    }

    /**
     * The embedded Python of the long-term memory and the action-state store, or {@code null}
     * without either.
     */
    public PythonSettings python() {
        return python;
    }

    public String memoryJobId() {
        return memoryJobId;
    }

    /** The Python {@code long-term-memory.*} options (a copy). */
    public Map<String, Object> memoryConfig() {
        return new HashMap<>(memoryConfig);
    }

    public int workers() {
        return workers;
    }

    public long pollMillis() {
        return pollMillis;
    }

    /** The run of the job these settings were made for, named once on the client. */
    public JobSubmission submission() {
        return submission;
    }
}
