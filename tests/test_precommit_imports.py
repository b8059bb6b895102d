"""What a pre-commit hook's cold `centinela scan --kinds injection` of one small page imports (issue 16).

A fresh process runs the command as the hook does (`main()` with its own command line), then reports which
modules it imported and which deferred pydantic models it built. Each name below was once imported or built
eagerly on this path and is not needed by it: the test fails as soon as someone adds such an import back.
(Time is measured in bench/run.py precommit, never here.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "fixtures" / "web-search" / "_shared" / "html" / "farmapeninsular-distribuidores-spa.html"

# Modules an injection-only scan of a small page has no use for (a prefix names the package and its modules).
NOT_IMPORTED = (
    "presidio_analyzer", "spacy", "thinc",          # named-entity recognition: personal data only
    "scanner.pii.recognizer", "scanner.pii.scanner",  # the personal-data scanner
    "scanner.secrets.detect",                        # the secret scanner (output cleaning reads its keywords)
    "scanner.redact",                                # redaction: only a run that plans one
    "scanner.fixtures.models", "scanner.fixtures.tree",  # the fixture models: the scan needs the MANIFEST name
    "pdfminer", "tldextract", "phonenumbers", "stdnum",
)
# pydantic models built on first use (`defer_build`): a scan without an allowlist or a baseline builds none.
DEFERRED_MODELS = (
    ("scanner.suppress.allowlist", "AllowlistEntry"),
    ("scanner.suppress.baseline", "BaselineEntry"),
    ("scanner.suppress.baseline", "BaselineFile"),
)

_PROBE = """
import atexit, json, sys, importlib
out, page = sys.argv[1], sys.argv[2]


def dump():         # at exit: the command ends its own process (scanner.startup.exit_process runs exit handlers)
    built = {f"{m}.{c}": bool(getattr(importlib.import_module(m), c).__pydantic_complete__) for m, c in %r}
    with open(out, "w") as fh:
        json.dump({"modules": sorted(sys.modules), "built": built}, fh)


atexit.register(dump)
sys.argv = ["centinela", "scan", "--no-progress", "--format", "json", "--kinds", "injection", page]
from scanner.cli import main
main()
"""


@pytest.fixture(scope="module")
def probe(tmp_path_factory) -> dict:
    assert PAGE.is_file()
    out = tmp_path_factory.mktemp("imports") / "probe.json"
    proc = subprocess.run([sys.executable, "-c", _PROBE % (DEFERRED_MODELS,), str(out), str(PAGE)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert out.is_file(), proc.stderr[-2000:]
    return {**json.loads(out.read_text()), "code": proc.returncode}


def test_the_probe_ran_a_scan(probe):
    assert probe["code"] in (0, 1)
    # the scan itself was imported (a probe that failed before scanning would pass the checks below)
    assert {"scanner.pipeline.run", "scanner.injection.engine", "scanner.loaders.html"} <= set(probe["modules"])


@pytest.mark.parametrize("name", NOT_IMPORTED)
def test_injection_scan_does_not_import(probe, name):
    found = [m for m in probe["modules"] if m == name or m.startswith(name + ".")]
    assert not found, f"an injection-only scan of a small page imported {found}"


@pytest.mark.parametrize("model", [f"{m}.{c}" for m, c in DEFERRED_MODELS])
def test_injection_scan_does_not_build_suppression_models(probe, model):
    assert probe["built"][model] is False


def test_the_cues_re_patterns_stay_uncompiled_on_folded_text():
    """The per-cue `re` patterns are for prepared texts with a non-ASCII word or space character only: the
    example pages' windows, all folded, never need them (their cues still come out of the RE2 set)."""
    code = ("import sys; from pathlib import Path; from scanner.scan import Scanner; "
            "from scanner.pipeline.run import scan_paths; from scanner.injection import features as F; "
            "r = scan_paths(Scanner(('injection',)), [Path(sys.argv[1])]); "
            "print(F._cue_matchers.cache_info().currsize, F._cue_res.cache_info().currsize, len(r.findings))")
    page = REPO / "fixtures" / "web-search" / "_shared" / "html" / "inj-html-comment.html"
    out = subprocess.run([sys.executable, "-c", code, str(page)], cwd=REPO, capture_output=True, text=True,
                         timeout=300).stdout.split()
    assert out[:2] == ["1", "0"] and int(out[2]) > 0, out
