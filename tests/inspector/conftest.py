from tests.servers.endpoint.conftest import outsider_tenant, tenant  # noqa: F401
