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
