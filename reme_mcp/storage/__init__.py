"""The workspace on disk: paths and containment, the walk, atomic writes, locks, swaps, batched work,
and the documents (Markdown, dialogs, plain text) files are parsed into."""
