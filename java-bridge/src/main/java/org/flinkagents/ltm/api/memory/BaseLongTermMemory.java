package org.flinkagents.ltm.api.memory;

import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The long-term memory of one operator, shared by all of its keys.
 *
 * <p>Memory-set management ({@link #getMemorySet}, {@link #deleteMemorySet}) acts on the key
 * currently in scope and runs on the operator's mailbox thread only ({@link
 * MailboxThreadException} otherwise). Item operations ({@link #add}, {@link #get}, {@link
 * #search}, {@link #update}, {@link #delete}) take every bit of scope from the set they are given and may run on
 * any thread, for example a worker pool the action hands the set to.
 */
public interface BaseLongTermMemory extends AutoCloseable {

    /**
     * Gets (or implicitly creates) the set {@code name} of the key in scope, bound to the current
     * action: the partition key, observation id and suppression flag are stamped onto it. A set
     * belongs to one action; obtain a new one in each action. Mailbox thread only.
     */
    MemorySet getMemorySet(String name);

    /**
     * Deletes every item of set {@code name} of the key currently in scope; returns whether it
     * had any. Mailbox thread only. It targets the <em>current</em> key, which may differ from
     * the key bound to a same-named set obtained earlier; {@link MemorySet#delete()} deletes on
     * the set's own key.
     */
    boolean deleteMemorySet(String name);

    /**
     * Stores {@code String} items in the set; {@code metadatas} is {@code null}, or one map per
     * item. Returns the ids of the stored items. Any thread.
     */
    List<String> add(MemorySet memorySet, List<String> items, List<Map<String, Object>> metadatas);

    /**
     * Items by id ({@code ids} non-null: only ids inside the set's scope are found), or up to
     * {@code limit} items matching {@code filters}. Any thread.
     */
    List<MemorySetItem> get(
            MemorySet memorySet, List<String> ids, Map<String, Object> filters, int limit);

    /**
     * At most {@code limit} items most similar to {@code query}, best first. {@code options}
     * passes Mem0 search options ({@code threshold}, {@code rerank}). Any thread.
     */
    List<MemorySetItem> search(
            MemorySet memorySet,
            String query,
            int limit,
            Map<String, Object> filters,
            Map<String, Object> options);

    /**
     * Replaces the text of item {@code itemId} of the set in place: the same id, the new text
     * embedded again, the same checks as {@link #add}. {@code metadata} {@code null} keeps the
     * item's metadata; a map replaces it whole. Returns whether the item was updated: an id
     * outside the set's scope (another set's, key's or job's) or unknown is not found, like
     * {@link #get} and {@link #delete} by id, and nothing is changed. Replay-stable (a replayed
     * update rewrites the same row with the same value). Any thread.
     */
    boolean update(MemorySet memorySet, String itemId, String value, Map<String, Object> metadata);

    /**
     * Deletes items by id (ids outside the set's scope are never deleted), or every item of the
     * set when {@code ids} is {@code null}. Returns the ids deleted. Any thread.
     */
    List<String> delete(MemorySet memorySet, List<String> ids);

    default List<String> add(MemorySet memorySet, List<String> items) {
        return add(memorySet, items, null);
    }

    default List<MemorySetItem> get(MemorySet memorySet, List<String> ids) {
        return get(memorySet, ids, null, 100);
    }

    default List<MemorySetItem> search(MemorySet memorySet, String query, int limit) {
        return search(memorySet, query, limit, null, Collections.emptyMap());
    }

    @Override
    default void close() throws Exception {}
}
