"""Import each host's own session logs into canonical ReMe session dialogs.

Off by default and explicit per source. Each source (one module under `sources/`)
turns its host's log into kept turns: user and assistant text only, cleaned by
`keep`. The `dialog` writer appends them, once per native id, to
`session/dialog/<host>/<session>.jsonl`, which the normal sync indexes. Cursors
(`cursors`) are derived state under metadata/: deleting them costs a re-read,
never a duplicate.
"""
