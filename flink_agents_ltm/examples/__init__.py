"""Runnable examples; `make demo` runs customer_memory."""
