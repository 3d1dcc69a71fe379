package org.flinkagents.ltm.runtime.memory;

import java.util.concurrent.Callable;

/**
 * Where in an action a long-term-memory write happens, for replay-stable item ids: {@code
 * "body"} for the action's own code, {@code "call<k>"} inside its k-th durable call (0-based),
 * on whichever thread runs it. The Python memory derives an added item's id from the set's
 * binding, this position and the item's ordinal there, so a replayed action that adds the same
 * items at the same positions rewrites the same rows ({@code flink_agents_ltm.api.memory.
 * write_position} on the Python side, which {@link PythonLongTermMemory#add} passes it to).
 */
public final class WritePosition {
    public static final String BODY = "body";
    private static final ThreadLocal<String> CURRENT = ThreadLocal.withInitial(() -> BODY);

    private WritePosition() {}

    /** The position of a step's {@code index}-th durable call. */
    public static String call(int index) {
        return "call" + index;
    }

    /** The position of the code running on this thread now. */
    public static String current() {
        return CURRENT.get();
    }

    /** Runs {@code body} at {@code position} on the calling thread. */
    public static <T> T at(String position, Callable<T> body) throws Exception {
        String previous = CURRENT.get();
        CURRENT.set(position);
        try {
            return body.call();
        } finally {
            CURRENT.set(previous);
        }
    }
}
