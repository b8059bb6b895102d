"""The network lock (spec card WS-03): centinela never reaches the network, and its tests cannot.

`install()` replaces the socket entry points that open connections or resolve names. Any attempt to reach a
host other than loopback raises `NetworkBlocked` — loudly, with the address, instead of hanging or
silently falling back. Loopback is allowed only where asked (`allow_loopback=True`): the replay server and
its tests talk over 127.0.0.1 and nothing else. The CLI installs the lock at start, so a library that
tries to download something at run time (tldextract's suffix list, a spaCy model) fails here, visibly.
"""

from __future__ import annotations

import ipaddress
import os
import socket

_ORIGINAL = {
    "connect": socket.socket.connect,
    "connect_ex": socket.socket.connect_ex,
    "create_connection": socket.create_connection,
    "getaddrinfo": socket.getaddrinfo,
    "sendto": socket.socket.sendto,
}
_state = {"installed": False, "allow_loopback": False}

# Libraries that look for these keep to their local data instead of reaching a hub.
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


class NetworkBlocked(RuntimeError):
    """Raised on any attempt to open a network connection while the lock is installed."""


def _is_loopback(host) -> bool:
    if host in ("localhost", "localhost.", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _check(address, what: str) -> None:
    if isinstance(address, (str, bytes)):  # AF_UNIX path: not the network
        return
    host = address[0] if isinstance(address, tuple) and address else address
    if _state["allow_loopback"] and _is_loopback(host):
        return
    raise NetworkBlocked(f"network access blocked by centinela's lock: {what} {address!r}")


def _connect(self, address):
    if self.family != getattr(socket, "AF_UNIX", None):
        _check(address, "connect to")
    return _ORIGINAL["connect"](self, address)


def _connect_ex(self, address):
    if self.family != getattr(socket, "AF_UNIX", None):
        _check(address, "connect to")
    return _ORIGINAL["connect_ex"](self, address)


def _sendto(self, data, *args):
    address = args[-1]
    if self.family != getattr(socket, "AF_UNIX", None):
        _check(address, "send to")
    return _ORIGINAL["sendto"](self, data, *args)


def _create_connection(address, *args, **kwargs):
    _check(address, "connect to")
    return _ORIGINAL["create_connection"](address, *args, **kwargs)


def _getaddrinfo(host, *args, **kwargs):
    if host is not None and not (_state["allow_loopback"] and _is_loopback(host)):
        raise NetworkBlocked(f"network access blocked by centinela's lock: name lookup of {host!r}")
    return _ORIGINAL["getaddrinfo"](host, *args, **kwargs)


def install(allow_loopback: bool = False) -> None:
    os.environ.update(OFFLINE_ENV)
    _state["allow_loopback"] = allow_loopback
    if _state["installed"]:
        return
    socket.socket.connect = _connect
    socket.socket.connect_ex = _connect_ex
    socket.socket.sendto = _sendto
    socket.create_connection = _create_connection
    socket.getaddrinfo = _getaddrinfo
    _state["installed"] = True


def set_loopback(allowed: bool) -> bool:
    """Allow or forbid loopback; returns the previous setting."""
    previous = _state["allow_loopback"]
    _state["allow_loopback"] = allowed
    return previous


def uninstall() -> None:
    socket.socket.connect = _ORIGINAL["connect"]
    socket.socket.connect_ex = _ORIGINAL["connect_ex"]
    socket.socket.sendto = _ORIGINAL["sendto"]
    socket.create_connection = _ORIGINAL["create_connection"]
    socket.getaddrinfo = _ORIGINAL["getaddrinfo"]
    _state["installed"] = False
