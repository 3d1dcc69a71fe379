package org.flinkagents.ltm.api;

/**
 * Sending it makes {@code output} a record of the agent's output stream. Outputs leave the
 * operator when the input's run ends, in the order they were sent.
 */
public class OutputEvent extends Event {
    private static final long serialVersionUID = 1L;
    private final Object output;

    public OutputEvent(Object output) {
        this.output = output;
    }

    public Object getOutput() {
        return output;
    }

    @Override
    public String toString() {
        return "OutputEvent(" + output + ")";
    }
}
