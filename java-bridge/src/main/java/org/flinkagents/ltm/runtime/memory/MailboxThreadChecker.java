package org.flinkagents.ltm.runtime.memory;

import org.flinkagents.ltm.api.memory.MailboxThreadException;

/**
 * Throws {@link MailboxThreadException} when called off the operator's mailbox thread, the one
 * thread that processes the operator's inputs and owns "the key currently in scope".
 */
@FunctionalInterface
public interface MailboxThreadChecker {

    void checkMailboxThread();

    /** The calling thread is the mailbox thread (call it in the operator's {@code open}). */
    static MailboxThreadChecker ofCurrentThread() {
        Thread owner = Thread.currentThread();
        return () -> {
            Thread current = Thread.currentThread();
            if (current != owner) {
                throw new MailboxThreadException(
                        "memory-set management (getMemorySet, deleteMemorySet) must run on the"
                                + " operator's mailbox thread '"
                                + owner.getName()
                                + "', but was called from '"
                                + current.getName()
                                + "'. Obtain the memory set in the action and pass the set to"
                                + " the worker: its add/get/search/delete run on any thread.");
            }
        };
    }
}
