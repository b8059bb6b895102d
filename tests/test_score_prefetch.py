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
