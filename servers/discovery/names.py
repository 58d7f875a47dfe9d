"""The meta-tools' names: the quotas count a call through them as the tool it names."""

SEARCH, DESCRIBE, CALL = "getmcp_search_tools", "getmcp_describe_tool", "getmcp_call_tool"
