package org.flinkagents.ltm.api;

import java.util.Set;

/**
 * A key's memory as named fields. Values must be {@link java.io.Serializable}. Writes are
 * kept with the step that made them and become part of the key's state only when the input's
 * run ends, so a replay after a failure never applies them twice.
 */
public interface MemoryObject {
    /** The field's value, or {@code null} if it has none. */
    Object get(String name);

    /** Sets the field; {@code null} removes it. */
    void set(String name, Object value);

    boolean isExist(String name);

    /** The names of the fields that have a value. */
    Set<String> getFieldNames();
}
