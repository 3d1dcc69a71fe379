package org.flinkagents.ltm.api;

import java.io.Serializable;

/**
 * An agent: a class whose {@link Action}-annotated methods react to events. The instance is
 * serialized into the job and one copy runs in every subtask, so its fields are configuration,
 * not state: keep per-key state in {@link RunnerContext#getShortTermMemory()}.
 */
public abstract class Agent implements Serializable {
    private static final long serialVersionUID = 1L;

    /**
     * The agent's {@link Reconciler} for its durable call {@code callId}, used when the call
     * brings none ({@link DurableCallable#getReconciler()}); {@code null} (the default): such a
     * call, cut off by a failure, runs again. Override it to reconcile by call id in one place.
     */
    public Reconciler<?> reconcilerOf(String callId) {
        return null;
    }
}
