package org.flinkagents.ltm.runtime.agent;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.streaming.api.operators.InternalTimer;
import org.flinkagents.ltm.api.AgentSettings;

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
