package org.flinkagents.ltm.api;

import org.flinkagents.ltm.api.memory.BaseLongTermMemory;

/**
 * What an action gets besides its event: the key's memories, a way to send events and durable
 * calls. Valid only during the action that received it, on the mailbox thread.
 */
public interface RunnerContext {
    /** Sends an event: the actions that listen to its class run after this one. */
    void sendEvent(Event event);

    /** The key's short-term memory: kept across inputs, exactly once across failures. */
    MemoryObject getShortTermMemory();

    /** Memory of this input's run only: dropped when the run ends. */
    MemoryObject getSensoryMemory();

    /**
     * The key's long-term memory (the Python Mem0 memory through the Java bridge), its context
     * switched to this action: a set obtained here is stamped with the key, the action's
     * observation id and no suppression. Adds made in the action get replay-stable ids.
     */
    BaseLongTermMemory getLongTermMemory();

    /** The key of the input being processed. */
    Object getKey();

    /**
     * Runs {@code callable} now, on the mailbox thread, and records its result (or exception)
     * in keyed state; a replay after a failure returns the record instead of calling again.
     */
    <T> T durableExecute(DurableCallable<T> callable) throws Exception;

    /**
     * Like {@link #durableExecute}, but the call runs on the operator's worker pool and the
     * action parks meanwhile: the mailbox goes on with other keys, and the action runs again
     * from its start once the result is recorded, this call then returning it at once. Code
     * of the action before the call therefore runs again; only what it sends, writes to
     * short-term or sensory memory and adds to long-term memory (which rewrites the same rows)
     * counts, once.
     */
    <T> T durableExecuteAsync(DurableCallable<T> callable) throws Exception;
}
