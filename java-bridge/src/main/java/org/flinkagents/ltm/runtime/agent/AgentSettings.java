package org.flinkagents.ltm.runtime.agent;

import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;

import org.flinkagents.ltm.runtime.memory.PythonSettings;

/** How the agent operator runs: its long-term memory (optional) and worker pool. */
public final class AgentSettings implements Serializable {
    private static final long serialVersionUID = 1L;
    public static final int DEFAULT_WORKERS = 8;
    public static final long DEFAULT_POLL_MILLIS = 10;

    final PythonSettings python;
    final String memoryJobId;
    final HashMap<String, Object> memoryConfig;
    final int workers;
    final long pollMillis;

    public AgentSettings(PythonSettings python, String memoryJobId,
            Map<String, Object> memoryConfig, int workers, long pollMillis) {
        this.python = python;
        this.memoryJobId = memoryJobId;
        this.memoryConfig = new HashMap<>(memoryConfig);
        this.workers = workers;
        this.pollMillis = pollMillis;
    }

    public boolean hasLongTermMemory() {
        return python != null;
    }
}
