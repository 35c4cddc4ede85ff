"""``akgentic_review``: the code-review plugin docs/writing-plugins.md imagines, made real.

A ``Reviewer`` agent class (registered as ``reviewer``) and the ``ReviewRequest``
message it handles, so the page's contract-kit blocks run the whole kits against them.
"""
