"""A red-team set for the redactor (42 synthetic fixtures written blind to its rules, with the exact strings
that must disappear and those that must stay): `redact --write` replaces every datum and touches no kept
item, except the gaps listed here with their reasons."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from inprocess import run_cli

DATA = Path(__file__).parent / "data" / "redaction-redteam"

# (file, string): known gaps, measured when the set was added. Each says what would fix it.
KNOWN_MISSES = {
    ("34-html-layout-splits.html", "3398765432"): "owner cue only in the table's column header (Celular)",
    ("41-news-and-complaints.html", "4152 3112 3456 7898"): "no payment-card recognizer (not in the contract)",
}
KNOWN_TOUCHED = {
    ("18-firecrawl-raw.json", "(669) 985 1200"): "a city-only branch mailbox (mazatlan@) reads as personal",
    ("34-html-layout-splits.html", "(55) 5080 1000"): "switchboard label in a separate <dt> element",
    ("35-phone-formats.html", "obras@solocc.com.mx"): "role 'obras' not in the role list",
}


def test_redteam_set(tmp_path):
    work = tmp_path / "work"
    shutil.copytree(DATA / "cases", work)
    truth = json.loads((DATA / "truth.json").read_text(encoding="utf-8"))
    # In this process (tests/inprocess.py): what is checked is what the write did to the files; a fresh interpreter
    # (its start-up, spaCy's model) proves nothing here, and test_redact.py keeps a real `redact --write`.
    proc = run_cli("redact", work, "--write", "--format", "json")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    misses, touched = set(), set()
    for name, want in truth.items():
        path = work / name
        text = path.read_text(encoding="utf-8")
        if name.endswith(".json"):
            json.loads(text)
        for item in want["disappear"]:
            if item["s"] in text:
                misses.add((name, item["s"]))
        original = (DATA / "cases" / name).read_text(encoding="utf-8")
        for item in want["stay"]:
            if original.count(item["s"]) > text.count(item["s"]):
                touched.add((name, item["s"]))
    assert misses <= set(KNOWN_MISSES), sorted(misses - set(KNOWN_MISSES))
    assert touched <= set(KNOWN_TOUCHED), sorted(touched - set(KNOWN_TOUCHED))
    again = run_cli("redact", work, "--check", "--format", "json")
    assert again.returncode == 0 and json.loads(again.stdout)["files"] == []
