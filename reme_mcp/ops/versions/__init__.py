"""Versions of a fact as `remember` sees them: the notes a new one may replace, and the link a
retry with `supersedes` adds to the note its request wrote (`may_replace`), and how the answer
names them (`results`). Old notes are never edited."""
