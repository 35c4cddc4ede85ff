"""``python -m akgentic.cli`` runs the ``akgentic`` command."""

from akgentic.cli.app import main

main()
