package org.flinkagents.ltm.runtime.agent;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.InternalTimer;
import org.apache.flink.util.CloseableIterator;
import org.flinkagents.ltm.api.Agent;
import org.flinkagents.ltm.api.AgentSettings;
import org.flinkagents.ltm.api.PythonSettings;
import org.flinkagents.ltm.runtime.memory.MailboxThreadChecker;
import org.flinkagents.ltm.runtime.memory.PythonLongTermMemory;
import org.flinkagents.ltm.runtime.memory.TestLtm;

/**
 * The real operator with one failure injected right after the checkpoint that holds a gated
 * durable call. A test's call says it is waiting ({@link #waiting()}) and waits for {@link
 * #GATE}; the first checkpoint taken after that arms the failure when it completes, and the
 * operator's next timer throws. The gate opens only as the task fails, so the gated call's
 * result can reach no checkpoint (opened at the completion notice, a loaded machine could
 * record the result and snapshot it before the timer fired, and nothing would run again).
 *
 * <p>The state is static: the operator reaches its task as a copy. {@link #reset()} before
 * each job (the tests of a class run one after another in one JVM).
 */
final class FailAfterCheckpoint<K, IN, OUT> extends FootprintProbe<K, IN, OUT> {
    private static final long serialVersionUID = 1L;
    private static final AtomicBoolean WAITING = new AtomicBoolean();
    private static final AtomicLong CHECKPOINT = new AtomicLong(-1);
    private static final AtomicBoolean FAIL_NOW = new AtomicBoolean();
    private static final AtomicBoolean INJECTED = new AtomicBoolean();
    static volatile CountDownLatch GATE = new CountDownLatch(1);

    FailAfterCheckpoint(AgentPlan plan, AgentSettings settings, TypeSerializer<IN> inputs) {
        super(plan, settings, inputs);
    }

    static void reset() {
        FootprintProbe.reset();
        WAITING.set(false);
        CHECKPOINT.set(-1);
        FAIL_NOW.set(false);
        INJECTED.set(false);
        GATE = new CountDownLatch(1);
    }

    /**
     * Runs {@code agent} over {@code inputs} (key, note), keyed by key, at parallelism 1 with a
     * checkpoint every 100 ms and one restart, through this operator (after {@link #reset()}),
     * on a fresh embedded store.
     */
    @SuppressWarnings({"rawtypes", "unchecked"}) // the limiter: see AgentRestoreTest.HoldTheLast
    static Ran run(String name, Agent agent, List<Tuple2<String, String>> inputs,
            RateLimiterStrategy limiter) throws Exception {
        return run(name, agent, inputs, limiter, Map.of());
    }

    /** {@link #run}, with agent options (e.g. {@code agents.action-state.store}). */
    @SuppressWarnings({"rawtypes", "unchecked"})
    static Ran run(String name, Agent agent, List<Tuple2<String, String>> inputs,
            RateLimiterStrategy limiter, Map<String, String> agentOptions) throws Exception {
        reset();
        Configuration config = new Configuration();
        config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 1);
        config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(1);
        env.enableCheckpointing(100);
        Map<String, Object> memoryConfig = Map.of("long-term-memory.embedded.base-dir",
                TestLtm.home().resolve(TestLtm.unique("job")).toString());
        DataGeneratorSource<Tuple2<String, String>> source = new DataGeneratorSource<>(
                index -> inputs.get(index.intValue()), inputs.size(), limiter,
                Types.TUPLE(Types.STRING, Types.STRING));
        KeyedStream<Tuple2<String, String>, String> keyed = env
                .fromSource(source, WatermarkStrategy.noWatermarks(), "notes").keyBy(t -> t.f0);
        String jobId = TestLtm.unique(name);
        AgentSettings settings = new AgentSettings(PythonSettings.fromEnvironment(), jobId,
                memoryConfig, 4, 10, org.flinkagents.ltm.api.JobSubmission.fresh(),
                agentOptions);
        List<String> lines = new ArrayList<>();
        try (CloseableIterator<Object> out = keyed.transform("agent", Types.GENERIC(Object.class),
                new FailAfterCheckpoint<String, Tuple2<String, String>, Object>(
                        AgentPlan.of(agent), settings, keyed.getType().createSerializer(
                                keyed.getExecutionConfig().getSerializerConfig())))
                .executeAndCollect("java-" + name + "-test")) {
            out.forEachRemaining(o -> lines.add((String) o));
        }
        return new Ran(lines, jobId, memoryConfig);
    }

    /** A run's outputs, and its long-term memory to look into. */
    record Ran(List<String> lines, String jobId, Map<String, Object> memoryConfig) {
        PythonLongTermMemory openMemory() {
            return PythonLongTermMemory.open(TestLtm.runtime(), jobId, memoryConfig,
                    MailboxThreadChecker.ofCurrentThread());
        }
    }

    /** Called by the gated call: the next checkpoint holds it (then it awaits {@link #GATE}). */
    static void waiting() {
        WAITING.set(true);
    }

    static boolean gateOpen() {
        return GATE.getCount() == 0;
    }

    /** Whether the failure was injected (a test asserts it, or its premise did not hold). */
    static boolean injected() {
        return INJECTED.get();
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        if (WAITING.get()) {
            CHECKPOINT.compareAndSet(-1, context.getCheckpointId());
        }
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        super.notifyCheckpointComplete(checkpointId);
        if (checkpointId == CHECKPOINT.get() && !gateOpen()) {
            FAIL_NOW.set(true);
        }
    }

    @Override
    public void onProcessingTime(InternalTimer<K, VoidNamespace> timer) throws Exception {
        if (FAIL_NOW.compareAndSet(true, false)) {
            INJECTED.set(true);
            GATE.countDown();
            throw new IllegalStateException("injected failure after checkpoint " + CHECKPOINT.get());
        }
        super.onProcessingTime(timer);
    }
}
