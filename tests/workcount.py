"""Work counters for tests that must show an input costs linear work: deterministic counts, never a clock.

`calls(fn, *args)` runs `fn` and counts its work, the same on a busy CI machine as on an idle one: every Python
and C function call (`sys.setprofile` events) plus, for every search of a centinela regex (`scanner.rx`, RE2),
the characters it read (from its start to the end of its match, or to its end when nothing matched). Quadratic work shows as a count growing with the square of the
input — a rule searching the rest of the text again from every line, say — so a test compares the counts at two
sizes, or bounds them by the input's length.
"""

from __future__ import annotations

import sys


def calls(fn, *args, **kwargs) -> tuple[object, int]:
    """(fn's result, the work it did: function calls, Python and C, plus characters offered to rx searches)."""
    from scanner import rx

    searched = rx.Pattern._at.__code__
    count = 0

    def profile(frame, event, arg):
        nonlocal count
        if event == "call" or event == "c_call":
            count += 1
        elif event == "return" and frame.f_code is searched:
            local = frame.f_locals              # what the search read: up to its match, else to its end
            end = arg._spans[0][1] if arg is not None else local["endpos"]
            count += max(0, end - local["pos"])

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        result = fn(*args, **kwargs)
    finally:
        sys.setprofile(previous)
    return result, count
