"""Where centinela keeps what it derives from files between runs (parsed large YAML, validated rule packs):
`$CENTINELA_CACHE_DIR`, else `$XDG_CACHE_HOME/centinela`, else `~/.cache/centinela`; none with
`CENTINELA_NO_CACHE` set. (Its own module: the rule-pack cache must not import the YAML parser to find it.)"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path | None:
    if os.environ.get("CENTINELA_NO_CACHE"):
        return None
    explicit = os.environ.get("CENTINELA_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "centinela"
