import base64
import time

import pytest

from mcp_protocol.errors import INVALID_PARAMS, McpError
from mcp_protocol.sealed_state import seal, unseal

SECRET = b"a deployment secret that is long enough"
BIND = {"server": "demo", "tool": "confirm", "credential": "key:7"}


def _flip_byte(token: str, index: int) -> str:
    raw = bytearray(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    raw[index] ^= 0x01
    return base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()


def test_a_sealed_payload_comes_back_unchanged():
    payload = {"step": 2, "answers": {"name": {"action": "accept", "content": {"n": "Ann"}}}}
    token = seal(payload, secret=SECRET, bind=BIND, ttl_seconds=60)
    assert unseal(token, secret=SECRET, bind=BIND) == payload


def test_the_payload_is_not_readable_in_the_token():
    token = seal({"password": "hunter2-very-secret"}, secret=SECRET, bind=BIND, ttl_seconds=60)
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    assert b"hunter2" not in raw and b"password" not in raw


def test_two_seals_of_the_same_payload_differ():
    a = seal({"x": 1}, secret=SECRET, bind=BIND, ttl_seconds=60)
    b = seal({"x": 1}, secret=SECRET, bind=BIND, ttl_seconds=60)
    assert a != b


@pytest.mark.parametrize("index", [0, 5, 20, 40, -1])
def test_it_refuses_a_token_with_any_byte_changed(index):
    token = seal({"x": 1}, secret=SECRET, bind=BIND, ttl_seconds=60)
    with pytest.raises(McpError) as exc:
        unseal(_flip_byte(token, index), secret=SECRET, bind=BIND)
    assert exc.value.code == INVALID_PARAMS


@pytest.mark.parametrize("token", ["", "not base64 !!", "AAAA", "x" * 10])
def test_it_refuses_garbage(token):
    with pytest.raises(McpError) as exc:
        unseal(token, secret=SECRET, bind=BIND)
    assert exc.value.code == INVALID_PARAMS


@pytest.mark.parametrize(
    "other",
    [
        {**BIND, "server": "other"},
        {**BIND, "tool": "delete_everything"},
        {**BIND, "credential": "key:8"},
    ],
)
def test_it_refuses_a_token_replayed_under_another_binding(other):
    token = seal({"x": 1}, secret=SECRET, bind=BIND, ttl_seconds=60)
    with pytest.raises(McpError) as exc:
        unseal(token, secret=SECRET, bind=other)
    assert exc.value.code == INVALID_PARAMS
    assert "key:7" not in str(exc.value.to_dict())


def test_it_refuses_a_token_sealed_with_another_secret():
    token = seal({"x": 1}, secret=b"another deployment", bind=BIND, ttl_seconds=60)
    with pytest.raises(McpError):
        unseal(token, secret=SECRET, bind=BIND)


def test_it_refuses_an_expired_token(monkeypatch):
    token = seal({"x": 1}, secret=SECRET, bind=BIND, ttl_seconds=30)
    later = time.time() + 31
    monkeypatch.setattr(time, "time", lambda: later)
    with pytest.raises(McpError) as exc:
        unseal(token, secret=SECRET, bind=BIND)
    assert exc.value.data == {"reason": "expired"}


def test_extra_bindings_are_bound_too_and_the_three_main_ones_are_required():
    bind = {**BIND, "method": "tools/call"}
    token = seal({"x": 1}, secret=SECRET, bind=bind, ttl_seconds=60)
    assert unseal(token, secret=SECRET, bind=bind) == {"x": 1}
    with pytest.raises(McpError):
        unseal(token, secret=SECRET, bind={**bind, "method": "prompts/get"})
    with pytest.raises(McpError):
        unseal(token, secret=SECRET, bind=BIND)
    with pytest.raises(ValueError, match="credential"):
        seal({"x": 1}, secret=SECRET, bind={"server": "s", "tool": "t"}, ttl_seconds=60)
