"""The connector doctor: replays, against a server's public URL, what each major MCP client does
before its first call, and says for each step what passed, what failed and how to fix it.

    report = diagnose(server=server, user=user, key=None, origin=None)   # service.py

One module per client family (oauth_clients: claude.ai / Claude Desktop / ChatGPT; header_clients:
Cursor, VS Code, Claude Code) and one for the deployment around the server (deployment). Every
request goes through the SSRF guard (probe.py says how the site's own address is admitted).
"""
