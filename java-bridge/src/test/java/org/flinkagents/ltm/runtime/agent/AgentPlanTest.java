package org.flinkagents.ltm.runtime.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.flinkagents.ltm.api.Action;
import org.flinkagents.ltm.api.Agent;
import org.flinkagents.ltm.api.AgentDefinitionException;
import org.flinkagents.ltm.api.AgentsExecutionEnvironment;
import org.flinkagents.ltm.api.Event;
import org.flinkagents.ltm.api.InputEvent;
import org.flinkagents.ltm.api.OutputEvent;
import org.flinkagents.ltm.api.RunnerContext;
import org.junit.jupiter.api.Test;

/** An agent that cannot run is refused at apply(), with the action and the fix named. */
class AgentPlanTest {
    public static class WrongParameters extends Agent {
        @Action(listenEvents = {InputEvent.class})
        public void greet(String input, RunnerContext ctx) {}
    }

    public static class ReturnsAValue extends Agent {
        @Action(listenEvents = {InputEvent.class})
        public String greet(Event event, RunnerContext ctx) {
            return "";
        }
    }

    public static class PrivateAction extends Agent {
        @Action(listenEvents = {InputEvent.class})
        void greet(Event event, RunnerContext ctx) {}
    }

    public static class NoInputAction extends Agent {
        @Action(listenEvents = {OutputEvent.class})
        public void seen(Event event, RunnerContext ctx) {}
    }

    public static class HoldsAThread extends Agent {
        private final Object lock = new Object(); // not Serializable

        @Action(listenEvents = {InputEvent.class})
        public void greet(Event event, RunnerContext ctx) {}
    }

    public static class Fine extends Agent {
        @Action(listenEvents = {InputEvent.class})
        public void b(Event event, RunnerContext ctx) {}

        @Action(listenEvents = {InputEvent.class})
        public void a(InputEvent event, RunnerContext ctx) {}
    }

    private static AgentDefinitionException refused(Agent agent) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        return assertThrows(AgentDefinitionException.class, () ->
                AgentsExecutionEnvironment.getExecutionEnvironment(env)
                        .fromDataStream(env.fromData("x"), s -> s).apply(agent));
    }

    @Test
    void testAnActionWithWrongParametersIsRefusedAtApplyNamingItAndTheSignatureToUse() {
        String message = refused(new WrongParameters()).getMessage();
        assertTrue(message.startsWith("action 'WrongParameters.greet' must take (Event, "
                + "RunnerContext) and return void, but takes (String, RunnerContext)"), message);
        assertTrue(message.endsWith("declare it as public void greet(Event event, RunnerContext "
                + "ctx)"), message);
    }

    @Test
    void testAnActionReturningAValueOrNotPublicIsRefusedAtApply() {
        assertTrue(refused(new ReturnsAValue()).getMessage().contains("and returns String"));
        assertTrue(refused(new PrivateAction()).getMessage().startsWith(
                "action 'PrivateAction.greet' must be a public instance method"));
    }

    @Test
    void testAnAgentWithoutAnInputActionOrThatDoesNotSerializeIsRefusedAtApply() {
        assertTrue(refused(new NoInputAction()).getMessage().contains(
                "has no action listening to InputEvent"));
        assertTrue(refused(new HoldsAThread()).getMessage().startsWith(
                "agent HoldsAThread cannot be shipped to the job"));
    }

    @Test
    void testActionsRunInTheOrderOfTheirNames() {
        AgentPlan plan = AgentPlan.of(new Fine());
        assertEquals(List.of("a", "b"), plan.actionsFor(new InputEvent("x")));
        assertEquals(List.of(), plan.actionsFor(new OutputEvent("x")));
    }
}
