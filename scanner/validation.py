"""Pydantic validation errors as one line: what every reader of a YAML or JSON file says about a bad one.

A file that does not fit its model is one clear line naming the file and the problem (the project's rule for
bad input): `first_errors` gives that problem — `where: message` for the first error (or the first few),
whitespace collapsed so a message never spans lines, pydantic's "Value error, " prefix dropped (the
validator's own words follow it), the item itself when the error is about the whole of it. Callers put the
file name (and their own context) in front.
"""

from __future__ import annotations

from pydantic import ValidationError


def first_errors(exc: ValidationError, *, limit: int = 1, top: str = "", locations: bool = True,
                 extra_forbidden: str | None = None) -> str:
    """The first `limit` errors of `exc` as `loc: message`, joined by "; ". `top` names an error about the
    whole item (default: the bare message); `locations=False` gives the messages alone; `extra_forbidden`
    replaces pydantic's message for unknown fields."""
    parts = []
    for err in exc.errors()[:limit]:
        where = ".".join(str(x) for x in err.get("loc", ()) if x != "__root__") or top if locations else ""
        msg = " ".join(str(err.get("msg", "invalid")).split())
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        if extra_forbidden is not None and err.get("type") == "extra_forbidden":
            msg = extra_forbidden
        parts.append(f"{where}: {msg}" if where else msg)
    return "; ".join(parts)
