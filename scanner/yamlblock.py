"""Plain block-style YAML (what `yaml.safe_dump` writes) read line by line, exactly as libyaml reads it.

`scanner.yamlsafe.safe_load` tries this reader first. It builds a document only when every line has one of the
few shapes below; anything else raises `NotBlock` and the caller goes on to libyaml's events (then `compose`),
so a document this reader builds is one they would build the same way, and every error or refusal is theirs.

What it reads: printable ASCII only (no tab, no carriage return, nothing else), one document whose root is a
block mapping or sequence starting at column 0, full-line comments and empty lines (skipped), and lines made of
an indentation, any number of `- ` sequence indicators, then one of

- `key:` (the value on the following lines, more indented; or a sequence at the same column; else null),
- `key: value`, or `value` after a `- `,

where a key or value is a one-line plain scalar (starting with a letter, a digit or one of `_ . / ~ $ ( +`;
no `: `, ` #`, trailing space, or `:` at its end) or a one-line single-quoted scalar (`''` for a quote), and a
value may also be `[]` or `{}`. Keys are at most `MAX_KEY_CHARS` characters (libyaml refuses a simple key over
1,024). Plain scalars are resolved by the loader's own implicit resolvers, in the same order as
`scanner.yamlsafe._load_events`, and built by the loader's own constructors (dates, every integer base,
floats); a merge (`<<`) or value (`=`) key, a repeated key with `unique_keys`, or nesting deeper than the
caller's limit is `NotBlock`. A multi-line scalar, a flow collection that is not empty, a double-quoted or
block scalar, a tag, an anchor or alias, an explicit key, a directive or a document marker: `NotBlock`.
"""

from __future__ import annotations

import re

MAX_KEY_CHARS = 1000

# Possessive (no backtracking): a plain scalar ends where its first `: `, ` #`, `:` at the end, or end of line is.
_PLAIN = r"[A-Za-z0-9_./~$(+](?:[^\s:]++|:(?=[^\s])| (?=[^\s#:]))*+"
_QUOTED = r"'(?:[^'\n]++|'')*+'"
_KEY = rf"(?:{_PLAIN}|{_QUOTED})"
_VALUE = rf"(?:{_PLAIN}|{_QUOTED}|\[\]|\{{\}})"
# Every line of a document this reader builds (checked in one pass over the text, in C): an indentation, then a
# comment, or `- ` indicators and a key line, a value or a lone `-`, or nothing.
_LINE = rf" *+(?:#[^\n]*+|(?:- )*+(?:-|{_KEY}:(?: {_VALUE})?|{_VALUE})?)"
_DOCUMENT = re.compile(rf"(?:{_LINE}\n)*+(?:{_LINE})?")
# One line's parts where a quote starts it (the only lines `str.partition` cannot split)
_KEY_LINE = re.compile(rf"(?:({_PLAIN})|({_QUOTED})):(?: (?:({_PLAIN})|({_QUOTED})|(\[\]|\{{\}})))?\Z")
_VALUE_LINE = re.compile(rf"(?:({_PLAIN})|({_QUOTED})|(\[\]|\{{\}}))\Z")
_NOT_ASCII_LINE = re.compile(r"[^\n -~]")

_STR, _BOOL, _NULL = "tag:yaml.org,2002:str", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"
_KEYS_NOT_BUILT = frozenset({"tag:yaml.org,2002:merge", "tag:yaml.org,2002:value"})


class NotBlock(Exception):
    """The text is not in the subset this reader builds exactly: the caller reads it another way."""


def plain_resolver(loader, refuse: type[Exception]):
    """A function from a plain scalar's text to its (tag, value), resolved by `loader`'s own implicit resolvers
    (in their order, by first character) and built by its own constructors, as `compose` then `construct` would;
    a merge (`<<`) or value (`=`) key, or a tag with no constructor, raises `refuse`. Strings, booleans and nulls
    are remembered (immutable, shared safely) — their values also in the function's `values` (text -> value), for
    a caller's inline look-up; dates and numbers are built each time. Used by this reader and by
    `scanner.yamlsafe._load_events`."""
    from yaml.nodes import ScalarNode

    resolvers = loader.yaml_implicit_resolvers
    wildcard = list(resolvers.get(None, []))
    by_first: dict[str, list] = {}
    constructors = loader.yaml_constructors
    bool_values = loader.bool_values
    resolved: dict[str, tuple] = {}
    values: dict[str, object] = {}

    def resolve(value: str) -> tuple:
        hit = resolved.get(value)
        if hit is not None:
            return hit
        first = value[:1]
        candidates = by_first.get(first)
        if candidates is None:
            candidates = by_first[first] = list(resolvers.get(first, [])) + wildcard
        tag = _STR
        for candidate, regexp in candidates:
            if regexp.match(value):
                tag = candidate
                break
        if tag is _STR:
            hit = (tag, value)
        elif tag == _BOOL:
            hit = (tag, bool_values[value.lower()])
        elif tag == _NULL:
            hit = (tag, None)
        elif tag in _KEYS_NOT_BUILT or tag not in constructors:
            raise refuse
        else:
            return tag, constructors[tag](loader, ScalarNode(tag, value))
        resolved[value] = hit
        values[value] = hit[1]
        return hit

    resolve.values = values
    return resolve


def load_block(text: str, loader, unique_keys: bool, max_depth: int):
    """The document's data, or `NotBlock`. `loader`: a safe loader instance (its resolvers and constructors)."""
    if _NOT_ASCII_LINE.search(text) or _DOCUMENT.fullmatch(text) is None:
        raise NotBlock
    resolve = plain_resolver(loader, NotBlock)
    resolved = resolve.values                 # plain text -> its str, bool or None, looked up inline below

    def plain(value: str):
        """A plain scalar's value, as the loader resolves and builds it."""
        return resolve(value)[1]

    def value_of(text: str):
        """A value on a line (checked by _DOCUMENT: a plain or quoted scalar, [] or {})."""
        first = text[0]
        if first == "'":
            return text[1:-1].replace("''", "'")
        if first == "[" and text == "[]":
            return []
        if first == "{" and text == "{}":
            return {}
        return plain(text)

    def split_key_line(content: str):
        """(key text, key is plain, value text or None) of a key line, or None for a value line."""
        if content[0] == "'":
            m = _KEY_LINE.match(content)
            if m is None:
                return None                   # a quoted value
            kp, kq, vp, vq, ve = m.groups()
            v = vp if vp is not None else vq if vq is not None else ve
            return (kp, True, v) if kp is not None else (kq[1:-1].replace("''", "'"), False, v)
        k, sep, v = content.partition(": ")
        if sep:
            return k, True, v
        if content[-1] == ":":
            return content[:-1], True, None
        return None

    # Open collections, innermost last: [column, container, is_map, keys seen (unique_keys) or None].
    stack: list[list] = []
    # The slot waiting for a value on the following lines: (container, key, column, is_map_key); the root's
    # slot first (container None: a collection at column 0 must open).
    pending = (None, None, -1, False)
    root = None
    limit = max_depth - 2                         # well inside the callers' limit: deeper goes the slow way
    for line in text.split("\n"):
        content = line.lstrip(" ")
        if not content or content[0] == "#":
            if content or not line:
                continue                          # an empty line, or a comment (none can be in a scalar here)
            raise NotBlock                        # a line of spaces only
        if line[:3] == "...":
            raise NotBlock                        # maybe a document end marker
        col = len(line) - len(content)
        first = content[0]
        if first != "-" and first != "'" and stack and not unique_keys:
            # The common lines, on a short path: `key: value` (plain key, plain or quoted value) and `key:` in a
            # mapping, the first key of a mapping opened for a pending `key:` or `-` included. The same steps
            # as below, in fewer; anything else goes on below (with the new mapping open, as it would be there).
            if pending is not None:
                container, key, at, map_key = pending
                if col > at and len(stack) < limit:
                    new = {}
                    if map_key:
                        container[key] = new
                    else:
                        container.append(new)
                    stack.append([col, new, True, None])
                    pending = None
            frame = stack[-1]
            if pending is None and frame[0] == col and frame[2]:
                k, sep, v = content.partition(": ")
                if sep:
                    if len(k) <= MAX_KEY_CHARS and v[0] != "[" and v[0] != "{":
                        key = resolved.get(k, resolved)
                        if key is resolved:
                            key = plain(k)
                        if v[0] == "'":
                            value = v[1:-1].replace("''", "'")
                        else:
                            value = resolved.get(v, resolved)
                            if value is resolved:
                                value = plain(v)
                        frame[1][key] = value
                        continue
                elif content[-1] == ":" and len(content) <= MAX_KEY_CHARS:
                    k = content[:-1]
                    key = resolved.get(k, resolved)
                    if key is resolved:
                        key = plain(k)
                    pending = (frame[1], key, col, True)
                    continue
        parts = None                              # the key line's parts, once split
        while True:
            dash = content[:2] == "- " or content == "-"
            if pending is not None:               # a new collection for the pending slot, or null for it
                container, key, at, map_key = pending
                pending = None
                if container is None:
                    if col != 0:
                        raise NotBlock
                    root = new = [] if dash else {}
                    stack.append([col, new, not dash, set() if unique_keys and not dash else None])
                elif col > at or (map_key and dash and col == at):
                    if len(stack) >= limit:
                        raise NotBlock
                    new = [] if dash else {}
                    if map_key:
                        container[key] = new
                    else:
                        container.append(new)
                    stack.append([col, new, not dash, set() if unique_keys and not dash else None])
                else:
                    if map_key:
                        container[key] = None
                    else:
                        container.append(None)
            # close what this line is left of (a compact sequence closes at its own column, on a key)
            while stack and (stack[-1][0] > col or (stack[-1][0] == col and not dash and not stack[-1][2])):
                stack.pop()
            if not stack:
                raise NotBlock                    # a second root
            frame = stack[-1]
            if frame[0] != col or frame[2] == dash:
                raise NotBlock                    # a dash in a mapping, a key in a sequence, a stray indentation
            if dash:
                seq = frame[1]
                if content == "-":
                    pending = (seq, None, col, False)
                    break
                content = content[2:]
                if not content:
                    raise NotBlock                # `- ` and a trailing space
                if content[:2] == "- " or content == "-":
                    parts = None
                else:
                    parts = split_key_line(content)
                    if parts is None:             # a value
                        if len(stack) >= limit:
                            raise NotBlock
                        seq.append(value_of(content))
                        break
                pending = (seq, None, col, False)     # an inline collection, opened at col + 2
                col += 2
                continue
            if parts is None:
                parts = split_key_line(content)
                if parts is None:
                    raise NotBlock                # a value where a key is due
            ktext, kplain, vtext = parts
            parts = None
            if len(ktext) > MAX_KEY_CHARS:
                raise NotBlock
            key = plain(ktext) if kplain else ktext
            seen = frame[3]
            if seen is not None:                  # compose's mark: (resolved tag, scalar text)
                mark = (type(key).__name__ if kplain else "str", ktext)
                if mark in seen:
                    raise NotBlock
                seen.add(mark)
            if vtext is None:
                pending = (frame[1], key, col, True)
            else:
                if len(stack) >= limit:
                    raise NotBlock
                frame[1][key] = value_of(vtext)
            break
    if pending is not None:
        container, key, _, map_key = pending
        if container is None:
            raise NotBlock                        # no document
        if map_key:
            container[key] = None
        else:
            container.append(None)
    return root
