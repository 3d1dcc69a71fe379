"""A durable action-state store outside Flink's checkpoints: write-ahead durable results.

Flink's checkpoints hold a durable call's result only once a checkpoint is taken
after it arrived. A call that completes after the last checkpoint ran for nothing
if the job then fails: the replay calls it again (a tool that sends an e-mail
sends it twice). With ``agents.action-state.store`` set, each durable call writes
to a store of its own, keyed by (job, observation id ``<run>#<step>``, write
position ``call<k>``). The run names the input, not only its place ``key#seq``: after a
recovery a key's inputs may arrive in another order, so a replayed input finds its run by
its fingerprint, and a new input in a place that holds another input's rows gets a run of
its own. The step's long-term-memory item ids derive from the same observation id, so an
input whose recorded add is answered without running never lends its ids to another.
Each call writes:

* a *started* marker before the call runs,
* its pickled *result* as soon as it returns (on the worker thread, before the
  action goes on).

A replay asks the store for a call Flink state does not hold: a result is
returned without calling; a started marker without a result (the process died
mid-call) calls the call's ``reconciler`` if it has one (``check()`` answers the
result, or :data:`~flink_agents_ltm.api.runner_context.CALL_AGAIN`), else the call
runs again, as without the store.

A step's records are marked *done* when the step ends; a checkpoint taken after
that covers them, and they are pruned when it completes (``checkpoint_completed``),
so the store holds about one record per call in flight. Where the host sees no
checkpoint notifications (PyFlink's Python DataStream API has none), done records
are pruned ``agents.action-state.retention-ms`` after the step ended instead.
"""

from flink_agents_ltm.runtime.action_state.store import (
    ActionStateStore,
    Lookup,
    open_action_state_store,
    register_action_state_store,
)

__all__ = ["ActionStateStore", "Lookup", "open_action_state_store",
           "register_action_state_store"]
