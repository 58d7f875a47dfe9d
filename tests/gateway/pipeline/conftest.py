# The pipeline is reached through the endpoint: its tests use the endpoint's tenants and clients.
from tests.gateway.endpoint.conftest import *  # noqa: F403
