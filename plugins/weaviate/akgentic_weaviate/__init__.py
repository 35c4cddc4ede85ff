"""Weaviate vector backend for akgentic (``weaviate``)."""
