"""Example akgentic plugin distribution: a CLI command and the ``shout`` tool card."""
