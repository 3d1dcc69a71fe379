package org.flinkagents.ltm.api.memory;

/**
 * The refusal messages, word for word the ones Python builds ({@code unbound_message} and
 * {@code empty_key_message} in {@code flink_agents_ltm.api.memory.long_term_memory}), so that an
 * agent author reads the same text and the same remedy whichever language refused.
 * Operations are named as in Python ({@code get_memory_set}, {@code add}, ...).
 */
public final class LongTermMemoryMessages {
    private LongTermMemoryMessages() {}

    public static String unbound(String operation, String setName) {
        return operation
                + " on "
                + target(setName)
                + " refused: no partition key is bound. A memory set is bound to the key of the"
                + " action that obtained it; obtain it inside a keyed action with"
                + " ctx.long_term_memory.get_memory_set(name) (after the operator switched"
                + " context) instead of building, unpickling or keeping it across actions."
                + " Refusing rather than widening the operation to every key of the job.";
    }

    public static String emptyKey(String operation, String setName) {
        return operation
                + " on "
                + target(setName)
                + " refused: the partition key is empty or whitespace-only. Mem0 cannot isolate"
                + " such a key (it would widen the operation to every key of the job), so"
                + " long-term memory is not available for it. Key the stream on a non-empty"
                + " value, for example map empty keys to a placeholder in the key selector.";
    }

    private static String target(String setName) {
        return setName != null ? "memory set '" + setName + "'" : "long-term memory";
    }

    /**
     * Refuses {@code null} (unbound) and empty or whitespace-only keys, with the two messages
     * above. Whitespace is what Python's {@code str.strip()} removes.
     */
    public static void checkKey(String partitionKey, String operation, String setName) {
        if (partitionKey == null) {
            throw new UnboundMemorySetException(unbound(operation, setName));
        }
        if (isPythonBlank(partitionKey)) {
            throw new EmptyPartitionKeyException(emptyKey(operation, setName));
        }
    }

    static boolean isPythonBlank(String text) {
        return text.codePoints()
                .allMatch(c -> Character.isWhitespace(c) || Character.isSpaceChar(c) || c == 0x85);
    }
}
