package org.flinkagents.ltm.api.memory;

/**
 * The partition key is the empty (or whitespace-only) string. It is a legal Flink key, but Mem0
 * cannot isolate it, so long-term memory is refused for it. Java's counterpart of Python's
 * {@code EmptyPartitionKeyError}.
 */
public class EmptyPartitionKeyException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public EmptyPartitionKeyException(String message) {
        super(message);
    }

    public EmptyPartitionKeyException(String message, Throwable cause) {
        super(message, cause);
    }
}
