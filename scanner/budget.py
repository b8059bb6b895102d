"""Per-file budgets of a scan: no single file may stall CI or take the machine's memory.

- `max_file_mb`: a file larger than this is not read (`too_large`), checked with stat() before any byte is read;
- `max_file_seconds`: wall time to load and scan one file; past it the worker scanning it is killed (`timeout`);
- `max_memory_mb`: memory one file may take on top of the loaded scanner; the worker's address space is
  capped there, so an allocation past it fails (`memory`) instead of swapping the machine.

Time and memory are enforced in worker processes (`scanner.workers`), the only way to stop a C call (zlib, a
regex, lxml) that has run away. 0 turns a limit off. The defaults leave room for the slowest real file
measured here (a 30-page table PDF: 40 s of CPU, 250 MB) on a loaded 2-core machine.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_FILE_SECONDS = 120.0
DEFAULT_MAX_FILE_MB = 64.0
DEFAULT_MAX_MEMORY_MB = 1024.0


@dataclass(frozen=True)
class Budget:
    max_file_seconds: float = DEFAULT_MAX_FILE_SECONDS
    max_file_mb: float = DEFAULT_MAX_FILE_MB
    max_memory_mb: float = DEFAULT_MAX_MEMORY_MB

    def __post_init__(self):
        for name in ("max_file_seconds", "max_file_mb", "max_memory_mb"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be 0 (no limit) or more")

    @property
    def max_file_bytes(self) -> int | None:
        return int(self.max_file_mb * 1024 * 1024) if self.max_file_mb else None

    @property
    def max_memory_bytes(self) -> int | None:
        return int(self.max_memory_mb * 1024 * 1024) if self.max_memory_mb else None

    @property
    def needs_workers(self) -> bool:
        """Time and memory can only be enforced from outside the process doing the work."""
        return bool(self.max_file_seconds or self.max_memory_mb)


def timeout_message(seconds: float) -> str:
    return f"took longer than {seconds:g} s (--max-file-seconds): not scanned"


def memory_message(mb: float) -> str:
    return f"needed more than {mb:g} MB of memory (--max-memory-mb): not scanned"


def too_large_message(size: int, mb: float) -> str:
    return f"{size / (1024 * 1024):.1f} MB is over the {mb:g} MB limit (--max-file-mb): not scanned"
