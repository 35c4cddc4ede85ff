"""Qdrant vector backends for akgentic (``qdrant``, ``qdrant-edge``)."""
