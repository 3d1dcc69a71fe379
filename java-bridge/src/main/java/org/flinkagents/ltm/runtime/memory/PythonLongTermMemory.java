package org.flinkagents.ltm.runtime.memory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.flinkagents.ltm.api.memory.BaseLongTermMemory;
import org.flinkagents.ltm.api.memory.EmptyPartitionKeyException;
import org.flinkagents.ltm.api.memory.LongTermMemoryException;
import org.flinkagents.ltm.api.memory.LongTermMemoryMessages;
import org.flinkagents.ltm.api.memory.MailboxThreadException;
import org.flinkagents.ltm.api.memory.MemorySet;
import org.flinkagents.ltm.api.memory.MemorySetItem;
import org.flinkagents.ltm.api.memory.UnboundMemorySetException;

import pemja.core.PythonException;

/**
 * Long-term memory for Java agents, backed by the one Python {@code Mem0LongTermMemory} of the
 * operator, reached through Pemja.
 *
 * <ul>
 *   <li>{@link #switchContext} records the key and observation context of the next action on the
 *       Java side (no Python call).
 *   <li>{@link #getMemorySet} runs the mailbox-thread check, then the key check, and stamps the
 *       context onto a Java {@link MemorySet}; it never enters Python.
 *   <li>{@link #deleteMemorySet} runs the same two checks, then forwards the current context.
 *   <li>{@link #add}, {@link #get}, {@link #search}, {@link #update}, {@link #delete} take
 *       every bit of scope from the set, refuse a {@code null} or empty key before anything is marshalled, and forward
 *       all four fields of the set, which Python rebuilds with {@code
 *       flink_agents_ltm.bridge.to_python_memory_set}. They run on any thread.
 *   <li>{@link #endAction} ends an action (one attempt of a step): its observations if it
 *       completed and the items it stored ({@link ActionMemoryOutcome}).
 *   <li>{@link #eraseKey} and {@link #sweepExpired} forward to Python's {@code erase_key} and
 *       {@code sweep_expired}; they run on any thread, as in Python.
 *   <li>{@link #itemsStoredBy} counts the items an action stored so far, without ending it.
 * </ul>
 *
 * <p>Python failures surface as Java exceptions carrying the Python message: {@link
 * UnboundMemorySetException}, {@link EmptyPartitionKeyException}, {@link MailboxThreadException},
 * {@link IllegalArgumentException} (Python {@code ValueError}/{@code TypeError}) or {@link
 * LongTermMemoryException} (backend and anything else), each with the Python traceback as cause.
 * The secrets of the configuration the memory was opened with ({@link ConfigSecrets}: passwords,
 * API keys, connection strings) are masked in every such message and traceback.
 *
 * <p>{@link #close} closes the Python memory and releases its gateway in every thread's
 * interpreter ({@link PythonRuntime#releaseGateway}).
 */
public final class PythonLongTermMemory implements BaseLongTermMemory {

    private final PythonRuntime python;
    private final String handle;
    private final String variable;
    private final MailboxThreadChecker mailbox;
    private final ConfigSecrets secrets;
    private volatile ActionContext context = ActionContext.UNBOUND;
    private volatile boolean closed;

    private PythonLongTermMemory(
            PythonRuntime python,
            String handle,
            MailboxThreadChecker mailbox,
            ConfigSecrets secrets) {
        this.python = python;
        this.handle = handle;
        this.variable = "_ltm_" + handle.replaceAll("[^A-Za-z0-9_]", "_");
        this.mailbox = mailbox;
        this.secrets = secrets;
    }

    /**
     * Builds the Python {@code Mem0LongTermMemory.from_config(jobId, config)} (the embedded
     * default when {@code config} is empty; keys are option keys such as {@code
     * long-term-memory.embedded.base-dir}) and wraps it. The vector store ({@code
     * long-term-memory.vector-store}) is given as Mem0-format JSON text, e.g. {@code
     * {"provider":"pgvector","config":{...}}}, which Python parses (malformed JSON fails with
     * an {@link IllegalArgumentException} naming the option). No secret of {@code config}
     * appears in the message of any exception this memory throws.
     */
    public static PythonLongTermMemory open(
            PythonRuntime python,
            String jobId,
            Map<String, Object> config,
            MailboxThreadChecker mailbox) {
        Objects.requireNonNull(mailbox, "mailbox");
        ConfigSecrets secrets = ConfigSecrets.of(config);
        Object handle =
                unwrap(
                        call(
                                python,
                                secrets,
                                PythonRuntime.GATEWAY_MODULE,
                                "open_long_term_memory",
                                jobId,
                                config == null ? new HashMap<>() : new HashMap<>(config)),
                        secrets);
        return new PythonLongTermMemory(python, (String) handle, mailbox, secrets);
    }

    /** The Python handle of this memory (what {@code java_gateway.gateway(handle)} looks up). */
    public String getHandle() {
        return handle;
    }

    // ------------------------------------------------------------------ context (mailbox)

    /**
     * Records the key and observation context of the next action. Never validates: a job with an
     * empty key runs until it actually uses long-term memory. The key is kept as {@code
     * String.valueOf(key)}, never a hash; {@code null} is the unbound state.
     */
    public void switchContext(Object partitionKey, String observationId, boolean suppressed) {
        this.context =
                new ActionContext(
                        partitionKey == null ? null : String.valueOf(partitionKey),
                        observationId,
                        suppressed);
    }

    @Override
    public MemorySet getMemorySet(String name) {
        mailbox.checkMailboxThread();
        ActionContext current = context;
        LongTermMemoryMessages.checkKey(current.partitionKey, "get_memory_set", name);
        checkSetName(name);
        MemorySet set = new MemorySet(name, this);
        set.setActionContext(current.partitionKey, current.observationId, current.suppressed);
        return set;
    }

    @Override
    public boolean deleteMemorySet(String name) {
        mailbox.checkMailboxThread();
        ActionContext current = context;
        LongTermMemoryMessages.checkKey(current.partitionKey, "delete_memory_set", name);
        checkSetName(name);
        return (Boolean)
                forward(
                        "delete_memory_set",
                        name,
                        current.partitionKey,
                        current.observationId,
                        current.suppressed);
    }

    // ------------------------------------------------------------------ item operations

    @Override
    public List<String> add(
            MemorySet memorySet, List<String> items, List<Map<String, Object>> metadatas) {
        return add(memorySet, items, metadatas, false, null);
    }

    @Override
    public List<String> add(
            MemorySet memorySet,
            List<String> items,
            List<Map<String, Object>> metadatas,
            Duration ttl) {
        return add(memorySet, items, metadatas, true, ttl);
    }

    private List<String> add(
            MemorySet memorySet,
            List<String> items,
            List<Map<String, Object>> metadatas,
            boolean ttlGiven,
            Duration ttl) {
        checkSet(memorySet, "add");
        return strings(
                forward(
                        "add",
                        memorySet.getName(),
                        memorySet.getPartitionKey(),
                        memorySet.getObservationId(),
                        memorySet.isObservationSuppressed(),
                        items == null ? null : new ArrayList<>(items),
                        metadatas == null ? null : copyMaps(metadatas),
                        WritePosition.current(),
                        ttlGiven,
                        seconds(ttl)));
    }

    @Override
    public List<MemorySetItem> get(
            MemorySet memorySet, List<String> ids, Map<String, Object> filters, int limit) {
        checkSet(memorySet, "get");
        return items(
                forward(
                        "get",
                        memorySet.getName(),
                        memorySet.getPartitionKey(),
                        memorySet.getObservationId(),
                        memorySet.isObservationSuppressed(),
                        ids == null ? null : new ArrayList<>(ids),
                        filters == null ? null : new HashMap<>(filters),
                        limit));
    }

    @Override
    public List<MemorySetItem> search(
            MemorySet memorySet,
            String query,
            int limit,
            Map<String, Object> filters,
            Map<String, Object> options) {
        checkSet(memorySet, "search");
        return items(
                forward(
                        "search",
                        memorySet.getName(),
                        memorySet.getPartitionKey(),
                        memorySet.getObservationId(),
                        memorySet.isObservationSuppressed(),
                        query,
                        limit,
                        filters == null ? null : new HashMap<>(filters),
                        options == null ? new HashMap<>() : new HashMap<>(options)));
    }

    @Override
    public boolean update(
            MemorySet memorySet, String itemId, String value, Map<String, Object> metadata) {
        return update(memorySet, itemId, value, metadata, false, null);
    }

    @Override
    public boolean update(
            MemorySet memorySet,
            String itemId,
            String value,
            Map<String, Object> metadata,
            Duration ttl) {
        return update(memorySet, itemId, value, metadata, true, ttl);
    }

    private boolean update(
            MemorySet memorySet,
            String itemId,
            String value,
            Map<String, Object> metadata,
            boolean ttlGiven,
            Duration ttl) {
        checkSet(memorySet, "update");
        return (Boolean)
                forward(
                        "update",
                        memorySet.getName(),
                        memorySet.getPartitionKey(),
                        memorySet.getObservationId(),
                        memorySet.isObservationSuppressed(),
                        itemId,
                        value,
                        metadata == null ? null : new HashMap<>(metadata),
                        ttlGiven,
                        seconds(ttl));
    }

    @Override
    public List<String> delete(MemorySet memorySet, List<String> ids) {
        checkSet(memorySet, "delete");
        return strings(
                forward(
                        "delete",
                        memorySet.getName(),
                        memorySet.getPartitionKey(),
                        memorySet.getObservationId(),
                        memorySet.isObservationSuppressed(),
                        ids == null ? null : new ArrayList<>(ids)));
    }

    // ------------------------------------------------------------------ whole job (any thread)

    /** Python's {@code erase_key}: it checks the key, so no check here. */
    @Override
    public int eraseKey(Object partitionKey) {
        return ((Number) forward("erase_key",
                partitionKey == null ? null : String.valueOf(partitionKey))).intValue();
    }

    /** Python's {@code sweep_expired}: it checks {@code limit}, so no check here. */
    @Override
    public int sweepExpired(int limit) {
        return ((Number) forward("sweep_expired", limit)).intValue();
    }

    // ------------------------------------------------------------------ observations

    /**
     * The action (one attempt of a step) with this observation id ended: its observations if it
     * {@code completed} (none otherwise) and how many items it stored either way. Python forgets
     * the action, so a next attempt under the same id mints the same item ids. Call it on the
     * mailbox thread once the action's own code and the durable calls it awaited are done.
     */
    @SuppressWarnings("unchecked")
    public ActionMemoryOutcome endAction(String observationId, boolean completed) {
        Map<String, Object> answer =
                (Map<String, Object>) forward("end_action", observationId, completed);
        List<Map<String, Object>> observations = new ArrayList<>();
        for (Object o : (List<Object>) answer.get("observations")) {
            observations.add((Map<String, Object>) o);
        }
        return new ActionMemoryOutcome(
                observations, ((Number) answer.get("items_added")).intValue());
    }

    /**
     * How many items the action (attempt) with this observation id stored so far, without
     * ending it. The agent
     * operator asks when it records a durable call's result: a replay answers the call from
     * the record without running it, so its adds are never counted again.
     */
    public int itemsStoredBy(String observationId) {
        return ((Number) forward("items_stored_by", observationId)).intValue();
    }

    /** One round trip through Pemja that does nothing in Python (for measuring the bridge). */
    public void ping() {
        forward("ping");
    }

    /**
     * Closes the Python memory (its share of the Mem0 client) and releases its gateway in every
     * interpreter that bound it: now in the calling thread's, at once for threads that ended
     * (their interpreters are closed), at their next call for other live threads. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            unwrap(
                    call(python, secrets, PythonRuntime.GATEWAY_MODULE,
                            "close_long_term_memory", handle),
                    secrets);
        } finally {
            python.releaseGateway(variable);
        }
    }

    // ------------------------------------------------------------------ internals

    private void checkSet(MemorySet memorySet, String operation) {
        if (memorySet == null) {
            throw new IllegalArgumentException(operation + " expects a MemorySet, got null");
        }
        LongTermMemoryMessages.checkKey(
                memorySet.getPartitionKey(), operation, memorySet.getName());
    }

    private static void checkSetName(String name) {
        if (name == null) {
            throw new IllegalArgumentException("memory set name must be a str, got null");
        }
        if (name.isBlank()) {
            throw new IllegalArgumentException("memory set name must not be empty");
        }
    }

    private Object forward(String method, Object... args) {
        if (closed) {
            throw new IllegalStateException("long-term memory " + handle + " is closed");
        }
        Object answer;
        try {
            PythonRuntime.ThreadInterpreter interpreter = python.current();
            interpreter.bindGateway(variable, handle);
            answer = interpreter.invokeMethod(variable, method, args);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) { // pemja.core.PythonException is checked but thrown undeclared
            throw bridgeFailure(method, e, secrets);
        }
        return unwrap(answer, secrets);
    }

    private static Object call(
            PythonRuntime python,
            ConfigSecrets secrets,
            String object,
            String method,
            Object... args) {
        try {
            return python.current().invokeMethod(object, method, args);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) { // pemja.core.PythonException is checked but thrown undeclared
            throw bridgeFailure(method, e, secrets);
        }
    }

    /** A Pemja failure; its text comes from Python, so the cause is a scrubbed copy. */
    private static LongTermMemoryException bridgeFailure(
            String method, Exception e, ConfigSecrets secrets) {
        String type = e instanceof PythonException ? "pemja.core.PythonException" : null;
        return new LongTermMemoryException(
                "calling Python " + method + " through Pemja failed: "
                        + secrets.scrub(e.getMessage()),
                type,
                new PythonTraceback(secrets.scrub(String.valueOf(e))));
    }

    /** The result inside a success envelope, or the Java exception for a failure envelope. */
    static Object unwrap(Object answer, ConfigSecrets secrets) {
        if (answer instanceof List) {
            List<?> success = (List<?>) answer;
            if (success.size() == 1) {
                return success.get(0);
            }
        }
        if (answer instanceof Map) {
            throw toJavaException((Map<?, ?>) answer, secrets);
        }
        throw new LongTermMemoryException(
                "unexpected answer from the Python gateway: " + secrets.scrub(String.valueOf(answer)),
                null);
    }

    static RuntimeException toJavaException(Map<?, ?> failure, ConfigSecrets secrets) {
        String kind = String.valueOf(failure.get("error"));
        String message = secrets.scrub(String.valueOf(failure.get("message")));
        String type = String.valueOf(failure.get("type"));
        PythonTraceback traceback =
                new PythonTraceback(secrets.scrub(String.valueOf(failure.get("traceback"))));
        switch (kind) {
            case "unbound":
                return new UnboundMemorySetException(message, traceback);
            case "empty_key":
                return new EmptyPartitionKeyException(message, traceback);
            case "mailbox":
                return new MailboxThreadException(message, traceback);
            case "type":
            case "value":
                return new IllegalArgumentException(message, traceback);
            default:
                return new LongTermMemoryException(message, type, traceback);
        }
    }

    /** A ttl as Python takes it: seconds ({@code null}: forever); Python checks the sign. */
    private static Double seconds(Duration ttl) {
        return ttl == null ? null : ttl.getSeconds() + ttl.getNano() / 1e9;
    }

    private static List<Map<String, Object>> copyMaps(List<Map<String, Object>> maps) {
        List<Map<String, Object>> copies = new ArrayList<>(maps.size());
        for (Map<String, Object> map : maps) {
            copies.add(map == null ? null : new HashMap<>(map));
        }
        return copies;
    }

    @SuppressWarnings("unchecked")
    private static List<String> strings(Object answer) {
        return Collections.unmodifiableList((List<String>) answer);
    }

    @SuppressWarnings("unchecked")
    private static List<MemorySetItem> items(Object answer) {
        List<Object> rows = (List<Object>) answer;
        List<MemorySetItem> items = new ArrayList<>(rows.size());
        for (Object row : rows) {
            Map<String, Object> map = (Map<String, Object>) row;
            Object metadata = map.get("metadata");
            Object score = map.get("score");
            items.add(
                    new MemorySetItem(
                            (String) map.get("memory_set_name"),
                            (String) map.get("id"),
                            (String) map.get("value"),
                            (Map<String, Object>) metadata,
                            (String) map.get("created_at"),
                            (String) map.get("updated_at"),
                            score == null ? null : ((Number) score).doubleValue()));
        }
        return Collections.unmodifiableList(items);
    }

    /** The context {@link #switchContext} recorded; {@code UNBOUND} before the first switch. */
    private static final class ActionContext {
        static final ActionContext UNBOUND = new ActionContext(null, null, false);

        final String partitionKey;
        final String observationId;
        final boolean suppressed;

        ActionContext(String partitionKey, String observationId, boolean suppressed) {
            this.partitionKey = partitionKey;
            this.observationId = observationId;
            this.suppressed = suppressed;
        }
    }

    /** The Python traceback of a failure, as the cause of the Java exception. */
    public static final class PythonTraceback extends RuntimeException {
        private static final long serialVersionUID = 1L;

        PythonTraceback(String traceback) {
            super("Python traceback:\n" + traceback, null, false, false);
        }
    }
}
