"""The lock (spec card WS-03): nothing in the test session can reach the network, and the attempt is loud."""

from __future__ import annotations

import socket
import subprocess
import sys
import urllib.request

import pytest

from scanner.netlock import NetworkBlocked


def test_connection_to_a_public_address_fails_loudly():
    with pytest.raises(NetworkBlocked, match="93.184.216.34"):
        socket.create_connection(("93.184.216.34", 80), timeout=1)


def test_raw_socket_connect_fails_loudly():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with pytest.raises(NetworkBlocked):
            s.connect(("10.0.0.1", 443))
        with pytest.raises(NetworkBlocked):
            s.connect_ex(("192.0.2.1", 443))
    finally:
        s.close()


def test_name_lookup_fails_loudly():
    with pytest.raises(NetworkBlocked, match="publicsuffix.org"):
        socket.getaddrinfo("publicsuffix.org", 443)


def test_urllib_download_fails_loudly():
    with pytest.raises(Exception) as info:
        urllib.request.urlopen("https://publicsuffix.org/list/public_suffix_list.dat", timeout=1)
    assert "blocked by centinela's lock" in str(info.value)


def test_udp_sendto_fails_loudly():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        with pytest.raises(NetworkBlocked):
            s.sendto(b"x", ("8.8.8.8", 53))
    finally:
        s.close()


def test_loopback_is_blocked_unless_a_test_opts_in(loopback):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        client = socket.create_connection(("127.0.0.1", port), timeout=30)
        client.close()
    finally:
        server.close()


def test_loopback_blocked_by_default():
    with pytest.raises(NetworkBlocked):
        socket.create_connection(("127.0.0.1", 9), timeout=1)


def test_the_cli_installs_the_lock_too():
    code = ("import socket, sys\n"
            "from scanner import cli\n"
            "sys.argv = ['centinela', '--version']\n"
            "try:\n    cli.main(['--version'])\nexcept SystemExit:\n    pass\n"
            "try:\n    socket.create_connection(('93.184.216.34', 80), timeout=1)\n"
            "except Exception as e:\n    print(type(e).__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().endswith("NetworkBlocked")


# --- the one host `record` may reach -------------------------------------------------------------------------

def test_one_allowed_address_and_port_and_nothing_else():
    from scanner import netlock

    netlock.allow_host("203.0.113.7", 443)
    netlock._check(("203.0.113.7", 443), "connect to")                 # let through: no exception
    for address in (("203.0.113.7", 80), ("203.0.113.8", 443), ("127.0.0.1", 443), ("10.0.0.1", 443)):
        with pytest.raises(NetworkBlocked):
            netlock._check(address, "connect to")
    with pytest.raises(NetworkBlocked, match="example.com"):
        socket.getaddrinfo("example.com", 443)
    netlock.forget_host("203.0.113.7", 443)
    with pytest.raises(NetworkBlocked):
        netlock._check(("203.0.113.7", 443), "connect to")


def test_an_allowed_name_is_looked_up_and_only_its_addresses_are_reached(monkeypatch):
    from scanner import netlock

    answers = {"api.tavily.com": "198.51.100.20"}

    def fake_lookup(host, port, *args, **kwargs):        # the resolver, without a network
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answers[host], port))]

    monkeypatch.setitem(netlock._ORIGINAL, "getaddrinfo", fake_lookup)
    netlock.allow_host("API.Tavily.com.", 443)
    assert socket.getaddrinfo("api.tavily.com", 443)[0][4] == ("198.51.100.20", 443)
    netlock._check(("198.51.100.20", 443), "connect to")
    with pytest.raises(NetworkBlocked):
        netlock._check(("198.51.100.20", 80), "connect to")               # another port of it
    with pytest.raises(NetworkBlocked, match="api.exa.ai"):
        socket.getaddrinfo("api.exa.ai", 443)                           # another name
    with pytest.raises(NetworkBlocked):
        socket.create_connection(("198.51.100.21", 443), timeout=1)      # another address
    netlock.forget_host("api.tavily.com", 443)
    with pytest.raises(NetworkBlocked):
        socket.getaddrinfo("api.tavily.com", 443)
    with pytest.raises(NetworkBlocked):
        netlock._check(("198.51.100.20", 443), "connect to")
