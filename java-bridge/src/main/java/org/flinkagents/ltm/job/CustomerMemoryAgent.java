package org.flinkagents.ltm.job;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.core.JsonProcessingException;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.flinkagents.ltm.api.Action;
import org.flinkagents.ltm.api.Agent;
import org.flinkagents.ltm.api.DurableCallable;
import org.flinkagents.ltm.api.InputEvent;
import org.flinkagents.ltm.api.OutputEvent;
import org.flinkagents.ltm.api.RunnerContext;
import org.flinkagents.ltm.api.memory.MemorySet;
import org.flinkagents.ltm.api.memory.MemorySetItem;

/**
 * The Java twin of the Python demo's support agent ({@code
 * flink_agents_ltm/examples/customer_memory.py}): for each {@code (customer, text)} message it
 * counts the customer's messages in short-term memory, then, in one durable call on the worker
 * pool, recalls the customer's two memories most similar to the message and remembers the
 * message in the customer's long-term memory set {@value #MEMORY_SET}. Its output is one JSON
 * object per message: {@code {"customer", "seq", "text", "recalled": [...]}}.
 */
public class CustomerMemoryAgent extends Agent {
    private static final long serialVersionUID = 1L;
    public static final String MEMORY_SET = "conversation";
    /** How many memories a message recalls. */
    public static final int RECALL_LIMIT = 2;

    @Action(listenEvents = {InputEvent.class})
    public void reply(InputEvent event, RunnerContext ctx) throws Exception {
        @SuppressWarnings("unchecked")
        Tuple2<String, String> message = (Tuple2<String, String>) event.getInput();
        Integer before = (Integer) ctx.getShortTermMemory().get("messages");
        int seq = before == null ? 1 : before + 1;
        ctx.getShortTermMemory().set("messages", seq);
        // Obtained on the mailbox thread, so the set is bound to this customer; the durable call
        // then uses it on a worker thread while other customers' messages go on.
        MemorySet conversation = ctx.getLongTermMemory().getMemorySet(MEMORY_SET);
        ArrayList<String> recalled = ctx.durableExecuteAsync(DurableCallable.of(
                "recall-and-remember", () -> recallAndRemember(conversation, message.f1, seq)));
        ctx.sendEvent(new OutputEvent(reply(message.f0, seq, message.f1, recalled)));
    }

    /** On a worker thread: recall first (so a message never recalls itself), then remember. */
    static ArrayList<String> recallAndRemember(MemorySet conversation, String text, int seq) {
        ArrayList<String> recalled = new ArrayList<>();
        for (MemorySetItem item : conversation.search(text, RECALL_LIMIT)) {
            recalled.add(item.getValue());
        }
        conversation.add(List.of(text), List.of(Map.of("seq", seq)));
        return recalled;
    }

    static String reply(String customer, int seq, String text, List<String> recalled) {
        try {
            Map<String, Object> fields = new LinkedHashMap<>();
            fields.put("customer", customer);
            fields.put("seq", seq);
            fields.put("text", text);
            fields.put("recalled", recalled);
            return new ObjectMapper().writeValueAsString(fields);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("the reply to " + customer + "'s message #" + seq
                    + " does not serialize as JSON: " + e.getOriginalMessage(), e);
        }
    }
}
