"""Where agents already are: an MCP server (`mcp.py`) and a LangGraph store (`langgraph.py`).

Each module imports its optional dependency itself (the `mcp` and `langgraph` extras);
importing `memorepair` never does. Both call `memorepair.api` only, so a memory behaves
the same from the CLI, an MCP client and a LangGraph agent.
"""
