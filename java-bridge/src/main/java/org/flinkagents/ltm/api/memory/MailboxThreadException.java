package org.flinkagents.ltm.api.memory;

/**
 * A mailbox-only operation ({@code getMemorySet}, {@code deleteMemorySet}) was called from
 * another thread. Java's counterpart of Python's {@code MailboxThreadError}.
 */
public class MailboxThreadException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    public MailboxThreadException(String message) {
        super(message);
    }

    public MailboxThreadException(String message, Throwable cause) {
        super(message, cause);
    }
}
