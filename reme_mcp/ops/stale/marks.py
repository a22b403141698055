"""How a hit says that files it names are gone from the project's checkout: a field and one line.

The paths come from a note and from the repository's file names, both untrusted: in the field
they are escaped like every memory string, and in the text the model reads the line sits inside
the hit's <reme-context> boundary, each path quoted on one line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from reme_mcp.safety.boundary import one_line


class StaleRef(BaseModel):
    model_config = ConfigDict(defer_build=True)

    path: str = Field(description="A repository path the hit names, as the note writes it.")
    status: Literal["gone", "renamed"] = Field(
        description="'renamed': git's rename detection says it moved to `renamed_to`; 'gone': not in the checkout."
    )
    renamed_to: str | None = Field(default=None, description="Where it is now, for 'renamed'.")
    commit: str | None = Field(
        default=None, description="The commit it left the current branch's history in; none when it never was on it."
    )
    date: str | None = Field(default=None, description="That commit's date (YYYY-MM-DD).")


def stale_line(refs: Sequence[StaleRef]) -> str:
    """One line for the model: which named files are not in the checkout now, and where they went."""
    said = []
    for ref in refs:
        since = f" in {ref.commit[:10]} ({ref.date})" if ref.commit else ""
        if ref.status == "renamed" and ref.renamed_to:
            said.append(f"{_quoted(ref.path)} was renamed to {_quoted(ref.renamed_to)}{since}")
        else:
            said.append(f"{_quoted(ref.path)} is gone{f' since {since[4:]}' if since else ''}")
    return "Checked against the project's checkout now: " + "; ".join(said) + "."


def _quoted(path: str) -> str:
    return one_line(json.dumps(path, ensure_ascii=False))
