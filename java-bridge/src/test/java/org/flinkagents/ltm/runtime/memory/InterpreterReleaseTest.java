package org.flinkagents.ltm.runtime.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.flinkagents.ltm.api.memory.MemorySet;
import org.flinkagents.ltm.api.memory.MemorySetItem;
import org.junit.jupiter.api.Test;

/**
 * Every Pemja interpreter the long-term memory made is released, whichever thread made it: the
 * interpreters of threads that ended are finalized (CPython's thread states go away, not only
 * Java's references), and a closed memory's gateway is dropped by every interpreter, so nothing
 * keeps it alive. Measured inside the real embedded Python ({@code bridge_probe}).
 */
class InterpreterReleaseTest {
    private static final int THREADS = 4;

    private static long threadStates() {
        return (Long) TestLtm.python("bridge_probe", "thread_states");
    }

    private static boolean gatewayAlive(PythonLongTermMemory ltm) {
        return (Boolean) TestLtm.python("bridge_probe", "alive", ltm.getHandle());
    }

    @Test
    void testThreadsThatCalledOnceAndEndedLeaveNoInterpreterOpenAfterClose() throws Exception {
        PythonRuntime runtime = TestLtm.runtime();
        PythonLongTermMemory ltm = TestLtm.open();
        String name = TestLtm.unique("release");
        String key = TestLtm.unique("key");
        ltm.switchContext(key, "obs", true);
        MemorySet set = ltm.getMemorySet(name);
        set.get(); // the test thread's interpreter binds the gateway too
        TestLtm.python("bridge_probe", "track", ltm.getHandle());
        runtime.closeInterpretersOfEndedThreads(); // earlier tests' threads: a clean start
        long before = threadStates();

        // Plain threads (not made by the runtime's factory): each calls once and ends.
        List<Thread> threads = new ArrayList<>();
        List<String> names = new ArrayList<>();
        // Each thread stays alive until all have called: an interpreter made by a later
        // thread would otherwise already release the one of a thread that ended.
        CountDownLatch called = new CountDownLatch(THREADS);
        CountDownLatch end = new CountDownLatch(1);
        for (int t = 0; t < THREADS; t++) {
            String value = "note from thread " + t;
            Thread thread = new Thread(() -> {
                set.add(value);
                called.countDown();
                try {
                    end.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, TestLtm.unique("caller-" + t));
            threads.add(thread);
            names.add(thread.getName());
        }
        for (Thread thread : threads) {
            thread.start();
        }
        assertTrue(called.await(120, TimeUnit.SECONDS), "every thread called once");
        assertEquals(THREADS, set.get().size(), "every thread's add landed");
        assertEquals(before + THREADS, threadStates(), "one interpreter per calling thread");
        assertTrue(runtime.interpreterThreads().containsAll(names),
                runtime.interpreterThreads().toString());
        end.countDown();
        for (Thread thread : threads) {
            thread.join();
        }

        ltm.close();

        assertEquals(before, threadStates(), "the ended threads' interpreters were finalized");
        assertTrue(runtime.interpreterThreads().stream().noneMatch(names::contains),
                runtime.interpreterThreads().toString());
        assertFalse(gatewayAlive(ltm), "an interpreter still holds the closed memory's gateway");

        // Python goes on working, on new threads too.
        PythonLongTermMemory next = TestLtm.open();
        try {
            next.switchContext(key, "obs-after-release", true); // a new action: new item ids
            MemorySet again = next.getMemorySet(name);
            Thread reader = new Thread(() -> again.add("after the release"));
            reader.start();
            reader.join();
            assertEquals(THREADS + 1, again.get().size());
        } finally {
            next.close();
        }
        assertEquals(before, threadStates());
    }

    @Test
    void testALiveThreadDropsAClosedMemorysGatewayAtItsNextCall() throws Exception {
        PythonRuntime runtime = TestLtm.runtime();
        PythonLongTermMemory ltm = TestLtm.open();
        String name = TestLtm.unique("release");
        ltm.switchContext(TestLtm.unique("key"), "obs", true);
        MemorySet set = ltm.getMemorySet(name);
        ExecutorService live = Executors.newSingleThreadExecutor(); // not the runtime's factory
        Thread liveThread;
        try {
            liveThread = live.submit(() -> {
                set.add("kept by a live thread");
                return Thread.currentThread();
            }).get();
            TestLtm.python("bridge_probe", "track", ltm.getHandle());

            ltm.close(); // the live thread is idle in its pool: its interpreter is left alone

            assertTrue(gatewayAlive(ltm), "released before its thread called again");
            live.submit(() -> TestLtm.python("bridge_probe", "thread_states")).get();
            assertFalse(gatewayAlive(ltm), "the live thread kept the closed memory's gateway");
        } finally {
            live.shutdown();
            assertTrue(live.awaitTermination(30, TimeUnit.SECONDS));
        }
        liveThread.join();
        assertTrue(runtime.interpreterThreads().contains(liveThread.getName()));
        long before = threadStates();

        int closed = runtime.closeInterpretersOfEndedThreads();

        assertTrue(closed >= 1, "the ended pool thread's interpreter was not closed");
        assertFalse(runtime.interpreterThreads().contains(liveThread.getName()));
        assertEquals(before - closed, threadStates());
    }

    @Test
    void testTheRuntimesOwnThreadsCloseTheirInterpretersWhenTheyEnd() throws Exception {
        PythonRuntime runtime = TestLtm.runtime();
        PythonLongTermMemory ltm = TestLtm.open();
        try {
            ltm.switchContext(TestLtm.unique("key"), "obs", true);
            MemorySet set = ltm.getMemorySet(TestLtm.unique("release"));
            runtime.closeInterpretersOfEndedThreads();
            long before = threadStates();
            String prefix = TestLtm.unique("own");
            ExecutorService pool =
                    Executors.newFixedThreadPool(THREADS, runtime.threadFactory(prefix));
            List<String> values = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                values.add("pool note " + t);
            }
            for (String value : values) {
                pool.submit(() -> set.add(value));
            }
            pool.shutdown();
            assertTrue(pool.awaitTermination(60, TimeUnit.SECONDS));
            assertEquals(values.stream().sorted().collect(Collectors.toList()),
                    set.get().stream().map(MemorySetItem::getValue).sorted()
                            .collect(Collectors.toList()));
            // The pool has terminated, but a worker closes its interpreter after its last task.
            for (Thread thread : Thread.getAllStackTraces().keySet()) {
                if (thread.getName().startsWith(prefix + "-")) {
                    thread.join();
                }
            }

            assertEquals(0, runtime.closeInterpretersOfEndedThreads(),
                    "a factory thread left its interpreter open");
            assertEquals(before, threadStates());
        } finally {
            ltm.close();
        }
    }
}
