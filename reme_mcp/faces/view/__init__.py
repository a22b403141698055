"""The memory page (`reme-mcp view`): a local, read-only web page over the memory.

`command` starts it, `auth` decides who may see it, `app` holds its routes, `templates`,
`markdown` and `chart` turn the operations' results into HTML, `forgetting` is where its forget
buttons meet forgetting, and `static/` holds its stylesheet.
"""
