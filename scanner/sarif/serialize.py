"""sarif-om objects as SARIF JSON: the property names of the schema, the 2.1.0-final `status` of a
suppression, and text that keeps Spanish readable while every terminal control is escaped."""

from __future__ import annotations

import json
from typing import Any

import attr
import sarif_om as om

from scanner.terminal import json_text


@attr.s
class Suppression(om.Suppression):
    """sarif-om 1.0.4's Suppression with the SARIF 2.1.0 final `status` property (`state` stays unset)."""

    status = attr.ib(default=None, metadata={"schema_property_name": "status"})


_KEEP_DEFAULT = frozenset({"level"})


def to_sarif_dict(obj: Any) -> Any:
    """A sarif-om object tree as plain JSON data under SARIF's property names.

    `None` is dropped, and so is a value equal to its attrs default (the `-1` "no index" sentinels,
    "en-US"), except `level`, which is always written.
    """
    if attr.has(type(obj)):
        out: dict[str, Any] = {}
        for a in attr.fields(type(obj)):
            value = getattr(obj, a.name)
            if value is None:
                continue
            if a.name not in _KEEP_DEFAULT and a.default is not attr.NOTHING:
                default = a.default.factory() if isinstance(a.default, attr.Factory) else a.default
                if type(value) is type(default) and value == default:
                    continue
            out[a.metadata.get("schema_property_name", a.name)] = to_sarif_dict(value)
        return out
    if isinstance(obj, dict):
        return {str(k): to_sarif_dict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_sarif_dict(v) for v in obj]
    return obj


def dumps_sarif(doc: dict) -> str:
    """The log as text: sorted keys, two-space indent, non-ASCII kept (`está`, not `est\\u00e1`), but every
    character a terminal could act on (DEL, C1, bidi and format characters) as a `\\uXXXX` escape."""
    return json_text(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)) + "\n"
