package org.flinkagents.ltm.api;

/** The event each input record of the agent's stream starts its run with. */
public class InputEvent extends Event {
    private static final long serialVersionUID = 1L;
    private final Object input;

    public InputEvent(Object input) {
        this.input = input;
    }

    public Object getInput() {
        return input;
    }

    @Override
    public String toString() {
        return "InputEvent(" + input + ")";
    }
}
