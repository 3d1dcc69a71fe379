package org.flinkagents.ltm.api.memory;

import java.io.Serializable;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * A named collection of {@code String} memory items, bound to the action that obtained it.
 *
 * <p>{@code BaseLongTermMemory.getMemorySet(name)} stamps onto the set the partition key,
 * observation id and suppression flag of the current action ({@link #setActionContext}). Every
 * item operation takes its scope from the set, never from the memory's mutable current key, so a
 * set handed to a worker thread stays on its own key while the operator runs other keys'
 * actions. A set therefore belongs to one action: obtain a new one in each action.
 *
 * <p>Only the name is serialized: the binding and the back-reference to the long-term memory are
 * {@code transient}, so a deserialized set is unbound and every operation on it is refused
 * ({@link UnboundMemorySetException}) instead of being widened to every key.
 */
public class MemorySet implements Serializable {
    private static final long serialVersionUID = 1L;

    private final String name;
    private transient BaseLongTermMemory ltm;
    private transient String partitionKey;
    private transient String observationId;
    private transient boolean observationSuppressed;

    public MemorySet(String name) {
        this(name, null);
    }

    public MemorySet(String name, BaseLongTermMemory ltm) {
        this.name = name;
        this.ltm = ltm;
    }

    /** Binds the set to an action: the key it operates on and where its observations go. */
    public void setActionContext(
            String partitionKey, String observationId, boolean observationSuppressed) {
        this.partitionKey = partitionKey;
        this.observationId = observationId;
        this.observationSuppressed = observationSuppressed;
    }

    public void setLtm(BaseLongTermMemory ltm) {
        this.ltm = ltm;
    }

    public String getName() {
        return name;
    }

    /** The key this set operates on; {@code null} while unbound. */
    public String getPartitionKey() {
        return partitionKey;
    }

    public String getObservationId() {
        return observationId;
    }

    public boolean isObservationSuppressed() {
        return observationSuppressed;
    }

    public BaseLongTermMemory getLtm() {
        return ltm;
    }

    /** Stores one item; returns its id (empty when the store kept nothing new). */
    public List<String> add(String item) {
        return memory("add").add(this, Collections.singletonList(item), null);
    }

    public List<String> add(List<String> items) {
        return memory("add").add(this, items, null);
    }

    public List<String> add(List<String> items, List<Map<String, Object>> metadatas) {
        return memory("add").add(this, items, metadatas);
    }

    /**
     * Stores items that live {@code ttl} ({@code null}: forever); the overloads without a ttl
     * give them the memory's default ttl. Returns their ids.
     */
    public List<String> add(List<String> items, List<Map<String, Object>> metadatas, Duration ttl) {
        return memory("add").add(this, items, metadatas, ttl);
    }

    /** Stores one item that lives {@code ttl} ({@code null}: forever). */
    public List<String> add(String item, Duration ttl) {
        return memory("add").add(this, Collections.singletonList(item), null, ttl);
    }

    /** Every item of the set (up to 100). */
    public List<MemorySetItem> get() {
        return memory("get").get(this, null, null, 100);
    }

    /** Items by id; ids outside this set are not found. */
    public List<MemorySetItem> get(List<String> ids) {
        return memory("get").get(this, ids, null, 100);
    }

    public List<MemorySetItem> get(Map<String, Object> filters, int limit) {
        return memory("get").get(this, null, filters, limit);
    }

    public List<MemorySetItem> search(String query, int limit) {
        return memory("search").search(this, query, limit, null, Collections.emptyMap());
    }

    public List<MemorySetItem> search(
            String query, int limit, Map<String, Object> filters, Map<String, Object> options) {
        return memory("search").search(this, query, limit, filters, options);
    }

    /**
     * Replaces the text of one item of this set in place, keeping its metadata; returns false,
     * changing nothing, when the id is not an item of this set.
     */
    public boolean update(String itemId, String value) {
        return memory("update").update(this, itemId, value, null);
    }

    /** Replaces the text and the whole metadata of one item of this set in place. */
    public boolean update(String itemId, String value, Map<String, Object> metadata) {
        return memory("update").update(this, itemId, value, metadata);
    }

    /**
     * Replaces the text and the whole metadata ({@code null}: kept) of one item in place; it
     * then lives {@code ttl} from now ({@code null}: forever).
     */
    public boolean update(
            String itemId, String value, Map<String, Object> metadata, Duration ttl) {
        return memory("update").update(this, itemId, value, metadata, ttl);
    }

    /** Deletes every item of the set; returns the ids deleted. */
    public List<String> delete() {
        return memory("delete").delete(this, null);
    }

    public List<String> delete(List<String> ids) {
        return memory("delete").delete(this, ids);
    }

    private BaseLongTermMemory memory(String operation) {
        if (ltm == null) {
            throw new UnboundMemorySetException(LongTermMemoryMessages.unbound(operation, name));
        }
        return ltm;
    }

    @Override
    public String toString() {
        return "MemorySet{name='" + name + "', partitionKey="
                + (partitionKey == null ? "null" : "'" + partitionKey + "'")
                + ", observationId=" + observationId
                + ", observationSuppressed=" + observationSuppressed + '}';
    }
}
