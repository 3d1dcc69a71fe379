package org.flinkagents.ltm.api;

import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;

/**
 * Something that happened in an agent's run: actions listen to events by class ({@link
 * Action#listenEvents()}) and send new ones with {@link RunnerContext#sendEvent}. A user event
 * is a subclass; its fields (and attributes) must be {@link Serializable}, because the events a
 * completed step sent are kept in keyed state until the run ends.
 */
public class Event implements Serializable {
    private static final long serialVersionUID = 1L;

    private final HashMap<String, Object> attributes = new HashMap<>();

    public Event() {}

    public Event(Map<String, Object> attributes) {
        this.attributes.putAll(attributes);
    }

    public Object getAttr(String name) {
        return attributes.get(name);
    }

    public Event setAttr(String name, Object value) {
        attributes.put(name, value);
        return this;
    }

    public Map<String, Object> getAttributes() {
        return attributes;
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + attributes;
    }
}
