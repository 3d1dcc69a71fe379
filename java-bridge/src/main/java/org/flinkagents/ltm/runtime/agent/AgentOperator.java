package org.flinkagents.ltm.runtime.agent;

import org.flinkagents.ltm.api.AgentSettings;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.InternalTimer;
import org.apache.flink.streaming.api.operators.InternalTimerService;
import org.apache.flink.streaming.api.operators.InternalTimerServiceImpl;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.Triggerable;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.InstantiationUtil;
import org.flinkagents.ltm.api.Event;
import org.flinkagents.ltm.api.InputEvent;
import org.flinkagents.ltm.api.OutputEvent;
import org.flinkagents.ltm.api.Reconciler;
import org.flinkagents.ltm.api.memory.BaseLongTermMemory;
import org.flinkagents.ltm.runtime.memory.ConfigSecrets;
import org.flinkagents.ltm.runtime.memory.MailboxThreadChecker;
import org.flinkagents.ltm.runtime.memory.PythonActionState;
import org.flinkagents.ltm.runtime.memory.PythonLongTermMemory;
import org.flinkagents.ltm.runtime.memory.PythonRuntime;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a Java {@link org.flinkagents.ltm.api.Agent} per key, with the Python runtime's
 * guarantees.
 *
 * <p>Why an {@link AbstractStreamOperator} rather than a {@code KeyedProcessFunction}: the end
 * of a bounded input is {@link #endInput()} here, where the operator sets each busy key itself
 * and drains all of them side by side; it enumerates the keys with work from the keyed state
 * backend, and it can report its own timers and state entries ({@link #footprint()}).
 *
 * <p><b>Runs and steps.</b> Each input of a key starts a run with an {@link InputEvent}; every
 * (event, listening action) pair is a step, with observation id {@code
 * key@<incarnation>#seq#step} (the key's input number and the step's index in the run, as in
 * Python; {@link Incarnation}). Actions run on the mailbox
 * thread, the long-term memory's context switched to the step before each. A step that awaits
 * a durable call not recorded yet parks: the call runs on the worker pool, a processing-time
 * timer of the key polls it, records its result in the run's record and runs the step again,
 * which now gets the result back at once. Later inputs of a busy key wait in keyed state, in
 * order.
 *
 * <p><b>Exactly-once.</b> The run's record (the events each completed step sent, the outputs and
 * memory writes of completed steps, the current step's recorded calls) is written to keyed state
 * whenever the run parks, in the callback that changed it, so a checkpoint sees whole steps.
 * After a restore the key's poll timer (or its next input, or the end of input) rebuilds the run
 * from the record: completed steps are skipped, recorded calls answer without running, a call
 * not recorded runs again; long-term-memory adds get the same ids (set binding, write position
 * {@code body}/{@code call<k>}, ordinal), so they rewrite the same rows. Outputs and short-term
 * memory writes leave the run only when it ends.
 *
 * <p><b>State of a finished key.</b> When a key's work ends its pending inputs, run record, busy
 * marker and poll timer are removed; its input counter too, unless an action stored a
 * long-term-memory item (the counter is part of every replay-stable id, so a later input would
 * reuse the ids and overwrite the rows); a key whose actions only read long-term memory drops
 * it.
 *
 * <p><b>Runs of a job.</b> A new submission of the job without its state starts every counter at
 * 0 again, so the counter alone would give a second run the first run's ids. A key whose counter
 * starts in this submission counts in the submission's incarnation ({@link Incarnation}, of
 * {@link AgentSettings#submission()}): its observation ids are {@code key@<incarnation>#seq#step}.
 * The incarnation is kept beside the counter ({@code agent-incarnation}, written once: when the
 * key's work is first stored in keyed state, or when the counter is kept for good), so a key
 * restored from a checkpoint or savepoint goes on in its own line; a counter without it (state of
 * an earlier build) counts in the legacy line, {@code key#seq#step}, as it did then. Stored items are counted when each attempt ends ({@code endAction}'s {@code itemsAdded})
 * and when a durable result is recorded: each recorded call says whether its step had stored
 * items by then, because a replay after a restore answers the call from the record without
 * storing again, and counts nothing. An input whose run ends in the callback that received it
 * writes no engine state at all.
 */
public class AgentOperator<K, IN, OUT> extends AbstractStreamOperator<OUT>
        implements OneInputStreamOperator<IN, OUT>, Triggerable<K, VoidNamespace>,
                BoundedOneInput {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(AgentOperator.class);
    static final String BUSY = "agent-busy";
    static final String PENDING = "agent-pending";
    static final String RECORD = "agent-run-record";
    static final String NEXT_SEQ = "agent-next-seq";
    static final String SHORT_TERM = "agent-short-term-memory";
    static final String INCARNATION = "agent-incarnation";

    private final AgentPlan plan;
    private final AgentSettings settings;
    private final TypeSerializer<IN> inputSerializer;

    private transient ValueState<Long> busy;
    private transient MapState<Long, IN> pending;
    private transient ValueState<byte[]> record;
    private transient ValueState<Long> nextSeq;
    private transient ValueState<String> keptIncarnation;
    /** Of this submission: the line of runs of a key without a counter. */
    private transient String incarnation;
    private transient MapState<String, byte[]> shortTerm;
    private transient InternalTimerService<VoidNamespace> timers;
    private transient ExecutorService pool;
    private transient PythonRuntime python;
    private transient PythonLongTermMemory ltm;
    private transient Map<Object, KeyWork<IN>> works;
    /** The action-state store ({@code agents.action-state.store}), or null when it is off. */
    private transient PythonActionState actionState;
    /** The checkpoint this subtask was restored from, or -1. */
    private transient long restoredCheckpoint = -1;

    public AgentOperator(AgentPlan plan, AgentSettings settings, TypeSerializer<IN> inputs) {
        this.plan = plan;
        this.settings = settings;
        this.inputSerializer = inputs;
    }

    /**
     * A key's work in memory: the run in progress, the next input number and the incarnation
     * the key's counter counts in; {@code incarnationKept}: it is in keyed state beside the
     * counter already (or legacy, which is never written).
     */
    static final class KeyWork<IN> {
        final Object key;
        final String incarnation;
        boolean incarnationKept;
        long nextSeq;
        boolean persisted;
        Run<IN> run;

        KeyWork(Object key, long nextSeq, String incarnation, boolean incarnationKept) {
            this.key = key;
            this.nextSeq = nextSeq;
            this.incarnation = incarnation;
            this.incarnationKept = incarnationKept;
        }
    }

    /** One input's run: the steps to take, the record of what was done. */
    static final class Run<IN> {
        final long seq;
        final IN input;
        final RunRecord record;
        final ArrayDeque<Object[]> steps = new ArrayDeque<>(); // {Event, action name}
        int stepIndex;
        StepContext.InFlight parked;
        /** The action-state store's run for this input (found on first use), or null. */
        PythonActionState.RunTag journalTag;
        /** A step of this run wrote or read a row of the store since its last step ended. */
        boolean journalUsed;

        Run(long seq, IN input, RunRecord record) {
            this.seq = seq;
            this.input = input;
            this.record = record;
        }
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        restoredCheckpoint = context.getRestoredCheckpointId().orElse(-1L);
    }

    @Override
    public void open() throws Exception {
        super.open();
        busy = getRuntimeContext().getState(new ValueStateDescriptor<>(BUSY, Types.LONG));
        pending = getRuntimeContext().getMapState(
                new MapStateDescriptor<>(PENDING, LongSerializer.INSTANCE, inputSerializer));
        record = getRuntimeContext().getState(
                new ValueStateDescriptor<>(RECORD, BytePrimitiveArraySerializer.INSTANCE));
        nextSeq = getRuntimeContext().getState(new ValueStateDescriptor<>(NEXT_SEQ, Types.LONG));
        keptIncarnation = getRuntimeContext().getState(
                new ValueStateDescriptor<>(INCARNATION, StringSerializer.INSTANCE));
        incarnation = Incarnation.of(settings.submission().name());
        shortTerm = getRuntimeContext().getMapState(new MapStateDescriptor<>(
                SHORT_TERM, StringSerializer.INSTANCE, BytePrimitiveArraySerializer.INSTANCE));
        timers = getInternalTimerService("agent-polls", VoidNamespaceSerializer.INSTANCE, this);
        works = new HashMap<>();
        ThreadFactory threads;
        boolean store = PythonActionState.wanted(settings.agentOptions());
        if (settings.hasLongTermMemory() || (store && settings.python() != null)) {
            python = PythonRuntime.get(settings.python());
            threads = python.threadFactory("agent-worker-" + subtask());
        } else {
            AtomicInteger count = new AtomicInteger();
            threads = r -> {
                Thread t = new Thread(r, "agent-worker-" + subtask() + "-" + count.incrementAndGet());
                t.setDaemon(true);
                return t;
            };
        }
        pool = Executors.newFixedThreadPool(settings.workers(), threads);
        if (store) {
            openActionState();
        }
        LOG.info("agent {} opened on subtask {}: incarnation {}{}", plan.agentName(), subtask(),
                incarnation, settings.submission().restorePath() == null ? ""
                        : " (restored from a savepoint)");
    }

    /**
     * Opens the action-state store on the mailbox thread: Python's journal, with the agent
     * options and the long-term memory's (the SQLite file lies in its home, the PostgreSQL
     * store uses its pgvector server). Logs the store's name, never an option's value.
     */
    private void openActionState() {
        if (python == null) {
            throw new IllegalStateException("agents.action-state.store is set, but the agent has "
                    + "no embedded Python (the store is Python's): build the job with "
                    + "AgentsExecutionEnvironment, or give AgentSettings the PythonSettings");
        }
        Map<String, Object> options = new HashMap<>(settings.memoryConfig());
        options.putAll(settings.agentOptions());
        int attempt = getRuntimeContext().getTaskInfo().getAttemptNumber();
        actionState = PythonActionState.open(python, options, subtask(), attempt == 0,
                incarnation);
        if (actionState != null && restoredCheckpoint >= 0) {
            actionState.restored(restoredCheckpoint);
        }
        LOG.info("agent {} on subtask {}: action-state store '{}' (attempt {}{})",
                plan.agentName(), subtask(), settings.agentOptions().get(PythonActionState.STORE),
                attempt, restoredCheckpoint >= 0 ? ", restored from checkpoint "
                        + restoredCheckpoint : "");
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        if (actionState != null) { // the steps this snapshot covers are marked for its completion
            actionState.checkpointStarted(context.getCheckpointId());
        }
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        super.notifyCheckpointComplete(checkpointId);
        if (actionState != null) { // prunes the rows the checkpoint covers
            actionState.checkpointCompleted(checkpointId);
        }
    }

    /** The agent's reconciler of durable call {@code callId} ({@code Agent.reconcilerOf}). */
    Reconciler<?> agentReconciler(String callId) {
        return plan.agent().reconcilerOf(callId);
    }

    ClassLoader userClassLoader() {
        return getRuntimeContext().getUserCodeClassLoader();
    }

    private int subtask() {
        return getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
    }

    // ------------------------------------------------------------------ Flink callbacks

    @Override
    public void processElement(StreamRecord<IN> element) throws Exception {
        Object key = getCurrentKey();
        KeyWork<IN> work = load(key);
        if (work == null) {
            Long counter = nextSeq.value();
            long seq = counter == null ? 0 : counter;
            // A new line of runs in this submission; a counter kept for good goes on in its own.
            work = counter == null ? new KeyWork<>(key, seq + 1, incarnation, false)
                    : new KeyWork<>(key, seq + 1, keptIncarnation(), true);
            RunRecord fresh = new RunRecord();
            fresh.keepsCounter = counter != null;
            work.run = newRun(seq, element.getValue(), fresh);
            works.put(key, work);
        } else {
            long seq = work.nextSeq++;
            pending.put(seq, element.getValue());
            nextSeq.update(work.nextSeq);
        }
        proceed(work);
    }

    @Override
    public void onProcessingTime(InternalTimer<K, VoidNamespace> timer) throws Exception {
        KeyWork<IN> work = load(getCurrentKey());
        if (work == null) {
            return;
        }
        if (work.run.record.pollTimer == timer.getTimestamp()) {
            work.run.record.pollTimer = -1;
        }
        proceed(work);
    }

    @Override
    public void onEventTime(InternalTimer<K, VoidNamespace> timer) {}

    /**
     * The input ended: every key with work (in memory or, after a restore, only in keyed state)
     * is driven to its end, all keys side by side: each round advances every key whose awaited
     * call is done, then waits for any call.
     */
    @Override
    public void endInput() throws Exception {
        Set<Object> keys = new LinkedHashSet<>(works.keySet());
        try (Stream<Object> stored = getKeyedStateBackend().getKeys(BUSY, VoidNamespace.INSTANCE)) {
            stored.forEach(keys::add);
        }
        if (!keys.isEmpty()) {
            LOG.info("end of input: draining the work of {} key(s)", keys.size());
        }
        while (!keys.isEmpty()) {
            List<CompletableFuture<?>> awaited = new ArrayList<>();
            for (var it = keys.iterator(); it.hasNext(); ) {
                Object key = it.next();
                setCurrentKey(key);
                KeyWork<IN> work = load(key);
                if (work == null || proceed(work)) {
                    it.remove();
                } else {
                    awaited.add(work.run.parked.future);
                }
            }
            if (!awaited.isEmpty()) {
                CompletableFuture.anyOf(awaited.toArray(new CompletableFuture<?>[0])).handle(
                        (r, e) -> null).get();
            }
        }
    }

    @Override
    public void finish() throws Exception {
        Footprint left = footprint();
        if (!left.isEmpty()) {
            LOG.warn("agent operator finished with engine state left: {}", left);
        }
        super.finish();
    }

    @Override
    public void close() throws Exception {
        try {
            if (pool != null) {
                pool.shutdownNow();
                pool.awaitTermination(30, TimeUnit.SECONDS);
            }
            if (actionState != null) { // after the pool: its calls wrote their results
                actionState.close();
            }
            if (ltm != null) {
                ltm.close();
            }
            if (python != null) {
                python.closeCurrentThreadInterpreter();
            }
        } finally {
            super.close();
        }
    }

    // ------------------------------------------------------------------ runs

    private Run<IN> newRun(long seq, IN input, RunRecord runRecord) {
        Run<IN> run = new Run<>(seq, input, runRecord);
        dispatch(run, new InputEvent(input));
        return run;
    }

    private void dispatch(Run<IN> run, Event event) {
        for (String action : plan.actionsFor(event)) {
            run.steps.add(new Object[] {event, action});
        }
    }

    /** The key's work: in memory, or rebuilt from keyed state after a restore; null if idle. */
    private KeyWork<IN> load(Object key) throws Exception {
        KeyWork<IN> work = works.get(key);
        if (work != null) {
            return work;
        }
        Long head = busy.value();
        if (head == null) {
            return null;
        }
        RunRecord restored = readRecord(record.value());
        // The replay answers recorded calls without running them, so their adds are not
        // counted again in this process: the record says whether they stored items.
        restored.keepsCounter |= restored.callsStoredItems();
        work = new KeyWork<>(key, nextSeq.value(), keptIncarnation(), true);
        work.persisted = true;
        work.run = newRun(head, pending.get(head), restored);
        works.put(key, work);
        LOG.info("resuming input #{} of key '{}' after a restore: {} step(s) done, {} durable "
                + "result(s) recorded", head, key, restored.steps.size(), restored.calls.size());
        return work;
    }

    /** Advances the key's work as far as it goes now; true if the work ended. */
    private boolean proceed(KeyWork<IN> work) throws Exception {
        boolean ended = advance(work);
        if (!ended) {
            persist(work);
        }
        return ended;
    }

    private boolean advance(KeyWork<IN> work) throws Exception {
        while (true) {
            Run<IN> run = work.run;
            if (run.parked != null) {
                if (!run.parked.future.isDone()) {
                    ensurePoll(run);
                    return false;
                }
                // The parked attempt ended before the call started: what the observation
                // stored since is the call's own adds.
                run.record.calls.add(recorded(run.parked.future.join(), run.parked.storesUnder,
                        run.record));
                run.parked = null;
            }
            Object[] step = run.steps.peek();
            if (step == null) {
                endRun(work);
                if (work.run == null) {
                    return true;
                }
                continue;
            }
            if (run.stepIndex < run.record.steps.size()) { // completed before a failure
                run.steps.poll();
                run.record.steps.get(run.stepIndex).forEach(e -> dispatch(run, e));
                run.stepIndex++;
                continue;
            }
            if (!execute(work, (Event) step[0], (String) step[1])) {
                ensurePoll(run);
                return false;
            }
            run.steps.poll();
        }
    }

    String agentName() {
        return plan.agentName();
    }

    private String where(Object key, Run<?> run, String observationId) {
        return "key '" + key + "', input #" + run.seq + ", observation " + observationId;
    }

    /** Runs one attempt of a step; false if it parked on a durable call. */
    private boolean execute(KeyWork<IN> work, Event event, String action) throws Exception {
        Run<IN> run = work.run;
        StepContext.RunJournal journal = null;
        String observationId;
        if (actionState != null) {
            // The store's run names the input, not only its place: the step's observation id
            // (and its long-term-memory item ids) derive from it, as in Python.
            if (run.journalTag == null) {
                run.journalTag = actionState.runOf(String.valueOf(work.key), work.incarnation,
                        run.seq, fingerprint(run.input));
            }
            journal = new StepContext.RunJournal(actionState, run.journalTag, run);
            observationId = run.journalTag.run() + "#" + run.stepIndex;
        } else {
            observationId = Incarnation.observationId(work.key, work.incarnation, run.seq,
                    run.stepIndex);
        }
        StepContext ctx = new StepContext(this, work.key, run.record, action, observationId,
                where(work.key, run, observationId), journal);
        try {
            plan.method(action).invoke(plan.agent(), event, ctx);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause == ParkSignal.INSTANCE && ctx.parked != null) {
                ctx.end();
                // The attempt ends before its call starts: ending it resets the observation's
                // id counters in Python, which must not happen between two adds of the call.
                endObservation(ctx, run);
                ctx.parked.start(pool);
                run.parked = ctx.parked;
                return false;
            }
            throw new AgentActionException("action '" + plan.agentName() + "." + action
                    + "' failed on " + ctx.where + ": " + cause, cause);
        } finally {
            ctx.end();
        }
        if (ctx.parked != null) {
            throw new AgentActionException("action '" + plan.agentName() + "." + action + "' on "
                    + ctx.where + " returned while parked on durable call '" + ctx.parked.id
                    + "': it caught the runtime's signal; don't catch Throwable around "
                    + "durableExecuteAsync", null);
        }
        if (ctx.nextCall < run.record.calls.size()) {
            throw new NonDeterministicReplayException("the replayed action '" + action + "' ("
                    + ctx.where + ") completed after " + ctx.nextCall + " durable call(s), but "
                    + run.record.calls.size() + " were recorded before the failure: an action "
                    + "must make the same durable calls in the same order after a restore");
        }
        endObservation(ctx, run);
        if (run.journalUsed) { // its rows go once a checkpoint that covers the step completed
            run.journalUsed = false;
            actionState.stepDone(observationId);
        }
        RunRecord r = run.record;
        ArrayList<Event> sent = new ArrayList<>(ctx.sent);
        r.steps.add(sent);
        r.shortTerm.putAll(ctx.shortTermWrites);
        r.sensory.putAll(ctx.sensoryWrites);
        for (Event e : sent) {
            if (e instanceof OutputEvent) {
                r.outputs.add(((OutputEvent) e).getOutput());
            }
        }
        r.calls.clear();
        run.stepIndex++;
        sent.forEach(e -> dispatch(run, e));
        return true;
    }

    /**
     * Ends the attempt's action in Python's long-term memory, which also resets its
     * replay-stable id counters, so the next attempt mints the same ids. An attempt that parks
     * ends before its durable call is submitted: a reset while the call runs would let the
     * call's next add at its write position reuse an earlier add's id, overwriting its row.
     * The call then mints from a clean count at its own write position, the same ids on every
     * run of it. That call's adds are therefore not in the parked attempt's count: they are
     * counted when the call's result is recorded ({@link #recorded}), and again by the next
     * attempt's end. A key whose attempts stored an item keeps its input counter (part of
     * every id) for good; one whose actions only searched or read does not. Java actions emit
     * no memory events, so every attempt ends as not completed: Python drops its observations
     * instead of sending them over.
     */
    private void endObservation(StepContext ctx, Run<IN> run) {
        if (ltm == null || !ctx.usedLongTermMemory) {
            return;
        }
        if (ltm.endAction(ctx.observationId, false).itemsAdded() > 0) {
            run.record.keepsCounter = true;
        }
    }

    /**
     * A durable call's record, saying whether its step had stored long-term-memory items by
     * now (mailbox thread). {@code storesUnder}: the observation the adds count under, null if
     * the attempt did not use long-term memory. A synchronous call is counted with the
     * attempt's adds so far; an awaited one alone (its parked attempt ended before it started).
     * If so, the key keeps its input counter at once, and the record tells a replay, which
     * answers the call without storing again.
     */
    RunRecord.RecordedCall recorded(RunRecord.RecordedCall call, String storesUnder,
            RunRecord runRecord) {
        boolean stored = storesUnder != null && ltm != null && ltm.itemsStoredBy(storesUnder) != 0;
        if (stored) {
            runRecord.keepsCounter = true;
        }
        return call.storing(stored);
    }

    @SuppressWarnings("unchecked")
    private void endRun(KeyWork<IN> work) throws Exception {
        Run<IN> run = work.run;
        for (Object out : run.record.outputs) {
            output.collect(new StreamRecord<>((OUT) out));
        }
        for (Map.Entry<String, Object> e : run.record.shortTerm.entrySet()) {
            if (e.getValue() == RunRecord.Removed.INSTANCE) {
                shortTerm.remove(e.getKey());
            } else {
                shortTerm.put(e.getKey(), serialize(e.getValue(), "short-term memory field '"
                        + e.getKey() + "' of key '" + work.key + "'"));
            }
        }
        boolean keepsCounter = run.record.keepsCounter;
        long pollTimer = run.record.pollTimer;
        if (work.persisted) {
            pending.remove(run.seq);
        }
        long next = run.seq + 1;
        if (next < work.nextSeq) {
            RunRecord fresh = new RunRecord();
            fresh.keepsCounter = keepsCounter;
            fresh.pollTimer = pollTimer;
            work.run = newRun(next, pending.get(next), fresh);
            return;
        }
        work.run = null;
        works.remove(work.key);
        if (pollTimer >= 0) {
            timers.deleteProcessingTimeTimer(VoidNamespace.INSTANCE, pollTimer);
        }
        if (work.persisted) {
            busy.clear();
            record.clear();
            pending.clear();
        }
        if (keepsCounter) {
            nextSeq.update(work.nextSeq);
            keepIncarnation(work);
        } else {
            nextSeq.clear();
            if (work.incarnationKept) { // written when the work was stored
                keptIncarnation.clear();
            }
        }
    }

    /**
     * The incarnation a key's counter counts in: kept beside it, or legacy if the counter was
     * written by a build before incarnations (or by none: a key without state has no counter).
     */
    private String keptIncarnation() throws IOException {
        String kept = keptIncarnation.value();
        return kept == null ? Incarnation.LEGACY : kept;
    }

    /** Writes the key's incarnation beside its counter, once (legacy is never written). */
    private void keepIncarnation(KeyWork<IN> work) throws IOException {
        if (!work.incarnationKept) {
            if (!Incarnation.LEGACY.equals(work.incarnation)) {
                keptIncarnation.update(work.incarnation);
            }
            work.incarnationKept = true;
        }
    }

    private void ensurePoll(Run<IN> run) {
        if (run.record.pollTimer < 0) {
            long at = getProcessingTimeService().getCurrentProcessingTime() + settings.pollMillis();
            timers.registerProcessingTimeTimer(VoidNamespace.INSTANCE, at);
            run.record.pollTimer = at;
        }
    }

    /** Writes the parked run to keyed state (a checkpoint then sees whole steps). */
    private void persist(KeyWork<IN> work) throws Exception {
        Run<IN> run = work.run;
        if (!work.persisted) {
            pending.put(run.seq, run.input);
            nextSeq.update(work.nextSeq);
            keepIncarnation(work); // a restore goes on in the key's line
            work.persisted = true;
        }
        busy.update(run.seq);
        record.update(serialize(run.record, "the run record of key '" + work.key + "' (the events "
                + "its steps sent, its outputs and memory writes)"));
    }

    /**
     * What identifies an input across a recovery: a digest of its serialized value (the Java
     * twin of Python's {@code input_fingerprint}: 32 hex digits of SHA-256).
     */
    private String fingerprint(IN input) throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(64);
        inputSerializer.serialize(input, out);
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.update(out.getSharedBuffer(), 0, out.length());
            StringBuilder hex = new StringBuilder();
            for (byte b : digest.digest()) {
                hex.append(String.format("%02x", b));
            }
            return hex.substring(0, 32);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] serialize(Object value, String what) {
        try {
            return InstantiationUtil.serializeObject(value);
        } catch (IOException e) {
            throw new AgentActionException(what + " does not serialize (" + e + "): events, "
                    + "outputs and memory values are kept in keyed state; make them Serializable",
                    e);
        }
    }

    private RunRecord readRecord(byte[] bytes) throws Exception {
        return bytes == null ? new RunRecord()
                : InstantiationUtil.deserializeObject(bytes, userClassLoader());
    }

    // ------------------------------------------------------------------ memories

    Object shortTermValue(String name) {
        try {
            byte[] bytes = shortTerm.get(name);
            return bytes == null ? null : InstantiationUtil.deserializeObject(bytes, userClassLoader());
        } catch (Exception e) {
            throw new IllegalStateException("short-term memory field '" + name + "' of key '"
                    + getCurrentKey() + "' cannot be read: " + e, e);
        }
    }

    Set<String> shortTermNames() {
        try {
            Set<String> names = new TreeSet<>();
            shortTerm.keys().forEach(names::add);
            return names;
        } catch (Exception e) {
            throw new IllegalStateException("short-term memory of key '" + getCurrentKey()
                    + "' cannot be read: " + e, e);
        }
    }

    BaseLongTermMemory longTermMemory(StepContext ctx, Object key, String observationId) {
        if (!settings.hasLongTermMemory()) {
            throw new IllegalStateException("action '" + plan.agentName() + "." + ctx.action
                    + "' (" + ctx.where + ") asked for long-term memory, but the job has none: "
                    + "call AgentsExecutionEnvironment.withLongTermMemory(python, jobId, config) "
                    + "before fromDataStream");
        }
        if (ltm == null) { // on the mailbox thread: the action's
            ltm = PythonLongTermMemory.open(python, settings.memoryJobId(), settings.memoryConfig(),
                    MailboxThreadChecker.ofCurrentThread());
            LOG.info("subtask {} opened long-term memory {} (job id {}, {})", subtask(),
                    ltm.getHandle(), settings.memoryJobId(),
                    ConfigSecrets.redact(settings.memoryConfig()));
        }
        ltm.switchContext(key, observationId, false);
        return ltm;
    }

    // ------------------------------------------------------------------ footprint

    /**
     * How many keys' work is in memory, each parked on a durable call not done yet (the rest
     * would go on at their next poll); for tests that wait until the operator is quiet.
     */
    int keysAwaitingACall() {
        int awaiting = 0;
        for (KeyWork<IN> work : works.values()) {
            if (work.run != null && work.run.parked != null && !work.run.parked.future.isDone()) {
                awaiting++;
            }
        }
        return awaiting;
    }

    /** The engine's keyed state entries and timers now (short-term memory not counted). */
    public Footprint footprint() throws Exception {
        int processing = -1;
        int event = -1;
        if (timers instanceof InternalTimerServiceImpl) {
            processing = ((InternalTimerServiceImpl<?, ?>) timers).numProcessingTimeTimers();
            event = ((InternalTimerServiceImpl<?, ?>) timers).numEventTimeTimers();
        }
        Map<String, Long> keys = new HashMap<>();
        for (String state : List.of(BUSY, PENDING, RECORD, NEXT_SEQ, INCARNATION)) {
            try (Stream<Object> stored = getKeyedStateBackend().getKeys(state, VoidNamespace.INSTANCE)) {
                keys.put(state, stored.count());
            }
        }
        return new Footprint(keys, processing, event, works.size());
    }

    /** What {@link #footprint()} found. */
    public static final class Footprint implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        /** Keys with an entry, per engine state. */
        public final Map<String, Long> keysPerState;
        public final int processingTimers;
        public final int eventTimers;
        public final int keysInMemory;

        Footprint(Map<String, Long> keys, int processing, int event, int inMemory) {
            this.keysPerState = Map.copyOf(keys);
            this.processingTimers = processing;
            this.eventTimers = event;
            this.keysInMemory = inMemory;
        }

        /**
         * Nothing but the input counters (and their incarnations) of keys that stored
         * long-term-memory items.
         */
        public boolean isEmpty() {
            return keysPerState.entrySet().stream()
                    .filter(e -> !e.getKey().equals(NEXT_SEQ) && !e.getKey().equals(INCARNATION))
                    .allMatch(e -> e.getValue() == 0)
                    && keysPerState.getOrDefault(INCARNATION, 0L)
                            <= keysPerState.getOrDefault(NEXT_SEQ, 0L)
                    && processingTimers == 0 && eventTimers == 0 && keysInMemory == 0;
        }

        @Override
        public String toString() {
            return keysPerState.entrySet().stream().sorted(Map.Entry.comparingByKey())
                    .map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(", "))
                    + ", processing timers=" + processingTimers + ", event timers=" + eventTimers
                    + ", keys in memory=" + keysInMemory;
        }
    }
}
