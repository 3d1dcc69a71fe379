package org.flinkagents.ltm.api.memory;

/**
 * The long-term memory failed: the memory backend (Python's {@code LongTermMemoryError}), the
 * Python runtime, or the bridge itself. The message is the Python message; {@link
 * #getPythonType()} names the Python exception type when there was one.
 */
public class LongTermMemoryException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String pythonType;

    public LongTermMemoryException(String message, String pythonType, Throwable cause) {
        super(message, cause);
        this.pythonType = pythonType;
    }

    public LongTermMemoryException(String message, Throwable cause) {
        this(message, null, cause);
    }

    /** The qualified name of the Python exception, or {@code null}. */
    public String getPythonType() {
        return pythonType;
    }
}
