package org.flinkagents.ltm.runtime.agent;

import org.flinkagents.ltm.api.AgentSettings;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.VoidNamespace;

/**
 * The real agent operator, reporting its own engine footprint (keyed state entries and timers,
 * read from Flink's state backend and timer service) when the input ends and when it finishes.
 */
class FootprintProbe<K, IN, OUT> extends AgentOperator<K, IN, OUT> {
    private static final long serialVersionUID = 1L;
    static final List<AgentOperator.Footprint> AT_END_OF_INPUT = new CopyOnWriteArrayList<>();
    static final List<AgentOperator.Footprint> AT_FINISH = new CopyOnWriteArrayList<>();
    /** The keys (as strings) that still hold an input counter when the operator finishes. */
    static final Set<String> COUNTERS_AT_FINISH = new java.util.concurrent.ConcurrentSkipListSet<>();

    FootprintProbe(AgentPlan plan, AgentSettings settings, TypeSerializer<IN> inputs) {
        super(plan, settings, inputs);
    }

    static void reset() {
        AT_END_OF_INPUT.clear();
        AT_FINISH.clear();
        COUNTERS_AT_FINISH.clear();
    }

    @Override
    public void endInput() throws Exception {
        AT_END_OF_INPUT.add(footprint());
        super.endInput();
    }

    @Override
    public void finish() throws Exception {
        AT_FINISH.add(footprint());
        Set<String> counters = new TreeSet<>();
        try (Stream<Object> keys = getKeyedStateBackend().getKeys(NEXT_SEQ,
                VoidNamespace.INSTANCE)) {
            keys.forEach(k -> counters.add(String.valueOf(k)));
        }
        COUNTERS_AT_FINISH.addAll(counters);
        super.finish();
    }
}
