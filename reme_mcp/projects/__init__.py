"""Which project a session serves, and the workspaces it reads and writes.

One ReMe workspace per project under a projects root, plus one personal workspace for what
holds in every project: the workspace is the boundary of sharing and isolation.
"""
