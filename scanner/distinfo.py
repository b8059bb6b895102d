"""An installed distribution's version read from its `dist-info` beside the package, without importing the
package or `importlib.metadata` (which searches every path entry: a tenth of a cold scan's start)."""

from __future__ import annotations

from pathlib import Path


def version_beside(module: str, dist: str | None = None) -> str | None:
    """The `Version:` of the one `<dist>-*.dist-info/METADATA` beside the top-level package `module` (`dist`
    defaults to `module`); None when there is not exactly one, or it cannot be read — the caller then asks the
    slow way."""
    try:
        from importlib.util import find_spec

        spec = find_spec(module)
        if spec is None or not spec.origin:
            return None
        found = list(Path(spec.origin).resolve().parent.parent.glob(f"{dist or module}-*.dist-info"))
        if len(found) != 1:
            return None
        with open(found[0] / "METADATA", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("Version:"):
                    return line[len("Version:"):].strip()
                if not line.strip():             # the headers end at the first blank line
                    break
    except (ImportError, ValueError, OSError, UnicodeDecodeError, TypeError):
        pass
    return None
