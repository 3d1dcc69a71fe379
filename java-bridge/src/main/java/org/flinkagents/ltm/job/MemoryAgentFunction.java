package org.flinkagents.ltm.job;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.streaming.api.TimeDomain;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.flinkagents.ltm.api.memory.MemorySet;
import org.flinkagents.ltm.api.memory.MemorySetItem;
import org.flinkagents.ltm.runtime.memory.MailboxThreadChecker;
import org.flinkagents.ltm.runtime.memory.PythonLongTermMemory;
import org.flinkagents.ltm.runtime.memory.PythonRuntime;
import org.flinkagents.ltm.runtime.memory.PythonSettings;

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
 * <p>Output lines: {@code key \t note \t hits=<v1|v2|...> \t items=<n> \t observed=<ops> \t
 * subtask=<i>}, where {@code items} counts the key's notes after this action, {@code observed}
 * lists the memory operations recorded under the action's observation id and {@code subtask} is
 * the index of the subtask that ran the action.
 *
 * <p>In-flight actions are not part of Flink state: after a failure, actions whose results were
 * not emitted run again (their notes may then be stored twice).
 */
public class MemoryAgentFunction extends KeyedProcessFunction<String, Tuple2<String, String>, String> {
    private static final long serialVersionUID = 1L;
    private static final long POLL_MILLIS = 10;

    private final PythonSettings python;
    private final String memoryJobId;
    private final HashMap<String, Object> memoryConfig;
    private final String setName;
    private final int workers;

    private transient PythonRuntime runtime;
    private transient PythonLongTermMemory ltm;
    private transient ExecutorService pool;
    private transient Map<String, ArrayDeque<Action>> pending;
    private transient Map<String, CompletableFuture<String>> lastOfKey;
    private transient long actions;

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

    @Override
    public void open(OpenContext openContext) {
        runtime = PythonRuntime.get(python);
        pool = Executors.newFixedThreadPool(workers, runtime.threadFactory("ltm-worker"));
        // open() runs on the task's mailbox thread, like processElement and onTimer.
        ltm = PythonLongTermMemory.open(
                runtime, memoryJobId, memoryConfig, MailboxThreadChecker.ofCurrentThread());
        pending = new HashMap<>();
        lastOfKey = new HashMap<>();
    }

    @Override
    public void processElement(Tuple2<String, String> note, Context ctx, Collector<String> out) {
        String key = ctx.getCurrentKey();
        String observationId =
                key + "#" + (++actions) + "@" + getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        ltm.switchContext(key, observationId, false);
        MemorySet notes = ltm.getMemorySet(setName); // mailbox thread: bound to this key

        CompletableFuture<String> previous =
                lastOfKey.getOrDefault(key, CompletableFuture.completedFuture(null));
        CompletableFuture<String> result =
                previous.handle((ignored, error) -> null)
                        .thenApplyAsync(ignored -> act(notes, note.f1), pool);
        lastOfKey.put(key, result);
        pending.computeIfAbsent(key, k -> new ArrayDeque<>()).add(new Action(observationId, result));

        long now = ctx.timerService().currentProcessingTime();
        ctx.timerService().registerProcessingTimeTimer(now + POLL_MILLIS);
        ctx.timerService().registerEventTimeTimer(Long.MAX_VALUE);
    }

    /** Runs on a worker thread: only the set's own operations, which carry the key. */
    private static String act(MemorySet notes, String note) {
        notes.add(note);
        List<MemorySetItem> hits = notes.search(note, 3);
        int items = notes.get().size();
        return notes.getPartitionKey()
                + "\t" + note
                + "\thits=" + hits.stream().map(MemorySetItem::getValue).collect(Collectors.joining("|"))
                + "\titems=" + items;
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<String> out) {
        String key = ctx.getCurrentKey();
        ArrayDeque<Action> queue = pending.get(key);
        if (queue == null) {
            return;
        }
        boolean endOfInput = ctx.timeDomain() == TimeDomain.EVENT_TIME;
        while (!queue.isEmpty() && (endOfInput || queue.peek().result.isDone())) {
            Action action = queue.poll();
            String line = action.result.join(); // a failed action fails the task
            String observed =
                    ltm.drainObservations(action.observationId).stream()
                            .map(o -> String.valueOf(o.get("op")))
                            .collect(Collectors.joining(","));
            out.collect(line + "\tobserved=" + observed + "\tsubtask="
                    + getRuntimeContext().getTaskInfo().getIndexOfThisSubtask());
        }
        if (queue.isEmpty()) {
            pending.remove(key);
            lastOfKey.remove(key);
        } else {
            ctx.timerService().registerProcessingTimeTimer(
                    ctx.timerService().currentProcessingTime() + POLL_MILLIS);
        }
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
