"""Which channels the personal-data scanner reads, and for what."""

from __future__ import annotations

from scanner.units import Channel

# Channels never scanned: stylesheets, JSON keys, header names.
SKIP_CHANNELS = frozenset({Channel.STYLE, Channel.JSON_KEY, Channel.HTTP_HEADER_NAME})
URL_CHANNELS = frozenset({Channel.LINK, Channel.HTTP_URL})
# Where a name read by a person can be: NER and title names only there.
NAME_CHANNELS = frozenset({Channel.VISIBLE_TEXT, Channel.TITLE, Channel.ATTRIBUTE, Channel.JSON_STRING, Channel.JSON_LD,
                           Channel.PDF_TEXT, Channel.PLAIN_TEXT, Channel.COMMENT, Channel.NOSCRIPT, Channel.TEMPLATE,
                           Channel.TEXTAREA, Channel.SVG_TEXT, Channel.PDF_METADATA, Channel.HTTP_HEADER_VALUE})
VISIBLE_CHANNELS = frozenset({Channel.VISIBLE_TEXT, Channel.TITLE, Channel.PDF_TEXT, Channel.PLAIN_TEXT,
                              Channel.JSON_STRING, Channel.JSON_LD})
