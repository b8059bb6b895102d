"""Bounded JSON for files and bodies the tool reads as data (reports, manifests, baselines, journals, logs,
control requests): one place that turns every way `json.loads` can be abused into a `JsonRefused`
(a `ValueError`, so a reader's existing handling names the file in one line).

- **Depth**: at most `MAX_DEPTH` levels. `json.loads` recurses in C and raises RecursionError near 1,000
  levels, which readers did not expect (a 100,000-deep body was an internal error); shallower but still
  deep data would overflow whatever walks it next.
- **Numbers** (`finite=True`, the default): `NaN`, `Infinity` and `-Infinity` (which Python's json accepts)
  and a float that overflows to infinity (`1e999`) are refused; an integer of more than 4,300 digits already
  is (Python's own limit).
- **Size**: `read_json(path, max_bytes=…)` refuses a larger file before reading it.

Fixture content is not read here: the document loaders accept whatever `json.loads` accepts, positions
included (`scanner.loaders.json_positions`, iterative, any depth).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

MAX_DEPTH = 200
MAX_FILE_BYTES = 256 << 20


class JsonRefused(ValueError):
    """JSON the tool will not use: too deep, a non-finite number, too large."""


def _refuse_constant(name: str):
    raise JsonRefused(f"{name} is not a number JSON allows")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonRefused(f"number {text[:40]} is out of range")
    return value


def depth_exceeds(value, max_depth: int) -> bool:
    """True when `value` nests containers deeper than `max_depth` (iterative: any depth is safe to ask)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > max_depth:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def loads(data: str | bytes, *, max_depth: int = MAX_DEPTH, finite: bool = True):
    """`json.loads` with the bounds above; JsonRefused (a ValueError) or json's own ValueError otherwise."""
    if isinstance(data, (bytes, bytearray)):
        data = bytes(data).decode("utf-8-sig")        # UnicodeDecodeError is a ValueError too
    elif data.startswith("\ufeff"):
        data = data[1:]
    hooks = {"parse_constant": _refuse_constant, "parse_float": _finite_float} if finite else {}
    try:
        value = json.loads(data, **hooks)
    except RecursionError:
        raise JsonRefused(f"nested deeper than {max_depth} levels") from None
    if depth_exceeds(value, max_depth):
        raise JsonRefused(f"nested deeper than {max_depth} levels")
    return value


def read_json(path: Path | str, *, max_bytes: int = MAX_FILE_BYTES, max_depth: int = MAX_DEPTH,
              finite: bool = True):
    """A JSON file's value: OSError (unreadable) or ValueError (not JSON, not UTF-8, or refused)."""
    with open(path, "rb") as fh:
        if os.fstat(fh.fileno()).st_size > max_bytes:
            raise JsonRefused(f"larger than {max_bytes >> 20} MB: not read")
        raw = fh.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise JsonRefused(f"larger than {max_bytes >> 20} MB: not read")
    return loads(raw, max_depth=max_depth, finite=finite)
