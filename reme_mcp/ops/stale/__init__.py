"""Hits checked against the project's git checkout: which paths a hit names are gone or renamed
(`hits`, from projects/stale_refs.py) and how a hit says so (`marks`: the field and the line)."""
