package org.flinkagents.ltm.runtime.agent;

import java.io.ObjectStreamException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;

import org.flinkagents.ltm.api.Event;

/**
 * What a key's run in progress has done, kept in keyed state (Java-serialized) whenever the
 * run parks, so that a checkpoint sees whole steps: the events each completed step sent, the
 * outputs and memory writes of completed steps (applied only when the run ends) and the durable
 * results of the current step.
 */
final class RunRecord implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The events sent by each completed step, by step index. */
    final ArrayList<ArrayList<Event>> steps = new ArrayList<>();
    final ArrayList<Object> outputs = new ArrayList<>();
    /** Short-term-memory writes of completed steps; {@link Removed#INSTANCE} for a removal. */
    final HashMap<String, Object> shortTerm = new HashMap<>();
    final HashMap<String, Object> sensory = new HashMap<>();
    /** The recorded durable calls of the current step, in call order. */
    final ArrayList<RecordedCall> calls = new ArrayList<>();
    /**
     * An action of this key's work stored a long-term-memory item: keep the input counter. Set
     * when an attempt's end counts items and when a durable result is recorded after a write;
     * a restore also reads it off the recorded calls ({@link #callsStoredItems}).
     */
    boolean keepsCounter;
    /** The poll timer registered for the key, or -1. */
    long pollTimer = -1;

    /**
     * A recorded durable call: its id, its Java-serialized result or exception, and whether
     * the step had stored long-term-memory items by the time it was recorded (the call's own
     * adds included). A replay answers the call from here without running it, so its adds are
     * not counted again: {@code storedItems} is what tells a restored key that it stored items
     * and must keep its input counter. {@code null}: recorded before the field existed (Java
     * serialization leaves a field missing from the stream null), read as "may have stored";
     * keeping a counter is always safe.
     */
    static final class RecordedCall implements Serializable {
        private static final long serialVersionUID = 1L;
        final String id;
        final byte[] result;
        final boolean failed;
        final Boolean storedItems;

        RecordedCall(String id, byte[] result, boolean failed, Boolean storedItems) {
            this.id = id;
            this.result = result;
            this.failed = failed;
            this.storedItems = storedItems;
        }

        boolean mayHaveStoredItems() {
            return !Boolean.FALSE.equals(storedItems);
        }

        /** This call, saying whether its step had stored items by the time it was recorded. */
        RecordedCall storing(boolean stored) {
            return new RecordedCall(id, result, failed, stored);
        }
    }

    /** A recorded call of the current step stored (or may have stored) items. */
    boolean callsStoredItems() {
        return calls.stream().anyMatch(RecordedCall::mayHaveStoredItems);
    }

    /** The value of a field removed by a step whose run has not ended. */
    static final class Removed implements Serializable {
        private static final long serialVersionUID = 1L;
        static final Removed INSTANCE = new Removed();

        private Object readResolve() throws ObjectStreamException {
            return INSTANCE;
        }
    }

    static List<Event> none() {
        return List.of();
    }
}
