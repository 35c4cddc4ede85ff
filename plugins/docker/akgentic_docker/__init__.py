"""The Docker sandbox backend of akgentic (``akgentic-docker``).

:class:`DockerBackend` implements :class:`akgentic.sandbox.SandboxBackend`; the plugin
registers it as ``docker``. The ``docker`` SDK is imported only when a backend is
used. See the package README and ``docs/sandbox.md``.
"""

from __future__ import annotations

from akgentic_docker.availability import docker_unavailable_reason
from akgentic_docker.backend import DEFAULT_IMAGE, ENV_IMAGE, DockerBackend

__all__ = ["DEFAULT_IMAGE", "ENV_IMAGE", "DockerBackend", "docker_unavailable_reason"]
