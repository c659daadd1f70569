"""The faces: every way a person or a program reaches the brain (the `llm brain` commands, the
fragment and tools, the MCP server, `watch`, `eval`). Each is a thin caller of the façade in
`api.py`: a face parses and formats, it never stores or ranks."""
