# The endpoint's tenant (a user, an organization, a server and a key, committed) serves the
# governance tests beside it too (test_quotas.py).
from tests.gateway.endpoint.conftest import tenant  # noqa: F401
