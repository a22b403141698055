"""The listening socket of the HTTP server and the memory page, bound before either says it serves.

A server that says "serving" and then finds its port taken has told a person something untrue;
binding first makes the announcement a fact, and a taken port one line naming the port and the
option that changes it (a second project's server on the default port is the usual cause).
"""

from __future__ import annotations

import errno
import socket

from reme_mcp.errors import ReMeError, os_error_line


def listening_socket(host: str, port: int, what: str = "reme-mcp") -> socket.socket:
    """A socket listening on host:port (port 0: any free port), inheritable by uvicorn's workers."""
    # As uvicorn binds: IPv6 for an address with a colon, else IPv4 (so "localhost" is 127.0.0.1).
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6 and host.strip("[]") == "::":
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except (OSError, UnicodeError) as exc:
        sock.close()
        raise ReMeError(_bind_failure(exc, host, port, what)) from exc
    sock.set_inheritable(True)
    return sock


def _bind_failure(exc: OSError | UnicodeError, host: str, port: int, what: str) -> str:
    if isinstance(exc, socket.gaierror | UnicodeError):
        return f"--host {host} is not an address or a name this machine resolves: give one, e.g. 127.0.0.1"
    if exc.errno == errno.EADDRINUSE:
        return (
            f"port {port} on {host} is already in use (another {what}, perhaps for another project): "
            f"choose another with --port, e.g. --port {port + 1 if port < 65535 else 0} (0: any free port)"
        )
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"port {port} on {host} is not open to this user: choose one above 1023 with --port"
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"{host} is not an address of this machine: give one it has with --host, e.g. 127.0.0.1"
    return f"{os_error_line(exc, f'listening on {host}:{port}').split(';')[0]}; choose another --port or --host"
