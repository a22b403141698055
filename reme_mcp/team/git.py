"""Every git call reme-mcp makes: the person's git and credentials, nothing of the repository's code run.

A remote is untrusted input. Its files may carry hooks, attributes or configuration meant to run
code on this machine: no hook runs (core.hooksPath points at nothing), no filter or external
diff runs, and a remote on local disk, whose own hooks and configuration its git would honour
on our behalf, is served with hooks off too.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from reme_mcp.errors import ReMeError

# Options given to every git call. core.hooksPath: no hook of the repository runs (a hook is a
# program anyone with write access to a clone could have left). The protect* options refuse paths
# such as `.git/config` smuggled in under another spelling, on every file system.
SAFE_OPTIONS = (
    "-c",
    f"core.hooksPath={os.devnull}",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.protectNTFS=true",
    "-c",
    "core.protectHFS=true",
    "-c",
    "core.autocrlf=false",
    "-c",
    "core.quotePath=false",
    "-c",
    "submodule.recurse=false",
    "-c",
    "color.ui=false",
    "-c",
    "advice.detachedHead=false",
    # reme-mcp's own commits are unattended: a signing prompt would hang a background sync.
    "-c",
    "commit.gpgSign=false",
)
# The git a local remote runs on our behalf (upload-pack, receive-pack) reads that repository's
# configuration and runs its hooks: both are kept out.
_SERVE_SAFELY = f"git -c core.hooksPath={os.devnull} -c core.fsmonitor=false"
_SCP_LIKE = re.compile(r"^[^/]*:")
TIMEOUT = 300.0


class GitError(ReMeError):
    """A git call failed: one line saying which and why."""


class Unreachable(GitError):
    """The remote could not be reached (network, credentials): the next sync tries again."""


_UNREACHABLE = re.compile(
    r"could not read from remote|unable to access|could not resolve|does not appear to be a git repository"
    r"|connection (?:refused|timed out|reset)|network is unreachable|no route to host|authentication failed"
    r"|permission denied|repository .* not found|timed out",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Done:
    code: int
    out: str
    err: str


def is_local(url: str) -> bool:
    """Whether git reaches this remote by running its own git on this machine (a path or file://)."""
    if url.startswith("file://"):
        return True
    if "://" in url:
        return False
    return not _SCP_LIKE.match(url) or bool(re.match(r"^[A-Za-z]:[\\/]", url))


def environment(interactive: bool) -> dict[str, str]:
    """The person's environment, with git's own variables that would redirect a call removed."""
    env = {k: v for k, v in os.environ.items() if not (k.startswith("GIT_") and k not in _KEPT_GIT_VARS)}
    env["LC_ALL"] = "C"  # messages are matched (unreachable, rejected): in git's own words
    if not interactive:
        # A background sync has no one to type a password: fail instead of waiting for ever.
        env["GIT_TERMINAL_PROMPT"] = "0"
        env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    return env


# Kept: who the person is, which configuration files they chose, and how they reach remotes.
_KEPT_GIT_VARS = frozenset(
    {
        *(f"GIT_{role}_{part}" for role in ("AUTHOR", "COMMITTER") for part in ("NAME", "EMAIL")),
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_ASKPASS",
        "GIT_TERMINAL_PROMPT",
        "GIT_SSL_CAINFO",
    }
)


class Git:
    """git in one work tree."""

    def __init__(self, root: Path, interactive: bool = True, env: Mapping[str, str] | None = None) -> None:
        """`env`: variables set on top of the person's (environment) for every call."""
        self.root = root
        self.interactive = interactive
        self._env = environment(interactive) | dict(env or {})

    def run(self, *args: str, check: bool = True, input: bytes | None = None, timeout: float = TIMEOUT) -> Done:
        try:
            done = subprocess.run(
                ["git", *SAFE_OPTIONS, *args],
                cwd=self.root,
                env=self._env,
                input=input,
                capture_output=True,
                timeout=timeout,
                stdin=None if input is not None else subprocess.DEVNULL,
            )
        except FileNotFoundError as exc:
            raise GitError("git is not installed: install git to sync the workspace") from exc
        except subprocess.TimeoutExpired as exc:
            raise Unreachable(f"git {args[0]} took over {timeout:.0f} s: the remote is not answering") from exc
        result = Done(done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"))
        if check and result.code != 0:
            raise self.error(args, result)
        return result

    def out(self, *args: str) -> str:
        return self.run(*args).out

    def blob(self, sha: str) -> bytes:
        """A blob's bytes, exactly."""
        done = subprocess.run(
            ["git", *SAFE_OPTIONS, "cat-file", "blob", sha],
            cwd=self.root,
            env=self._env,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=TIMEOUT,
        )
        if done.returncode != 0:
            raise GitError(f"git cat-file failed for {sha[:12]}: the repository may be damaged (git fsck)")
        return done.stdout

    def blobs(self, shas: Sequence[str]) -> list[bytes]:
        """Many blobs' bytes in one call, in the order asked."""
        if not shas:
            return []
        done = subprocess.run(
            ["git", *SAFE_OPTIONS, "cat-file", "--batch"],
            cwd=self.root,
            env=self._env,
            input="".join(f"{sha}\n" for sha in shas).encode("ascii"),
            capture_output=True,
            timeout=TIMEOUT,
        )
        out, at, found = done.stdout, 0, []
        for sha in shas:
            end = out.find(b"\n", at)
            fields = out[at:end].split(b" ")
            if done.returncode != 0 or end < 0 or len(fields) != 3 or fields[1] != b"blob":
                raise GitError(f"git cat-file failed for {sha[:12]}: the repository may be damaged (git fsck)")
            size = int(fields[2])
            found.append(out[end + 1 : end + 1 + size])
            at = end + 1 + size + 1
        return found

    def ok(self, *args: str) -> bool:
        return self.run(*args, check=False).code == 0

    def error(self, args: Sequence[str], done: Done) -> GitError:
        lines = [line.strip() for line in (done.err or done.out).splitlines() if line.strip()]
        said = next(
            (line for line in lines if line.lower().startswith(("fatal:", "error:"))), lines[-1] if lines else ""
        )
        said = said.removeprefix("fatal: ").removeprefix("error: ")
        kind = Unreachable if _UNREACHABLE.search(done.err) else GitError
        return kind(f"git {args[0]} failed: {said or f'exit status {done.code}'}")

    def remote_options(self, url: str, command: str) -> list[str]:
        """--upload-pack / --receive-pack that keep a local remote's hooks and fsmonitor from running."""
        if not is_local(url):
            return []
        return [f"--{command}={_SERVE_SAFELY} {command}"]
