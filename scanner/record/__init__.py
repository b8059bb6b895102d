"""`centinela record`: a recording proxy on loopback that redacts each exchange in memory and writes it into
the fixture tree, with its manifest entry, where its class belongs."""

from scanner.record.capture import Exchange, envelope
from scanner.record.command import build_recorder
from scanner.record.proxy import RecordServer, parse_upstream
from scanner.record.store import Outcome, Recorder, RecordError

__all__ = ["Exchange", "Outcome", "RecordError", "RecordServer", "Recorder", "build_recorder", "envelope",
           "parse_upstream"]
