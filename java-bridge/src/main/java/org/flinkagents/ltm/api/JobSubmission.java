package org.flinkagents.ltm.api;

import java.io.Serializable;
import java.util.Objects;
import java.util.UUID;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.ReadableConfig;

/**
 * A submission of a job: the name that tells this run of the job from the last one, as in the
 * Python API ({@code flink_agents_ltm.api.submission}).
 *
 * <p>Long-term memory outlives a job's runs, so the ids of the items a run writes must not be
 * those of the last run's. The operator is not told which submission it belongs to, so the
 * client names it once, when the job is built ({@link #of}), and the operator carries it:
 * Flink's {@code $internal.pipeline.job-id} when the deployment fixes the job id (the
 * Kubernetes operator does, keeping it for a last-state upgrade and renewing it otherwise;
 * {@code -D$internal.pipeline.job-id=<32 hex>} on {@code flink run} does the same), else a
 * fresh UUID (each {@code flink run} is a new submission). {@code restorePath} is Flink's
 * {@code execution.savepoint.path} ({@code flink run -s}), or null when the job starts
 * without state.
 */
public final class JobSubmission implements Serializable {
    private static final long serialVersionUID = 1L;
    /** The job id a deployment fixes (Flink's {@code PipelineOptionsInternal}). */
    public static final ConfigOption<String> JOB_ID =
            ConfigOptions.key("$internal.pipeline.job-id").stringType().noDefaultValue();
    /** The savepoint or checkpoint the job starts from (Flink's {@code StateRecoveryOptions}). */
    public static final ConfigOption<String> RESTORE_PATH =
            ConfigOptions.key("execution.savepoint.path").stringType().noDefaultValue();

    private final String name;
    private final String restorePath;

    public JobSubmission(String name, String restorePath) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("a job submission needs a non-empty name, got "
                    + (name == null ? "null" : "'" + name + "'"));
        }
        this.name = name;
        this.restorePath = restorePath;
    }

    /** The submission Flink's configuration of the job describes. */
    public static JobSubmission of(ReadableConfig flinkConfiguration) {
        String jobId = flinkConfiguration.getOptional(JOB_ID).map(String::trim).orElse("");
        String restore = flinkConfiguration.getOptional(RESTORE_PATH).map(String::trim)
                .orElse("");
        return new JobSubmission(jobId.isEmpty() ? freshName() : jobId,
                restore.isEmpty() ? null : restore);
    }

    /** A submission of its own (tests, jobs built without the environment): a fresh UUID. */
    public static JobSubmission fresh() {
        return new JobSubmission(freshName(), null);
    }

    private static String freshName() {
        return UUID.randomUUID().toString().replace("-", "");
    }

    public String name() {
        return name;
    }

    /** The savepoint or checkpoint the job starts from; null if it starts without state. */
    public String restorePath() {
        return restorePath;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof JobSubmission && name.equals(((JobSubmission) o).name)
                && Objects.equals(restorePath, ((JobSubmission) o).restorePath);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, restorePath);
    }

    @Override
    public String toString() {
        return "JobSubmission(" + name + (restorePath == null ? "" : ", from " + restorePath) + ")";
    }
}
