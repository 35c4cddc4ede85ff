"""The web console: ``akgentic serve``, a live view of the teams of one event store.

- :mod:`akgentic.console.app` builds the ASGI application (FastAPI): the REST API
  under ``/api/`` with its OpenAPI document, the event stream, the static page;
- :mod:`akgentic.console.hub` is the event subscriber that feeds connected clients;
- :mod:`akgentic.console.views` turns stored and live messages into JSON rows, the
  roster and the pending questions for the human;
- :mod:`akgentic.console.panes` gathers the tool panes (hook ``akgentic_console_panes``);
- :mod:`akgentic.console.pictures` draws a team's graph, usage chart and timeline as
  SVG from its log;
- :mod:`akgentic.console.web_routes` mounts the routes plugins serve beside the
  console (hook ``akgentic_web_routes``), behind the same checks;
- :mod:`akgentic.console.security` holds the token and request checks.

Nothing here is imported by ``import akgentic``; the web libraries (the ``console``
extra) are imported only when the application is built.
"""

from __future__ import annotations

__all__: list[str] = []
