"""`redact --write`'s journal: what an interrupted redaction wrote is finished (the manifest brought in line
with the files), and the provenance digest of an original body (`sha256_original`, plain or keyed)."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from pathlib import Path

from scanner import jsonsafe
from scanner.atomic import atomic_write_text
from scanner.fixtures.tree import MANIFEST, unsafe_reason
from scanner.fixtures.tree import REDACT_JOURNAL as JOURNAL

PROVENANCE_KEY_ENV = "CENTINELA_PROVENANCE_KEY"


class RedactError(Exception):
    """Cannot run as asked (exit 2)."""


def finish_journal(root: Path) -> list[str]:
    """Bring the manifest in line with the files a (possibly interrupted) redaction wrote; remove the journal."""
    path = root / JOURNAL
    if not path.exists():
        return []
    manifest_path = root / MANIFEST
    try:
        journal = jsonsafe.read_json(path)
        manifest = jsonsafe.read_json(manifest_path)
    except (OSError, ValueError) as exc:
        raise RedactError(f"{root}: cannot finish an interrupted redaction: {exc}; restore manifest.json and "
                          f"{JOURNAL} from version control, or remove {JOURNAL} and re-run") from None
    if not isinstance(journal, dict) or not isinstance(manifest, dict) or not isinstance(manifest.get("files", {}), dict):
        raise RedactError(f"{root}: {JOURNAL} or manifest.json is not what a redaction writes: restore them from "
                          f"version control, or remove {JOURNAL} and re-run")
    files = manifest.setdefault("files", {})
    done = []
    for rel, rec in journal.items():
        if unsafe_reason(root, rel) or not isinstance(rec, dict) or not all(
                isinstance(rec.get(k), str) for k in ("new", "original", "algorithm")):
            continue               # a journal entry pointing out of the tree, or edited by hand: never used
        target = root / rel
        if not target.is_file():
            continue
        current = sha(target.read_bytes())
        if current != rec["new"]:
            continue               # the interrupted run never replaced this file: it is planned again
        entry = files.get(rel)
        if not isinstance(entry, dict):
            continue
        listed_original = entry.get("sha256_original")
        if not listed_original or listed_original == entry.get("sha256"):
            # first redaction of this file: the body before it is the original
            entry["sha256_original"] = rec["original"]
            if rec["algorithm"] != "sha256":
                entry["sha256_original_algorithm"] = rec["algorithm"]
        # else: an earlier redaction already recorded the original; the body before this one is not it
        entry["sha256"] = rec["new"]
        if rec.get("truncated"):
            entry["truncated"] = True
        done.append(rel)
    manifest["files"] = {k: files[k] for k in sorted(files)}
    atomic_write_text(manifest_path, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    path.unlink()
    return done


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def provenance_key(provenance: str) -> bytes | None:
    if provenance == "sha256":
        return None
    value = os.environ.get(PROVENANCE_KEY_ENV, "")
    if len(value) < 16:
        raise RedactError(f"--provenance hmac needs a key of at least 16 characters in ${PROVENANCE_KEY_ENV} "
                          "(never commit it)")
    return value.encode("utf-8")


def original_digest(original: bytes, key: bytes | None) -> str:
    if key is None:
        return sha(original)
    return hmac.new(key, original, hashlib.sha256).hexdigest()
