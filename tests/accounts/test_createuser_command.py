import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import User

pytestmark = pytest.mark.django_db


class Terminal(io.StringIO):
    def isatty(self):
        return True


PASSWORD = "a long enough passphrase"


def test_it_creates_a_user_with_a_personal_organization_from_the_env_var(monkeypatch):
    monkeypatch.setenv("GETMCP_PASSWORD", PASSWORD)
    out = io.StringIO()
    call_command("createuser", "Bob@Example.com", stdout=out)
    user = User.objects.get(email="bob@example.com")
    assert user.check_password(PASSWORD)
    assert user.personal_organization() is not None
    assert "Created user bob@example.com" in out.getvalue()
    assert PASSWORD not in out.getvalue()


def test_it_reads_another_env_var_when_told(monkeypatch):
    monkeypatch.delenv("GETMCP_PASSWORD", raising=False)
    monkeypatch.setenv("MY_SECRET", PASSWORD)
    call_command(
        "createuser", "carol@example.com", "--password-env", "MY_SECRET", stdout=io.StringIO()
    )
    assert User.objects.get(email="carol@example.com").check_password(PASSWORD)


def test_it_prompts_twice_without_the_env_var(monkeypatch):
    monkeypatch.delenv("GETMCP_PASSWORD", raising=False)
    monkeypatch.setattr("sys.stdin", Terminal())
    answers = iter([PASSWORD, PASSWORD])
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(answers))
    call_command("createuser", "dan@example.com", stdout=io.StringIO())
    assert User.objects.get(email="dan@example.com").check_password(PASSWORD)


def test_it_refuses_prompts_that_differ(monkeypatch):
    monkeypatch.delenv("GETMCP_PASSWORD", raising=False)
    monkeypatch.setattr("sys.stdin", Terminal())
    answers = iter([PASSWORD, PASSWORD + "!"])
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(answers))
    with pytest.raises(CommandError, match="do not match"):
        call_command("createuser", "erin@example.com")
    assert not User.objects.filter(email="erin@example.com").exists()


def test_it_refuses_an_existing_email(monkeypatch, user):
    monkeypatch.setenv("GETMCP_PASSWORD", PASSWORD)
    with pytest.raises(CommandError, match="already exists"):
        call_command("createuser", user.email.upper())


def test_it_refuses_a_weak_password(monkeypatch):
    monkeypatch.setenv("GETMCP_PASSWORD", "short")
    with pytest.raises(CommandError, match="password:"):
        call_command("createuser", "fay@example.com")
    assert not User.objects.filter(email="fay@example.com").exists()


def test_without_a_terminal_or_the_env_var_it_says_how_to_give_a_password(monkeypatch):
    monkeypatch.delenv("GETMCP_PASSWORD", raising=False)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    with pytest.raises(
        CommandError, match="no terminal to ask for a password: set GETMCP_PASSWORD"
    ):
        call_command("createuser", "gil@example.com")
    assert not User.objects.filter(email="gil@example.com").exists()


def test_it_reads_the_password_from_standard_input_when_told(monkeypatch):
    monkeypatch.delenv("GETMCP_PASSWORD", raising=False)
    monkeypatch.setattr("sys.stdin", io.StringIO(PASSWORD + "\n"))
    call_command("createuser", "hal@example.com", "--password-stdin", stdout=io.StringIO())
    assert User.objects.get(email="hal@example.com").check_password(PASSWORD)


def test_an_ended_prompt_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("GETMCP_PASSWORD", raising=False)
    monkeypatch.setattr("sys.stdin", Terminal())

    def ended(prompt=""):
        raise EOFError

    monkeypatch.setattr("getpass.getpass", ended)
    with pytest.raises(CommandError, match="no password given"):
        call_command("createuser", "ida@example.com")
