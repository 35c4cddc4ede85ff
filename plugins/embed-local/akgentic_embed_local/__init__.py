"""Offline embedders for akgentic (``hashing``, ``minilm``)."""
