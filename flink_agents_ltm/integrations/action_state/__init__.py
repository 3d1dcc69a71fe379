"""Action-state stores on external systems (``agents.action-state.store``)."""
