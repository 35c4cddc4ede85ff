"""Serialization helpers shared by every akgentic layer."""

from akgentic.core.actor_address import ActorAddressDict
from akgentic.core.utils.addresses import hydrate_addresses, snapshot_addresses
from akgentic.core.utils.serializer import (
    DeserializeContext,
    SerializableBaseModel,
    UnresolvableClassError,
    deserialize_object,
    get_field_serializers_map,
    import_class,
    is_uuid_canonical,
    serialize,
    serialize_base_model,
    serialize_type,
)

__all__ = [
    "ActorAddressDict",
    "DeserializeContext",
    "SerializableBaseModel",
    "UnresolvableClassError",
    "deserialize_object",
    "get_field_serializers_map",
    "hydrate_addresses",
    "import_class",
    "is_uuid_canonical",
    "serialize",
    "serialize_base_model",
    "serialize_type",
    "snapshot_addresses",
]
