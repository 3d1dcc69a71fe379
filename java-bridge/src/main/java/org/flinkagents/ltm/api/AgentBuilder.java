package org.flinkagents.ltm.api;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;

/** {@code fromDataStream(...).apply(agent).toDataStream()}. */
public final class AgentBuilder {
    private final KeyedStream<?, ?> input;
    private final AgentSettings settings;
    private AgentRuntime.PreparedAgent plan;

    AgentBuilder(KeyedStream<?, ?> input, AgentSettings settings) {
        this.input = input;
        this.settings = settings;
    }

    /**
     * Checks the agent now (every action's signature, an action for {@link InputEvent}, that
     * it can be shipped to the job) and refuses it with an {@link AgentDefinitionException}
     * naming the action and what to do.
     */
    public AgentBuilder apply(Agent agent) {
        this.plan = AgentRuntime.load().prepare(agent);
        return this;
    }

    /** The agent's outputs ({@link OutputEvent#getOutput()}), one stream for all keys. */
    public DataStream<Object> toDataStream() {
        return build(input, TypeInformation.of(Object.class));
    }

    /** The outputs as {@code type} (each output must be one). */
    public <O> DataStream<O> toDataStream(TypeInformation<O> type) {
        return build(input, type);
    }

    private <T, K, O> DataStream<O> build(KeyedStream<T, K> keyed, TypeInformation<O> type) {
        if (plan == null) {
            throw new IllegalStateException("no agent: call apply(agent) before toDataStream()");
        }
        return plan.attach(keyed, settings, type);
    }
}
