package org.flinkagents.ltm.runtime.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiter;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.operators.InternalTimer;
import org.apache.flink.streaming.api.operators.Output;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.flinkagents.ltm.api.Action;
import org.flinkagents.ltm.api.Agent;
import org.flinkagents.ltm.api.AgentSettings;
import org.flinkagents.ltm.api.DurableCallable;
import org.flinkagents.ltm.api.Event;
import org.flinkagents.ltm.api.InputEvent;
import org.flinkagents.ltm.api.JobSubmission;
import org.flinkagents.ltm.api.MemoryObject;
import org.flinkagents.ltm.api.OutputEvent;
import org.flinkagents.ltm.api.PythonSettings;
import org.flinkagents.ltm.api.RunnerContext;
import org.flinkagents.ltm.api.memory.MemorySet;
import org.flinkagents.ltm.api.memory.MemorySetItem;
import org.flinkagents.ltm.runtime.memory.MailboxThreadChecker;
import org.flinkagents.ltm.runtime.memory.PythonLongTermMemory;
import org.flinkagents.ltm.runtime.memory.TestLtm;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The scenario suite of {@code tests/scenarios} (its README says the format) on the Java
 * agent operator, the same files the Python engine runs on its harness. Each job of a scenario
 * runs on Flink's local mini-cluster (the operator test harnesses are not available offline)
 * with the real Python long-term memory, through this runner's probe (the real operator,
 * reporting its outputs and when it is quiet). The runner steers it from the test thread: the
 * source emits an input only when the script gives it; each durable call waits at a gate until
 * the script completes it; a snapshot is a savepoint of the running job; a failure cancels the
 * job and starts it again from that savepoint, in the same run of the job (same submission);
 * the end of input lets every call pass and waits for the job to finish.
 */
class ScenarioSuiteTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final Duration WAIT = Duration.ofSeconds(120);

    // ---- shared with the job's tasks (one JVM): the operator reaches its task as a copy

    /** This job's inputs (key, behaviour as JSON), then the end marker (key ""). */
    static final List<Tuple2<String, String>> JOB_INPUTS = new CopyOnWriteArrayList<>();
    /** Inputs the script gave so far (the end marker included at the end). */
    static final AtomicInteger PERMITS = new AtomicInteger();
    /** The index of the next input the source emits (its restored position, then counted). */
    static final AtomicInteger EMITTED = new AtomicInteger();
    /** Inputs the operator processed in this attempt of the job. */
    static final AtomicInteger PROCESSED = new AtomicInteger();
    static final List<String> OUTPUTS = new CopyOnWriteArrayList<>();
    static final Map<String, Integer> CALLS = new ConcurrentHashMap<>();
    /** Orders the probe's reports and the gate's events. */
    static final AtomicLong EVENTS = new AtomicLong();
    static volatile Quiet quiet;
    static volatile Finished finished;

    /** What the operator reported after a callback. */
    record Quiet(long event, int processed, int inMemory, int awaiting, long busy) {}

    /** What the operator held when it finished. */
    record Finished(AgentOperator.Footprint footprint, TreeSet<String> counters,
            Map<String, Long> shortTerm) {}

    /** Durable calls wait here until the script completes them. */
    static final class Gate {
        record Waiting(String key, CountDownLatch latch) {}

        static final List<Waiting> WAITING = new ArrayList<>();
        static boolean open;
        static int running; // released, not finished
        static long lastEvent;

        static synchronized void reset(boolean isOpen) {
            WAITING.clear();
            open = isOpen;
            running = 0;
            lastEvent = EVENTS.incrementAndGet();
        }

        static void pass(String key) throws InterruptedException {
            CountDownLatch latch = new CountDownLatch(1);
            synchronized (Gate.class) {
                lastEvent = EVENTS.incrementAndGet();
                if (open) {
                    running++;
                    return;
                }
                WAITING.add(new Waiting(key, latch));
            }
            try {
                latch.await();
            } catch (InterruptedException e) { // the job was cancelled
                synchronized (Gate.class) {
                    if (!WAITING.removeIf(w -> w.latch == latch)) {
                        running--;
                    }
                    lastEvent = EVENTS.incrementAndGet();
                }
                throw e;
            }
        }

        static synchronized void finished() {
            running--;
            lastEvent = EVENTS.incrementAndGet();
        }

        /** Completes the calls waiting now (of {@code key}, or all); {@code all}: later too. */
        static synchronized void release(String key, boolean openForGood) {
            open |= openForGood;
            for (Iterator<Waiting> it = WAITING.iterator(); it.hasNext(); ) {
                Waiting w = it.next();
                if (key.equals("all") || w.key.equals(key)) {
                    it.remove();
                    running++;
                    w.latch.countDown();
                }
            }
            lastEvent = EVENTS.incrementAndGet();
        }
    }

    /** A {@code split} input's second step: the rest of its work. */
    public static class Hop extends Event {
        private static final long serialVersionUID = 1L;
        final String key;
        final String spec;
        final long count;

        Hop(String key, String spec, long count) {
            this.key = key;
            this.spec = spec;
            this.count = count;
        }
    }

    /** The scenario agent of the README. */
    public static class ScenarioAgent extends Agent {
        private static final long serialVersionUID = 1L;

        @Action(listenEvents = {InputEvent.class})
        public void run(Event event, RunnerContext ctx) throws Exception {
            @SuppressWarnings("unchecked")
            Tuple2<String, String> input = (Tuple2<String, String>) ((InputEvent) event).getInput();
            JsonNode spec = JSON.readTree(input.f1);
            MemoryObject stm = ctx.getShortTermMemory();
            long count = stm.get("count") == null ? 1 : (Long) stm.get("count") + 1;
            stm.set("count", count);
            int calls = spec.path("calls").asInt(0);
            if (!spec.path("split").asBoolean(false)) {
                callsAndOutput(ctx, input.f0, spec, count, 0, calls);
                return;
            }
            if (calls > 0) { // step 0 makes the first call, step 1 the rest
                call(ctx, input.f0, null, spec.get("text").asText(), 0);
            }
            ctx.sendEvent(new Hop(input.f0, input.f1, count));
        }

        @Action(listenEvents = {Hop.class})
        public void hop(Event event, RunnerContext ctx) throws Exception {
            Hop hop = (Hop) event;
            JsonNode spec = JSON.readTree(hop.spec);
            int calls = spec.path("calls").asInt(0);
            callsAndOutput(ctx, hop.key, spec, hop.count, Math.min(1, calls), calls);
        }

        static void callsAndOutput(RunnerContext ctx, String key, JsonNode spec, long count,
                int fromCall, int calls) throws Exception {
            String text = spec.get("text").asText();
            String add = spec.path("add").asText("none");
            boolean read = spec.path("read").asBoolean(false);
            MemorySet notes = add.equals("none") && !read ? null
                    : ctx.getLongTermMemory().getMemorySet("notes");
            if (read) {
                notes.search(text, 5);
                notes.get();
            }
            for (int i = fromCall; i < calls; i++) {
                call(ctx, key, add.equals("call" + i) ? notes : null, text, i);
            }
            if (add.equals("body")) {
                notes.add(text);
            }
            if (spec.path("fail").asText("none").equals("after-calls")) {
                throw new IllegalStateException("input " + text + " fails as the scenario says");
            }
            ctx.sendEvent(new OutputEvent(key + "|" + text + "|" + count));
        }

        /** Durable call {@code c<index>}: waits at the gate, adds if asked, counts itself. */
        static String call(RunnerContext ctx, String key, MemorySet addsHere, String text,
                int index) throws Exception {
            String name = text + "/c" + index;
            return ctx.durableExecuteAsync(DurableCallable.of("c" + index, () -> {
                Gate.pass(key);
                try {
                    if (addsHere != null) {
                        addsHere.add(text);
                    }
                    CALLS.merge(name, 1, Integer::sum);
                    return name;
                } finally {
                    Gate.finished();
                }
            }));
        }
    }

    /** The real operator, reporting its outputs, when it is quiet, and what it left. */
    static final class Probe<K, IN, OUT> extends AgentOperator<K, IN, OUT> {
        private static final long serialVersionUID = 1L;

        Probe(AgentPlan plan, AgentSettings settings, TypeSerializer<IN> inputs) {
            super(plan, settings, inputs);
        }

        @Override
        @SuppressWarnings("unchecked")
        public void open() throws Exception {
            super.open();
            Output<StreamRecord<OUT>> real = output;
            output = (Output<StreamRecord<OUT>>) Proxy.newProxyInstance(
                    Output.class.getClassLoader(), new Class<?>[] {Output.class},
                    (proxy, method, args) -> {
                        if (method.getName().equals("collect") && args.length == 1) {
                            OUTPUTS.add(String.valueOf(((StreamRecord<?>) args[0]).getValue()));
                        }
                        return method.invoke(real, args);
                    });
            report();
        }

        @Override
        public void processElement(StreamRecord<IN> element) throws Exception {
            super.processElement(element);
            PROCESSED.incrementAndGet();
            report();
        }

        @Override
        public void onProcessingTime(InternalTimer<K, VoidNamespace> timer) throws Exception {
            super.onProcessingTime(timer);
            report();
        }

        private void report() throws Exception {
            Footprint now = footprint();
            quiet = new Quiet(EVENTS.incrementAndGet(), PROCESSED.get(), now.keysInMemory,
                    keysAwaitingACall(), now.keysPerState.get(BUSY));
        }

        @Override
        public void finish() throws Exception {
            Footprint left = footprint();
            TreeSet<String> counters = new TreeSet<>();
            List<Object> keys;
            try (Stream<Object> stored = getKeyedStateBackend().getKeys(NEXT_SEQ,
                    VoidNamespace.INSTANCE)) {
                stored.forEach(k -> counters.add(String.valueOf(k)));
            }
            try (Stream<Object> stored = getKeyedStateBackend().getKeys(SHORT_TERM,
                    VoidNamespace.INSTANCE)) {
                keys = stored.collect(Collectors.toList());
            }
            Map<String, Long> shortTerm = new TreeMap<>();
            for (Object key : keys) {
                setCurrentKey(key);
                Object count = shortTermValue("count");
                if (count != null) {
                    shortTerm.put(String.valueOf(key), (Long) count);
                }
            }
            finished = new Finished(left, counters, shortTerm);
            super.finish();
        }
    }

    /**
     * Lets the source emit an input only when the script gave it. The reader asks before each
     * record; it may ask without emitting, so the limiter compares what was given with what
     * was emitted, not with how often it was asked. Raw types as in {@link
     * AgentRestoreTest.HoldTheLast} (Flink 1.20 and 2.x).
     */
    @SuppressWarnings("rawtypes")
    static final class GivenInputs implements RateLimiterStrategy {
        private static final long serialVersionUID = 1L;

        @Override
        public RateLimiter createRateLimiter(int parallelism) {
            return new RateLimiter() {
                public CompletionStage<Void> acquire() {
                    return acquire(1);
                }

                public CompletionStage<Void> acquire(int requestSize) {
                    if (given()) {
                        return CompletableFuture.completedFuture(null);
                    }
                    return CompletableFuture.runAsync(() -> {
                        while (!given()) {
                            sleep(2);
                        }
                    });
                }
            };
        }

        static boolean given() {
            return EMITTED.get() >= JOB_INPUTS.size() || PERMITS.get() > EMITTED.get();
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    // ------------------------------------------------------------------ the runner

    /** tests/scenarios of the repository (found from java-bridge or the root). */
    static Path scenarioFolder() {
        for (Path dir = Paths.get("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path folder = dir.resolve("tests").resolve("scenarios");
            if (Files.isRegularFile(folder.resolve("README.md"))) {
                return folder;
            }
        }
        throw new IllegalStateException("tests/scenarios not found above "
                + Paths.get("").toAbsolutePath() + ": run the tests inside the repository");
    }

    /** {@code -Dscenarios=REGEX}: only the scenarios whose file name (without .json) matches. */
    static final String ONLY = System.getProperty("scenarios", ".*");

    @TestFactory
    Stream<DynamicTest> scenarios() throws Exception {
        List<Path> files;
        try (Stream<Path> listed = Files.list(scenarioFolder())) {
            files = listed.filter(p -> p.toString().endsWith(".json")).sorted().toList();
        }
        assertTrue(files.size() >= 20, "the suite has its scenarios: " + files);
        List<DynamicTest> tests = new ArrayList<>();
        for (Path file : files) {
            JsonNode scenario = JSON.readTree(file.toFile());
            boolean forJava = !scenario.has("engines") || scenario.get("engines").toString()
                    .contains("\"java\"");
            String name = file.getFileName().toString().replace(".json", "");
            if (forJava && name.matches(ONLY)) {
                tests.add(DynamicTest.dynamicTest(name, () -> new Run(name, scenario).play()));
            }
        }
        return tests.stream();
    }

    /** One scenario: its jobs, one after another. */
    static final class Run {
        final String name;
        final JsonNode scenario;
        final String memoryJobId = TestLtm.unique("scenario");
        final Map<String, Object> memoryConfig = Map.of("long-term-memory.embedded.base-dir",
                TestLtm.home().resolve(TestLtm.unique("job")).toString());
        final Path savepoints;
        JobSubmission submission;
        JobClient job;
        int jobNumber = -1;
        String savepoint;
        int givenAtSavepoint;
        int outputsAtSavepoint;
        int attemptStart; // the source's position when this attempt started

        Run(String name, JsonNode scenario) throws Exception {
            this.name = name;
            this.scenario = scenario;
            this.savepoints = Files.createTempDirectory("scenario-savepoints");
        }

        void play() throws Exception {
            try {
                playSteps();
            } finally {
                deleteTree(savepoints); // a scenario's savepoints are its own: none is left in the temp folder
            }
        }

        private static void deleteTree(Path root) throws java.io.IOException {
            try (Stream<Path> paths = Files.walk(root)) {
                for (Path path : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(path);
                }
            }
        }

        private void playSteps() throws Exception {
            CALLS.clear();
            OUTPUTS.clear();
            finished = null;
            JsonNode steps = scenario.get("steps");
            startNewJob(steps, 0);
            for (int i = 0; i < steps.size(); i++) {
                JsonNode step = steps.get(i);
                try {
                    step(steps, i, step);
                } catch (AssertionError | Exception e) {
                    if (job != null) {
                        job.cancel();
                    }
                    throw new AssertionError(name + ", step " + i + " " + step + ": " + e, e);
                }
            }
            check(scenario.get("expect"), true);
        }

        /** The inputs of the job that starts at {@code from} (up to its end), then the end mark. */
        void startNewJob(JsonNode steps, int from) throws Exception {
            JOB_INPUTS.clear();
            for (int i = from; i < steps.size() && !steps.get(i).has("end"); i++) {
                if (steps.get(i).has("input")) {
                    JsonNode input = steps.get(i).get("input");
                    JOB_INPUTS.add(Tuple2.of(input.get("key").asText(),
                            JSON.writeValueAsString(input)));
                }
            }
            JOB_INPUTS.add(Tuple2.of("", "end"));
            PERMITS.set(0);
            submission = JobSubmission.fresh();
            savepoint = null;
            jobNumber++;
            start(null, 0);
        }

        void start(String fromSavepoint, int position) throws Exception {
            quiet = null;
            PROCESSED.set(0);
            EMITTED.set(position);
            attemptStart = position;
            Gate.reset(false);
            Configuration config = new Configuration();
            config.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
            if (fromSavepoint != null) {
                config.set(StateRecoveryOptions.SAVEPOINT_PATH, fromSavepoint);
            }
            StreamExecutionEnvironment env =
                    StreamExecutionEnvironment.getExecutionEnvironment(config);
            env.setParallelism(1);
            env.enableCheckpointing(3_600_000); // savepoints only: no checkpoint in between
            DataGeneratorSource<Tuple2<String, String>> source = new DataGeneratorSource<>(
                    index -> {
                        EMITTED.set(index.intValue() + 1);
                        return JOB_INPUTS.get(index.intValue());
                    }, JOB_INPUTS.size(), new GivenInputs(), Types.TUPLE(Types.STRING, Types.STRING));
            KeyedStream<Tuple2<String, String>, String> keyed = env
                    .fromSource(source, WatermarkStrategy.noWatermarks(), "inputs").uid("inputs")
                    .filter(t -> !t.f0.isEmpty()).uid("not-the-end-mark")
                    .keyBy(t -> t.f0);
            AgentSettings settings = new AgentSettings(PythonSettings.fromEnvironment(),
                    memoryJobId, memoryConfig, 4, 10, submission);
            keyed.transform("agent", Types.GENERIC(Object.class),
                    new Probe<String, Tuple2<String, String>, Object>(
                            AgentPlan.of(new ScenarioAgent()), settings, keyed.getType()
                                    .createSerializer(keyed.getExecutionConfig()
                                            .getSerializerConfig())))
                    .uid("agent").sinkTo(new DiscardingSink<>());
            job = env.executeAsync("java-scenario-" + name);
            settle();
        }

        void step(JsonNode steps, int index, JsonNode step) throws Exception {
            if (step.has("input")) {
                PERMITS.incrementAndGet();
                settle();
            } else if (step.has("complete")) {
                Gate.release(step.get("complete").asText(), false);
                settle();
            } else if (step.has("snapshot")) {
                savepoint = job.triggerSavepoint(savepoints.toUri().toString(),
                        SavepointFormatType.CANONICAL).get(WAIT.toSeconds(), TimeUnit.SECONDS);
                givenAtSavepoint = PERMITS.get();
                outputsAtSavepoint = OUTPUTS.size();
            } else if (step.has("fail")) {
                assertNotNull(savepoint, "the scenario fails without a snapshot before");
                cancel();
                List<String> kept = new ArrayList<>(OUTPUTS.subList(0, outputsAtSavepoint));
                OUTPUTS.clear();
                OUTPUTS.addAll(kept); // what came after the snapshot was not committed
                start(savepoint, givenAtSavepoint); // the source gives the later inputs again
            } else if (step.has("end")) {
                Gate.release("all", true);
                PERMITS.set(JOB_INPUTS.size());
                job.getJobExecutionResult().get(WAIT.toSeconds(), TimeUnit.SECONDS);
                job = null;
            } else if (step.has("new_submission")) {
                startNewJob(steps, index + 1);
            } else if (step.has("expect")) {
                check(step.get("expect"), false);
            } else {
                throw new IllegalArgumentException("the Java runner has no step " + step);
            }
        }

        void cancel() throws Exception {
            job.cancel().get(WAIT.toSeconds(), TimeUnit.SECONDS);
            try {
                job.getJobExecutionResult().get(WAIT.toSeconds(), TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException expected) {
                // cancelled
            }
            job = null;
        }

        /**
         * Waits until the operator processed every input given and is quiet: every key with
         * work is in memory and parked on a call that waits at the gate, no released call is
         * still running, and the operator reported after the gate's last event.
         */
        void settle() {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (System.nanoTime() < deadline) {
                Quiet q = quiet;
                int waiting;
                int running;
                long last;
                synchronized (Gate.class) {
                    waiting = Gate.WAITING.size();
                    running = Gate.running;
                    last = Gate.lastEvent;
                }
                int given = Math.min(PERMITS.get(), JOB_INPUTS.size() - 1);
                if (q != null && q.event() > last && EMITTED.get() >= given
                        && q.processed() == given - attemptStart && running == 0
                        && q.awaiting() == q.inMemory() && q.busy() == q.inMemory()
                        && waiting == q.awaiting()) {
                    return;
                }
                sleep(2);
            }
            throw new AssertionError("the operator did not become quiet: " + quiet + ", gate "
                    + Gate.WAITING.size() + " waiting, " + Gate.running + " running, given "
                    + PERMITS.get() + ", emitted " + EMITTED.get());
        }

        // ------------------------------------------------------------------ checks

        Map<String, List<String>> outputsPerKey() {
            Map<String, List<String>> perKey = new TreeMap<>();
            for (String line : OUTPUTS) { // of every job of the scenario
                perKey.computeIfAbsent(line.split("\\|")[0], k -> new ArrayList<>()).add(line);
            }
            return perKey;
        }

        void check(JsonNode expect, boolean atTheEnd) throws Exception {
            if (expect.has("outputs")) {
                assertEquals(JSON.convertValue(expect.get("outputs"), TreeMap.class),
                        outputsPerKey(), name + ": outputs per key");
            }
            if (expect.has("calls")) {
                assertEquals(JSON.convertValue(expect.get("calls"), TreeMap.class),
                        new TreeMap<>(CALLS), name + ": how often each call ran");
            }
            if (!atTheEnd) {
                return;
            }
            Finished left = finished;
            assertNotNull(left, name + ": the last job finished");
            assertTrue(left.footprint().isEmpty(), name + ": engine state left: "
                    + left.footprint());
            if (expect.has("short_term")) {
                Map<String, Long> wanted = new TreeMap<>();
                expect.get("short_term").fields().forEachRemaining(
                        e -> wanted.put(e.getKey(), e.getValue().asLong()));
                assertEquals(wanted, left.shortTerm(), name + ": short-term count per key");
            }
            if (expect.has("counters")) {
                TreeSet<String> wanted = new TreeSet<>();
                expect.get("counters").forEach(k -> wanted.add(k.asText()));
                assertEquals(wanted, left.counters(), name + ": the keys that keep their "
                        + "input counter");
            }
            if (expect.has("rows")) {
                Map<String, List<String>> wanted = new TreeMap<>();
                expect.get("rows").fields().forEachRemaining(e -> {
                    List<String> texts = new ArrayList<>();
                    e.getValue().forEach(t -> texts.add(t.asText()));
                    wanted.put(e.getKey(), texts);
                });
                TreeSet<String> keys = new TreeSet<>(wanted.keySet());
                keys.addAll(outputsPerKey().keySet());
                assertEquals(wanted, rows(keys), name + ": rows per key");
            }
        }

        Map<String, List<String>> rows(Iterable<String> keys) {
            Map<String, List<String>> rows = new TreeMap<>();
            PythonLongTermMemory ltm = PythonLongTermMemory.open(TestLtm.runtime(), memoryJobId,
                    memoryConfig, MailboxThreadChecker.ofCurrentThread());
            try {
                for (String key : keys) {
                    ltm.switchContext(key, null, true);
                    List<String> texts = new ArrayList<>();
                    for (MemorySetItem item : ltm.getMemorySet("notes").get()) {
                        texts.add(item.getValue());
                    }
                    texts.sort(null);
                    if (!texts.isEmpty()) {
                        rows.put(key, texts);
                    }
                }
            } finally {
                ltm.close();
            }
            return rows;
        }
    }

}
