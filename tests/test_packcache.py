"""scanner.packcache: validated rule packs kept between runs, keyed by content. A cached pack is the pack the YAML
gives; a damaged, stale, foreign or someone else's entry is rebuilt from the YAML, never trusted."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from scanner import packcache


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("CENTINELA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CENTINELA_NO_CACHE", raising=False)
    monkeypatch.delenv(packcache.ENV, raising=False)
    return tmp_path / "cache" / "packs"


def _pack(tmp_path: Path, text: str = "a: 1\n") -> list[Path]:
    f = tmp_path / "pack" / "rule.yaml"
    f.parent.mkdir(exist_ok=True)
    f.write_text(text)
    return [f]


def _counting(value):
    calls = []

    def build():
        calls.append(1)
        return value
    return build, calls


def test_a_second_load_is_read_from_the_cache(cache, tmp_path):
    files = _pack(tmp_path)
    build, calls = _counting({"rules": [1, 2]})
    assert packcache.cached("t", files, build) == {"rules": [1, 2]}
    assert packcache.cached("t", files, build) == {"rules": [1, 2]}
    assert len(calls) == 1
    (entry,) = cache.glob("t-*.pickle")
    assert entry.stat().st_mode & 0o777 == 0o600 and cache.stat().st_mode & 0o077 == 0


def test_a_changed_file_is_another_key_and_the_old_entry_goes(cache, tmp_path):
    files = _pack(tmp_path)
    packcache.cached("t", files, lambda: "old")
    _pack(tmp_path, "a: 2\n")
    build, calls = _counting("new")
    assert packcache.cached("t", files, build) == "new" and calls == [1]
    assert len(list(cache.glob("t-*.pickle"))) == 1


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other-key", "other-format", "not-a-tuple"])
def test_a_damaged_or_stale_entry_is_rebuilt_and_rewritten(cache, tmp_path, damage):
    files = _pack(tmp_path)
    packcache.cached("t", files, lambda: "built")
    (entry,) = cache.glob("t-*.pickle")
    key = packcache.key_of("t", files)
    entry.write_bytes({
        "garbage": b"\x00not a pickle",
        "truncated": entry.read_bytes()[:10],
        "other-key": pickle.dumps((packcache.FORMAT, "0" * 64, "planted")),
        "other-format": pickle.dumps((packcache.FORMAT + 1, key, "planted")),
        "not-a-tuple": pickle.dumps("planted"),
    }[damage])
    build, calls = _counting("built")
    assert packcache.cached("t", files, build) == "built" and calls == [1]
    assert packcache.cached("t", files, build) == "built" and calls == [1]      # rewritten: read this time


@pytest.mark.parametrize("where", ["entry", "folder"])
def test_an_entry_others_can_write_is_never_read(cache, tmp_path, where):
    files = _pack(tmp_path)
    packcache.cached("t", files, lambda: "built")
    (entry,) = cache.glob("t-*.pickle")
    entry.write_bytes(pickle.dumps((packcache.FORMAT, packcache.key_of("t", files), "planted")))
    os.chmod(entry, 0o600)
    assert packcache.cached("t", files, lambda: "built") == "planted"      # the user's own entry is read
    os.chmod(entry if where == "entry" else cache, 0o666 if where == "entry" else 0o777)
    build, calls = _counting("built")
    assert packcache.cached("t", files, build) == "built" and calls == [1]


def test_a_symlinked_entry_is_never_read(cache, tmp_path):
    files = _pack(tmp_path)
    packcache.cached("t", files, lambda: "built")
    (entry,) = cache.glob("t-*.pickle")
    planted = tmp_path / "planted.pickle"
    planted.write_bytes(pickle.dumps((packcache.FORMAT, packcache.key_of("t", files), "planted")))
    entry.unlink()
    entry.symlink_to(planted)
    assert packcache.cached("t", files, lambda: "built") == "built"


def test_off_and_unwritable_caches_build_every_time(cache, tmp_path, monkeypatch):
    files = _pack(tmp_path)
    monkeypatch.setenv(packcache.ENV, "0")
    build, calls = _counting("v")
    packcache.cached("t", files, build)
    packcache.cached("t", files, build)
    assert calls == [1, 1] and not cache.exists()
    monkeypatch.delenv(packcache.ENV)
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the folder should be")
    packcache.cached("t", files, build)
    assert calls == [1, 1, 1]


def test_a_failing_build_raises_and_is_not_cached(cache, tmp_path):
    files = _pack(tmp_path)

    def bad():
        raise ValueError("invalid pack")
    with pytest.raises(ValueError):
        packcache.cached("t", files, bad)
    assert not cache.exists() or not list(cache.glob("t-*.pickle"))


_DUMP = r"""
import json, sys
from scanner.rulepack import load_pack
from scanner.secrets.rules import load_rules
from scanner.pii.registry import registry
lexicon, rules = load_pack()
out = {"lexicon": lexicon.model_dump(mode="json"),
       "injection": [[r.model_dump(mode="json"), r.source] for r in rules],
       "secrets": [[r.model_dump(mode="json"), r.source] for r in load_rules()],
       "pii": [[r.model_dump(mode="json"), r.source] for r in registry().rules],
       "classes": [c.__name__ for c in registry().recognizer_classes()]}
print(json.dumps(out, sort_keys=True))
"""


def test_the_bundled_packs_from_the_cache_are_those_the_yaml_gives(tmp_path):
    """Each pack validated from its YAML (no cache), then written to an empty cache, then read from it, in three
    fresh processes: the same lexicon and rules, field by field, with the same source files."""
    env = {k: v for k, v in os.environ.items() if k not in ("CENTINELA_NO_CACHE", packcache.ENV)}
    env["CENTINELA_CACHE_DIR"] = str(tmp_path / "cache")

    def dump(**extra) -> str:
        proc = subprocess.run([sys.executable, "-c", _DUMP], cwd=REPO, capture_output=True, text=True,
                              env={**env, **extra})
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout

    plain = dump(**{packcache.ENV: "0"})
    assert not (tmp_path / "cache").exists()
    written, read = dump(), dump()
    assert sorted(p.name.split("-")[0] for p in (tmp_path / "cache" / "packs").iterdir()) == [
        "fold", "injection", "pii", "secrets"]
    assert plain == written == read and '"INJ001"' in plain


def test_the_fold_tables_from_the_cache_are_the_ones_built(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("CENTINELA_NO_CACHE", packcache.ENV)}
    env["CENTINELA_CACHE_DIR"] = str(tmp_path / "cache")
    code = ("from scanner import normalize as n\n"
            "simple, complex_, two_pass = n._build_tables()\n"
            "print(n._SIMPLE_TABLE == simple, n._COMPLEX == complex_, n._TWO_PASS is two_pass is True)\n")
    for _ in range(2):                  # written, then read
        out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, env=env)
        assert out.stdout.split() == ["True", "True", "True"], out.stderr[-2000:]
    assert [p.name.split("-")[0] for p in (tmp_path / "cache" / "packs").iterdir()] == ["fold"]


def test_the_code_key_follows_the_sources(tmp_path, monkeypatch):
    (tmp_path / "pkg").mkdir()
    source = tmp_path / "pkg" / "mod.py"
    source.write_text("A = 1\n")
    monkeypatch.setattr(packcache, "_PACKAGE", tmp_path / "pkg")
    packcache._code_key.cache_clear()
    try:
        before = packcache._code_key()
        source.write_text("A = 22\n")
        packcache._code_key.cache_clear()
        assert packcache._code_key() != before
    finally:
        packcache._code_key.cache_clear()


def test_lexicon_min_width_is_the_unions_and_travels_with_the_pack():
    """CompiledLexicon.trigger_min (no shorter text is searched) comes from widths computed when the pack is built and
    pickled with it; it equals the width Python's parser gives the union of the trigger patterns."""
    import pickle
    from re import _parser as parser

    from scanner.injection.signals import GATE_EXEMPT, CompiledLexicon
    from scanner.rulepack import BUILTIN_RULES, LEXICON_FLAGS, _load_pack, group_regex

    lexicon, _ = _load_pack((BUILTIN_RULES / "injection",))
    assert set(lexicon._min_width) == set(lexicon.groups)
    copy = pickle.loads(pickle.dumps(lexicon))
    assert copy._min_width == lexicon._min_width
    names = [n for n in lexicon.groups if n not in GATE_EXEMPT]
    union = group_regex(p for n in names for p in lexicon.groups[n].patterns)
    assert CompiledLexicon(copy).trigger_min == parser.parse(union, LEXICON_FLAGS).getwidth()[0]
    for n in lexicon.groups:
        assert lexicon.min_width([n]) == parser.parse(group_regex(lexicon.groups[n].patterns), LEXICON_FLAGS).getwidth()[0]
