package org.flinkagents.ltm.runtime.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;

import org.flinkagents.ltm.api.memory.EmptyPartitionKeyException;
import org.flinkagents.ltm.api.memory.MemorySet;
import org.flinkagents.ltm.api.memory.MemorySetItem;
import org.flinkagents.ltm.api.memory.UnboundMemorySetException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a Java agent's long-term memory does that Python's does too (issue 35 item 5): ttl on
 * add and update, sweepExpired, eraseKey, reranked search, each refused as Python refuses it.
 * Real Python memory on the embedded default, through real Pemja; the test thread is the mailbox
 * thread. Time moves through the Python memory's clock seam ({@code set_clock}), not by sleeping.
 */
class MemoryParityTest {
    private static final String LEXICAL =
            "flink_agents_ltm.integrations.rerankers.lexical.LexicalReranker";

    private PythonLongTermMemory ltm;
    private ExecutorService worker;

    @BeforeEach
    void open() {
        // A job of its own: sweepExpired counts every expired item of the job.
        TestLtm.open().close(); // the shared Mem0 client stays loaded (TestLtm's anchor)
        ltm = PythonLongTermMemory.open(TestLtm.runtime(), TestLtm.unique("parity"),
                TestLtm.config(), MailboxThreadChecker.ofCurrentThread());
        worker = Executors.newSingleThreadExecutor(TestLtm.runtime().threadFactory("worker"));
    }

    @AfterEach
    void close() {
        worker.shutdownNow();
        ltm.close();
    }

    /** The Python memory behind {@code memory} tells time {@code seconds} ahead of now. */
    private static void clockAhead(PythonLongTermMemory memory, double seconds) {
        TestLtm.python("builtins", "exec",
                "import time\n"
                        + "from flink_agents_ltm.bridge.java_gateway import gateway\n"
                        + "gateway('" + memory.getHandle() + "').ltm.set_clock("
                        + "lambda: time.time() + " + seconds + ")\n",
                new HashMap<String, Object>());
    }

    private MemorySet set(String key, String name) {
        ltm.switchContext(key, null, true);
        return ltm.getMemorySet(name);
    }

    private static List<String> values(List<MemorySetItem> items) {
        return items.stream().map(MemorySetItem::getValue).sorted().collect(Collectors.toList());
    }

    @Test
    void testItemsWithATtlVanishFromReadsOnceExpiredAndTheSweepErasesAndCountsThem() {
        MemorySet notes = set(TestLtm.unique("key"), "notes");
        notes.add("short-lived: the parcel code is 1234", Duration.ofSeconds(60));
        notes.add("kept forever: prefers email", (Duration) null);
        notes.add("kept by default: lives in Lyon");
        String updated = notes.add("soon updated: old text").get(0);
        assertTrue(notes.update(updated, "updated with a ttl: new text", null,
                Duration.ofMillis(30_500)));
        assertEquals(4, notes.get().size());

        clockAhead(ltm, 30);
        assertEquals(4, notes.get().size());
        clockAhead(ltm, 61);
        assertEquals(List.of("kept by default: lives in Lyon", "kept forever: prefers email"),
                values(notes.get()));
        assertEquals(List.of("kept by default: lives in Lyon", "kept forever: prefers email"),
                values(notes.search("what is the parcel code", 10)));
        assertTrue(!notes.update(updated, "an expired item is not updated"));

        assertEquals(2, ltm.sweepExpired());
        assertEquals(0, ltm.sweepExpired());
        clockAhead(ltm, 0); // back to now: the swept rows are gone, not merely hidden
        assertEquals(List.of("kept by default: lives in Lyon", "kept forever: prefers email"),
                values(notes.get()));
    }

    @Test
    void testTheSweepTakesAtMostLimitItemsPerCall() {
        MemorySet notes = set(TestLtm.unique("key"), "notes");
        notes.add(List.of("one", "two", "three"), null, Duration.ofSeconds(5));
        clockAhead(ltm, 10);
        assertEquals(2, ltm.sweepExpired(2));
        assertEquals(1, ltm.sweepExpired(2));
    }

    @Test
    void testEraseKeyErasesEverySetOfOneKeyAndNoOtherKeysOnAnyThread() throws Exception {
        String alice = TestLtm.unique("alice");
        String bob = TestLtm.unique("bob");
        set(alice, "notes").add(List.of("alice drinks tea", "alice owns a cat"));
        set(alice, "orders").add("alice ordered 4711");
        set(bob, "notes").add("bob drinks coffee");

        assertEquals(3, (int) worker.submit(() -> ltm.eraseKey(alice)).get());
        assertEquals(List.of(), set(alice, "notes").get());
        assertEquals(List.of(), set(alice, "orders").get());
        assertEquals(List.of("bob drinks coffee"), values(set(bob, "notes").get()));
        assertEquals(0, ltm.eraseKey(alice));
    }

    @Test
    void testARerankedSearchReturnsTheRerankersOrder() {
        Map<String, Object> config = TestLtm.config();
        config.put("long-term-memory.reranker", LEXICAL);
        PythonLongTermMemory reranking = PythonLongTermMemory.open(TestLtm.runtime(),
                TestLtm.unique("rerank"), config, MailboxThreadChecker.ofCurrentThread());
        try {
            reranking.switchContext(TestLtm.unique("key"), null, true);
            MemorySet notes = reranking.getMemorySet("notes");
            notes.add(List.of("parcel for order 4711 arrived late and damaged",
                    "the parcel of my order came late, box damaged",
                    "delivery of order 9922 is late",
                    "my late parcel finally arrived damaged"));
            String query = "late damaged parcel order 9922";
            // Nearest by embedding is another late parcel; BM25 puts the one naming 9922 first.
            assertNotEquals("delivery of order 9922 is late",
                    notes.search(query, 1).get(0).getValue());
            List<MemorySetItem> reranked =
                    notes.search(query, 1, null, Map.of("rerank", true));
            assertEquals(List.of("delivery of order 9922 is late"),
                    reranked.stream().map(MemorySetItem::getValue).collect(Collectors.toList()));
        } finally {
            reranking.close();
        }
    }

    @Test
    void testRerankWithoutAConfiguredRerankerIsRefusedWithPythonsMessage() {
        MemorySet notes = set(TestLtm.unique("key"), "notes");
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> notes.search("q", 3, null, Map.of("rerank", true)));
        assertTrue(refused.getMessage().startsWith(
                "search(..., rerank=True) needs a reranker, and none is configured"),
                refused.getMessage());
        IllegalArgumentException notABoolean = assertThrows(IllegalArgumentException.class,
                () -> notes.search("q", 3, null, Map.of("rerank", "yes")));
        assertEquals("search option rerank is True or False, got 'yes'", notABoolean.getMessage());
    }

    @Test
    void testARerankerNamedWithoutAModuleIsRefusedWhenTheMemoryOpens() {
        Map<String, Object> config = TestLtm.config();
        config.put("long-term-memory.reranker", "lexical");
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> PythonLongTermMemory.open(TestLtm.runtime(), TestLtm.unique("rerank"),
                        config, MailboxThreadChecker.ofCurrentThread()));
        assertTrue(refused.getMessage().contains("module-qualified Python class"),
                refused.getMessage());
    }

    @Test
    void testBadTtlsKeysAndLimitsAreRefusedWithPythonsMessages() {
        MemorySet notes = set(TestLtm.unique("key"), "notes");
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
                () -> notes.add("never stored", Duration.ofSeconds(-5)));
        assertEquals("add(ttl=...) must be a positive, finite number of seconds, got -5.0 "
                + "(None: the item never expires)", negative.getMessage());
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class,
                () -> notes.add("never stored", Duration.ZERO));
        assertTrue(zero.getMessage().startsWith("add(ttl=...) must be a positive"),
                zero.getMessage());
        assertEquals(List.of(), notes.get());
        String id = notes.add("stored").get(0);
        IllegalArgumentException update = assertThrows(IllegalArgumentException.class,
                () -> notes.update(id, "changed", null, Duration.ofMillis(-1500)));
        assertEquals("update(ttl=...) must be a positive, finite number of seconds, got -1.5 "
                + "(None: the item never expires)", update.getMessage());
        assertEquals(List.of("stored"), values(notes.get()));

        String module = "flink_agents_ltm.api.memory.long_term_memory";
        EmptyPartitionKeyException empty =
                assertThrows(EmptyPartitionKeyException.class, () -> ltm.eraseKey(" "));
        assertEquals(TestLtm.python(module, "empty_key_message", "erase_key", null),
                empty.getMessage());
        UnboundMemorySetException none =
                assertThrows(UnboundMemorySetException.class, () -> ltm.eraseKey(null));
        assertEquals(TestLtm.python(module, "unbound_message", "erase_key", null),
                none.getMessage());
        IllegalArgumentException limit =
                assertThrows(IllegalArgumentException.class, () -> ltm.sweepExpired(0));
        assertEquals("limit must be a positive int, got 0", limit.getMessage());
        assertEquals(List.of("stored"), values(notes.get()));
    }
}
