package org.flinkagents.ltm.job;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.flinkagents.ltm.api.Action;
import org.flinkagents.ltm.api.Agent;
import org.flinkagents.ltm.api.AgentsExecutionEnvironment;
import org.flinkagents.ltm.api.DurableCallable;
import org.flinkagents.ltm.api.InputEvent;
import org.flinkagents.ltm.api.OutputEvent;
import org.flinkagents.ltm.api.Reconciler;
import org.flinkagents.ltm.api.RunnerContext;
import org.flinkagents.ltm.api.memory.MemorySet;
import org.flinkagents.ltm.api.memory.MemorySetItem;

/**
 * The Java twin of e2e/jobs/counting_job.py, for the failover e2e and the throughput bench: a
 * bounded stream of {@code --events} numbers (a checkpointed NumberSequenceSource slowed to about
 * {@code --rate} events per second) keyed {@code k<n % keys>}; the agent counts each key's
 * inputs in short-term memory and, in one durable call, reads the key's long-term memory set
 * (any item not of its key is a cross-key read, reported) and adds {@code "<key> event <n>"}.
 * With {@code --sleep-ms} the durable call also sleeps that long (the bench's slow call); with
 * {@code --calls-log FILE} each call appends a line as it starts (the e2e counts the calls run
 * again after a TaskManager kill). With {@code --charges-log FILE} each input is first charged
 * once, in a durable call of its own with a {@link Reconciler} (one {@code "<key> <n> <pid> <epoch
 * ms>"} line per charge: the side effect the e2e counts); {@code --action-state-store NAME} sets
 * {@code agents.action-state.store} in the job's Flink configuration, as a user's {@code -D}
 * would. Checkpoints every {@code --checkpoint-ms} (1000); a failure
 * restarts the job up to 15 times, 2 s apart.
 * Prints one {@code RESULT {"n","key","count","id","start","end","foreign"}} line per output as the results
 * arrive (exactly once per input: checkpoints every second), then {@code DONE}. Takes
 * MemoryAgentJob's --python, --pythonpath, --vector-store-file, --base-dir, --memory-job-id,
 * --parallelism and --workers.
 */
public final class CountingAgentJob {
    public static final String MEMORY_SET = "events";

    private CountingAgentJob() {}

    public static void main(String[] args) throws Exception {
        List<String> rest = new ArrayList<>();
        int events = 1024;
        int keys = 64;
        double rate = 0;
        long sleepMs = 0;
        long checkpointMs = 1000;
        boolean readMemory = true;
        String callsLog = null;
        String chargesLog = null;
        String actionStateStore = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--events": events = Integer.parseInt(args[++i]); break;
                case "--keys": keys = Integer.parseInt(args[++i]); break;
                case "--rate": rate = Double.parseDouble(args[++i]); break;
                case "--sleep-ms": sleepMs = Long.parseLong(args[++i]); break;
                case "--checkpoint-ms": checkpointMs = Long.parseLong(args[++i]); break;
                case "--no-memory": readMemory = false; break;
                case "--calls-log": callsLog = args[++i]; break;
                case "--charges-log": chargesLog = args[++i]; break;
                case "--action-state-store": actionStateStore = args[++i]; break;
                default: rest.add(args[i]);
            }
        }
        MemoryAgentJob.Arguments arguments =
                MemoryAgentJob.Arguments.parse(rest.toArray(new String[0]));
        Configuration config = new Configuration();
        config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        // A TaskManager killed mid-run: the job restarts on the survivor (its slots free again
        // a moment later), from the last checkpoint.
        config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 15);
        config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofSeconds(2));
        if (actionStateStore != null) {
            config.setString("agents.action-state.store", actionStateStore);
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        if (checkpointMs > 0) {
            env.enableCheckpointing(checkpointMs);
        }
        int parallelism = Integer.parseInt(arguments.getOrDefault("parallelism", "2"));
        env.setParallelism(parallelism);
        final int keyCount = keys;
        final long pause = rate > 0 ? Math.round(1000.0 * parallelism / rate) : 0;
        DataStream<Tuple2<String, Long>> inputs = env.fromSequence(0, events - 1)
                .map(new Throttle(pause, keyCount))
                .returns(Types.TUPLE(Types.STRING, Types.LONG));
        long started = System.nanoTime();
        int results = 0;
        try (CloseableIterator<String> lines = AgentsExecutionEnvironment
                .getExecutionEnvironment(env)
                .withLongTermMemory(arguments.python(),
                        arguments.getOrDefault("memory-job-id", "counting-agent"),
                        arguments.memoryConfig())
                .withWorkers(Integer.parseInt(arguments.getOrDefault("workers", "4")))
                .fromDataStream(inputs, new ByKey())
                .apply(new CountingAgent(sleepMs, readMemory, callsLog, chargesLog))
                .toDataStream(Types.STRING)
                .executeAndCollect("java-counting-agent")) {
            while (lines.hasNext()) {
                System.out.println("RESULT " + lines.next());
                System.out.flush();
                results++;
            }
        }
        System.out.printf("ELAPSED %.3f%n", (System.nanoTime() - started) / 1e9);
        System.out.println(results == events ? "DONE" : "INCOMPLETE " + results);
    }

    /** Input n as {@code (k<n % keys>, n)}, after a pause of {@code pauseMs}. */
    static final class Throttle implements MapFunction<Long, Tuple2<String, Long>> {
        private static final long serialVersionUID = 1L;
        private final long pauseMs;
        private final int keys;

        Throttle(long pauseMs, int keys) {
            this.pauseMs = pauseMs;
            this.keys = keys;
        }

        @Override
        public Tuple2<String, Long> map(Long n) throws Exception {
            if (pauseMs > 0) {
                Thread.sleep(pauseMs);
            }
            return Tuple2.of("k" + (n % keys), n);
        }
    }

    static final class ByKey implements KeySelector<Tuple2<String, Long>, String> {
        private static final long serialVersionUID = 1L;

        @Override
        public String getKey(Tuple2<String, Long> input) {
            return input.f0;
        }
    }

    /** Counts, reads the key's memory, remembers the input, replies. */
    public static class CountingAgent extends Agent {
        private static final long serialVersionUID = 1L;
        private final long sleepMs;
        private final boolean useMemory;
        private final String callsLog;
        private final String chargesLog;

        public CountingAgent(long sleepMs, boolean useMemory, String callsLog,
                String chargesLog) {
            this.sleepMs = sleepMs;
            this.useMemory = useMemory;
            this.callsLog = callsLog;
            this.chargesLog = chargesLog;
        }

        public CountingAgent(long sleepMs, boolean useMemory, String callsLog) {
            this(sleepMs, useMemory, callsLog, null);
        }

        public CountingAgent() {
            this(0, true, null);
        }

        @Action(listenEvents = {InputEvent.class})
        public void count(InputEvent event, RunnerContext ctx) throws Exception {
            @SuppressWarnings("unchecked")
            Tuple2<String, Long> input = (Tuple2<String, Long>) event.getInput();
            String key = input.f0;
            long n = input.f1;
            Integer before = (Integer) ctx.getShortTermMemory().get("count");
            int count = before == null ? 1 : before + 1;
            ctx.getShortTermMemory().set("count", count);
            String charges = chargesLog;
            if (charges != null) { // the side effect that must happen once per input
                ctx.durableExecuteAsync(DurableCallable.of("charge", () -> {
                    logStart(charges, key, n);
                    return n;
                }, () -> charged(charges, key, n) ? n : Reconciler.callAgain()));
            }
            MemorySet set = useMemory ? ctx.getLongTermMemory().getMemorySet(MEMORY_SET) : null;
            long sleep = sleepMs;
            String log = callsLog;
            ArrayList<String> result = ctx.durableExecuteAsync(DurableCallable.of(
                    "remember", () -> {
                        logStart(log, key, n);
                        return remember(set, key, n, sleep);
                    }));
            Map<String, Object> fields = new LinkedHashMap<>();
            fields.put("n", n);
            fields.put("key", key);
            fields.put("count", count);
            fields.put("id", result.get(0));
            fields.put("start", Long.parseLong(result.get(1)));
            fields.put("end", Long.parseLong(result.get(2)));
            fields.put("foreign", result.subList(3, result.size()));
            ctx.sendEvent(new OutputEvent(new ObjectMapper().writeValueAsString(fields)));
        }

        /**
         * Appends {@code "<key> <n> <pid> <epoch ms>"} to {@code log} (when given) as a call
         * starts: a call run again after a failure shows as a second line of its input. One
         * short append per line, so the lines of both TaskManagers' calls do not interleave.
         */
        static void logStart(String log, String key, long n) throws IOException {
            if (log == null) {
                return;
            }
            String line = key + " " + n + " " + ProcessHandle.current().pid() + " "
                    + System.currentTimeMillis() + "\n";
            Files.write(Paths.get(log), line.getBytes(StandardCharsets.UTF_8),
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND, StandardOpenOption.WRITE);
        }

        /** The charge's reconciler: did the charge of (key, n) happen before a failure? */
        static boolean charged(String log, String key, long n) throws IOException {
            java.nio.file.Path path = Paths.get(log);
            if (!Files.exists(path)) {
                return false;
            }
            String prefix = key + " " + n + " ";
            try (java.util.stream.Stream<String> lines = Files.lines(path)) {
                return lines.anyMatch(line -> line.startsWith(prefix));
            }
        }

        /**
         * [the new item's id, the call's start and end (epoch ms), the texts read that are not
         * of this key...].
         */
        static ArrayList<String> remember(MemorySet set, String key, long n, long sleepMs)
                throws InterruptedException {
            ArrayList<String> out = new ArrayList<>();
            out.add("");
            out.add(Long.toString(System.currentTimeMillis()));
            out.add("");
            if (sleepMs > 0) {
                Thread.sleep(sleepMs);
            }
            if (set == null) {
                out.set(2, Long.toString(System.currentTimeMillis()));
                return out;
            }
            for (MemorySetItem item : set.get()) {
                if (!item.getValue().startsWith(key + " ")) {
                    out.add(item.getValue());
                }
            }
            List<String> ids = set.add(key + " event " + n);
            out.set(0, ids.isEmpty() ? "" : ids.get(0));
            out.set(2, Long.toString(System.currentTimeMillis()));
            return out;
        }
    }
}
