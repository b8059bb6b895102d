"""The one way centinela reads YAML: plain data only, no aliases, bounded size and depth, and a bounded cache.

Every YAML file the tool reads (rule packs, the personal-data lists, golden cases, families, judgments, a pool
review file, the allowlist, the corpus's known gaps, recorded cassettes) comes through `read_yaml(path, ...)`,
`safe_load(text, ...)` or, where the nodes' positions matter (`scanner.exchanges.yamltext`), `compose(text, ...)`:

- **Safe constructors only** (`CSafeLoader`, libyaml's C parser when PyYAML has it, else `SafeLoader`): no
  Python objects come out.
- **No aliases.** `*name` lets a few hundred KB of YAML stand for gigabytes of data ("billion laughs"): the
  objects are shared in memory, but anything that walks or serialises them (the scorer, the cache, JSON output)
  pays for every copy. No file of ours needs one, so an alias is refused (`YamlRefused`) before anything is
  built. It is found on the composed node graph (a node reached twice), which works with the C parser too.
- **At most `MAX_DEPTH` levels of nesting** (libyaml stops at 1,000 itself, but the pure-Python composer and
  anything recursive downstream would overflow first), and **at most `max_bytes`** (`DATA_FILE_BYTES` unless
  the caller says less: rule files are 1 MB).
- Optionally **unique keys**: a repeated key is refused instead of silently winning (the allowlist).

Every refusal is a `yaml.YAMLError` (`YamlRefused`), so a reader's existing handling gives one line naming the
file. Plain documents (no tags, anchors or merge keys: every file of ours) are built straight from libyaml's
events, with the loader's own resolvers and constructors (`_load_events`: 1.0 s instead of 3.4–4.5 s for the
11.5 MB judgments.yaml of the 10,000-case bench) — and before that, block-style ASCII documents such as
`yaml.safe_dump` writes are read line by line (`scanner.yamlblock`, about a third less CPU than the events);
anything else goes through `compose`, which also gives every refusal and error, so every path returns the same
data. On top of that `read_yaml(..., cache=True)` keeps the parsed data of a file over
`CACHE_MIN_BYTES` as JSON (dates and date-times tagged, so the loaded data is identical), under the sha256 of
its text, in `$CENTINELA_CACHE_DIR` (default `$XDG_CACHE_HOME/centinela`, else `~/.cache/centinela`). The cache
is never trusted for anything but a byte-identical file, never written inside a fixture tree, written
atomically, never larger than `cache_limit(len(text))` (a bigger entry is not written; a bigger file found
there is not read), and ignored — then rebuilt — when unreadable, corrupt or oversized; off with
`CENTINELA_NO_CACHE=1`. Nothing about the cache can make a read fail.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
from contextlib import contextmanager
from datetime import date, datetime
from pathlib import Path

import yaml

from scanner.cachedir import cache_dir  # noqa: F401  (the cache's folder; imported from here before)

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
CACHE_MIN_BYTES = 256 * 1024
_FORMAT = f"centinela-yaml-cache/2 pyyaml/{yaml.__version__}"

MAX_DEPTH = 64                          # our deepest file (a golden case) nests 5 levels
RULE_FILE_BYTES = 1 << 20               # a rule pack's file, the personal-data lists, known gaps
DATA_FILE_BYTES = 64 << 20              # golden set, judgments, review files (the 10,000-case bench: 11.5 MB)


class YamlRefused(yaml.YAMLError):
    """A YAML document the safe reader will not build: an alias, too deep, too large, a repeated key."""


@contextmanager
def gc_paused():
    """Pause the cyclic garbage collector for a block that builds many containers and no cycles: building a
    large graph of plain data triggers it again and again for nothing (measured: 8 s of 15 s parsing a
    10,000-case judgments file). Restores the collector's previous state; nests."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _where(node) -> str:
    mark = getattr(node, "start_mark", None)
    return f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""


def _check_nodes(root, unique_keys: bool) -> None:
    """Refuse aliases (a node reached twice: the composer hands out the anchored node again for `*name`),
    nesting deeper than MAX_DEPTH and, when asked, a key repeated in one mapping. Iterative and linear in the
    number of distinct nodes, so a hostile graph costs what its text costs."""
    seen: set[int] = set()
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            raise YamlRefused(f"aliases (*name) are not allowed: the node{_where(node)} is used again")
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            continue
        if depth > MAX_DEPTH:
            raise YamlRefused(f"nested deeper than {MAX_DEPTH} levels{_where(node)}")
        if isinstance(node, yaml.MappingNode):
            keys: set = set()
            for key, value in node.value:
                if unique_keys and isinstance(key, yaml.ScalarNode):
                    if (key.tag, key.value) in keys:
                        raise YamlRefused(f"repeated key {key.value!r}{_where(key)}")
                    keys.add((key.tag, key.value))
                stack.append((key, depth + 1))
                stack.append((value, depth + 1))
        else:
            stack.extend((child, depth + 1) for child in node.value)


def compose(text: str, *, loader=None, max_bytes: int = DATA_FILE_BYTES, unique_keys: bool = False):
    """(root node, plain data) of YAML text, (None, None) for an empty document; `yaml.YAMLError` for invalid
    or refused YAML. `loader`: a subclass of the safe loader (recordings add VCR.py's plain-data tags).
    `max_bytes` bounds the text's length in characters (a file's size is checked by `read_yaml`)."""
    if len(text) > max_bytes:
        raise YamlRefused(f"larger than {_size(max_bytes)}: not read")
    parser = (loader or _Loader)(text)
    try:
        with gc_paused():
            try:
                node = parser.get_single_node()
            except RecursionError:
                raise YamlRefused(f"nested deeper than {MAX_DEPTH} levels") from None
            if node is None:
                return None, None
            _check_nodes(node, unique_keys)
            try:
                return node, parser.construct_document(node)
            except (ValueError, OverflowError, TypeError) as exc:   # a scalar its type cannot hold: 2026-13-45
                raise YamlRefused(f"invalid value: {exc}") from None
    finally:
        parser.dispose()


def safe_load(text: str, *, max_bytes: int = DATA_FILE_BYTES, unique_keys: bool = False):
    """Plain data from YAML text (None for an empty document); `yaml.YAMLError` for invalid or refused YAML.

    The data is built straight from libyaml's events (`_load_events`) when the document is plain — what every
    file of ours is; anything else, and every refusal or error, goes through `compose`, so the result and the
    message are always the ones `compose` gives."""
    if len(text) > max_bytes:
        raise YamlRefused(f"larger than {_size(max_bytes)}: not read")
    if _FAST_BLOCK:
        from scanner.yamlblock import NotBlock, load_block

        loader = _Loader("")
        try:
            with gc_paused():
                return load_block(text, loader, unique_keys, MAX_DEPTH)
        except NotBlock:
            pass
        except (ValueError, OverflowError, TypeError, KeyError, RecursionError, MemoryError):
            pass                  # a constructor's error: the events, then compose, give the canonical one
        finally:
            loader.dispose()
    if _FAST_EVENTS:
        try:
            with gc_paused():
                return _load_events(text, unique_keys)
        except _NotPlain:
            pass
        except (yaml.YAMLError, ValueError, OverflowError, TypeError, KeyError, RecursionError, MemoryError):
            pass                  # compose below gives the canonical error (or refusal) for it
    return compose(text, max_bytes=max_bytes, unique_keys=unique_keys)[1]


# --- building plain data from events ------------------------------------------------------------------------
#
# PyYAML's C loader composes a node graph (a Python object and two marks per node, a Python resolver call per
# scalar), then its constructor walks the graph in Python with generators: 3.4 s for the 11.5 MB judgments file
# of the 10,000-case bench. `_load_events` reads the same parser's events once and builds the data directly,
# for the documents it can build exactly as `compose` would: one document, no tags written in the file, no
# anchors or aliases, scalar keys, no merge (`<<`) or value (`=`) keys, at most MAX_DEPTH levels and, with
# `unique_keys`, no repeated key. Scalars are resolved by the loader's own implicit resolvers, in the same order,
# and every non-string scalar but a boolean or a null is built by the loader's own constructor for its tag, so
# dates, integers in every base and floats come out as `compose` makes them. Anything outside that raises
# `_NotPlain` and `safe_load` falls back to `compose`; tests/test_yamlsafe_fast.py compares both, on written
# and on generated documents.

_FAST_EVENTS = True            # tests turn it off to compare
_FAST_BLOCK = True             # scanner.yamlblock first (tests turn it off to compare)
_STR = "tag:yaml.org,2002:str"


class _NotPlain(Exception):
    """The document needs `compose` (a tag, an alias, a collection key, a merge key, too deep, a repeated key…)."""


def _load_events(text: str, unique_keys: bool):
    from yaml.events import (DocumentEndEvent, DocumentStartEvent, MappingEndEvent, MappingStartEvent,
                             ScalarEvent, SequenceEndEvent, SequenceStartEvent, StreamEndEvent, StreamStartEvent)

    from scanner.yamlblock import plain_resolver

    loader = _Loader(text)
    try:
        resolve = plain_resolver(loader, _NotPlain)
        get_event = loader.get_event
        if type(get_event()) is not StreamStartEvent:
            raise _NotPlain
        event = get_event()
        if type(event) is StreamEndEvent:
            return None
        if type(event) is not DocumentStartEvent:
            raise _NotPlain
        stack: list = []
        cur = None                    # the open collection (None at the top)
        in_map = False
        key = None
        have_key = False
        seen_keys = None              # (tag, text) of the open mapping's keys, with unique_keys
        root = None
        while True:
            event = get_event()
            kind = type(event)
            if kind is ScalarEvent:
                if event.tag is not None or event.anchor is not None:
                    raise _NotPlain
                value = event.value
                if event.implicit[0]:
                    tag, obj = resolve(value)
                else:
                    tag, obj = _STR, value
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                if event.tag is not None or event.anchor is not None or len(stack) + 1 > MAX_DEPTH:
                    raise _NotPlain
                if in_map and not have_key:
                    raise _NotPlain           # a collection as a key: compose refuses it (unhashable)
                stack.append((cur, in_map, key, have_key, seen_keys))
                if kind is MappingStartEvent:
                    cur, in_map, have_key = {}, True, False
                    seen_keys = set() if unique_keys else None
                else:
                    cur, in_map, seen_keys = [], False, None
                continue
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                obj = cur
                cur, in_map, key, have_key, seen_keys = stack.pop()
                tag = None
            elif kind is DocumentEndEvent:
                break
            else:                             # an alias (or anything unexpected)
                raise _NotPlain
            if not stack:
                root = obj
            elif in_map:
                if have_key:
                    cur[key] = obj            # as compose builds it: a repeated key's last value, at its first place
                    have_key = False
                else:
                    if seen_keys is not None:
                        mark = (tag, event.value)
                        if mark in seen_keys:
                            raise _NotPlain   # compose refuses it, naming the line
                        seen_keys.add(mark)
                    key, have_key = obj, True
            else:
                cur.append(obj)
        if type(get_event()) is not StreamEndEvent:
            raise _NotPlain                   # a second document: compose says so
        return root
    finally:
        loader.dispose()


def _size(n: int) -> str:
    return f"{n >> 20} MB" if n >= 1 << 20 else f"{n >> 10} KB"


def read_text_bounded(path: Path, max_bytes: int) -> str:
    """A file's UTF-8 text, refusing (YamlRefused) one over `max_bytes` before reading it, and never reading
    more than `max_bytes + 1` bytes (it may grow after the check). OSError and UnicodeDecodeError pass."""
    with open(path, "rb") as fh:
        if os.fstat(fh.fileno()).st_size > max_bytes:
            raise YamlRefused(f"larger than {_size(max_bytes)}: not read")
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise YamlRefused(f"larger than {_size(max_bytes)}: not read")
    return data.decode("utf-8")


def read_yaml(path: Path, *, max_bytes: int = DATA_FILE_BYTES, unique_keys: bool = False, cache: bool = False):
    """Plain data from a YAML file: OSError (unreadable), UnicodeDecodeError (not UTF-8) or `yaml.YAMLError`
    (invalid, or refused: an alias, too deep, too large, a repeated key when `unique_keys`). With `cache`, a
    large file goes through the parsed-data cache."""
    text = read_text_bounded(Path(path), max_bytes)
    if cache:
        return load_text(text, max_bytes=max_bytes, unique_keys=unique_keys)
    return safe_load(text, max_bytes=max_bytes, unique_keys=unique_keys)


# --- the cache of parsed large files -----------------------------------------------------------------------

def cache_limit(text_chars: int) -> int:
    """The largest cache entry kept for a YAML text of this length. Without aliases JSON is about as long as
    the YAML it comes from (quotes, braces and date tags add; indentation goes): 4× leaves room."""
    return 4 * text_chars + (64 << 10)


def _encode(obj):
    if isinstance(obj, datetime):
        return {"$datetime": obj.isoformat()}
    if isinstance(obj, date):
        return {"$date": obj.isoformat()}
    raise TypeError(f"cannot cache {type(obj).__name__}")


def _decode(obj: dict):
    if len(obj) == 1:
        if "$date" in obj:
            return date.fromisoformat(obj["$date"])
        if "$datetime" in obj:
            return datetime.fromisoformat(obj["$datetime"])
    return obj


def _string_keys(data) -> bool:
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for k, v in item.items():
                if type(k) is not str:
                    return False
                if isinstance(v, (dict, list)):
                    stack.append(v)
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, (dict, list)))
    return True


def _read_cache(path: Path, limit: int):
    """The cached data, or None when there is none usable (missing, oversized, corrupt, another format)."""
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size > limit:
                return None
            raw = fh.read(limit + 1)
        if len(raw) > limit:
            return None
        envelope = json.loads(raw.decode("utf-8"), object_hook=_decode)
    except (OSError, ValueError, RecursionError, MemoryError):
        return None
    if isinstance(envelope, dict) and envelope.get("format") == _FORMAT and "data" in envelope:
        return envelope
    return None


def load_text(text: str, *, max_bytes: int = DATA_FILE_BYTES, unique_keys: bool = False):
    """Parse YAML text like `safe_load`, through the cache when it is large."""
    directory = cache_dir() if len(text) >= CACHE_MIN_BYTES else None
    if directory is None:
        return safe_load(text, max_bytes=max_bytes, unique_keys=unique_keys)
    key = hashlib.sha256((_FORMAT + "\0" + text).encode("utf-8", "surrogatepass")).hexdigest()
    path = directory / f"{key}.json"
    limit = cache_limit(len(text))
    envelope = _read_cache(path, limit)
    if envelope is not None:
        return envelope["data"]
    data = safe_load(text, max_bytes=max_bytes, unique_keys=unique_keys)
    if not _string_keys(data):
        return data               # JSON would turn other keys into strings: such a file is not cached
    try:
        from scanner.atomic import atomic_write_bytes

        payload = json.dumps({"format": _FORMAT, "data": data}, default=_encode, ensure_ascii=False)
        if len(payload) <= limit:             # characters first: no encoding of a payload too long anyway
            encoded = payload.encode("utf-8")
            if len(encoded) <= limit:
                directory.mkdir(parents=True, exist_ok=True)
                atomic_write_bytes(path, encoded)   # replaces a corrupt or oversized entry
    except (OSError, TypeError, ValueError, RecursionError, MemoryError):
        pass                      # a cache that cannot be written (or data JSON cannot hold) is no cache
    return data
