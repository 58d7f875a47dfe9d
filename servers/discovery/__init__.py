"""Progressive discovery as the domain knows it: the settings a server compiles (config), the tool
search index stored with its snapshot (search), and the meta-tool names (names). The gateway
serves the meta-tools (gateway/agents)."""
