"""scanner.score.prefetch: the child's result, or the call made here when the child cannot give it."""

from __future__ import annotations

import os
from datetime import date

import pytest

from scanner.score.prefetch import Prefetch


def _data(n):
    return {"k": [n, 1.5, None, True, date(2026, 1, 2), "é"], "pid": os.getpid()}


def test_the_child_computes_it():
    with Prefetch(_data, 3) as p:
        got = p.result()
    assert got["k"] == [3, 1.5, None, True, date(2026, 1, 2), "é"]
    if hasattr(os, "fork"):
        assert got["pid"] != os.getpid()        # computed in the child
        assert p.from_child


def _fails_in_child(parent):
    if os.getpid() != parent:
        raise RuntimeError("child")
    return "here"


def _dies_in_child(parent):
    if os.getpid() != parent:
        os._exit(3)
    return "here"


def _unpicklable(parent):
    return (lambda: None) if os.getpid() != parent else "here"


@pytest.mark.parametrize("fn", [_fails_in_child, _dies_in_child, _unpicklable])
def test_a_child_that_cannot_answer_is_replaced_by_the_call_here(fn):
    with Prefetch(fn, os.getpid()) as p:
        assert p.result() == "here"
        assert not p.from_child
        assert p.result() == "here"             # once: the value is kept


def test_an_exception_of_the_call_here_passes():
    def boom(parent):
        raise ValueError("bad")

    with pytest.raises(ValueError, match="bad"), Prefetch(boom, os.getpid()) as p:
        p.result()


def test_close_reaps_a_child_not_waited_for():
    import time

    p = Prefetch(time.sleep, 30)
    pid = p._pid
    p.close()
    if pid is not None:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)         # already reaped


def test_no_fork_computes_here():
    p = Prefetch(_data, 1, fork=False)
    assert p._pid is None and p.result()["pid"] == os.getpid()
    assert not p.from_child


@pytest.mark.parametrize("cases", [None, "- id: c1\n  category: a\n  web_role: required\n", "- id: [\n", "{}\n",
                                   "- id: c1\n  web_role: maybe\n", b"\xff\xfe"])
def test_the_tree_read_from_the_child_is_the_tree_read_here(tmp_path, cases):
    """judgments.yaml parsed in a child (`judgments_yaml`) gives the tree, problems and their order, that
    reading it here gives: missing, invalid, undecodable or wrongly shaped files included."""
    from scanner.score.inputs import judgments_yaml, read_tree

    golden = tmp_path / "golden"
    golden.mkdir()
    if cases is not None:
        (golden / "cases.yaml").write_bytes(cases if isinstance(cases, bytes) else cases.encode())
    (golden / "judgments.yaml").write_text("c1:\n  https://a/1: {supports: true}\n  https://a/2: {group: g}\nc9: {}\n")
    here = read_tree(tmp_path)
    with Prefetch(judgments_yaml, tmp_path, fork=True) as pending:
        there = read_tree(tmp_path, parsed=pending)
    assert [(p.path, p.message) for p in there.problems] == [(p.path, p.message) for p in here.problems]
    assert list(there.cases) == list(here.cases) and list(there.judgments) == list(here.judgments)
    assert {c: sorted(j) for c, j in there.judgments.items()} == {c: sorted(j) for c, j in here.judgments.items()}
    assert here.problems                # every variant has something to report (c9, the bad URL, the cases)


def test_prescanned_documents_are_the_documents_scanned_here(tmp_path):
    """`containment.prescan` (run in a child by the scorer) gives each prompt-injection document exactly what
    scanning it here gives; `InjectionDocs` takes a prescanned document only for the same path and case."""
    import dataclasses

    from scanner.fixtures.tree import read_manifest
    from scanner.score.containment import InjectionDocs, prescan
    from tests.scoregolden import build

    build(tmp_path, 40)
    root = tmp_path / "tree"
    entries = read_manifest(root).entries
    here = InjectionDocs(root, entries)
    ahead = prescan(root, entries)
    assert ahead and sorted(ahead) == sorted(here.entries) and any(sd.findings for sd in ahead.values())
    for rel, sd in ahead.items():
        mine = here.scanned(rel)
        assert (sd.path, sd.case, sd.error) == (mine.path, mine.case, mine.error)
        assert [f.to_json() for f in sd.findings] == [f.to_json() for f in mine.findings]
        assert repr(sd.untrusted) == repr(mine.untrusted)
    rel = sorted(ahead)[0]
    moved = {rel: dataclasses.replace(ahead[rel], case="another"), **{r: s for r, s in ahead.items() if r != rel}}
    docs = InjectionDocs(root, entries, moved)
    assert rel not in docs._scanned and all(r in docs._scanned for r in ahead if r != rel)
