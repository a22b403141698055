"""The memory operations (search, read, traverse, daily_list, remember), their limits and result models:
plain Python, usable without MCP."""
