"""Test asset: a network that is unreachable beyond loopback, and a record of every attempt.

Put this folder first on ``PYTHONPATH`` and name a log file in ``PROOFSMITH_NETWORK_LOG``:
Python imports ``sitecustomize`` at start-up, in the process and in every child it starts
(vLLM servers and engine cores inherit the environment). Each name lookup, connection or
datagram to a host that is not loopback is appended to the log ("pid what target") and
refused with ``OSError(ENETUNREACH)``, as on a machine without a network. Loopback stays
open: local vLLM servers on 127.0.0.1 must keep working.

Seen: Python-level sockets (``socket.getaddrinfo``, ``gethostbyname``, ``create_connection``,
``socket.connect``/``connect_ex``/``sendto``), which httpx, requests, urllib and asyncio all
go through. Not seen: connections opened in C or Rust without Python's socket module; the
Hub, telemetry and usage-stats paths of the libraries proofsmith runs all start in Python.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
from typing import Any

LOG = os.environ.get("PROOFSMITH_NETWORK_LOG")


def is_local(host: Any) -> bool:
    """Loopback, the unspecified address (binding) or a lookup without a host."""
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    name = str(host).split("%")[0].lower()
    if name in ("", "localhost") or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def refuse(what: str, target: Any) -> None:
    assert LOG is not None
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()} {what} {target!r}\n")
    raise OSError(errno.ENETUNREACH, f"network unreachable (test guard): {what} {target!r}")


def check_address(what: str, address: Any) -> None:
    # AF_INET/AF_INET6 addresses are tuples; AF_UNIX paths (str/bytes) never leave the machine.
    if isinstance(address, tuple) and address and not is_local(address[0]):
        refuse(what, address)


def install() -> None:
    original_getaddrinfo = socket.getaddrinfo
    original_gethostbyname = socket.gethostbyname
    original_gethostbyname_ex = socket.gethostbyname_ex
    original_create_connection = socket.create_connection
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex
    original_sendto = socket.socket.sendto

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not is_local(host):
            refuse("getaddrinfo", host)
        return original_getaddrinfo(host, *args, **kwargs)

    def gethostbyname(host: str) -> str:
        if not is_local(host):
            refuse("gethostbyname", host)
        return original_gethostbyname(host)

    def gethostbyname_ex(host: str) -> Any:
        if not is_local(host):
            refuse("gethostbyname_ex", host)
        return original_gethostbyname_ex(host)

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        check_address("create_connection", address)
        return original_create_connection(address, *args, **kwargs)

    def connect(self: socket.socket, address: Any) -> None:
        check_address("connect", address)
        return original_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        check_address("connect_ex", address)
        return original_connect_ex(self, address)

    def sendto(self: socket.socket, data: Any, *args: Any) -> int:
        check_address("sendto", args[-1] if args else None)
        return original_sendto(self, data, *args)

    socket.getaddrinfo = getaddrinfo
    socket.gethostbyname = gethostbyname
    socket.gethostbyname_ex = gethostbyname_ex
    socket.create_connection = create_connection
    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.socket.sendto = sendto  # type: ignore[method-assign]


if LOG:
    install()
