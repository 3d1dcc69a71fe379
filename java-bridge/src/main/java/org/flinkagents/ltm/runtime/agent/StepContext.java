package org.flinkagents.ltm.runtime.agent;

import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.function.Function;
import java.util.function.Supplier;

import org.apache.flink.util.InstantiationUtil;
import org.flinkagents.ltm.api.DurableCallable;
import org.flinkagents.ltm.api.Event;
import org.flinkagents.ltm.api.MemoryObject;
import org.flinkagents.ltm.api.Reconciler;
import org.flinkagents.ltm.api.RunnerContext;
import org.flinkagents.ltm.api.memory.BaseLongTermMemory;
import org.flinkagents.ltm.runtime.memory.PythonActionState;
import org.flinkagents.ltm.runtime.memory.WritePosition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The context of one attempt of one step (one action on one event). Everything the attempt
 * sends or writes stays here until the step completes; an attempt that parks is dropped and the
 * step runs again from its start once the awaited call is recorded.
 */
final class StepContext implements RunnerContext {
    private static final Logger LOG = LoggerFactory.getLogger(StepContext.class);
    private final AgentOperator<?, ?, ?> operator;
    private final Object key;
    private final RunRecord record;
    final String action;
    final String observationId;
    final String where;
    final ArrayList<Event> sent = new ArrayList<>();
    final HashMap<String, Object> shortTermWrites = new HashMap<>();
    final HashMap<String, Object> sensoryWrites = new HashMap<>();
    int nextCall;
    InFlight parked;
    boolean usedLongTermMemory;
    private boolean active = true;
    /** The mailbox thread the action runs on: the only one that may use this context. */
    private final Thread mailbox = Thread.currentThread();
    /** The id of the synchronous durable call running now, or {@code null}. */
    private String runningCall;

    /** The run's journal of the action-state store, or null when the store is off. */
    private final RunJournal journal;

    StepContext(AgentOperator<?, ?, ?> operator, Object key, RunRecord record, String action,
            String observationId, String where) {
        this(operator, key, record, action, observationId, where, null);
    }

    StepContext(AgentOperator<?, ?, ?> operator, Object key, RunRecord record, String action,
            String observationId, String where, RunJournal journal) {
        this.journal = journal;
        this.operator = operator;
        this.key = key;
        this.record = record;
        this.action = action;
        this.observationId = observationId;
        this.where = where;
    }

    /**
     * A durable call that the step awaits: prepared by the action, submitted to the pool by the
     * operator ({@link #start}) only once the attempt has ended, so that the end of the attempt
     * (which resets Python's replay-stable id counters of the observation) cannot fall between
     * two adds of the running call.
     */
    static final class InFlight {
        final int index;
        final String id;
        /**
         * The observation id the call's long-term-memory adds count under, or null if the
         * attempt did not use long-term memory (the call has no set to store into then).
         */
        final String storesUnder;
        private final Supplier<RunRecord.RecordedCall> call;
        /** Null until {@link #start}. */
        CompletableFuture<RunRecord.RecordedCall> future;

        InFlight(int index, String id, String storesUnder, Supplier<RunRecord.RecordedCall> call) {
            this.index = index;
            this.id = id;
            this.storesUnder = storesUnder;
            this.call = call;
        }

        void start(ExecutorService pool) {
            future = CompletableFuture.supplyAsync(call, pool);
        }
    }

    void end() {
        active = false;
    }

    private void checkActive(String what) {
        if (Thread.currentThread() != mailbox) {
            throw new IllegalStateException(what + " called from thread '"
                    + Thread.currentThread().getName() + "' outside action '" + qualified()
                    + "' (" + where + "): a RunnerContext works only in the action's own code on "
                    + "the mailbox thread, not inside a durable call or a thread of your own; "
                    + "return what you need from the call and use it in the action");
        }
        if (runningCall != null) {
            throw new IllegalStateException(what + " inside durable call '" + runningCall
                    + "' of action '" + qualified() + "' (" + where + "): durable calls don't "
                    + "nest and don't use the context; return what you need from the call and "
                    + "use it in the action");
        }
        if (!active) {
            throw new IllegalStateException(what + " on the context of action '" + qualified()
                    + "' (" + where + ") after the action returned: a RunnerContext is valid only "
                    + "during the action that received it; keep no reference to it");
        }
        if (parked != null) {
            throw new IllegalStateException(what + " in action '" + qualified() + "' (" + where
                    + ") after durableExecuteAsync parked it: let the runtime's signal (an Error) "
                    + "propagate, don't catch Throwable around durableExecuteAsync");
        }
    }

    /** The action as errors name it: {@code Agent.method}. */
    String qualified() {
        return operator.agentName() + "." + action;
    }

    @Override
    public void sendEvent(Event event) {
        checkActive("sendEvent");
        if (event == null) {
            throw new IllegalArgumentException("action '" + qualified() + "' (" + where + ") sent "
                    + "null: send an Event (an OutputEvent for an output)");
        }
        sent.add(event);
    }

    @Override
    public MemoryObject getShortTermMemory() {
        checkActive("getShortTermMemory");
        return new Fields("short-term memory", shortTermWrites, record.shortTerm,
                operator::shortTermValue, operator::shortTermNames);
    }

    @Override
    public MemoryObject getSensoryMemory() {
        checkActive("getSensoryMemory");
        return new Fields("sensory memory", sensoryWrites, record.sensory, n -> null, TreeSet::new);
    }

    @Override
    public BaseLongTermMemory getLongTermMemory() {
        checkActive("getLongTermMemory");
        usedLongTermMemory = true;
        return operator.longTermMemory(this, key, observationId);
    }

    @Override
    public Object getKey() {
        return key;
    }

    private RunRecord.RecordedCall replayed(DurableCallable<?> callable) {
        if (callable == null) {
            throw new IllegalArgumentException("action '" + qualified() + "' (" + where + ") passed a "
                    + "null DurableCallable: pass DurableCallable.of(id, () -> ...)");
        }
        int index = nextCall;
        if (index >= record.calls.size()) {
            return null;
        }
        RunRecord.RecordedCall recorded = record.calls.get(index);
        if (!recorded.id.equals(callable.getId())) {
            throw new NonDeterministicReplayException("durable call #" + index + " of action '"
                    + qualified() + "' (" + where + ") was recorded as '" + recorded.id + "', but the "
                    + "replayed action now calls '" + callable.getId() + "': after a restore an "
                    + "action must make the same durable calls in the same order; its code "
                    + "changed since the checkpoint, or its control flow depends on time, "
                    + "randomness or outside state");
        }
        nextCall++;
        return recorded;
    }

    @SuppressWarnings("unchecked")
    private <T> T answer(RunRecord.RecordedCall recorded) throws Exception {
        Object value;
        try {
            value = InstantiationUtil.deserializeObject(recorded.result, operator.userClassLoader());
        } catch (IOException | ClassNotFoundException e) {
            throw new IllegalStateException("the recorded result of durable call '" + recorded.id
                    + "' of action '" + qualified() + "' (" + where + ") cannot be read back: " + e, e);
        }
        if (recorded.failed) {
            if (value instanceof Exception) {
                throw (Exception) value;
            }
            throw (Error) value;
        }
        return (T) value;
    }

    @Override
    public <T> T durableExecute(DurableCallable<T> callable) throws Exception {
        checkActive("durableExecute");
        RunRecord.RecordedCall recorded = replayed(callable);
        if (recorded == null) {
            recorded = writtenAhead(callable);
            if (recorded != null) {
                return answer(recorded);
            }
            WriteAhead ahead = writeAhead(callable);
            int index = nextCall++;
            runningCall = callable.getId();
            try {
                recorded = run(callable, index, qualified(), where, ahead);
            } finally {
                runningCall = null;
            }
            // The attempt's adds so far (the call's included) are counted in Python until the
            // attempt ends; the record keeps whether there were any, for a replay.
            record.calls.add(operator.recorded(recorded, usedLongTermMemory ? observationId : null,
                    record));
        }
        return answer(recorded);
    }

    @Override
    public <T> T durableExecuteAsync(DurableCallable<T> callable) throws Exception {
        checkActive("durableExecuteAsync");
        RunRecord.RecordedCall recorded = replayed(callable);
        if (recorded == null) {
            recorded = writtenAhead(callable);
        }
        if (recorded != null) {
            return answer(recorded);
        }
        WriteAhead ahead = writeAhead(callable);
        int index = nextCall;
        String action = qualified();
        parked = new InFlight(index, callable.getId(), usedLongTermMemory ? observationId : null,
                () -> run(callable, index, action, where, ahead));
        throw ParkSignal.INSTANCE; // the operator ends the attempt, then starts the call
    }

    /**
     * Runs a call at its write position and records what it gave (any thread); whether it
     * stored items is filled in on the mailbox thread ({@link AgentOperator#recorded}).
     */
    static RunRecord.RecordedCall run(DurableCallable<?> callable, int index, String action,
            String where, WriteAhead ahead) {
        Object value;
        boolean failed = false;
        try {
            value = WritePosition.at(WritePosition.call(index),
                    ahead == null ? callable::call : () -> ahead.call(callable));
        } catch (Exception e) {
            value = e;
            failed = true;
        }
        try {
            byte[] bytes = InstantiationUtil.serializeObject(value);
            if (ahead != null) {
                // A failed call keeps its started marker only: it may have had its effect
                // before it threw, so a replay asks its reconciler (as in Python).
                if (failed) {
                    ahead.abandoned();
                } else {
                    ahead.completed(bytes);
                }
            }
            return new RunRecord.RecordedCall(callable.getId(), bytes, failed, null);
        } catch (IOException e) {
            if (ahead != null) {
                ahead.abandoned();
            }
            String type = value == null ? "null" : value.getClass().getName();
            throw new AgentActionException("durable call '" + callable.getId() + "' (#" + index
                    + ") of action '" + action + "' (" + where + ") " + (failed ? "threw" : "returned")
                    + " a " + type + ", which does not serialize (" + e + "): its result is kept "
                    + "in keyed state, return a Serializable value", e);
        }
    }

    /**
     * The action-state store of a run: its journal, its run tag (found on first use) and
     * whether a step of it wrote or read a row ({@code used}: its rows are marked done when
     * the step ends, and the key keeps its input counter).
     */
    static final class RunJournal {
        final PythonActionState store;
        final PythonActionState.RunTag tag;
        final AgentOperator.Run<?> run;

        RunJournal(PythonActionState store, PythonActionState.RunTag tag,
                AgentOperator.Run<?> run) {
            this.store = store;
            this.tag = tag;
            this.run = run;
        }

        void used() {
            run.journalUsed = true;
            run.record.keepsCounter = true; // its observation ids are never reused
        }
    }

    /**
     * Store on, a call Flink's state does not hold: its result as the store holds it (written
     * by a process that failed before a checkpoint took it), recorded now and answered without
     * calling; else null. Whether it stored long-term-memory items is unknown here, so the
     * record says it may have.
     */
    private RunRecord.RecordedCall writtenAhead(DurableCallable<?> callable) {
        pendingStarted = false;
        if (journal == null || !journal.tag.hasRows()) {
            return null; // a new run: nothing of it was written before
        }
        String position = WritePosition.call(nextCall);
        PythonActionState.Found found;
        try {
            found = journal.store.replay(observationId, position, callable.getId());
        } catch (PythonActionState.ReplayMismatch e) {
            throw new NonDeterministicReplayException("action '" + qualified() + "' (" + where
                    + "): " + e.getMessage());
        }
        if (found.state() == PythonActionState.State.MISSING) {
            return null;
        }
        journal.used();
        LOG.info("durable call '{}' at {} of {}: {}", callable.getId(), position, observationId,
                found.state() == PythonActionState.State.RESULT
                        ? "its result written ahead answers it, without calling"
                        : "started before a failure and never returned: it asks its "
                                + "reconciler, if it has one, else runs again");
        if (found.state() == PythonActionState.State.STARTED) {
            pendingStarted = true;
            return null;
        }
        RunRecord.RecordedCall recorded = new RunRecord.RecordedCall(callable.getId(),
                found.result(), false, null);
        record.calls.add(recorded);
        nextCall++;
        return recorded;
    }

    /** {@link #writtenAhead} found the call's started marker and no result. */
    private boolean pendingStarted;

    /** Store on: the call's write-ahead (its marker, its result, its reconciler); else null. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private WriteAhead writeAhead(DurableCallable<?> callable) {
        if (journal == null) {
            return null;
        }
        String position = WritePosition.call(nextCall);
        String token = journal.store.start(journal.tag, observationId, position, callable.getId());
        journal.used();
        Reconciler<?> reconciler = callable.getReconciler();
        if (reconciler == null) {
            reconciler = operator.agentReconciler(callable.getId());
        }
        return new WriteAhead(journal.store, token, pendingStarted ? (Reconciler) reconciler : null,
                callable.getId(), position, observationId);
    }

    /**
     * A call's write-ahead, run where the call runs: the started marker just before it (no
     * side effect before the marker is written), the reconciler first if a failure cut an
     * earlier attempt off, the result just after it returned.
     */
    static final class WriteAhead {
        private final PythonActionState store;
        private final String token;
        private final Reconciler<Object> reconciler;
        private final String name;
        private final String position;
        private final String observation;

        WriteAhead(PythonActionState store, String token, Reconciler<Object> reconciler,
                String name, String position, String observation) {
            this.store = store;
            this.token = token;
            this.reconciler = reconciler;
            this.name = name;
            this.position = position;
            this.observation = observation;
        }

        Object call(DurableCallable<?> callable) throws Exception {
            store.started(token);
            if (reconciler != null) {
                Object reconciled = reconciler.reconcile();
                if (reconciled != Reconciler.CALL_AGAIN) {
                    LOG.info("durable call '{}' at {} of {}: its reconciler answered it",
                            name, position, observation);
                    return reconciled;
                }
                LOG.info("durable call '{}' at {} of {}: its reconciler found no effect, it "
                        + "runs again", name, position, observation);
            }
            return callable.call();
        }

        void completed(byte[] result) {
            try {
                store.completed(token, result);
            } catch (RuntimeException e) {
                // The call stays "started": a later recovery asks its reconciler, as after a
                // crash (the message names the store, never the result).
                LOG.warn("durable call '{}' at {} of {}: its result could not be written ahead, "
                        + "it stays started: {}", name, position, observation, e.getMessage());
            }
        }

        void abandoned() {
            try {
                store.abandoned(token);
            } catch (RuntimeException e) {
                LOG.debug("durable call '{}': dropping its write-ahead failed: {}", name,
                        e.getMessage());
            }
        }
    }

    /** A memory seen through this attempt's writes, the run's and the key's state. */
    private final class Fields implements MemoryObject {
        private final String what;
        private final Map<String, Object> writes;
        private final Map<String, Object> ofRun;
        private final Function<String, Object> stored;
        private final java.util.function.Supplier<Set<String>> storedNames;

        Fields(String what, Map<String, Object> writes, Map<String, Object> ofRun,
                Function<String, Object> stored, java.util.function.Supplier<Set<String>> names) {
            this.what = what;
            this.writes = writes;
            this.ofRun = ofRun;
            this.stored = stored;
            this.storedNames = names;
        }

        @Override
        public Object get(String name) {
            checkActive(what + ".get");
            Object value = writes.containsKey(name) ? writes.get(name)
                    : ofRun.containsKey(name) ? ofRun.get(name) : stored.apply(name);
            return value == RunRecord.Removed.INSTANCE ? null : value;
        }

        @Override
        public void set(String name, Object value) {
            checkActive(what + ".set");
            if (name == null) {
                throw new IllegalArgumentException("action '" + qualified() + "' (" + where + ") "
                        + "set a field of its " + what + " with a null name: name the field");
            }
            if (value != null && !(value instanceof Serializable)) {
                throw new IllegalArgumentException("action '" + qualified() + "' (" + where + ") set "
                        + what + " field '" + name + "' to a " + value.getClass().getName()
                        + ", which is not Serializable: the " + what + " is kept in keyed state, "
                        + "store a Serializable value (String, Long, a Serializable class)");
            }
            writes.put(name, value == null ? RunRecord.Removed.INSTANCE : value);
        }

        @Override
        public boolean isExist(String name) {
            return get(name) != null;
        }

        @Override
        public Set<String> getFieldNames() {
            checkActive(what + ".getFieldNames");
            Set<String> names = new TreeSet<>(storedNames.get());
            for (Map<String, Object> layer : java.util.List.of(ofRun, writes)) {
                for (Map.Entry<String, Object> e : layer.entrySet()) {
                    if (e.getValue() == RunRecord.Removed.INSTANCE) {
                        names.remove(e.getKey());
                    } else {
                        names.add(e.getKey());
                    }
                }
            }
            return names;
        }
    }
}
