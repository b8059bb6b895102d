"""The network lock (spec card WS-03): centinela never reaches the network, and its tests cannot.

`install()` replaces the socket entry points that open connections or resolve names. Any attempt to reach a
host other than loopback raises `NetworkBlocked` — loudly, with the address, instead of hanging or
silently falling back. Loopback is allowed only where asked (`allow_loopback=True`): the replay server and
its tests talk over 127.0.0.1 and nothing else. The CLI installs the lock at start, so a library that
tries to download something at run time (tldextract's suffix list, a spaCy model) fails here, visibly.

One live host can be let through, one port of it: `allow_host(host, port)`, which only `centinela record`
calls, for the upstream its `--upstream` names. That name alone may be looked up, and only the addresses it
resolved to are reachable, at that port only; every other name and address stays refused.
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
_allowed_names: dict[str, set[int]] = {}          # host name (lower case, no trailing dot) → ports
_allowed_addresses: set[tuple[str, int]] = set()   # (address, port) reachable besides loopback
_resolved: dict[str, set[tuple[str, int]]] = {}    # allowed name → the (address, port) its look-ups allowed

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


def _address(host) -> str | None:
    """An IP address in its one spelling (`::1`, not `0:0::1`), or None for a name."""
    try:
        return ipaddress.ip_address(str(host).split("%", 1)[0]).compressed
    except ValueError:
        return None


def _name(host) -> str:
    return str(host).lower().rstrip(".")


def _check(address, what: str) -> None:
    if isinstance(address, (str, bytes)):  # AF_UNIX path: not the network
        return
    host = address[0] if isinstance(address, tuple) and address else address
    if _state["allow_loopback"] and _is_loopback(host):
        return
    if isinstance(address, tuple) and len(address) >= 2 and (_address(host), address[1]) in _allowed_addresses:
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
    name = _name(host) if isinstance(host, str) else None
    if name in _allowed_names:
        infos = _ORIGINAL["getaddrinfo"](host, *args, **kwargs)
        for info in infos:
            resolved = _address(info[4][0])
            if resolved is not None:
                pairs = {(resolved, port) for port in _allowed_names.get(name, ())}
                _allowed_addresses.update(pairs)
                _resolved.setdefault(name, set()).update(pairs)
        return infos
    literal = _address(host) if host is not None else None
    if literal is not None and any(a == literal for a, _ in _allowed_addresses):
        return _ORIGINAL["getaddrinfo"](host, *args, **kwargs)       # an allowed address, written as one
    if host is not None and not (_state["allow_loopback"] and _is_loopback(host)):
        raise NetworkBlocked(f"network access blocked by centinela's lock: name lookup of {host!r}")
    return _ORIGINAL["getaddrinfo"](host, *args, **kwargs)


def allow_host(host: str, port: int) -> None:
    """Let connections reach HOST at PORT (and nothing else of it): a name may then be looked up, and the
    addresses it resolves to are reachable at PORT; an address is reachable at PORT. Only `record` calls this,
    for its upstream."""
    address = _address(host)
    if address is not None:
        _allowed_addresses.add((address, int(port)))
    else:
        _allowed_names.setdefault(_name(host), set()).add(int(port))


def forget_host(host: str, port: int) -> None:
    """Undo `allow_host(host, port)`: the name, and the addresses it resolved to, are refused again at PORT."""
    port = int(port)
    address = _address(host)
    if address is not None:
        _allowed_addresses.discard((address, port))
        return
    name = _name(host)
    ports = _allowed_names.get(name, set())
    ports.discard(port)
    if not ports:
        _allowed_names.pop(name, None)
    for pair in [p for p in _resolved.get(name, set()) if p[1] == port]:
        _resolved[name].discard(pair)
        _allowed_addresses.discard(pair)


def forget_hosts() -> None:
    """Refuse every host `allow_host` let through (tests end with this)."""
    _allowed_names.clear()
    _allowed_addresses.clear()
    _resolved.clear()


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
