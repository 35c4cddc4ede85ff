"""OpenAI and OpenAI-compatible embedders for akgentic (``openai``, ``azure``)."""
