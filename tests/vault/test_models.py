import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError

from servers.models import Server
from vault.models import NetworkAllowance, Secret


@pytest.fixture
def server(org):
    return Server.objects.create(organization=org, slug="weather", name="weather")


def test_a_stored_secret_is_encrypted_and_never_shown(org):
    secret = Secret.store(org, "API_TOKEN", "tok_live_123456")
    row = Secret.objects.get(pk=secret.pk)
    assert "tok_live_123456" not in row.ciphertext
    assert row.reveal() == "tok_live_123456"
    for shown in (str(row), repr(row), str(row.describe())):
        assert "tok_live_123456" not in shown
        assert row.ciphertext not in shown


def test_describe_tells_what_exists_without_values(org, server):
    secret = Secret.store(org, "KEY", "live-value", test_value="test-value", server=server)
    described = secret.describe()
    assert described["name"] == "KEY"
    assert described["server"] == "weather"
    assert described["hasTestValue"] is True
    assert "live-value" not in str(described) and "test-value" not in str(described)


def test_storing_again_replaces_the_value(org):
    Secret.store(org, "API_TOKEN", "first")
    Secret.store(org, "API_TOKEN", "second")
    assert Secret.objects.filter(organization=org).count() == 1
    assert Secret.objects.get(organization=org).reveal() == "second"


def test_a_test_value_is_separate_and_falls_back_to_the_live_one(org):
    with_test = Secret.store(org, "WITH_TEST", "live", test_value="sandbox")
    without = Secret.store(org, "WITHOUT_TEST", "live-only")
    assert with_test.reveal() == "live"
    assert with_test.reveal(test=True) == "sandbox"
    assert without.reveal(test=True) == "live-only"


@pytest.mark.parametrize("name", ["1ABC", "has-dash", "has space", "", "x" * 65])
def test_a_name_must_be_usable_in_a_template(org, name):
    with pytest.raises(ValidationError) as caught:
        Secret.store(org, name, "v")
    assert "name" in caught.value.message_dict


def test_a_server_secret_must_belong_to_the_same_organization(org, outsider_org):
    theirs = Server.objects.create(organization=outsider_org, slug="theirs", name="theirs")
    with pytest.raises(ValidationError) as caught:
        Secret.store(org, "KEY", "v", server=theirs)
    assert "server" in caught.value.message_dict


def test_names_are_unique_per_organization_and_per_server(org, server):
    Secret.store(org, "KEY", "org-wide")
    Secret.store(org, "KEY", "server-only", server=server)
    secret = Secret(organization=org, name="KEY")
    secret.set_value("duplicate")
    with pytest.raises(IntegrityError):
        secret.save()


def test_a_network_allowance_must_be_a_network(org):
    with pytest.raises(ValidationError):
        NetworkAllowance(organization=org, cidr="10.0.0.0/40").full_clean()
    NetworkAllowance(organization=org, cidr="10.0.0.0/8").full_clean()
