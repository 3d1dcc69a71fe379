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
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.core.JsonProcessingException;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.DeserializationFeature;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
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
 *     [--vector-store '{"provider":"pgvector","config":{...}}'] [--parallelism 2] [--workers 4]
 * </pre>
 *
 * See {@link #USAGE} ({@code --help}). The arguments are checked on the client, before the
 * job is submitted.
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
        Arguments arguments = Arguments.parse(args);
        if (arguments.help()) {
            System.out.print(USAGE);
            return;
        }
        Configuration config = new Configuration();
        config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 1);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        if (arguments.has("parallelism")) {
            env.setParallelism(Integer.parseInt(arguments.get("parallelism")));
        }
        List<Tuple2<String, String>> notes =
                arguments.has("input") ? read(arguments.get("input")) : sample();
        DataStream<String> results = agent(
                env.fromData(notes),
                arguments.python(),
                arguments.getOrDefault("memory-job-id", DEFAULT_MEMORY_JOB_ID),
                arguments.memoryConfig(),
                Integer.parseInt(arguments.getOrDefault("workers", "4")));
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

    /** What {@code --help} prints. */
    public static final String USAGE = String.join("\n",
            "MemoryAgentJob: remembers each key,note line in the key's long-term memory and",
            "prints the key's most similar notes. Arguments (all optional):",
            "  --python PATH          the Python interpreter (a shared-libpython build)",
            "  --pythonpath P1:P2     its site-packages and this repository",
            "  --input FILE           key,note lines (default: a small sample)",
            "  --memory-job-id ID     the memory's job id, Mem0 user_id (default: "
                    + DEFAULT_MEMORY_JOB_ID + ")",
            "  --vector-store JSON    a Mem0 vector store, e.g.",
            "                         '{\"provider\":\"pgvector\",\"config\":{\"host\":...}}'",
            "                         (default: the embedded store, one process only)",
            "  --base-dir DIR         folder of the embedded store and Mem0's history database",
            "                         (default: $FLINK_AGENTS_LTM_HOME, else ~/.flink-agents-ltm)",
            "  --parallelism N        the job's parallelism",
            "  --workers N            memory worker threads per subtask (default: 4)",
            "  --help                 print this and exit",
            "");

    /** The job's arguments: {@code --name value} pairs, checked before anything runs. */
    public static final class Arguments {
        static final List<String> NAMES = List.of("python", "pythonpath", "input",
                "memory-job-id", "vector-store", "base-dir", "parallelism", "workers");

        private final Map<String, String> options;
        private final boolean help;

        private Arguments(Map<String, String> options, boolean help) {
            this.options = options;
            this.help = help;
        }

        /**
         * Parses {@code args}; refuses unknown names, missing values and a {@code
         * --vector-store} that is not a JSON object with a {@code "provider"} name.
         */
        public static Arguments parse(String... args) {
            Map<String, String> options = new HashMap<>();
            boolean help = false;
            for (int i = 0; i < args.length; i++) {
                if (args[i].equals("--help")) {
                    help = true;
                    continue;
                }
                String name = args[i].startsWith("--") ? args[i].substring(2) : null;
                if (name == null || !NAMES.contains(name)) {
                    throw new IllegalArgumentException("unknown argument " + args[i]
                            + "; expected --name value with a name among " + NAMES + " (see --help)");
                }
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("--" + name + " needs a value (see --help)");
                }
                options.put(name, args[++i]);
            }
            if (options.containsKey("vector-store")) {
                checkVectorStore(options.get("vector-store"));
            }
            return new Arguments(options, help);
        }

        public boolean help() {
            return help;
        }

        public boolean has(String name) {
            return options.containsKey(name);
        }

        public String get(String name) {
            return options.get(name);
        }

        public String getOrDefault(String name, String otherwise) {
            return options.getOrDefault(name, otherwise);
        }

        /** The Python to run, from {@code --python}/{@code --pythonpath} or the environment. */
        public PythonSettings python() {
            PythonSettings defaults = PythonSettings.fromEnvironment();
            return new PythonSettings(
                    options.getOrDefault("python", defaults.getPythonExec()),
                    has("pythonpath")
                            ? PythonSettings.splitPath(options.get("pythonpath"))
                            : defaults.getPythonPaths());
        }

        /**
         * The option keys of the Python long-term memory. The vector store stays JSON text:
         * Python's {@code java_gateway.open_long_term_memory} parses it into Mem0's dict.
         */
        public Map<String, Object> memoryConfig() {
            Map<String, Object> config = new HashMap<>();
            if (has("base-dir")) {
                config.put("long-term-memory.embedded.base-dir", options.get("base-dir"));
            }
            if (has("vector-store")) {
                config.put("long-term-memory.vector-store", options.get("vector-store"));
            }
            return config;
        }

        /**
         * A JSON object naming a provider. The job declares no vector stores, so a plain
         * name (which the Python option also takes) is refused here.
         */
        private static void checkVectorStore(String json) {
            if (!json.strip().startsWith("{")) {
                throw notAStore(json);
            }
            JsonNode store;
            try {
                store = new ObjectMapper()
                        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS) // as Python's json
                        .readTree(json);
            } catch (JsonProcessingException e) {
                // Jackson's own message, without its "(start marker at [Source: ...])" clutter.
                String reason = e.getOriginalMessage().split("\n")[0].split(" \\(start marker")[0];
                throw new IllegalArgumentException("--vector-store is not valid JSON (" + reason
                        + " at line " + e.getLocation().getLineNr() + ", column "
                        + e.getLocation().getColumnNr() + "): " + json);
            }
            if (!store.path("provider").isTextual()) {
                throw notAStore(json);
            }
        }

        private static IllegalArgumentException notAStore(String json) {
            return new IllegalArgumentException("--vector-store must be a Mem0 vector store, "
                    + "a JSON object {\"provider\": <name>, \"config\": {...}}; got: " + json);
        }
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
