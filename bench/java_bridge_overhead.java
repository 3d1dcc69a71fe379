// Java half of bench/java_bridge_overhead.py (run it through that script).
// Args: <ops> <base dir>. Times MemorySet.add/search from Java through Pemja against the same
// call made in Python on the same memory, alternating, and prints medians and ratios.

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.flinkagents.ltm.api.memory.MemorySet;
import org.flinkagents.ltm.runtime.memory.MailboxThreadChecker;
import org.flinkagents.ltm.runtime.memory.PythonLongTermMemory;
import org.flinkagents.ltm.runtime.memory.PythonRuntime;
import org.flinkagents.ltm.api.PythonSettings;

public class JavaBridgeOverhead {
    static final String[] TOPICS = {"tea", "parcel", "invoice", "dog", "refund", "password", "delivery", "discount"};
    static final String BENCH = "bench.java_bridge_overhead";

    public static void main(String[] args) throws Exception {
        int ops = Integer.parseInt(args[0]);
        PythonRuntime python = PythonRuntime.get(PythonSettings.fromEnvironment());
        long opened = System.nanoTime();
        PythonLongTermMemory ltm = PythonLongTermMemory.open(python, "bench-job",
                Map.of("long-term-memory.embedded.base-dir", args[1]), MailboxThreadChecker.ofCurrentThread());
        System.out.printf("opened the embedded default in %.1f s%n", (System.nanoTime() - opened) / 1e9);
        ltm.switchContext("customer-1", "obs", true);
        MemorySet java = ltm.getMemorySet("notes-java");
        String handle = ltm.getHandle();

        // Warm-up: both paths, JIT and the Python side's caches.
        for (int i = 0; i < 20; i++) {
            java.add(text(i, "warm java"));
            python.call(BENCH, "python_add", handle, "customer-1", "notes-python", text(i, "warm python"));
            java.search(query(i), 5);
            python.call(BENCH, "python_search", handle, "customer-1", "notes-python", query(i), 5);
            ltm.ping();
        }

        List<Long> javaAdd = new ArrayList<>(), pyAdd = new ArrayList<>();
        List<Long> javaSearch = new ArrayList<>(), pySearch = new ArrayList<>();
        List<Long> ping = new ArrayList<>();
        for (int i = 0; i < ops; i++) {
            // ABBA: alternate which side goes first, so order effects cancel out.
            boolean javaFirst = i % 2 == 0;
            for (int side = 0; side < 2; side++) {
                if ((side == 0) == javaFirst) {
                    long t = System.nanoTime();
                    java.add(text(i, "java"));
                    javaAdd.add(System.nanoTime() - t);
                    t = System.nanoTime();
                    java.search(query(i), 5);
                    javaSearch.add(System.nanoTime() - t);
                } else {
                    pyAdd.add((Long) python.call(BENCH, "python_add", handle, "customer-1", "notes-python", text(i, "python")));
                    pySearch.add((Long) python.call(BENCH, "python_search", handle, "customer-1", "notes-python", query(i), 5));
                }
            }
            long t = System.nanoTime();
            ltm.ping();
            ping.add(System.nanoTime() - t);
        }
        System.out.printf("%d operations per side and kind, embedded default (MiniLM + the SQLite store)%n", ops);
        System.out.printf("%-8s %12s %12s %8s%n", "op", "java ms", "python ms", "ratio");
        report("add", javaAdd, pyAdd);
        report("search", javaSearch, pySearch);
        Collections.sort(ping);
        System.out.printf("bare Pemja round trip through the gateway (ping): median %.1f us, p10 %.1f us, p90 %.1f us%n",
                median(ping) / 1e3, ping.get(ping.size() / 10) / 1e3, ping.get(ping.size() * 9 / 10) / 1e3);
        ltm.close();
    }

    static void report(String op, List<Long> java, List<Long> python) {
        double j = median(java) / 1e6, p = median(python) / 1e6;
        List<Long> paired = new ArrayList<>();
        for (int i = 0; i < java.size(); i++) {
            paired.add(java.get(i) - python.get(i));
        }
        System.out.printf("%-8s %12.3f %12.3f %8.3f   (bridge adds %+.1f %%; median paired difference %+.3f ms)%n",
                op, j, p, j / p, (j / p - 1) * 100, median(paired) / 1e6);
    }

    static double median(List<Long> values) {
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2.0;
    }

    static String text(int i, String side) {
        return "customer note " + i + " (" + side + ") about the " + TOPICS[i % TOPICS.length]
                + " they mentioned on call " + (i * 7 % 13);
    }

    static String query(int i) {
        return "what did the customer say about the " + TOPICS[i % TOPICS.length];
    }
}
