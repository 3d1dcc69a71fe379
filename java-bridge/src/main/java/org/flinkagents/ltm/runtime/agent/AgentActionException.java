package org.flinkagents.ltm.runtime.agent;

/** An action failed (or misused its context) on a key; the message names action, key, input. */
public class AgentActionException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public AgentActionException(String message, Throwable cause) {
        super(message, cause);
    }
}
