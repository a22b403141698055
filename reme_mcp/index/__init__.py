"""The index: a Whoosh index of the workspace's chunks, derived from the files and kept in sync.

The files are the truth. Each file has one record (its change stamp, links and
front matter) beside its chunks, committed together, so the index always knows
exactly which version of which file it holds (records.py). `MemoryIndex` (memory_index.py) is
the one door to it; behind it:

- home.py: where the index lives (a private folder of this user's, outside the workspace);
- store.py: opening, healing, rebuilding and swapping the index, its latest searcher;
- sync.py: when to compare the files with the records, and which (watch.py: the change feed);
- writer.py: incremental commits and the spool that lets writers share one;
- committer.py: a server's batch committed by a child process, off its GIL;
- when the spool is committed: reme_mcp/storage/batching.py (a `remember` does not wait for a commit);
- query.py: query tokens and terms, filters, scoring (scoring.py, ranking.py), diversification;
- joint_search.py: the indexes of several workspaces searched as one ranking; snippets.py: cutting hits' text;
- schema.py: what a file becomes in the index; build.py, bulk_writer.py: the full build;
- segments.py: which segments are reopened and merged;
- whoosh_private.py: every use of Whoosh's private API, and what counts as corruption;
- semantic/: the optional search by meaning, in a room of its own (its __init__ says what is where).
"""

from reme_mcp.index.hits import Found, FoundHit
from reme_mcp.index.memory_index import SPARE_FOR_ARRANGING, IndexState, MemoryIndex
from reme_mcp.index.snippets import cut_snippets

__all__ = ["SPARE_FOR_ARRANGING", "Found", "FoundHit", "IndexState", "MemoryIndex", "cut_snippets"]
