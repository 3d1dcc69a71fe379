package org.flinkagents.ltm.api.memory;

import java.time.Duration;
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
 * any thread, for example a worker pool the action hands the set to. {@link #eraseKey} and
 * {@link #sweepExpired} act on the whole job and may run on any thread too.
 *
 * <p>Every argument is checked by the Python memory, so Java and Python agents get the same
 * refusals with the same one-line messages.
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
     * Stores items that live {@code ttl} (a positive duration; {@code null}: forever, whatever
     * the default); an expired item is seen by no {@link #get}, {@link #search} or {@link
     * #update} and is erased by {@link #sweepExpired}. The three-argument {@link #add} gives
     * items the memory's default ttl ({@code long-term-memory.ttl}). A zero or negative {@code
     * ttl} is refused with an {@link IllegalArgumentException}. Any thread.
     */
    List<String> add(
            MemorySet memorySet,
            List<String> items,
            List<Map<String, Object>> metadatas,
            Duration ttl);

    /**
     * Items by id ({@code ids} non-null: only ids inside the set's scope are found), or up to
     * {@code limit} items matching {@code filters}. Any thread.
     */
    List<MemorySetItem> get(
            MemorySet memorySet, List<String> ids, Map<String, Object> filters, int limit);

    /**
     * At most {@code limit} items most similar to {@code query}, best first. {@code options}
     * passes search options as Python's {@code search(**options)} takes them: {@code
     * threshold}, and {@code rerank} ({@code true}: the reranker {@code
     * long-term-memory.reranker} names orders {@code long-term-memory.rerank-candidates} times
     * {@code limit} candidates of the set). Any thread.
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
     * {@link #update} that also sets the item's expiry: it lives {@code ttl} from now ({@code
     * null}: forever). The four-argument {@link #update} gives it the default ttl when one is
     * configured, else keeps its expiry. Any thread.
     */
    boolean update(
            MemorySet memorySet,
            String itemId,
            String value,
            Map<String, Object> metadata,
            Duration ttl);

    /**
     * Erases everything this job remembers of {@code partitionKey} (kept as {@code
     * String.valueOf(partitionKey)}, as the keys of {@link #getMemorySet}): every item of every
     * set, text included (a right-to-be-forgotten request); other keys keep theirs. Returns how
     * many items were erased. A {@code null} or empty key is refused ({@link
     * UnboundMemorySetException}, {@link EmptyPartitionKeyException}). Records no observation.
     * Any thread.
     */
    int eraseKey(Object partitionKey);

    /**
     * Deletes up to {@code limit} expired items of this job (any key, any set), text included,
     * so that expiry is erasure and not only hiding; returns how many. Call it again until it
     * returns less than {@code limit} to sweep everything. Records no observation. Any thread.
     */
    int sweepExpired(int limit);

    /** {@link #sweepExpired(int)} of up to 1000 items. */
    default int sweepExpired() {
        return sweepExpired(1000);
    }

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
