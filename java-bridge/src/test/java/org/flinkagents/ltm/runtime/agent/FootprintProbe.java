package org.flinkagents.ltm.runtime.agent;

import org.flinkagents.ltm.api.AgentSettings;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.apache.flink.api.common.typeutils.TypeSerializer;

/**
 * The real agent operator, reporting its own engine footprint (keyed state entries and timers,
 * read from Flink's state backend and timer service) when the input ends and when it finishes.
 */
class FootprintProbe<K, IN, OUT> extends AgentOperator<K, IN, OUT> {
    private static final long serialVersionUID = 1L;
    static final List<AgentOperator.Footprint> AT_END_OF_INPUT = new CopyOnWriteArrayList<>();
    static final List<AgentOperator.Footprint> AT_FINISH = new CopyOnWriteArrayList<>();

    FootprintProbe(AgentPlan plan, AgentSettings settings, TypeSerializer<IN> inputs) {
        super(plan, settings, inputs);
    }

    static void reset() {
        AT_END_OF_INPUT.clear();
        AT_FINISH.clear();
    }

    @Override
    public void endInput() throws Exception {
        AT_END_OF_INPUT.add(footprint());
        super.endInput();
    }

    @Override
    public void finish() throws Exception {
        AT_FINISH.add(footprint());
        super.finish();
    }
}
