"""``akgentic cluster init``: the stream, consumer and bucket a deployment needs (idempotent).

* stream ``<P>_PLACE`` (work-queue retention, subjects ``<p>.place.>``, at most
  one message per subject, new ones refused): one message per placed team;
  the worker holding it un-acknowledged holds the team's lease;
* consumer ``<P>_WORKERS`` (pull, explicit ack, ``ack_wait`` = the lease,
  redelivered without limit): a lease not renewed in time goes to another worker;
* KV bucket ``<p>_workers``: one record per worker (teams, capacity, heartbeat).
"""

from __future__ import annotations

import contextlib
from typing import Any

from akgentic_nats.target import NatsTarget

__all__ = ["ensure_cluster", "remove_cluster"]


async def ensure_cluster(js: Any, target: NatsTarget) -> None:
    """Create (or update to the same settings) the stream, consumer and bucket."""
    from nats.js import api
    from nats.js.errors import BadRequestError, NotFoundError

    stream = api.StreamConfig(
        name=target.stream,
        subjects=[f"{target.prefix}.place.>"],
        retention=api.RetentionPolicy.WORK_QUEUE,
        storage=api.StorageType.FILE,
        discard=api.DiscardPolicy.NEW,
        max_msgs_per_subject=1,
        discard_new_per_subject=True,
    )
    try:
        await js.stream_info(target.stream)
        await js.update_stream(stream)
    except NotFoundError:
        await js.add_stream(stream)
    consumer = api.ConsumerConfig(
        durable_name=target.consumer,
        ack_policy=api.AckPolicy.EXPLICIT,
        ack_wait=target.lease,
        max_deliver=-1,
        max_ack_pending=100_000,
        filter_subject=f"{target.prefix}.place.>",
    )
    try:
        await js.add_consumer(target.stream, consumer)
    except BadRequestError:
        await js.delete_consumer(target.stream, target.consumer)
        await js.add_consumer(target.stream, consumer)
    try:
        await js.key_value(target.bucket)
    except Exception:
        await js.create_key_value(
            api.KeyValueConfig(bucket=target.bucket, history=1, ttl=max(30.0, 8 * target.lease))
        )


async def remove_cluster(js: Any, target: NatsTarget) -> None:
    """Delete the stream (with its consumer) and the bucket (tests' teardown)."""
    with contextlib.suppress(Exception):
        await js.delete_stream(target.stream)
    with contextlib.suppress(Exception):
        await js.delete_key_value(target.bucket)
