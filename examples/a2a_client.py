"""Call a team served by ``akgentic serve`` as an A2A agent, with the ``a2a-sdk`` client.

    python examples/a2a_client.py URL TOKEN TEXT...

URL is the team's A2A endpoint (``http://127.0.0.1:8765/a2a/<team id>``), TOKEN the
console's token (``akgentic serve`` prints it in the URL to open; or
``$AKGENTIC_CONSOLE_TOKEN``). Prints the task's final state and the team's reply. When
the team asks a question (``input-required``) the next line typed on stdin answers it.
Needs ``pip install akgentic-a2a`` (see docs/a2a.md).
"""

from __future__ import annotations

import asyncio
import sys
import uuid

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest, Task, TaskState


def reply_text(task: Task) -> str:
    """The team's latest message in a task (its status message)."""
    return "\n".join(part.text for part in task.status.message.parts)


async def ask(url: str, token: str, text: str) -> int:
    """Send ``text`` to the team, answer its questions from stdin, print the reply."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(headers=headers, timeout=120) as http:
        factory = ClientFactory(ClientConfig(httpx_client=http, streaming=False))
        client = await factory.create_from_url(url)  # reads the agent card first
        try:
            task_id = context_id = ""
            while True:
                request = SendMessageRequest(
                    message=Message(
                        message_id=str(uuid.uuid4()),
                        role=Role.ROLE_USER,
                        parts=[Part(text=text)],
                        task_id=task_id,
                        context_id=context_id,
                    )
                )
                task = None
                async for response in client.send_message(request):
                    task = response.task
                assert task is not None
                state = TaskState.Name(task.status.state)
                print(f"{state}: {reply_text(task)}", flush=True)
                if task.status.state != TaskState.TASK_STATE_INPUT_REQUIRED:
                    return 0 if task.status.state == TaskState.TASK_STATE_COMPLETED else 1
                text = sys.stdin.readline().strip()
                if not text:
                    return 1
                task_id, context_id = task.id, task.context_id
        finally:
            await client.close()


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    return asyncio.run(ask(argv[0], argv[1], " ".join(argv[2:])))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
