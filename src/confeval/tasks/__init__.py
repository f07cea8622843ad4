"""Task data for live runs: built-in generated tasks and users' own files."""

from .builtin import BUILTIN_TASKS, arith_mc, arith_steps, data_seed, load_builtin

__all__ = ["BUILTIN_TASKS", "arith_mc", "arith_steps", "data_seed", "load_builtin"]
