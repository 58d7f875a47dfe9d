"""The non-MCP surfaces of a server (seeds 000, 003, 004): server info, REST tool calls, OpenAPI,
the discovery document and Webtools. Pure functions over a Snapshot; the endpoint serializes."""
