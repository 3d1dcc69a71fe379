package org.flinkagents.ltm.job;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.streaming.api.TimeDomain;
import org.apache.flink.streaming.api.TimerService;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.flinkagents.ltm.api.memory.MemorySet;
import org.flinkagents.ltm.api.memory.MemorySetItem;
import org.flinkagents.ltm.runtime.memory.ConfigSecrets;
import org.flinkagents.ltm.runtime.memory.MailboxThreadChecker;
import org.flinkagents.ltm.runtime.memory.PythonLongTermMemory;
import org.flinkagents.ltm.runtime.memory.PythonRuntime;
import org.flinkagents.ltm.api.PythonSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Java agent: for each {@code (key, note)} it remembers the note in the key's long-term memory
 * and recalls the key's notes most similar to it.
 *
 * <p>This function's thread is the operator's mailbox thread. Before each action it switches the
 * long-term memory's context to the record's key and obtains the memory set there; the set
 * operations then run on a worker pool, so the mailbox keeps processing other keys while Mem0
 * embeds and searches. Actions of one key run one after another, in input order. Results are
 * emitted on the mailbox thread from a timer registered for the key: processing-time timers
 * emit what has completed, and an event-time timer at {@code Long.MAX_VALUE} (fired by the final
 * watermark of a bounded input) waits for the rest, so nothing is lost when the input ends.
 *
 * <p>Replay-stable observation ids: each key counts its inputs in keyed state, and the action
 * of the key's n-th input runs under observation id {@code key#n#0} ({@link #observationId};
 * step 0, the single action). The count and the input itself (kept in keyed state until its
 * result is emitted) are written in the same {@code processElement}, so a restore from a
 * checkpoint reproduces the ids exactly: inputs after the checkpoint come again with the same
 * numbers, and inputs whose results were not emitted before it run again under their own ids.
 * Each note is stored with metadata {@code {"observation": <its observation id>}}.
 *
 * <p>Output lines: {@code key \t note \t hits=<v1|v2|...> \t items=<n> \t observed=<ops> \t
 * subtask=<i>}, where {@code items} counts the key's notes after this action, {@code observed}
 * lists the memory operations recorded under the action's observation id and {@code subtask} is
 * the index of the subtask that ran the action.
 */
public class MemoryAgentFunction extends KeyedProcessFunction<String, Tuple2<String, String>, String> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(MemoryAgentFunction.class);
    private static final long POLL_MILLIS = 10;
    /** The metadata key under which each note records the observation id that wrote it. */
    public static final String OBSERVATION_METADATA = "observation";

    private final PythonSettings python;
    private final String memoryJobId;
    private final HashMap<String, Object> memoryConfig;
    private final String setName;
    private final int workers;

    private transient PythonRuntime runtime;
    private transient PythonLongTermMemory ltm;
    private transient ExecutorService pool;
    /** Per key: the number of inputs received (the sequence number of the latest). */
    private transient ValueState<Long> inputCount;
    /** Per key: the inputs (sequence number, note) whose results were not emitted yet. */
    private transient ListState<Tuple2<Long, String>> unemitted;
    private transient Map<String, ArrayDeque<Action>> pending;
    private transient Map<String, CompletableFuture<String>> lastOfKey;

    public MemoryAgentFunction(
            PythonSettings python,
            String memoryJobId,
            Map<String, Object> memoryConfig,
            String setName,
            int workers) {
        this.python = python;
        this.memoryJobId = memoryJobId;
        this.memoryConfig = new HashMap<>(memoryConfig);
        this.setName = setName;
        this.workers = workers;
    }

    /** The observation id of step {@code step} of the key's {@code sequence}-th input. */
    public static String observationId(String key, long sequence, int step) {
        return key + "#" + sequence + "#" + step;
    }

    @Override
    public void open(OpenContext openContext) {
        inputCount = getRuntimeContext().getState(new ValueStateDescriptor<>("input-count", Types.LONG));
        unemitted = getRuntimeContext().getListState(
                new ListStateDescriptor<>("unemitted-inputs", Types.TUPLE(Types.LONG, Types.STRING)));
        runtime = PythonRuntime.get(python);
        pool = Executors.newFixedThreadPool(workers, runtime.threadFactory("ltm-worker"));
        // open() runs on the task's mailbox thread, like processElement and onTimer.
        ltm = PythonLongTermMemory.open(
                runtime, memoryJobId, memoryConfig, MailboxThreadChecker.ofCurrentThread());
        LOG.info("subtask {} opened long-term memory {} (job id {}, {}) with {} workers",
                subtask(), ltm.getHandle(), memoryJobId, ConfigSecrets.redact(memoryConfig),
                workers);
        pending = new HashMap<>();
        lastOfKey = new HashMap<>();
    }

    @Override
    public void processElement(Tuple2<String, String> note, Context ctx, Collector<String> out)
            throws Exception {
        String key = ctx.getCurrentKey();
        resumeRestored(key, ctx.timerService());
        Long received = inputCount.value();
        long sequence = received == null ? 1 : received + 1;
        inputCount.update(sequence);
        unemitted.add(Tuple2.of(sequence, note.f1));
        start(key, sequence, note.f1, ctx.timerService());
    }

    /**
     * After a restore, the key's inputs whose results the checkpoint did not hold run again, in
     * order and under their own sequence numbers, before anything else of the key.
     */
    private void resumeRestored(String key, TimerService timers) throws Exception {
        if (pending.containsKey(key)) {
            return;
        }
        for (Tuple2<Long, String> input : unemitted.get()) {
            start(key, input.f0, input.f1, timers);
        }
    }

    /** Obtains the set on the mailbox thread and hands the action to the worker pool. */
    private void start(String key, long sequence, String note, TimerService timers) {
        String observationId = observationId(key, sequence, 0);
        ltm.switchContext(key, observationId, false);
        MemorySet notes = ltm.getMemorySet(setName); // mailbox thread: bound to this key

        CompletableFuture<String> previous =
                lastOfKey.getOrDefault(key, CompletableFuture.completedFuture(null));
        CompletableFuture<String> result =
                previous.handle((ignored, error) -> null)
                        .thenApplyAsync(ignored -> act(notes, note), pool);
        lastOfKey.put(key, result);
        pending.computeIfAbsent(key, k -> new ArrayDeque<>()).add(new Action(observationId, result));

        timers.registerProcessingTimeTimer(timers.currentProcessingTime() + POLL_MILLIS);
        timers.registerEventTimeTimer(Long.MAX_VALUE);
    }

    /** Runs on a worker thread: only the set's own operations, which carry the key. */
    protected String act(MemorySet notes, String note) {
        notes.add(List.of(note), List.of(Map.of(OBSERVATION_METADATA, notes.getObservationId())));
        List<MemorySetItem> hits = notes.search(note, 3);
        int items = notes.get().size();
        return notes.getPartitionKey()
                + "\t" + note
                + "\thits=" + hits.stream().map(MemorySetItem::getValue).collect(Collectors.joining("|"))
                + "\titems=" + items;
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<String> out) throws Exception {
        String key = ctx.getCurrentKey();
        resumeRestored(key, ctx.timerService());
        ArrayDeque<Action> queue = pending.get(key);
        if (queue == null) {
            return;
        }
        boolean endOfInput = ctx.timeDomain() == TimeDomain.EVENT_TIME;
        int emitted = 0;
        while (!queue.isEmpty() && (endOfInput || queue.peek().result.isDone())) {
            Action action = queue.poll();
            String line = action.result.join(); // a failed action fails the task
            String observed =
                    ltm.drainObservations(action.observationId).stream()
                            .map(o -> String.valueOf(o.get("op")))
                            .collect(Collectors.joining(","));
            out.collect(line + "\tobserved=" + observed + "\tsubtask=" + subtask());
            emitted++;
        }
        if (emitted > 0) {
            List<Tuple2<Long, String>> rest = new ArrayList<>();
            unemitted.get().forEach(rest::add);
            unemitted.update(new ArrayList<>(rest.subList(emitted, rest.size())));
        }
        if (queue.isEmpty()) {
            pending.remove(key);
            lastOfKey.remove(key);
        } else {
            ctx.timerService().registerProcessingTimeTimer(
                    ctx.timerService().currentProcessingTime() + POLL_MILLIS);
        }
    }

    private int subtask() {
        return getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
    }

    @Override
    public void close() throws Exception {
        if (pool != null) {
            pool.shutdown();
            pool.awaitTermination(30, TimeUnit.SECONDS);
        }
        if (ltm != null) {
            ltm.close();
        }
        if (runtime != null) {
            runtime.closeCurrentThreadInterpreter();
        }
    }

    private static final class Action {
        final String observationId;
        final CompletableFuture<String> result;

        Action(String observationId, CompletableFuture<String> result) {
            this.observationId = observationId;
            this.result = result;
        }
    }
}
