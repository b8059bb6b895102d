"""The YAML cache returns exactly what PyYAML's safe loader returns, and only for the same bytes."""

from __future__ import annotations

from datetime import date, datetime, timezone

import yaml

from scanner import yamlsafe


def _big(extra: str = "") -> str:
    rows = [f'  "https://x.gob.mx/{i}": {{supports: {"true" if i % 2 else "false"}, group: "g{i % 7}", '
            f'verified_published_at: 2026-0{1 + i % 9}-1{i % 10}}}' for i in range(6000)]
    return "# judgments\ngs-001:\n" + "\n".join(rows) + "\nwhen: 2026-10-02T14:11:09Z\n" + extra


def test_cache_round_trip_is_identical(tmp_path, monkeypatch):
    monkeypatch.setenv("CENTINELA_CACHE_DIR", str(tmp_path))
    text = _big()
    assert len(text) >= yamlsafe.CACHE_MIN_BYTES
    first = yamlsafe.load_text(text)
    assert len(list(tmp_path.iterdir())) == 1            # written once
    second = yamlsafe.load_text(text)                    # read from the cache
    assert first == second == yaml.safe_load(text)
    assert second["gs-001"]["https://x.gob.mx/1"]["verified_published_at"] == date(2026, 2, 11)
    assert second["when"] == datetime(2026, 10, 2, 14, 11, 9, tzinfo=timezone.utc)


def test_changed_text_misses_and_corrupt_cache_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("CENTINELA_CACHE_DIR", str(tmp_path))
    yamlsafe.load_text(_big())
    (cache,) = tmp_path.iterdir()
    cache.write_text("{not json")
    assert yamlsafe.load_text(_big()) == yaml.safe_load(_big())
    changed = _big("extra: 1\n")
    assert yamlsafe.load_text(changed)["extra"] == 1


def test_non_string_keys_are_not_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("CENTINELA_CACHE_DIR", str(tmp_path))
    text = _big("7: seven\n")
    assert yamlsafe.load_text(text)[7] == "seven"
    assert list(tmp_path.iterdir()) == []
    assert yamlsafe.load_text(text)[7] == "seven"


def test_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv("CENTINELA_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CENTINELA_NO_CACHE", "1")
    yamlsafe.load_text(_big())
    assert list(tmp_path.iterdir()) == []
