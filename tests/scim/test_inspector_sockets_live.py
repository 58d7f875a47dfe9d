"""A person's open live-inspector socket closes (4403) within a second when they are deactivated
over SCIM or removed from the organization, with the socket on one web process and the removal
handled by another (two live servers sharing Postgres and Redis): accounts/deprovision.py
announces it on the person's channel and inspector/consumers.py checks them again at once."""

import asyncio
import time

import websockets

from accounts import services
from accounts.models import Membership, User
from inspector.consumers import CLOSE_REFUSED
from tests.inspector.conftest import watching
from tests.scim.test_provisioning_live import (  # noqa: F401 (fixtures)
    PATCH,
    USER,
    credentials_for,
    scim_client,
    two_web_processes,
    world,
)


async def close_code(socket, within: float) -> int | None:
    """The code the server closes `socket` with, reading (and dropping) events meanwhile;
    TimeoutError when it is still open `within` seconds later."""
    deadline = time.monotonic() + within
    try:
        while True:
            await asyncio.wait_for(socket.recv(), max(deadline - time.monotonic(), 0.001))
    except websockets.ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd else None


def provisioned(base: str, world, email: str) -> str:  # noqa: F811
    with scim_client(base, world.token) as scim:
        created = scim.post("/Users", json={"schemas": [USER], "userName": email})
        assert created.status_code == 201, created.text
        return created.json()["id"]


def test_scim_deactivation_on_one_process_closes_the_inspector_on_the_other(
    two_web_processes,  # noqa: F811
    world,  # noqa: F811
    committed,
):
    first, second = two_web_processes
    email = f"ines-{world.unique}@example.com"
    uid = provisioned(first.url, world, email)
    mine = credentials_for(committed, world, email)

    async def run():
        async with watching(second, world.server.slug, mine.cookie) as watch:

            def deactivate():
                with scim_client(first.url, world.token) as scim:
                    return scim.patch(
                        f"/Users/{uid}",
                        json={
                            "schemas": [PATCH],
                            "Operations": [{"op": "replace", "value": {"active": False}}],
                        },
                    )

            answered = await asyncio.to_thread(deactivate)
            assert answered.status_code == 200, answered.text
            started = time.monotonic()
            assert await close_code(watch.socket, within=1.0) == CLOSE_REFUSED
            assert time.monotonic() - started < 1.0

    asyncio.run(run())


def test_removing_a_member_elsewhere_closes_their_inspector_within_a_second(
    two_web_processes,  # noqa: F811
    world,  # noqa: F811
    committed,
):
    _, second = two_web_processes
    email = f"rui-{world.unique}@example.com"

    def join():
        person = User.objects.create_user(email, "long enough password 1")
        Membership.objects.create(organization=world.org, user=person, role=Membership.MEMBER)

    committed(join)
    mine = credentials_for(committed, world, email)

    def remove():
        membership = Membership.objects.get(organization=world.org, user__email=email)
        services.membership_remove(actor=world.owner, membership=membership)

    async def run():
        async with watching(second, world.server.slug, mine.cookie) as watch:
            # This test process is the other process here: it removes, the second one holds
            # the socket.
            await asyncio.to_thread(committed, remove)
            started = time.monotonic()
            assert await close_code(watch.socket, within=1.0) == CLOSE_REFUSED
            assert time.monotonic() - started < 1.0

    asyncio.run(run())
