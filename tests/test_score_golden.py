"""Golden identity: `centinela score` on a deterministic 240-case × 5-provider tree and run (tests/scoregolden.py:
the bench's generator plus records that take the problem paths) writes byte-for-byte the outputs it wrote
before the scorer's speed work. The digests were computed on main at d40920c, before any change; a change
that alters a metric, an order, a message or a rendered byte fails here. The tool's version is pinned so a
release does not move the digests. scripts/score_identity.py compares two checkouts on the 10,000-case run."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.inprocess import run_cli
from tests.scoregolden import build

GOLDEN = {
    "cascade.json": "07768103c6f7749f14426902f7606a6777609afa3f54ae53b118eed3eecc09f7",
    "report.html": "9e30d614a19546f54b355c797dc489e00bb4c94d89ea0fdf057e046c71601757",
    "report.json": "7cb3b01e614e92a7868c468b389e85bcfaa78d80097427f0ccc72bd67cfff072",
    "report.md": "d468f8857c8521b447ae2b477ea0a6510c75efcf8ea451c824e784ac68948da7",
}
GOLDEN_STDOUT = "37e615f751b2bf09f11946994f5f0f15a4e64a3dcee99c815cf589177ba4a37d"


@pytest.mark.parametrize("in_child", [False, True], ids=["judgments-here", "judgments-in-child"])
def test_score_outputs_are_byte_identical(tmp_path, monkeypatch, in_child):
    import scanner.score.report as report

    monkeypatch.setattr(report, "__version__", "0.0.0-golden")
    forked, answered = [], []

    class Watched(report.Prefetch):
        def _start(self):
            super()._start()
            forked.append(self._pid is not None)

        def result(self):
            value = super().result()
            answered.append(self.from_child)
            return value

    monkeypatch.setattr(report, "Prefetch", Watched)
    monkeypatch.setattr(report, "PREFETCH_MIN_BYTES", 0 if in_child else 1 << 40)
    monkeypatch.setattr(report, "RENDER_IN_CHILD_MIN_CASES", 0 if in_child else 1 << 40)
    monkeypatch.setenv("CENTINELA_CACHE_DIR", str(tmp_path / "cache"))    # cold: the YAML is parsed
    monkeypatch.chdir(tmp_path)          # relative paths: the report names `tree` and `run`, not the tmp dir
    build(Path("."), 240)
    proc = run_cli("score", "tree", "--run", "run", "--out", "out")
    assert proc.returncode == 1, proc.stderr          # beta fails cost_divergence (its invoice is unusable)
    written = {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted((tmp_path / "out").iterdir())}
    assert written == GOLDEN
    assert hashlib.sha256(proc.stdout.encode("utf-8")).hexdigest() == GOLDEN_STDOUT, proc.stdout
    # the children were used (judgments' YAML, the prompt-injection documents' scan, report.md/html), a fork
    # being possible here
    assert forked == ([True, True, True] if in_child else [])
    # and each child's answer was the one used (none failed and left the work to this process)
    assert answered == ([True, True, True] if in_child else [False, False])
    # The problem paths the tree takes are all there (a generator change that dropped one would pass above
    # only with new digests, but this names what is covered).
    for needle in ("not a run record: Invalid JSON", "results.0.rank: Input should be a valid integer",
                   "record says provider 'gamma'", "second record for case c00001", "not an invoice: total_usd",
                   "case c99999 is not in golden/cases.yaml", "'el martes'", "run lacks 1 of 240",
                   "invoice for a provider with no run records"):
        assert needle in proc.stdout


def test_score_is_the_same_warm(tmp_path, monkeypatch):
    """The second score of the same tree (parsed YAML from the cache) writes the same bytes."""
    import scanner.score.report as report

    monkeypatch.setattr(report, "__version__", "0.0.0-golden")
    monkeypatch.setenv("CENTINELA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    build(Path("."), 240)
    for out in ("out1", "out2"):
        run_cli("score", "tree", "--run", "run", "--out", out)
        written = {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted((tmp_path / out).iterdir())}
        assert written == GOLDEN, out
