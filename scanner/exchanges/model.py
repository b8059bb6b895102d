"""A recorded HTTP exchange, whatever file it came from: what was asked, what came back, and where in the file
each part sits.

"Where" is a JSON pointer into the file's parsed structure (`/interactions/0/request/headers/Authorization/0`,
`/log/entries/2/response/content/text`); `scanner.exchanges.source` maps a pointer to the exact span of the
string (or number) in the file's decoded text, through JSON escapes or YAML quoting and block scalars.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from scanner import jsonsafe
from scanner.exchanges.bodies import (
    BASE64_CHUNKS, HEX_CHUNKS, TEXT, BodyError, compression_of, decode_transfer, decompress,
)


@dataclass
class Header:
    name: str
    value: str
    name_at: str | None = None      # pointer of the string holding the name (a key: the member's pointer)
    value_at: str | None = None     # pointer of the string holding the value (None: not a string in the file)
    name_is_key: bool = False       # the name is an object key (`{"Authorization": …}`), not a string value


@dataclass
class LengthField:
    """A field that states the body's length: a `Content-Length` header, HAR `content.size` or `bodySize`."""
    at: str                         # pointer of the value
    is_string: bool                 # "182" (a header value) or 182 (a number)
    value: int


@dataclass
class Body:
    """A body as the recording stores it. `value` is what the file holds there: a string (text, base64 or hex
    as `transfer` says), bytes (YAML `!!binary`), a JSON value written in place (dict, list, number), a list of
    chunk strings (nock), or None (no body)."""

    value: Any = None
    at: str | None = None               # pointer of the string holding the stored text
    json_at: str | None = None          # pointer of a JSON value written in place
    chunks_at: tuple[str, ...] = ()     # pointers of chunk strings that are items of a list in the file (nock)
    transfer: str = TEXT                # TEXT | BASE64 | HEX | BASE64_CHUNKS | HEX_CHUNKS
    yaml_binary: bool = False           # a YAML `!!binary` scalar (value is bytes; stored text is base64)
    mime: str = ""                      # the declared content type, as written
    content_encoding: str = ""          # the message's Content-Encoding header
    lengths: list[LengthField] = field(default_factory=list)

    @property
    def encoded(self) -> bool:
        """The stored text is not the body's text (base64, hex, chunks): its units cannot point into the file
        character by character."""
        return self.yaml_binary or self.transfer != TEXT

    def stored_bytes(self) -> bytes | None:
        """The bytes the recording stores (after base64/hex, before any content decoding); None for no body.
        Raises BodyError for a body that is not what it says it is."""
        v = self.value
        if v is None:
            return None
        if isinstance(v, (bytes, bytearray)):
            return bytes(v)
        if isinstance(v, list) and self.transfer in (BASE64_CHUNKS, HEX_CHUNKS):
            return decode_transfer([str(c) for c in v], self.transfer)
        if isinstance(v, str):
            return decode_transfer(v, self.transfer)
        return json.dumps(v, ensure_ascii=False).encode("utf-8")

    @property
    def compression(self) -> str | None:
        """gzip, deflate or br when the stored bytes are compressed (told by their bytes, see bodies.py)."""
        if not self.encoded:
            return None
        try:
            data = self.stored_bytes()
        except BodyError:
            return None
        return compression_of(data or b"", self.content_encoding)

    def as_value(self, problems: list[str], which: str) -> Any:
        """The body as a value: JSON when it is JSON (declared, or starting with `{` / `[`), text, bytes for a
        binary body that is not JSON, or the value written in place. What cannot be decoded is said in
        `problems` (and the stored text is returned)."""
        v = self.value
        if v is None or isinstance(v, (dict, int, float, bool)) or (isinstance(v, list) and not self.encoded):
            return v
        if not isinstance(v, (str, bytes, bytearray, list)):
            problems.append(f"{which} body of type {type(v).__name__} ignored")
            return None
        text = v
        if self.encoded:
            try:
                raw = self.content() or b""
            except BodyError as exc:
                problems.append(f"{which} body is not valid {self.transfer}" if "valid" in str(exc)
                                else f"{which} body: {exc}")
                return v
            if not raw.lstrip().startswith((b"{", b"[")):
                return raw
            text = raw.decode("utf-8", errors="replace")
        mime = self.mime.lower()
        stripped = text.lstrip()
        if stripped.startswith(("{", "[")) or "json" in mime:
            try:
                return jsonsafe.loads(text, finite=False)   # bounded depth: the adapters walk it
            except ValueError:
                if "json" in mime and stripped:
                    problems.append(f"{which} body is declared JSON but does not parse")
        return text

    def content(self) -> bytes | None:
        """The body's bytes with any compression undone (bounded); BodyError when they cannot be decoded."""
        data = self.stored_bytes()
        if data is None or not self.encoded:
            return data
        method = compression_of(data, self.content_encoding)
        return decompress(data, method) if method else data


@dataclass
class Message:
    headers: list[Header] = field(default_factory=list)
    header_map: dict[str, str] = field(default_factory=dict)   # lower-cased name → value (see formats)
    headers_problem: str | None = None                         # the headers are not in a shape this format has
    body: Body = field(default_factory=Body)


@dataclass
class Request(Message):
    method: Any = None                  # as recorded (validated by the users that need it)
    url: Any = None
    url_at: str | None = None           # pointer of the URL string
    url_parts_at: tuple[str, ...] = ()  # nock: `scope` and `path` strings, which together make the URL


@dataclass
class Response(Message):
    status: Any = None                  # as recorded


@dataclass
class Exchange:
    format: str                         # envelope | har | vcr | nock
    index: int                          # position in the file
    at: str                             # pointer of the exchange ("" for a lone envelope)
    request: Request | None = None
    response: Response | None = None    # None: nothing came back (a timeout, HAR status 0)
    error: Any = None                   # the envelope's `error` (a transport failure)
    recorded_at: str | None = None      # what the file says about when (recorded_at, startedDateTime)
    problems: list[str] = field(default_factory=list)

    def capture_time(self) -> str | None:
        """What the recording says about when it was made, as written: its own date, else the response's
        `date` header."""
        if self.recorded_at:
            return self.recorded_at
        if self.response is not None:
            return self.response.header_map.get("date") or None
        return None


@dataclass
class Recording:
    format: str                         # envelope | envelopes | har | vcr | nock
    exchanges: list[Exchange] = field(default_factory=list)
    value: Any = None                   # the parsed file
    problems: list[str] = field(default_factory=list)


class RecordingError(ValueError):
    """A file that claims to be a recording (its structure says so) but cannot be read as one."""
