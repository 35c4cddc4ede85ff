"""Example akgentic plugin distribution."""
