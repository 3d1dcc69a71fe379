"""Event-driven agents in PyFlink keyed operators, with memory they can trust."""

__version__ = "0.1.0"
