package org.flinkagents.ltm.runtime.agent;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.flinkagents.ltm.api.Agent;
import org.flinkagents.ltm.api.AgentRuntime;
import org.flinkagents.ltm.api.AgentSettings;

/**
 * The runtime behind {@link AgentRuntime}: an agent becomes an {@link AgentPlan} run by an
 * {@link AgentOperator}. Found by the API through META-INF/services.
 */
public final class OperatorAgentRuntime implements AgentRuntime {
    @Override
    public PreparedAgent prepare(Agent agent) {
        AgentPlan plan = AgentPlan.of(agent);
        return new PreparedAgent() {
            @Override
            public String agentName() {
                return plan.agentName();
            }

            @Override
            public <T, K, O> DataStream<O> attach(KeyedStream<T, K> input, AgentSettings settings,
                    TypeInformation<O> type) {
                TypeSerializer<T> inputs = input.getType().createSerializer(
                        input.getExecutionConfig().getSerializerConfig());
                return input.transform("Agent: " + plan.agentName(), type,
                        new AgentOperator<K, T, O>(plan, settings, inputs));
            }
        };
    }
}
