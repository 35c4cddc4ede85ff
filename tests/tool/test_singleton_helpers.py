"""Card-side helpers of ``akgentic.tool.singleton``: argument validation and actor configs."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from akgentic.tool.errors import RetriableError
from akgentic.tool.singleton import SearchActorConfig, model_input, search_actor_config
from akgentic.vector.param import VectorStoreParam


class Query(BaseModel):
    text: str = Field(min_length=1)
    top_k: int = Field(default=5, ge=1)


def test_an_instance_passes_as_is_and_a_mapping_is_validated() -> None:
    given = Query(text="a")
    assert model_input(given, Query, "search") is given
    assert model_input({"text": "b", "top_k": 2}, Query, "search") == Query(text="b", top_k=2)


def test_an_invalid_argument_is_a_retriable_error_naming_the_field_not_the_input() -> None:
    with pytest.raises(RetriableError) as refused:
        model_input({"text": "secret-value", "top_k": 0}, Query, "search")
    message = str(refused.value)
    assert message.startswith("Invalid search: top_k: ")
    assert "secret-value" not in message
    with pytest.raises(RetriableError, match=r"^Invalid update: update: "):
        model_input("not a mapping", Query, "update", where="update")


class Config(SearchActorConfig):
    search_score_threshold: float = 0.3


class Card(BaseModel):
    vector_store: VectorStoreParam | bool = True
    search_top_k: int = 7
    search_score_threshold: float = 0.9
    hybrid_alpha: float = 0.2


def test_the_config_carries_the_cards_search_settings_and_the_bound_param() -> None:
    config = search_actor_config(Config, "#Thing", None, Card())
    assert type(config) is Config
    assert (config.name, config.role) == ("#Thing", "ToolActor")
    assert config.vector_store is None  # the bound param, not the card's raw True
    assert (config.search_top_k, config.search_score_threshold, config.hybrid_alpha) == (
        7,
        0.9,
        0.2,
    )
