package org.flinkagents.ltm.runtime.agent;

/** A replayed action made other durable calls than it made before the failure. */
public class NonDeterministicReplayException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    public NonDeterministicReplayException(String message) {
        super(message);
    }
}
