"""MCP both ways: servers we use as tools (client, manager, tools) and our tools served over MCP (server)."""
