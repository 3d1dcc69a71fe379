package org.flinkagents.ltm.runtime.memory;

import java.util.List;
import java.util.Map;

/**
 * What one action (one attempt of a step) did to long-term memory, as {@link
 * PythonLongTermMemory#endAction} reports it when the action ends; Python's {@code
 * ActionMemoryOutcome}.
 *
 * @param observations the action's observations in the order they were made, each {@code {op,
 *     set, ids, query, key, observation_id}}; empty when the action did not complete (its
 *     observations are dropped) or ran suppressed
 * @param itemsAdded the items the action stored, whether it completed or not: a key whose
 *     actions stored items keeps its input counter, which is part of every replay-stable item id
 */
public record ActionMemoryOutcome(List<Map<String, Object>> observations, int itemsAdded) {
    public ActionMemoryOutcome {
        observations = List.copyOf(observations);
    }
}
