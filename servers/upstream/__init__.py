"""Upstream MCP servers: the relay client (connection.py), the SSRF-guarded httpx2 transport it
uses, health records, and the listing/refresh of the tools a server exposes from them."""
