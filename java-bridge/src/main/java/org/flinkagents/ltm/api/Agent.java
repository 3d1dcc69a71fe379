package org.flinkagents.ltm.api;

import java.io.Serializable;

/**
 * An agent: a class whose {@link Action}-annotated methods react to events. The instance is
 * serialized into the job and one copy runs in every subtask, so its fields are configuration,
 * not state: keep per-key state in {@link RunnerContext#getShortTermMemory()}.
 */
public abstract class Agent implements Serializable {
    private static final long serialVersionUID = 1L;
}
