"""NATS JetStream runtime for akgentic."""
