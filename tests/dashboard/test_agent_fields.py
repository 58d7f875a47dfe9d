"""The server form's agent settings keep code mode: the box turns it on and off, and its
program limits (no field of their own) survive a save."""

from dashboard.agent_fields import AgentSettingsFields


def save(data: dict, current: dict) -> dict:
    return AgentSettingsFields().agent_settings(data, current)


def test_the_code_mode_box_turns_it_on_and_off_and_keeps_its_limits():
    current = {"codeMode": {"enabled": True, "limits": {"cpuSeconds": 2}}}
    assert save({"code_mode": False}, current) == {"codeMode": {"limits": {"cpuSeconds": 2}}}
    assert save({"code_mode": True}, {}) == {"codeMode": {"enabled": True}}
    assert save({"code_mode": False}, {}) == {}
    # A form that does not post the box keeps what the server has.
    assert save({}, current) == current
