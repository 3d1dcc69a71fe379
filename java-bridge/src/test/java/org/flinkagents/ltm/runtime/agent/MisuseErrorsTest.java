package org.flinkagents.ltm.runtime.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.flinkagents.ltm.api.Action;
import org.flinkagents.ltm.api.Agent;
import org.flinkagents.ltm.api.AgentDefinitionException;
import org.flinkagents.ltm.api.AgentsExecutionEnvironment;
import org.flinkagents.ltm.api.DurableCallable;
import org.flinkagents.ltm.api.Event;
import org.flinkagents.ltm.api.InputEvent;
import org.flinkagents.ltm.api.RunnerContext;
import org.junit.jupiter.api.Test;

/**
 * Each misuse of the Java agent API fails with one line that names the action, the key (when
 * there is one) and what to do, as the Python runtime's errors do.
 */
class MisuseErrorsTest {

    public static class ListensToNothing extends Agent {
        private static final long serialVersionUID = 1L;

        @Action(listenEvents = {})
        public void greet(Event event, RunnerContext ctx) {}
    }

    public static class TakesAString extends Agent {
        private static final long serialVersionUID = 1L;

        @Action(listenEvents = {InputEvent.class})
        public void greet(String event, RunnerContext ctx) {}
    }

    /** Misuses the context as its input says. */
    public static class Misuses extends Agent {
        private static final long serialVersionUID = 1L;

        @Action(listenEvents = {InputEvent.class})
        public void misuse(InputEvent event, RunnerContext ctx) throws Exception {
            switch ((String) event.getInput()) {
                case "send-null":
                    ctx.sendEvent(null);
                    break;
                case "no-ltm":
                    ctx.getLongTermMemory();
                    break;
                case "async-in-call": // the context used from the worker running the call
                    ctx.durableExecuteAsync(DurableCallable.of("outer", () ->
                            ctx.durableExecuteAsync(DurableCallable.of("inner", () -> "x"))));
                    break;
                default:
                    throw new IllegalArgumentException("unknown misuse");
            }
        }
    }

    private static String refusedAtApply(Agent agent) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        return assertThrows(AgentDefinitionException.class, () ->
                AgentsExecutionEnvironment.getExecutionEnvironment(env)
                        .fromDataStream(env.fromData("x"), s -> s).apply(agent)).getMessage();
    }

    /**
     * Runs {@link Misuses} on one input (its key is the input) and answers the job's error. The
     * job id is fixed, as a deployment may fix it: the run is named by it, so its observation
     * ids are known ({@code <key>@ff25d2389ab7917a#0#0}, see {@link IncarnationTest}).
     */
    private static String failureOf(String misuse) throws Exception {
        Configuration config = new Configuration();
        config.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        config.setString("$internal.pipeline.job-id", IncarnationTest.SUBMISSION);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(1);
        List<Object> outputs = new ArrayList<>();
        Exception failure = assertThrows(Exception.class, () -> {
            try (CloseableIterator<Object> out = AgentsExecutionEnvironment
                    .getExecutionEnvironment(env)
                    .fromDataStream(env.fromData(misuse), s -> s)
                    .apply(new Misuses()).toDataStream().executeAndCollect("misuse " + misuse)) {
                out.forEachRemaining(outputs::add);
            }
        });
        assertEquals(List.of(), outputs);
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t.getClass() == IllegalStateException.class
                    || t.getClass() == IllegalArgumentException.class) {
                assertFalse(t.getMessage().contains("\n"), "one line: " + t.getMessage());
                return t.getMessage();
            }
        }
        throw new AssertionError("no IllegalStateException/IllegalArgumentException in", failure);
    }

    @Test
    void testAnActionListeningToNoEventIsRefusedAtApplyNamingItAndTheFix() {
        assertEquals("action 'ListensToNothing.greet' listens to no event: name them, e.g. "
                + "@Action(listenEvents = {InputEvent.class})", refusedAtApply(new ListensToNothing()));
    }

    @Test
    void testAnActionWithAWrongSignatureIsRefusedAtApplyNamingItAndTheSignatureToUse() {
        assertEquals("action 'TakesAString.greet' must take (Event, RunnerContext) and return "
                + "void, but takes (String, RunnerContext) and returns void: declare it as public "
                + "void greet(Event event, RunnerContext ctx)", refusedAtApply(new TakesAString()));
    }

    @Test
    void testSendingNullFailsTheJobNamingTheActionTheKeyAndWhatToSend() throws Exception {
        assertEquals("action 'Misuses.misuse' (key 'send-null', input #0, observation "
                + "send-null@ff25d2389ab7917a#0#0) sent null: send an Event (an OutputEvent for an output)",
                failureOf("send-null"));
    }

    @Test
    void testAskingForLongTermMemoryInAJobWithoutOneNamesTheActionTheKeyAndTheCallToAdd()
            throws Exception {
        assertEquals("action 'Misuses.misuse' (key 'no-ltm', input #0, observation "
                + "no-ltm@ff25d2389ab7917a#0#0) asked for long-term memory, but the job has none: call "
                + "AgentsExecutionEnvironment.withLongTermMemory(python, jobId, config) before "
                + "fromDataStream", failureOf("no-ltm"));
    }

    @Test
    void testADurableCallUsingTheContextFromItsWorkerNamesTheActionTheKeyAndWhatToDoInstead()
            throws Exception {
        String message = failureOf("async-in-call");
        assertTrue(message.startsWith("durableExecuteAsync called from thread '"), message);
        assertTrue(message.endsWith("' outside action 'Misuses.misuse' (key 'async-in-call', "
                + "input #0, observation async-in-call@ff25d2389ab7917a#0#0): a RunnerContext works only in the "
                + "action's own code on the mailbox thread, not inside a durable call or a thread "
                + "of your own; return what you need from the call and use it in the action"),
                message);
    }
}
