"""What the commands that create a team (``team create``, ``run``) do with their input.

A card is loaded and validated, and the ``--metadata KEY=VALUE`` pairs are checked
against its ``metadata_type``, before anything is started or written; every failure
is one error naming where it is (the card line, or the ``--metadata`` key), exit 2.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from akgentic.cli.models import apply_model_options
from akgentic.cli.scripted import scripted_models
from akgentic.cli.session import check_models, fail, import_roots, pairs

if TYPE_CHECKING:
    from akgentic.core.utils.serializer import SerializableBaseModel
    from akgentic.team.card import TeamCard

__all__ = ["card_metadata", "card_to_start"]


def card_to_start(
    card: Path,
    path: list[Path] | None,
    metadata: list[str] | None,
    scripted: Path | None,
    stack: ExitStack,
    model: str | None = None,
    base_url: str | None = None,
) -> tuple[TeamCard, SerializableBaseModel | None]:
    """The card a new team starts from and its checked metadata, all input checked first.

    Imports are rooted at the card's directory and ``path``; ``--model``/``--base-url``
    (or ``$AKGENTIC_MODEL``) replace every agent's model; a ``--scripted`` script's
    models are served until ``stack`` closes; the card's models are checked last, so
    a scripted run needs no key.
    """
    from akgentic.team.card_yaml import load_team_card

    import_roots(card, path)
    team_card = load_team_card(card)
    value = card_metadata(team_card, metadata)
    apply_model_options(team_card, model, base_url)
    stack.enter_context(scripted_models(team_card, scripted))
    check_models(team_card)
    return team_card, value


def card_metadata(team_card: TeamCard, items: list[str] | None) -> SerializableBaseModel | None:
    """The team metadata ``--metadata`` gives (None without any), validated against the card."""
    from pydantic import ValidationError

    from akgentic.team.models import validate_metadata

    given = pairs(items, "--metadata")
    if not given:
        return None
    if team_card.metadata_type is None:
        fail(
            f"--metadata {', '.join(sorted(given))}: the team card "
            f"{team_card.name or '(unnamed)'} declares no metadata_type, so it takes no "
            "metadata; declare one on the card or leave --metadata out",
            2,
        )
    try:
        return validate_metadata(team_card, given)
    except ValidationError as exc:
        problems = [
            f"--metadata {'.'.join(str(p) for p in item['loc']) or '(value)'}: {item['msg']}"
            for item in exc.errors(include_url=False)
        ]
        fail(
            f"invalid metadata for {team_card.metadata_type.__name__}:\n  " + "\n  ".join(problems),
            2,
        )
