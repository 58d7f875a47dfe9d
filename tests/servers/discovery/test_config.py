from servers.access import compile_role_access
from servers.discovery.config import read


def test_servers_with_the_same_settings_share_one_instance_and_others_get_their_own():
    assert read(None) is read({}) is read({"discovery": {"mode": "auto"}})
    tuned = read({"outputBudget": {"maxChars": 500}})
    assert tuned is not read(None)
    assert tuned.max_chars == 500 and read(None).max_chars != 500
    assert read({"outputBudget": {"maxChars": 500}}) is tuned


def test_servers_that_limit_no_role_share_one_empty_role_access():
    assert compile_role_access(None) is compile_role_access({})
    assert not compile_role_access({})
    limited = compile_role_access({"member": {"tools": ["echo"]}})
    # Roles below a named one are bounded by it ("no more than", servers/access.py).
    assert set(limited) == {"member", "viewer"}
