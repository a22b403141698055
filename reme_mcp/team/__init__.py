"""A team's memory across machines: the workspace synced through a git remote (docs/team-sync.md).

- git.py: every git call, with the repository's hooks and the remote's configuration kept out;
- repo.py: the workspace as a work tree, and the local settings reme-mcp keeps in it;
- changes.py: what changed, by kind (notes, digests, dialogs, resources, a person's edits);
- vetting.py: what a remote brings in, checked before anything of it is checked out;
- driver.py: the merge driver of the day index (its automatic block is not merged but rebuilt);
- renames.py: two machines' notes of the same name on the same day, both kept;
- run.py: one sync (commit, fetch, merge, push), and its dry run;
- status.py: the last sync and its error, for `doctor`;
- background.py: the server's periodic sync, between tool calls, backing off when the remote is away.

The `reme-mcp sync` command is a face (faces/cli/sync.py); the operation is `Memory.team_sync`.
"""
