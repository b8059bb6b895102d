"""The email recognizer's suffix check answers as tldextract on its bundled snapshot does, and decides the usual
domains without importing tldextract (and the HTTP stack it imports)."""

from __future__ import annotations

import os
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REPO
from scanner.pii.recognizers.email import _top_labels, has_public_suffix, offline_tld_extract


def _tldextract(domain: str) -> bool:
    return offline_tld_extract()("x@" + domain).suffix != ""


def test_the_shortcut_reads_the_snapshot():
    top = _top_labels()
    assert top is not None
    alone, ending = top
    assert {"com", "mx", "org", "test", "localhost"} <= alone <= ending
    assert "ck" in ending - alone                      # only "*.ck" and "!www.ck": asked of tldextract


def test_every_top_label_as_tldextract():
    alone, ending = _top_labels()
    labels = sorted(ending) + ["zz", "qqq", "c0m", "1", "x-y", "xn--p1ai", "XN--P1AI", "COM", "Mx"]
    for label in labels:
        for domain in (f"a.{label}", f"Sub.Ejemplo.{label}", f"www.{label}", f"a.b.{label.upper()}"):
            assert has_public_suffix(domain) == _tldextract(domain), domain


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["com", "mx", "co", "ck", "www", "gob", "uk", "jp", "kawasaki", "city", "test",
                                 "a", "1", "10", "xn--p1ai", "", "-", "MX", "Com", "b-c", "ñ", "рф", "blogspot"]),
                min_size=1, max_size=5))
def test_domains_as_tldextract(labels):
    domain = ".".join(labels)
    assert has_public_suffix(domain) == _tldextract(domain), domain


def test_an_address_scan_imports_no_tldextract(tmp_path):
    page = tmp_path / "contacto.html"
    page.write_text("<p>Escríbeme: juan.perez@ejemplo.com.mx o a maria@correo.mx</p>", encoding="utf-8")
    code = ("import sys, json; from scanner.scan import Scanner; from scanner.loaders import load_path;"
            f"f = Scanner().scan_document(load_path({str(page)!r}));"
            "print(json.dumps([sorted({x.entity for x in f if x.entity}), 'tldextract' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, env=os.environ)
    assert out.returncode == 0, out.stderr[-1500:]
    entities, imported = __import__("json").loads(out.stdout.strip().splitlines()[-1])
    assert "EMAIL_PERSONAL" in entities
    assert imported is False
