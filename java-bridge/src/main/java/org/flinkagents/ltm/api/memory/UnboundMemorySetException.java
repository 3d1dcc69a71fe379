package org.flinkagents.ltm.api.memory;

/**
 * The memory set carries no partition key: it was never bound to an action (built directly,
 * deserialized, or obtained before any context switch). Mem0 drops a missing {@code agent_id}
 * from its filters, which would widen the operation to every key of the job, so the operation
 * is refused instead. Java's counterpart of Python's {@code UnboundMemorySetError}.
 */
public class UnboundMemorySetException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public UnboundMemorySetException(String message) {
        super(message);
    }

    public UnboundMemorySetException(String message, Throwable cause) {
        super(message, cause);
    }
}
