package org.flinkagents.ltm.job;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.flinkagents.ltm.runtime.memory.PythonSettings;

/**
 * The Java agent job: notes keyed by customer go through {@link MemoryAgentFunction}, which
 * remembers each note in the customer's long-term memory (the Python Mem0 memory, through
 * Pemja) and recalls the customer's most similar notes. Results are printed by the client.
 *
 * <pre>
 * flink run -c org.flinkagents.ltm.job.MemoryAgentJob flink-agents-ltm-java-bridge.jar \
 *     --python /path/to/.venv/bin/python \
 *     --pythonpath /path/to/.venv/lib/python3.11/site-packages:/path/to/repo \
 *     [--input notes.csv] [--base-dir /path/to/ltm-home] [--memory-job-id java-memory-agent] \
 *     [--parallelism 2] [--workers 4]
 * </pre>
 *
 * {@code --input} is a file of {@code key,note} lines; without it a small sample is used.
 */
public final class MemoryAgentJob {
    public static final String DEFAULT_MEMORY_JOB_ID = "java-memory-agent";

    private MemoryAgentJob() {}

    /** The agent pipeline on {@code notes}, keyed by the first field. */
    public static DataStream<String> agent(
            DataStream<Tuple2<String, String>> notes,
            PythonSettings python,
            String memoryJobId,
            Map<String, Object> memoryConfig,
            int workers) {
        return notes.keyBy(new NoteKey())
                .process(new MemoryAgentFunction(python, memoryJobId, memoryConfig, "notes", workers))
                .name("java-memory-agent");
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = parse(args);
        PythonSettings defaults = PythonSettings.fromEnvironment();
        PythonSettings python = new PythonSettings(
                options.getOrDefault("python", defaults.getPythonExec()),
                options.containsKey("pythonpath")
                        ? PythonSettings.splitPath(options.get("pythonpath"))
                        : defaults.getPythonPaths());
        Map<String, Object> memoryConfig = new HashMap<>();
        if (options.containsKey("base-dir")) {
            memoryConfig.put("long-term-memory.embedded.base-dir", options.get("base-dir"));
        }
        Configuration config = new Configuration();
        config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 1);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        if (options.containsKey("parallelism")) {
            env.setParallelism(Integer.parseInt(options.get("parallelism")));
        }
        List<Tuple2<String, String>> notes =
                options.containsKey("input") ? read(options.get("input")) : sample();
        DataStream<String> results = agent(
                env.fromData(notes),
                python,
                options.getOrDefault("memory-job-id", DEFAULT_MEMORY_JOB_ID),
                memoryConfig,
                Integer.parseInt(options.getOrDefault("workers", "4")));
        try (CloseableIterator<String> lines = results.executeAndCollect("java-memory-agent")) {
            lines.forEachRemaining(System.out::println);
        }
    }

    public static List<Tuple2<String, String>> sample() {
        List<Tuple2<String, String>> notes = new ArrayList<>();
        notes.add(Tuple2.of("alice", "alice prefers green tea"));
        notes.add(Tuple2.of("bob", "bob's parcel was delivered late"));
        notes.add(Tuple2.of("alice", "alice asked for a refund on the kettle"));
        notes.add(Tuple2.of("bob", "bob wants invoices by email"));
        notes.add(Tuple2.of("alice", "alice's dog is called Biscuit"));
        notes.add(Tuple2.of("bob", "bob changed his delivery address"));
        return notes;
    }

    private static List<Tuple2<String, String>> read(String path) throws IOException {
        List<Tuple2<String, String>> notes = new ArrayList<>();
        for (String line : Files.readAllLines(Paths.get(path), StandardCharsets.UTF_8)) {
            int comma = line.indexOf(',');
            if (!line.isBlank() && comma >= 0) {
                notes.add(Tuple2.of(line.substring(0, comma), line.substring(comma + 1)));
            }
        }
        return notes;
    }

    private static Map<String, String> parse(String[] args) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --name value pairs, got " + args[i]);
            }
            options.put(args[i].substring(2), args[++i]);
        }
        return options;
    }

    /** The customer key of a note. */
    public static final class NoteKey implements KeySelector<Tuple2<String, String>, String> {
        private static final long serialVersionUID = 1L;

        @Override
        public String getKey(Tuple2<String, String> note) {
            return note.f0;
        }
    }
}
