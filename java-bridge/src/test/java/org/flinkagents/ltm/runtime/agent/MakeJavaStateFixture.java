package org.flinkagents.ltm.runtime.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiter;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.flinkagents.ltm.api.Action;
import org.flinkagents.ltm.api.Agent;
import org.flinkagents.ltm.api.AgentSettings;
import org.flinkagents.ltm.api.DurableCallable;
import org.flinkagents.ltm.api.Event;
import org.flinkagents.ltm.api.InputEvent;
import org.flinkagents.ltm.api.MemoryObject;
import org.flinkagents.ltm.api.OutputEvent;
import org.flinkagents.ltm.api.PythonSettings;
import org.flinkagents.ltm.api.RunnerContext;
import org.junit.jupiter.api.Test;

/**
 * Makes the Java state fixture {@code src/test/resources/savepoint-8a78e2d/} that {@link
 * EarlierBuildStateTest} restores: run with the build of an earlier release (its README says
 * how), never by the normal test run (the name matches none of surefire's patterns; {@code
 * -Dtest=MakeJavaStateFixture} runs it, {@code -Dfixture.out=DIR} says where to write).
 *
 * <p>The job of {@link #job}: the real {@link AgentOperator} (uid {@code agent}) over {@link
 * Notes}, at parallelism 1, max parallelism 16, from a source that holds after its inputs, to a
 * sink that collects. It is stopped with a canonical savepoint (no drain) once {@link #BEFORE}
 * left ann and ben idle with their counters kept, cho parked in its first input's call with its
 * second input queued behind it, dan parked in its second input's call. The same build also runs
 * {@link #BEFORE} and {@link #AFTER} in one uninterrupted job: what it answers is what the
 * restored job must answer (the ids aside, which the test computes).
 *
 * <p>This file compiles against the earlier build and the current one alike: the test shares
 * its agent, job and sink.
 */
class MakeJavaStateFixture {
    /** The long-term memory's job id of the fixture. */
    static final String MEMORY_JOB = "java-savepoint-fixture";
    /** Inputs of the run that is stopped with the savepoint ('!': its call is held). */
    static final List<Tuple2<String, String>> BEFORE = List.of(
            Tuple2.of("ann", "ann 1"), Tuple2.of("ben", "ben 1"), Tuple2.of("cho", "cho 1!"),
            Tuple2.of("dan", "dan 1"), Tuple2.of("ann", "ann 2"), Tuple2.of("cho", "cho 2"),
            Tuple2.of("dan", "dan 2!"), Tuple2.of("ben", "ben 2"));
    /** Outputs answered before the savepoint: all inputs but the held ones and cho's queued one. */
    static final int ANSWERED_BEFORE = 5;
    static final int HELD = 2;
    /** Inputs of the restored run (eve: a key without state). */
    static final List<Tuple2<String, String>> AFTER = List.of(
            Tuple2.of("ann", "ann 3"), Tuple2.of("cho", "cho 3"), Tuple2.of("dan", "dan 3"),
            Tuple2.of("eve", "eve 1"), Tuple2.of("eve", "eve 2"), Tuple2.of("ben", "ben 3"));

    /** Every call of the JVM, in order: "stamp <note>" or "echo <note>". */
    static final Queue<String> CALLS = new ConcurrentLinkedQueue<>();
    /** The sink's lines. */
    static final Queue<String> OUT = new ConcurrentLinkedQueue<>();
    /** While true, an "...!" note's echo call holds (until the task is cancelled). */
    static volatile boolean holding;
    static volatile CountDownLatch held = new CountDownLatch(HELD);

    /**
     * Per input: count it (short-term memory), add it to long-term memory (in the action's
     * body: item id of {@code <observation id>, "body", 0}), stamp it (a durable call), echo it
     * (a durable async call). Answers {@code key|note|#count|ECHO|ids}.
     */
    public static class Notes extends Agent {
        private static final long serialVersionUID = 1L;

        @Action(listenEvents = {InputEvent.class})
        public void remember(Event event, RunnerContext ctx) throws Exception {
            @SuppressWarnings("unchecked")
            Tuple2<String, String> input = (Tuple2<String, String>) ((InputEvent) event).getInput();
            String note = input.f1;
            MemoryObject stm = ctx.getShortTermMemory();
            long count = stm.get("count") == null ? 1 : (Long) stm.get("count") + 1;
            stm.set("count", count);
            List<String> ids = ctx.getLongTermMemory().getMemorySet("notes").add(note);
            String stamp = ctx.durableExecute(DurableCallable.of("stamp", () -> {
                CALLS.add("stamp " + note);
                return "#" + count;
            }));
            String echo = ctx.durableExecuteAsync(DurableCallable.of("echo", () -> {
                CALLS.add("echo " + note);
                if (holding && note.endsWith("!")) {
                    held.countDown();
                    new CountDownLatch(1).await(); // until the task is cancelled
                }
                return note.toUpperCase();
            }));
            ctx.sendEvent(new OutputEvent(input.f0 + "|" + note + "|" + stamp + "|" + echo + "|"
                    + String.join(",", ids)));
        }
    }

    /** Collects the outputs in {@link #OUT}. */
    static final class Collect implements Sink<Object> {
        private static final long serialVersionUID = 1L;

        @Override
        public SinkWriter<Object> createWriter(WriterInitContext context) {
            return new SinkWriter<>() {
                @Override
                public void write(Object element, Context c) {
                    OUT.add((String) element);
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }

    /**
     * Lets {@code inputs} through, then holds: the source never ends (the reader asks before it
     * sees that a finite source has no more, so an unheld job passes {@code MAX_VALUE}).
     */
    @SuppressWarnings("rawtypes")
    static final class ThenHold implements RateLimiterStrategy {
        private static final long serialVersionUID = 1L;
        private final int inputs;

        ThenHold(int inputs) {
            this.inputs = inputs;
        }

        @Override
        public RateLimiter createRateLimiter(int parallelism) {
            return new RateLimiter() {
                private int released;

                public CompletionStage<Void> acquire() {
                    return acquire(1);
                }

                public CompletionStage<Void> acquire(int requestSize) {
                    released += requestSize;
                    return released <= inputs ? CompletableFuture.completedFuture(null)
                            : new CompletableFuture<>();
                }
            };
        }
    }

    /**
     * The job: {@code inputs} from a source of uid {@code sourceUid} (held open after them if
     * {@code hold}), the agent operator of uid {@code agent} made by {@code operator}.
     */
    @SuppressWarnings({"rawtypes", "unchecked"})
    static StreamExecutionEnvironment job(Configuration config, List<Tuple2<String, String>> inputs,
            boolean hold, String sourceUid, Operator operator) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(1);
        env.setMaxParallelism(16);
        List<Tuple2<String, String>> copy = new ArrayList<>(inputs);
        DataGeneratorSource<Tuple2<String, String>> source = new DataGeneratorSource<>(
                index -> copy.get((int) Math.min(index, copy.size() - 1)),
                hold ? copy.size() + 1 : copy.size(),
                new ThenHold(hold ? copy.size() : Integer.MAX_VALUE),
                Types.TUPLE(Types.STRING, Types.STRING));
        KeyedStream<Tuple2<String, String>, String> keyed = env
                .fromSource(source, WatermarkStrategy.noWatermarks(), "notes").uid(sourceUid)
                .keyBy(t -> t.f0);
        keyed.transform("agent", Types.GENERIC(Object.class), operator.make(
                keyed.getType().createSerializer(keyed.getExecutionConfig().getSerializerConfig())))
                .uid("agent").sinkTo(new Collect()).uid("collect");
        return env;
    }

    /** Makes the operator of a job from the input serializer. */
    interface Operator {
        OneInputStreamOperator<Tuple2<String, String>, Object> make(
                org.apache.flink.api.common.typeutils.TypeSerializer<Tuple2<String, String>> in);
    }

    static Map<String, Object> memoryConfig(Path storeDir) {
        return Map.of("long-term-memory.embedded.base-dir", storeDir.toString());
    }

    static void await(CountDownLatch latch, String what) throws InterruptedException {
        if (!latch.await(300, TimeUnit.SECONDS)) {
            throw new IllegalStateException("timed out waiting for " + what);
        }
    }

    static void write(Path file, Iterable<String> lines) throws IOException {
        Files.write(file, lines, StandardCharsets.UTF_8);
    }

    @Test
    void makeTheFixture() throws Exception {
        Path out = Paths.get(System.getProperty("fixture.out", "target/java-state-fixture"))
                .toAbsolutePath();
        Files.createDirectories(out);
        Path store = out.resolve("store");
        Path savepoints = out.resolve("savepoints");

        // 1. The run stopped with a savepoint.
        holding = true;
        held = new CountDownLatch(HELD);
        CALLS.clear();
        OUT.clear();
        AgentSettings settings = new AgentSettings(PythonSettings.fromEnvironment(), MEMORY_JOB,
                memoryConfig(store), 4, 10);
        StreamExecutionEnvironment env = job(new Configuration(), BEFORE, true, "inputs-before",
                in -> new AgentOperator<String, Tuple2<String, String>, Object>(
                        AgentPlan.of(new Notes()), settings, in));
        JobClient client = env.executeAsync("java-state-fixture");
        JobID jobId = client.getJobID();
        await(held, "the held calls");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
        while (OUT.size() < ANSWERED_BEFORE && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertEquals(ANSWERED_BEFORE, OUT.size(), "answered before the savepoint: " + OUT);
        String savepoint = client.stopWithSavepoint(false, savepoints.toUri().toString(),
                SavepointFormatType.CANONICAL).get(300, TimeUnit.SECONDS);
        System.out.println("savepoint of job " + jobId + ": " + savepoint);
        List<String> before = new ArrayList<>(OUT);
        List<String> callsBefore = new ArrayList<>(CALLS);
        assertEquals(ANSWERED_BEFORE, before.size(), "nothing answered while stopping: " + before);
        assertTrue(Files.isRegularFile(Paths.get(java.net.URI.create(savepoint)).resolve("_metadata"))
                || Files.isRegularFile(Paths.get(savepoint).resolve("_metadata")), savepoint);
        write(out.resolve("outputs-before.txt"), before);
        write(out.resolve("calls-before.txt"), callsBefore);

        // 2. The same inputs, and those of the restored run, in one uninterrupted run.
        holding = false;
        OUT.clear();
        List<Tuple2<String, String>> all = new ArrayList<>(BEFORE);
        all.addAll(AFTER);
        AgentSettings reference = new AgentSettings(PythonSettings.fromEnvironment(),
                MEMORY_JOB + "-reference", memoryConfig(out.resolve("reference-store")), 4, 10);
        job(new Configuration(), all, false, "inputs-before",
                in -> new AgentOperator<String, Tuple2<String, String>, Object>(
                        AgentPlan.of(new Notes()), reference, in)).execute("java-reference");
        assertEquals(all.size(), OUT.size(), "one output per input: " + OUT);
        write(out.resolve("outputs-uninterrupted.txt"), new ArrayList<>(OUT));
    }
}
