"""centinela: keeps recorded web content safe before it reaches a language model or a repo."""

__version__ = "0.1.0"
TOOL_NAME = "centinela"
