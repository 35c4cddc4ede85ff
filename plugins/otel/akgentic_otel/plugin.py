"""Hook implementation of the otel plugin."""
