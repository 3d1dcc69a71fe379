package org.flinkagents.ltm.api;

/** An agent that cannot run as written; thrown by {@link AgentBuilder#apply}, before the job. */
public class AgentDefinitionException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public AgentDefinitionException(String message) {
        super(message);
    }

    public AgentDefinitionException(String message, Throwable cause) {
        super(message, cause);
    }
}
