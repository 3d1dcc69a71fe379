"""The engine: keyed operator, mailbox rules, durable execution, memory stores."""
