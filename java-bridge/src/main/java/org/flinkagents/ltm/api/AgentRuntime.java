package org.flinkagents.ltm.api;

import java.util.Iterator;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;

/**
 * What runs agents: the API declares it, the runtime implements it. The API never names a
 * runtime class; {@link #load()} finds the implementation with Java's {@link ServiceLoader}
 * (the runtime lists it in {@code META-INF/services/org.flinkagents.ltm.api.AgentRuntime}).
 * This is the only place where the API reaches the runtime.
 */
public interface AgentRuntime {
    /**
     * Checks {@code agent} (signatures, an action for {@link InputEvent}, that it serializes)
     * and answers it ready to run; refuses it with an {@link AgentDefinitionException}.
     */
    PreparedAgent prepare(Agent agent);

    /** An agent that passed {@link #prepare}. */
    interface PreparedAgent {
        String agentName();

        /** The operator running the agent on {@code input}, its outputs typed {@code type}. */
        <T, K, O> DataStream<O> attach(KeyedStream<T, K> input, AgentSettings settings,
                TypeInformation<O> type);
    }

    /** The runtime on the class path (the first one the service loader finds). */
    static AgentRuntime load() {
        try {
            Iterator<AgentRuntime> found =
                    ServiceLoader.load(AgentRuntime.class, AgentRuntime.class.getClassLoader())
                            .iterator();
            if (found.hasNext()) {
                return found.next();
            }
        } catch (ServiceConfigurationError e) {
            throw new IllegalStateException("the agent runtime cannot be loaded (" + e.getMessage()
                    + "): is the bridge jar complete (META-INF/services)?", e);
        }
        throw new IllegalStateException("no agent runtime on the class path: the API's classes "
                + "are there, the runtime's are not; use the whole flink-agents-ltm-java-bridge "
                + "jar (its META-INF/services names the runtime)");
    }
}
