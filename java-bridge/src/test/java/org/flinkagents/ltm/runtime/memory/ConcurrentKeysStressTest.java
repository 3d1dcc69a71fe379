package org.flinkagents.ltm.runtime.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.flinkagents.ltm.api.memory.MemorySet;
import org.flinkagents.ltm.api.memory.MemorySetItem;
import org.junit.jupiter.api.Test;

/**
 * Worker threads run set operations for several keys while the mailbox thread keeps switching
 * context, the way an operator hands sets to a worker pool. Every result must belong to the key
 * the set was obtained for, and nothing may fail or crash, including after the first pool's
 * threads closed their interpreters and a second pool opened new ones.
 */
class ConcurrentKeysStressTest {
    private static final int KEYS = 6;
    private static final int ROUNDS = 8;
    private static final int WORKERS = 4;

    @Test
    void testWorkersOnSeveralKeysNeverSeeAnotherKeysItems() throws Exception {
        PythonLongTermMemory ltm = TestLtm.open();
        String name = TestLtm.unique("stress");
        List<String> keys = new ArrayList<>();
        for (int k = 0; k < KEYS; k++) {
            keys.add(TestLtm.unique("key" + k));
        }
        ConcurrentLinkedQueue<String> crossKey = new ConcurrentLinkedQueue<>();
        try {
            for (int pool = 0; pool < 2; pool++) { // the second pool starts fresh interpreters
                ExecutorService workers = Executors.newFixedThreadPool(
                        WORKERS, TestLtm.runtime().threadFactory("stress-" + pool));
                List<Future<?>> pending = new ArrayList<>();
                for (int round = 0; round < ROUNDS; round++) {
                    for (String key : keys) {
                        // Mailbox thread: switch, obtain the set, hand it to a worker.
                        ltm.switchContext(key, "obs-" + key + "-" + pool + "-" + round, false);
                        MemorySet set = ltm.getMemorySet(name);
                        String value = "item of " + key + " #" + pool + "-" + round;
                        pending.add(workers.submit(() -> {
                            set.add(value);
                            check(set, set.search("item of " + key, 5), crossKey);
                            check(set, set.get(), crossKey);
                            return null;
                        }));
                    }
                }
                for (Future<?> f : pending) {
                    f.get(120, TimeUnit.SECONDS); // rethrows any worker failure
                }
                workers.shutdown();
                assertTrue(workers.awaitTermination(30, TimeUnit.SECONDS));
            }

            assertEquals(List.of(), new ArrayList<>(crossKey), "results crossed keys");
            Map<String, Integer> counts = new TreeMap<>();
            for (String key : keys) {
                ltm.switchContext(key, null, true);
                List<MemorySetItem> items = ltm.getMemorySet(name).get();
                counts.put(key, items.size());
                assertTrue(items.stream().allMatch(i -> i.getValue().startsWith("item of " + key + " #")),
                        items.toString());
            }
            assertEquals(keys.stream().collect(Collectors.toMap(k -> k, k -> 2 * ROUNDS, (a, b) -> a, TreeMap::new)),
                    counts, "every add landed exactly once on its own key");
        } finally {
            ltm.close();
        }
    }

    private static void check(MemorySet set, List<MemorySetItem> items, ConcurrentLinkedQueue<String> crossKey) {
        String own = "item of " + set.getPartitionKey() + " #";
        for (MemorySetItem item : items) {
            if (!item.getValue().startsWith(own)) {
                crossKey.add(set.getPartitionKey() + " saw '" + item.getValue() + "'");
            }
        }
    }
}
