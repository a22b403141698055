"""The one error type that reaches a person or a model."""

from __future__ import annotations

import errno
import logging


class ReMeError(ValueError):
    """A bad argument or an unusable file: one line saying what was wrong and what is accepted.

    The MCP face turns it into a tool error and the CLI into a message on stderr;
    anything else is a bug and is logged with its traceback on the server side only.
    """

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))


def shown(value: object, limit: int = 80) -> str:
    """A value as an error message may quote it: repr, cut short, so a huge argument is not echoed back."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_OS_CAUSES: dict[int, tuple[str, str]] = {
    errno.ENOSPC: ("the disk is full", "free some space, then try again"),
    errno.EDQUOT: ("the disk quota is used up", "free some space or raise the quota, then try again"),
    errno.EROFS: ("the file system is read-only", "mount it writable, or point reme-mcp at a writable workspace"),
    errno.EACCES: ("permission was denied", "give this user read and write access to the workspace"),
    errno.EPERM: ("the operation is not permitted", "give this user read and write access to the workspace"),
    errno.ENOTDIR: (
        "a part of the path is a file where a folder belongs",
        "rename that file if it is inside the workspace, else choose another workspace path",
    ),
    errno.EISDIR: (
        "a folder is where a file belongs",
        "rename that folder if it is inside the workspace, else choose another workspace path",
    ),
    errno.ENAMETOOLONG: ("a file name is too long", "use a shorter name"),
    errno.ELOOP: ("a symbolic link loops or is not followed", "replace the link by a file or folder"),
    errno.EMFILE: ("too many files are open", "close some clients or raise the open-file limit"),
    errno.EIO: ("the disk reported an input/output error", "check the disk"),
}


def os_error_line(exc: OSError, doing: str) -> str:
    """An OS error as one line: what failed, the cause in words, where, and what to do."""
    cause, todo = _OS_CAUSES.get(exc.errno or -1, (exc.strerror or exc.__class__.__name__, "check the workspace"))
    where = f" at {shown(str(exc.filename), 200)}" if exc.filename else ""
    return f"{doing} failed: {cause}{where}; {todo}"


class SaidOnce:
    """An OS error said on stderr once until it clears: a retried step fails the same way again and again.

    Keyed by errno, not by the message: the file named differs from one attempt to the next.
    """

    def __init__(self, log: logging.Logger, doing: str, meanwhile: str) -> None:
        self._log = log
        self._doing = doing
        self._meanwhile = meanwhile
        self._errno: int | None = None

    def failed(self, exc: OSError) -> None:
        if exc.errno != self._errno:
            self._log.warning("reme-mcp: %s; %s", os_error_line(exc, self._doing), self._meanwhile)
            self._errno = exc.errno

    def cleared(self) -> None:
        self._errno = None
