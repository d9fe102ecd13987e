"""Listening sockets for the HTTP servers (``discogym mcp --transport http``, ``discogym serve``)."""

import errno
import socket

from discogym.core import UserError


def bind_http(host: str, port: int) -> socket.socket:
    """A socket listening on ``host``:``port``, or a UserError saying why there cannot be one (a port in use
    is found here, before the server says it is serving, not by uvicorn afterwards)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            why = "is in use: stop what listens there or choose another --port"
        else:
            why = f"cannot be used: {err.strerror or err}"
        raise UserError(f"port {port} on {host} {why}") from None
