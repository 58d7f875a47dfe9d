"""A session's hash becomes one immutable Session per hash: warm calls of a session share it,
and a re-read hash (a changed log level, another credential) is parsed again."""

import dataclasses

import orjson
import pytest

from gateway.endpoint import sessions
from gateway.endpoint.sessions import Session


def stored(level: bytes | None = None, credential: bytes = b"key:1") -> dict[bytes, bytes]:
    data = {
        b"srv": b"7",
        b"cred": credential,
        b"v": b"2025-11-25",
        b"caps": orjson.dumps({"roots": {}}),
        b"ci": orjson.dumps({"name": "client", "version": "1"}),
    }
    if level:
        data[b"lvl"] = level
    return data


def test_the_same_hash_gives_the_same_session_without_parsing_it_again():
    data = stored()
    first = Session.from_hash("s1", data)
    assert (
        first is not None
        and first.server_id == 7
        and first.client_info
        == {
            "name": "client",
            "version": "1",
        }
    )
    assert Session.from_hash("s1", data) is first


def test_a_hash_read_again_is_parsed_again_even_when_equal():
    first = Session.from_hash("s2", stored())
    changed = Session.from_hash("s2", stored(level=b"debug", credential=b"key:2"))
    assert changed is not first
    assert (changed.log_level, changed.credential) == ("debug", "key:2")
    assert Session.from_hash("s2", stored()) is not changed


def test_another_session_with_an_equal_hash_gets_its_own_session():
    data = stored()
    assert Session.from_hash("s3", data).sid == "s3"
    assert Session.from_hash("s4", data).sid == "s4"


def test_a_missing_session_is_none_and_a_shared_session_cannot_be_changed():
    assert Session.from_hash("gone", {}) is None
    session = Session.from_hash("s5", stored())
    with pytest.raises(dataclasses.FrozenInstanceError):
        session.log_level = "debug"  # type: ignore[misc]


def test_the_memo_stays_bounded(monkeypatch):
    monkeypatch.setattr(sessions, "MAX_PARSED", 3)
    monkeypatch.setattr(sessions, "_parsed", {})
    for number in range(10):
        Session.from_hash(f"bounded-{number}", stored())
    assert len(sessions._parsed) <= 3
