package org.flinkagents.ltm.runtime.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
import java.util.stream.Collectors;

import org.flinkagents.ltm.api.memory.EmptyPartitionKeyException;
import org.flinkagents.ltm.api.memory.LongTermMemoryMessages;
import org.flinkagents.ltm.api.memory.MailboxThreadException;
import org.flinkagents.ltm.api.memory.MemorySet;
import org.flinkagents.ltm.api.memory.MemorySetItem;
import org.flinkagents.ltm.api.memory.UnboundMemorySetException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Java long-term memory against the real Python {@code Mem0LongTermMemory} on the embedded
 * default, through real Pemja. The test thread is the mailbox thread.
 */
class PythonLongTermMemoryTest {
    private static final List<String> SET_OPERATIONS = List.of("add", "get", "search", "delete");

    private PythonLongTermMemory ltm;
    private ExecutorService worker;

    @BeforeEach
    void open() {
        ltm = TestLtm.open();
        worker = Executors.newSingleThreadExecutor(TestLtm.runtime().threadFactory("worker"));
    }

    @AfterEach
    void close() {
        worker.shutdownNow();
        ltm.close();
    }

    /** Runs one of the four set-scoped operations on {@code set}. */
    private static Object operate(MemorySet set, String operation) {
        switch (operation) {
            case "add":
                return set.add("an item that must not be stored");
            case "get":
                return set.get();
            case "search":
                return set.search("anything", 5);
            case "delete":
                return set.delete();
            default:
                throw new AssertionError(operation);
        }
    }

    private List<String> valuesOf(String key, String setName) {
        ltm.switchContext(key, null, true);
        return ltm.getMemorySet(setName).get().stream()
                .map(MemorySetItem::getValue)
                .sorted()
                .collect(Collectors.toList());
    }

    private static List<String> opsOf(List<Map<String, Object>> observations) {
        return observations.stream().map(o -> (String) o.get("op")).collect(Collectors.toList());
    }

    @Test
    void testForwardedSetCarriesTheContextItWasObtainedIn() {
        String name = TestLtm.unique("notes");
        String alice = TestLtm.unique("alice");
        String bob = TestLtm.unique("bob");

        ltm.switchContext(alice, "obs-alice", false);
        MemorySet aliceSet = ltm.getMemorySet(name);
        assertEquals(alice, aliceSet.getPartitionKey());
        assertEquals("obs-alice", aliceSet.getObservationId());
        assertFalse(aliceSet.isObservationSuppressed());

        // The owner moves on to another key (suppressed) before the set is used.
        ltm.switchContext(bob, "obs-bob", true);
        List<String> ids = aliceSet.add(List.of("alice drinks green tea", "alice owns a cat"));
        assertEquals(2, ids.size());
        List<MemorySetItem> found = aliceSet.search("what does alice drink", 2);
        assertEquals("alice drinks green tea", found.get(0).getValue());
        assertEquals(name, found.get(0).getMemorySetName());
        assertNotNull(found.get(0).getScore());
        assertEquals(new TreeSet<>(ids),
                aliceSet.get(ids).stream().map(MemorySetItem::getId).collect(Collectors.toSet()));
        assertEquals(List.of(ids.get(1)), aliceSet.delete(List.of(ids.get(1))));

        // Everything landed on alice's key, nothing on bob's (the key now in scope).
        assertEquals(List.of("alice drinks green tea"), valuesOf(alice, name));
        assertEquals(List.of(), valuesOf(bob, name));

        // Observations follow the set: all four operations under alice's observation id and key.
        List<Map<String, Object>> observed = ltm.endAction("obs-alice", true).observations();
        assertEquals(List.of("add", "search", "get", "delete"), opsOf(observed));
        assertTrue(observed.stream().allMatch(o -> alice.equals(o.get("key"))), observed.toString());
        assertEquals(List.of(), ltm.endAction("obs-bob", true).observations());

        // Suppression follows the set too, in both directions.
        ltm.switchContext(alice, "obs-quiet", true);
        MemorySet quiet = ltm.getMemorySet(name);
        ltm.switchContext(alice, "obs-loud", false);
        MemorySet loud = ltm.getMemorySet(name);
        ltm.switchContext(alice, "obs-other", false);
        allFour(quiet);
        ltm.switchContext(alice, "obs-other", true);
        allFour(loud);
        assertEquals(List.of(), ltm.endAction("obs-quiet", true).observations());
        assertEquals(List.of("add", "get", "search", "delete"),
                opsOf(ltm.endAction("obs-loud", true).observations()));
        assertEquals(List.of(), ltm.endAction("obs-other", true).observations());
    }

    @Test
    void testEndingAnActionHandsOverItsObservationsOnlyIfItCompletedAndCountsItsItemsEitherWay()
            throws Exception {
        String name = TestLtm.unique("notes");
        String key = TestLtm.unique("key");
        ltm.switchContext(key, "obs-done", false);
        MemorySet done = ltm.getMemorySet(name);
        ltm.switchContext(key, "obs-failed", false);
        MemorySet failed = ltm.getMemorySet(name);
        ltm.switchContext(key, "obs-reader", false);
        MemorySet reader = ltm.getMemorySet(name);

        List<String> ids = done.add(List.of("green tea", "black coffee"));
        done.search("tea", 1);
        List<String> failedIds = worker.submit(() -> failed.add("oolong")).get();
        reader.search("tea", 1);

        ActionMemoryOutcome completed = ltm.endAction("obs-done", true);
        assertEquals(List.of("add", "search"), opsOf(completed.observations()));
        assertEquals(ids, completed.observations().get(0).get("ids"));
        assertEquals(key, completed.observations().get(0).get("key"));
        assertEquals(2, completed.itemsAdded());
        assertEquals(new ActionMemoryOutcome(List.of(), 1), ltm.endAction("obs-failed", false),
                "a failed action's observations are dropped, its stored items still counted");
        ActionMemoryOutcome read = ltm.endAction("obs-reader", true);
        assertEquals(List.of("search"), opsOf(read.observations()));
        assertEquals(0, read.itemsAdded(), "a search stores nothing");
        assertEquals(new ActionMemoryOutcome(List.of(), 0), ltm.endAction("obs-done", true),
                "an ended action is forgotten");

        // Ending forgot the failed attempt's ids: its next attempt rewrites the same row.
        assertEquals(failedIds, worker.submit(() -> failed.add("oolong")).get());
        assertEquals(List.of("black coffee", "green tea", "oolong"), valuesOf(key, name));
    }

    private static void allFour(MemorySet set) {
        List<String> ids = set.add("a note");
        set.get(ids);
        set.search("note", 1);
        set.delete(ids);
    }

    @Test
    void testUnboundSetIsRefusedRatherThanWidened() throws Exception {
        String name = TestLtm.unique("notes");
        String owner = TestLtm.unique("owner");
        ltm.switchContext(owner, null, true);
        ltm.getMemorySet(name).add("owner's item");

        MemorySet neverBound = new MemorySet(name, ltm);
        MemorySet deserialized = roundTrip(bound(name, owner));
        deserialized.setLtm(ltm);
        assertEquals(name, deserialized.getName());
        assertNull(deserialized.getPartitionKey());

        for (MemorySet unbound : List.of(neverBound, deserialized)) {
            for (String operation : SET_OPERATIONS) {
                UnboundMemorySetException refused =
                        assertThrows(UnboundMemorySetException.class, () -> operate(unbound, operation));
                assertEquals(LongTermMemoryMessages.unbound(operation, name), refused.getMessage());
                // Refused by the Java guard: no Python traceback, nothing was marshalled.
                assertNull(refused.getCause(), operation + " reached Python");
            }
        }
        // A set without any memory refuses too, naming the operation.
        assertThrows(UnboundMemorySetException.class, () -> new MemorySet(name).add("x"));
        // Not widened: the owner's item is still there (an unbound delete would have removed it).
        assertEquals(List.of("owner's item"), valuesOf(owner, name));
    }

    @Test
    void testMemorySetIsRefusedBeforeAnyContextSwitch() {
        String name = TestLtm.unique("notes");
        UnboundMemorySetException obtain =
                assertThrows(UnboundMemorySetException.class, () -> ltm.getMemorySet(name));
        assertEquals(LongTermMemoryMessages.unbound("get_memory_set", name), obtain.getMessage());
        UnboundMemorySetException delete =
                assertThrows(UnboundMemorySetException.class, () -> ltm.deleteMemorySet(name));
        assertEquals(LongTermMemoryMessages.unbound("delete_memory_set", name), delete.getMessage());
        assertNull(delete.getCause(), "delete_memory_set reached Python");

        // A null key switches back to the unbound state rather than becoming the key "null".
        ltm.switchContext(TestLtm.unique("k"), "obs", false);
        ltm.getMemorySet(name);
        ltm.switchContext(null, "obs", false);
        assertThrows(UnboundMemorySetException.class, () -> ltm.getMemorySet(name));
    }

    @Test
    void testEmptyKeyedSetIsRefusedRatherThanWidened() {
        String name = TestLtm.unique("notes");
        String owner = TestLtm.unique("owner");
        ltm.switchContext(owner, null, true);
        ltm.getMemorySet(name).add("owner's item");

        for (String emptyKey : List.of("", "   ", "\t\n", "\u00a0")) {
            MemorySet empty = bound(name, emptyKey);
            for (String operation : SET_OPERATIONS) {
                EmptyPartitionKeyException refused =
                        assertThrows(EmptyPartitionKeyException.class, () -> operate(empty, operation));
                assertEquals(LongTermMemoryMessages.emptyKey(operation, name), refused.getMessage());
                assertNull(refused.getCause(), operation + " reached Python with key '" + emptyKey + "'");
            }
        }
        assertEquals(List.of("owner's item"), valuesOf(owner, name));
    }

    @Test
    void testMemorySetManagementIsRefusedForAnEmptyKey() {
        String name = TestLtm.unique("notes");
        ltm.switchContext("", "obs-empty", false); // switching itself never validates
        EmptyPartitionKeyException obtain =
                assertThrows(EmptyPartitionKeyException.class, () -> ltm.getMemorySet(name));
        assertEquals(LongTermMemoryMessages.emptyKey("get_memory_set", name), obtain.getMessage());
        EmptyPartitionKeyException delete =
                assertThrows(EmptyPartitionKeyException.class, () -> ltm.deleteMemorySet(name));
        assertEquals(LongTermMemoryMessages.emptyKey("delete_memory_set", name), delete.getMessage());
        assertNull(delete.getCause(), "delete_memory_set reached Python");
        assertEquals(List.of(), ltm.endAction("obs-empty", true).observations());
    }

    @Test
    void testMemorySetManagementIsRefusedOffTheMailboxThread() throws Exception {
        String name = TestLtm.unique("notes");
        String key = TestLtm.unique("key");
        ltm.switchContext(key, "obs", false);
        ltm.getMemorySet(name).add("kept");

        Future<Throwable> obtain = worker.submit(() -> thrown(() -> ltm.getMemorySet(name)));
        Future<Throwable> delete = worker.submit(() -> thrown(() -> ltm.deleteMemorySet(name)));
        assertInstanceOf(MailboxThreadException.class, obtain.get());
        assertInstanceOf(MailboxThreadException.class, delete.get());
        assertTrue(obtain.get().getMessage().contains("mailbox thread"), obtain.get().getMessage());

        // The thread check runs before the key check.
        ltm.switchContext("", "obs", false);
        assertInstanceOf(MailboxThreadException.class,
                worker.submit(() -> thrown(() -> ltm.getMemorySet(name))).get());
        assertInstanceOf(MailboxThreadException.class,
                worker.submit(() -> thrown(() -> ltm.deleteMemorySet(name))).get());

        // Nothing was deleted by the refused call; on the mailbox thread both work.
        assertEquals(List.of("kept"), valuesOf(key, name));
        assertTrue(ltm.deleteMemorySet(name));
        assertEquals(List.of(), valuesOf(key, name));
        assertFalse(ltm.deleteMemorySet(name));
    }

    @Test
    void testUpdateRewritesAnItemOfTheSetInPlaceAndNeverAForeignOne() throws Exception {
        String name = TestLtm.unique("notes");
        String key = TestLtm.unique("key");
        String other = TestLtm.unique("other");
        ltm.switchContext(other, "obs-other", false);
        String foreign = ltm.getMemorySet(name).add("the other key's note").get(0);
        ltm.switchContext(key, "obs-update", false);
        MemorySet set = ltm.getMemorySet(name);
        String id = set.add(List.of("the sky is blue"), List.of(Map.of("topic", "sky"))).get(0);
        ltm.switchContext(other, "obs-other", false); // the mailbox moves on

        boolean updated = worker.submit(() -> set.update(id, "the sky is grey and rainy")).get();

        assertTrue(updated);
        MemorySetItem item = set.get(List.of(id)).get(0);
        assertEquals(id, item.getId());
        assertEquals("the sky is grey and rainy", item.getValue());
        assertEquals(Map.of("topic", "sky"), item.getMetadata()); // null metadata keeps it
        assertEquals(List.of(id), set.search("grey rainy sky", 1).stream()
                .map(MemorySetItem::getId).collect(Collectors.toList()));
        assertTrue(set.update(id, "the sky is clear", Map.of("topic", "weather", "stars", 4)));
        assertEquals(Map.of("topic", "weather", "stars", 4L),
                set.get(List.of(id)).get(0).getMetadata());

        assertFalse(set.update(foreign, "overwritten"));
        assertFalse(set.update("6b89d538-7623-4cc9-a347-8295408dd349", "unknown"));
        assertEquals(List.of("the other key's note"), valuesOf(other, name));
        assertEquals(List.of("the sky is clear"), valuesOf(key, name));
        IllegalArgumentException empty =
                assertThrows(IllegalArgumentException.class, () -> set.update(id, " "));
        assertTrue(empty.getMessage().contains("update() got an empty value"), empty.getMessage());
        assertEquals(List.of("add", "update", "get", "search", "update", "get"),
                opsOf(ltm.endAction("obs-update", true).observations()));
    }

    @Test
    void testSetScopedOperationsRunWithoutTheMailboxThread() throws Exception {
        String name = TestLtm.unique("notes");
        String key = TestLtm.unique("key");
        String other = TestLtm.unique("other");
        ltm.switchContext(key, "obs-worker", false);
        MemorySet set = ltm.getMemorySet(name);
        ltm.switchContext(other, "obs-other", false); // the mailbox moves on

        Map<String, Object> results = worker.submit(() -> {
            Map<String, Object> r = new HashMap<>();
            List<String> ids = set.add(List.of("the sky is blue", "grass is green"),
                    List.of(Map.of("topic", "sky"), Map.of("topic", "grass")));
            r.put("ids", ids);
            r.put("get", set.get(ids));
            r.put("filtered", set.get(Map.of("topic", "grass"), 10));
            r.put("search", set.search("what colour is the sky", 1));
            r.put("delete", set.delete(List.of(ids.get(0))));
            r.put("thread", Thread.currentThread().getName());
            return r;
        }).get();

        assertTrue(((String) results.get("thread")).startsWith("worker"));
        @SuppressWarnings("unchecked") List<String> ids = (List<String>) results.get("ids");
        assertEquals(2, ids.size());
        @SuppressWarnings("unchecked") List<MemorySetItem> got = (List<MemorySetItem>) results.get("get");
        assertEquals(Set.of("the sky is blue", "grass is green"),
                got.stream().map(MemorySetItem::getValue).collect(Collectors.toSet()));
        @SuppressWarnings("unchecked") List<MemorySetItem> filtered = (List<MemorySetItem>) results.get("filtered");
        assertEquals(List.of("grass is green"),
                filtered.stream().map(MemorySetItem::getValue).collect(Collectors.toList()));
        assertEquals("grass", filtered.get(0).getMetadata().get("topic"));
        @SuppressWarnings("unchecked") List<MemorySetItem> hits = (List<MemorySetItem>) results.get("search");
        assertEquals(List.of("the sky is blue"),
                hits.stream().map(MemorySetItem::getValue).collect(Collectors.toList()));
        assertEquals(List.of(ids.get(0)), results.get("delete"));

        assertEquals(List.of("grass is green"), valuesOf(key, name));
        assertEquals(List.of(), valuesOf(other, name));
        assertEquals(List.of("add", "get", "get", "search", "delete"),
                opsOf(ltm.endAction("obs-worker", true).observations()));
    }

    @Test
    void testRefusalMessagesAreWordForWordThePythonOnes() {
        String module = "flink_agents_ltm.api.memory.long_term_memory";
        for (String operation : List.of("get_memory_set", "delete_memory_set", "add", "search")) {
            assertEquals(TestLtm.python(module, "unbound_message", operation, "notes"),
                    LongTermMemoryMessages.unbound(operation, "notes"));
            assertEquals(TestLtm.python(module, "empty_key_message", operation, "notes"),
                    LongTermMemoryMessages.emptyKey(operation, "notes"));
        }
        assertEquals(TestLtm.python(module, "unbound_message", "add", null),
                LongTermMemoryMessages.unbound("add", null));
    }

    @Test
    void testPythonRefusalsSurfaceAsJavaExceptionsWithThePythonMessage() {
        String name = TestLtm.unique("notes");
        ltm.switchContext(TestLtm.unique("key"), null, false);
        MemorySet set = ltm.getMemorySet(name);

        @SuppressWarnings({"rawtypes", "unchecked"})
        List<String> notStrings = (List) List.of(42);
        IllegalArgumentException typeError =
                assertThrows(IllegalArgumentException.class, () -> set.add(notStrings));
        assertTrue(typeError.getMessage().startsWith(
                "long-term memory stores str values only; item 0 is int"), typeError.getMessage());
        assertInstanceOf(PythonLongTermMemory.PythonTraceback.class, typeError.getCause());
        assertTrue(typeError.getCause().getMessage().contains("TypeError"));

        IllegalArgumentException widening = assertThrows(IllegalArgumentException.class,
                () -> set.search("q", 3, Map.of("agent_id", "someone-else"), Map.of()));
        assertTrue(widening.getMessage().contains("agent_id"), widening.getMessage());

        IllegalArgumentException limit =
                assertThrows(IllegalArgumentException.class, () -> set.search("q", 0));
        assertEquals("limit must be a positive int, got 0", limit.getMessage());
        assertEquals(List.of(), set.get());
    }

    @Test
    void testKeysWithTheSameHashCodeKeepSeparateMemories() {
        assertEquals("Aa".hashCode(), "BB".hashCode());
        String name = TestLtm.unique("notes");
        ltm.switchContext("Aa", null, true);
        ltm.getMemorySet(name).add("belongs to Aa");
        ltm.switchContext("BB", null, true);
        ltm.getMemorySet(name).add("belongs to BB");
        assertEquals(List.of("belongs to Aa"), valuesOf("Aa", name));
        assertEquals(List.of("belongs to BB"), valuesOf("BB", name));
        // A non-string key reaches Mem0 as String.valueOf(key).
        ltm.switchContext(12345L, null, true);
        assertEquals("12345", ltm.getMemorySet(name).getPartitionKey());
    }

    private MemorySet bound(String name, String key) {
        MemorySet set = new MemorySet(name, ltm);
        set.setActionContext(key, "obs", false);
        return set;
    }

    @Test
    void testMalformedVectorStoreJsonFailsTheOpenWithAnIllegalArgumentNamingTheOption() {
        Map<String, Object> config = TestLtm.config();
        config.put("long-term-memory.vector-store", "{\"provider\": \"pgvector\",");

        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> PythonLongTermMemory.open(TestLtm.runtime(), TestLtm.unique("bad-json"),
                        config, MailboxThreadChecker.ofCurrentThread()));
        assertTrue(refused.getMessage().startsWith(
                "option 'long-term-memory.vector-store' is not valid JSON ("), refused.getMessage());
    }

    private static MemorySet roundTrip(MemorySet set) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(set);
        }
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            return (MemorySet) in.readObject();
        }
    }

    private static Throwable thrown(Runnable action) {
        try {
            action.run();
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    @SuppressWarnings("unused")
    private static <T> List<T> listOf(Function<Integer, T> f, int n) {
        List<T> list = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            list.add(f.apply(i));
        }
        return Collections.unmodifiableList(list);
    }
}
