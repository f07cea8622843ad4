"""The ``confeval`` command line (entry point ``confeval.cli:main``).

Every scoring command reads one or more record files, prints a table (or, with ``--json``, one
JSON document on stdout), and reports how many rows it excluded and why. Errors are one line
on stderr with exit code 2; ``--debug`` shows the traceback. Modules: ``app`` (assembly),
``_common`` (shared options and output), one module per command group.
"""

from .app import app, main

__all__ = ["app", "main"]
