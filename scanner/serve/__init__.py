"""`centinela serve`: replay a provider's recorded exchanges over HTTP on loopback for adapter tests."""

from scanner.serve.catalog import Catalog, Fixture, ServeError, load_catalog
from scanner.serve.command import build_server
from scanner.serve.scenarios import Scenarios, parse_schedule
from scanner.serve.server import ReplayServer, RequestLog, ServerThread

__all__ = ["Catalog", "Fixture", "ReplayServer", "RequestLog", "Scenarios", "ServeError", "ServerThread",
           "build_server", "load_catalog", "parse_schedule"]
