"""Daily notes in ReMe's format: note names and dates, the notes of a day, the day index
`daily/<date>.md`, and the request ledger that makes `remember` exactly-once."""
