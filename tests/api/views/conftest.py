"""A real upstream MCP server for the pages and endpoints that add tools from one."""

from tests.servers.upstream.fixtures import loopback_allowed, upstream  # noqa: F401
