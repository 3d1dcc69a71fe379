package org.flinkagents.ltm.job;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.core.JsonProcessingException;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.DeserializationFeature;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.exc.MismatchedInputException;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.flinkagents.ltm.api.AgentsExecutionEnvironment;
import org.flinkagents.ltm.api.PythonSettings;
import org.flinkagents.ltm.runtime.memory.ConfigSecrets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The customer-memory example on the Java agent API, the twin of the Python demo ({@code make
 * demo}): customers' messages, keyed by customer, go through {@link CustomerMemoryAgent}, which
 * recalls each customer's related memories and remembers the new message in that customer's
 * long-term memory (the Python Mem0 memory, through Pemja). The client prints one JSON reply per
 * message, then a summary that counts the recalled memories that belong to another customer
 * (there must be none: the exit code is 1 otherwise).
 *
 * <pre>
 * flink run -c org.flinkagents.ltm.job.MemoryAgentJob flink-agents-ltm-java-bridge.jar \
 *     --python /path/to/.venv/bin/python \
 *     --pythonpath /path/to/.venv/lib/python3.11/site-packages:/path/to/repo \
 *     [--input messages.jsonl] [--base-dir /path/to/ltm-home] [--memory-job-id ID] \
 *     [--vector-store-file store.json] [--parallelism 2] [--workers 4]
 * </pre>
 *
 * See {@link #USAGE} ({@code --help}). The arguments are checked on the client, before the
 * job is submitted.
 */
public final class MemoryAgentJob {
    public static final String DEFAULT_MEMORY_JOB_ID = "customer-memory-demo";
    /** The Python demo's messages, found on the Python path (the repository's package). */
    public static final String BUNDLED_MESSAGES =
            "flink_agents_ltm/examples/customer_messages.jsonl";
    private static final Logger LOG = LoggerFactory.getLogger(MemoryAgentJob.class);
    /** The environment variable that may hold the vector store JSON. */
    public static final String VECTOR_STORE_VARIABLE = "FLINK_AGENTS_LTM_VECTOR_STORE";
    private static final Set<PosixFilePermission> NOT_PRIVATE = EnumSet.of(
            PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE,
            PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE);

    private MemoryAgentJob() {}

    /** The agent pipeline on {@code messages} ({@code (customer, text)}), keyed by customer. */
    public static DataStream<String> agent(
            DataStream<Tuple2<String, String>> messages,
            PythonSettings python,
            String memoryJobId,
            Map<String, Object> memoryConfig,
            int workers) {
        return AgentsExecutionEnvironment.getExecutionEnvironment(messages.getExecutionEnvironment())
                .withLongTermMemory(python, memoryJobId, memoryConfig)
                .withWorkers(workers)
                .fromDataStream(messages, new NoteKey())
                .apply(new CustomerMemoryAgent())
                .toDataStream(Types.STRING);
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
        PythonSettings python = arguments.python();
        Path input = arguments.has("input")
                ? Paths.get(arguments.get("input")) : bundledMessages(python);
        List<Tuple2<String, String>> messages = read(input);
        LOG.info("{} messages from {}; long-term memory {}{}", messages.size(), input,
                ConfigSecrets.redact(arguments.memoryConfig()),
                arguments.vectorStoreSource() == null
                        ? " (embedded store)"
                        : " (vector store from " + arguments.vectorStoreSource() + ")");
        System.out.println("customer-memory demo (Java agent API): " + messages.size()
                + " messages, local mini-cluster or the cluster of `flink run`");
        long started = System.nanoTime();
        List<String> replies = new ArrayList<>();
        try (CloseableIterator<String> lines = agent(
                        env.fromData(messages), python,
                        arguments.getOrDefault("memory-job-id", DEFAULT_MEMORY_JOB_ID),
                        arguments.memoryConfig(),
                        Integer.parseInt(arguments.getOrDefault("workers", "4")))
                .executeAndCollect("customer-memory-demo")) {
            lines.forEachRemaining(line -> {
                System.out.println(line);
                replies.add(line);
            });
        }
        Summary summary = Summary.of(messages, replies);
        System.out.printf("done in %.1f s: %s%n", (System.nanoTime() - started) / 1e9, summary);
        if (summary.foreign > 0 || summary.replies != messages.size()) {
            System.exit(1);
        }
    }

    /** The bundled messages: the first entry of the Python path that holds them. */
    static Path bundledMessages(PythonSettings python) {
        for (String entry : python.getPythonPaths()) {
            Path candidate = Paths.get(entry).resolve(BUNDLED_MESSAGES);
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
        }
        throw new IllegalArgumentException("no --input and no " + BUNDLED_MESSAGES + " on the "
                + "Python path " + python.getPythonPaths() + ": pass --input messages.jsonl, or "
                + "put the repository on --pythonpath");
    }

    /**
     * Messages of a file: JSON lines {@code {"customer": ..., "text": ...}} (the Python demo's
     * format) or {@code customer,text} lines; blank lines are skipped.
     */
    static List<Tuple2<String, String>> read(Path path) throws IOException {
        List<Tuple2<String, String>> messages = new ArrayList<>();
        ObjectMapper json = new ObjectMapper();
        int number = 0;
        for (String line : Files.readAllLines(path, StandardCharsets.UTF_8)) {
            number++;
            if (line.isBlank()) {
                continue;
            }
            if (line.strip().startsWith("{")) {
                JsonNode message;
                try {
                    message = json.readTree(line);
                } catch (JsonProcessingException e) {
                    throw new IllegalArgumentException(path + " line " + number
                            + " is not valid JSON: " + e.getOriginalMessage());
                }
                if (!message.path("customer").isTextual() || !message.path("text").isTextual()) {
                    throw new IllegalArgumentException(path + " line " + number + " needs "
                            + "\"customer\" and \"text\" strings");
                }
                messages.add(Tuple2.of(message.get("customer").asText(),
                        message.get("text").asText()));
                continue;
            }
            int comma = line.indexOf(',');
            if (comma <= 0) {
                throw new IllegalArgumentException(path + " line " + number + " is neither a JSON "
                        + "message nor customer,text");
            }
            messages.add(Tuple2.of(line.substring(0, comma), line.substring(comma + 1)));
        }
        return messages;
    }

    /** What a run gave: replies, recalls, and recalls of another customer's message. */
    public static final class Summary {
        public final int replies;
        public final int customers;
        public final int recalled;
        public final int foreign;
        /** Replies whose seq is not the customer's next one (1, 2, ... in input order). */
        public final int outOfOrder;

        private Summary(int replies, int customers, int recalled, int foreign, int outOfOrder) {
            this.replies = replies;
            this.customers = customers;
            this.recalled = recalled;
            this.foreign = foreign;
            this.outOfOrder = outOfOrder;
        }

        /** Checks {@code replies} (the job's JSON lines) against the {@code messages} sent. */
        public static Summary of(List<Tuple2<String, String>> messages, List<String> replies)
                throws IOException {
            Map<String, Set<String>> said = new HashMap<>();
            for (Tuple2<String, String> m : messages) {
                said.computeIfAbsent(m.f0, k -> new HashSet<>()).add(m.f1);
            }
            ObjectMapper json = new ObjectMapper();
            Map<String, Integer> lastSeq = new HashMap<>();
            int recalled = 0;
            int foreign = 0;
            int outOfOrder = 0;
            for (String line : replies) {
                JsonNode reply = json.readTree(line);
                String customer = reply.get("customer").asText();
                int seq = reply.get("seq").asInt();
                if (seq != lastSeq.getOrDefault(customer, 0) + 1) {
                    outOfOrder++;
                }
                lastSeq.put(customer, seq);
                for (JsonNode memory : reply.get("recalled")) {
                    recalled++;
                    if (!said.getOrDefault(customer, Set.of()).contains(memory.asText())) {
                        foreign++;
                    }
                }
            }
            return new Summary(replies.size(), lastSeq.size(), recalled, foreign, outOfOrder);
        }

        @Override
        public String toString() {
            return replies + " messages remembered for " + customers + " customers; " + recalled
                    + " memories recalled, " + foreign + " of them from another customer";
        }
    }

    /** What {@code --help} prints. */
    public static final String USAGE = String.join("\n",
            "MemoryAgentJob: the customer-memory agent on the Java agent API. For each message",
            "it recalls the customer's related memories, then remembers the message in the",
            "customer's long-term memory; prints one JSON reply per message and a summary.",
            "Arguments (all optional):",
            "  --python PATH          the Python interpreter (a shared-libpython build)",
            "  --pythonpath P1:P2     its site-packages and this repository",
            "  --input FILE           messages: JSON lines {\"customer\": ..., \"text\": ...} or",
            "                         customer,text lines (default: the Python demo's",
            "                         " + BUNDLED_MESSAGES + ", found on --pythonpath)",
            "  --memory-job-id ID     the memory's job id, Mem0 user_id (default: "
                    + DEFAULT_MEMORY_JOB_ID + ")",
            "  --vector-store-file F  a file holding a Mem0 vector store as JSON, e.g.",
            "                         {\"provider\":\"pgvector\",\"config\":{\"host\":...}};",
            "                         readable by its owner only (chmod 600), since it holds",
            "                         the password. Without it: $" + VECTOR_STORE_VARIABLE + ",",
            "                         else the embedded store (one process only)",
            "  --vector-store JSON    the same JSON inline, for stores without secrets (the",
            "                         command line is visible to every user of the machine)",
            "  --base-dir DIR         folder of the embedded store and Mem0's history database",
            "                         (default: $FLINK_AGENTS_LTM_HOME, else ~/.flink-agents-ltm)",
            "  --parallelism N        the job's parallelism",
            "  --workers N            durable-call worker threads per subtask (default: 4)",
            "  --help                 print this and exit",
            "");

    /** The job's arguments: {@code --name value} pairs, checked before anything runs. */
    public static final class Arguments {
        static final List<String> NAMES = List.of("python", "pythonpath", "input",
                "memory-job-id", "vector-store-file", "vector-store", "base-dir", "parallelism",
                "workers");
        /** The largest vector store file read (a store config is a few hundred bytes). */
        static final long MAX_VECTOR_STORE_BYTES = 1 << 20;

        private final Map<String, String> options;
        private final boolean help;
        private final String vectorStore;
        private final String vectorStoreSource;

        private Arguments(Map<String, String> options, boolean help, String vectorStore,
                String vectorStoreSource) {
            this.options = options;
            this.help = help;
            this.vectorStore = vectorStore;
            this.vectorStoreSource = vectorStoreSource;
        }

        /** {@link #parse(Map, String...)} with this process's environment. */
        public static Arguments parse(String... args) {
            return parse(System.getenv(), args);
        }

        /**
         * Parses {@code args}; refuses unknown names and missing values. The vector store comes
         * from {@code --vector-store-file}, {@code --vector-store} (at most one of them) or, when
         * neither is given, {@code environment}'s {@link MemoryAgentJob#VECTOR_STORE_VARIABLE}; it must
         * be a JSON object with a {@code "provider"} name. No message quotes the store's text.
         */
        public static Arguments parse(Map<String, String> environment, String... args) {
            Map<String, String> options = new HashMap<>();
            boolean help = false;
            for (int i = 0; i < args.length; i++) {
                if (args[i].equals("--help")) {
                    help = true;
                    continue;
                }
                String name = args[i].startsWith("--") ? args[i].substring(2) : null;
                if (name == null || !NAMES.contains(name)) {
                    // Only a --name is quoted, never a value (it may be a misplaced secret).
                    throw new IllegalArgumentException("unknown argument "
                            + (name == null ? "#" + (i + 1) + " (not a --name)" : "--" + shortName(name))
                            + "; expected --name value with a name among " + NAMES
                            + " (see --help)");
                }
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("--" + name + " needs a value (see --help)");
                }
                options.put(name, args[++i]);
            }
            if (options.containsKey("vector-store") && options.containsKey("vector-store-file")) {
                throw new IllegalArgumentException(
                        "give the vector store once: --vector-store-file or --vector-store, "
                                + "not both");
            }
            String store = null;
            String source = null;
            if (options.containsKey("vector-store-file")) {
                source = "--vector-store-file " + options.get("vector-store-file");
                store = readPrivateFile(Paths.get(options.get("vector-store-file")), source);
            } else if (options.containsKey("vector-store")) {
                source = "--vector-store";
                store = options.get("vector-store");
            } else {
                String fromEnvironment = environment.get(VECTOR_STORE_VARIABLE);
                if (fromEnvironment != null && !fromEnvironment.isBlank()) {
                    source = "$" + VECTOR_STORE_VARIABLE;
                    store = fromEnvironment;
                }
            }
            if (store != null) {
                checkVectorStore(store, source);
            }
            return new Arguments(options, help, store, source);
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

        /** Where the vector store came from (an argument or the variable), or {@code null}. */
        public String vectorStoreSource() {
            return vectorStoreSource;
        }

        /** The Python to run, from {@code --python}/{@code --pythonpath} or the environment. */
        public PythonSettings python() {
            if (has("python")) {  // given: the environment is not asked (it may name none)
                return new PythonSettings(options.get("python"), has("pythonpath")
                        ? PythonSettings.splitPath(options.get("pythonpath"))
                        : PythonSettings.environmentPaths());
            }
            PythonSettings defaults = PythonSettings.fromEnvironment();
            return new PythonSettings(defaults.getPythonExec(), has("pythonpath")
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
            if (vectorStore != null) {
                config.put("long-term-memory.vector-store", vectorStore);
            }
            return config;
        }

        /** A name as it may be quoted: no {@code =value} part, at most 40 characters. */
        private static String shortName(String name) {
            String cut = name.split("[=\\s]", 2)[0];
            cut = cut.length() <= 40 ? cut : cut.substring(0, 40);
            return cut.equals(name) ? cut : cut + "...";
        }

        /**
         * The file's text, if only its owner may read it (on file systems with POSIX
         * permissions): a store file holds the database password.
         */
        private static String readPrivateFile(Path path, String source) {
            try {
                if (!Files.isRegularFile(path)) {
                    throw new IllegalArgumentException(source + ": no such file");
                }
                if (Files.getFileStore(path).supportsFileAttributeView(PosixFileAttributeView.class)) {
                    Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(path);
                    if (!Collections.disjoint(permissions, NOT_PRIVATE)) {
                        throw new IllegalArgumentException(source + " may be read or changed by "
                                + "other users (" + PosixFilePermissions.toString(permissions)
                                + "); it holds the vector store's password: chmod 600 "
                                + path);
                    }
                }
                if (Files.size(path) > MAX_VECTOR_STORE_BYTES) {
                    throw new IllegalArgumentException(source + " is larger than "
                            + MAX_VECTOR_STORE_BYTES + " bytes; is it the right file?");
                }
                return Files.readString(path, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new IllegalArgumentException(source + " cannot be read: "
                        + e.getClass().getSimpleName(), e);
            }
        }

        /**
         * A JSON object naming a provider. The job declares no vector stores, so a plain
         * name (which the Python option also takes) is refused here. The messages never quote
         * the text (nor Jackson's reason, which quotes the offending token).
         */
        private static void checkVectorStore(String json, String source) {
            if (!json.strip().startsWith("{")) {
                throw notAStore(source, json.strip().startsWith("[")
                        ? "a JSON array" : "text that is not a JSON object");
            }
            JsonNode store;
            try {
                store = new ObjectMapper()
                        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS) // as Python's json
                        .readTree(json);
            } catch (JsonProcessingException e) {
                String what = e.getOriginalMessage().startsWith("Unexpected end-of-input")
                        ? "the text ends too early"
                        : e instanceof MismatchedInputException ? "text follows the JSON object"
                        : "unexpected text";
                String where = e.getLocation() == null ? ""
                        : " at line " + e.getLocation().getLineNr() + ", column "
                                + e.getLocation().getColumnNr();
                throw new IllegalArgumentException("the vector store of " + source
                        + " is not valid JSON (" + what + where + "; the text is not shown)");
            }
            if (!store.path("provider").isTextual()) {
                throw notAStore(source, "an object without a \"provider\" name");
            }
        }

        private static IllegalArgumentException notAStore(String source, String got) {
            return new IllegalArgumentException("the vector store of " + source
                    + " must be a Mem0 vector store, a JSON object {\"provider\": <name>, "
                    + "\"config\": {...}}; got " + got);
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
