"""The files a command writes outside a run folder (``--out FILE``): never one it reads,
an existing one only with ``--force``, and ``report --out`` never into the run's folder."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import typer

from ..runs import RunFolder
from ._common import UserError

__all__ = ["FileForceOpt", "refuse_to_overwrite", "report_file_outside"]


FileForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite the --out file if it "
                                                            "exists.")]


def refuse_to_overwrite(out_file: Path | None, force: bool, *,
                        inputs: Iterable[str | Path] = (), option: str = "--out") -> None:
    """A file a command writes (``--out FILE``): never one of the files it reads, even with
    ``--force``; an existing file only with ``--force``."""
    if out_file is None:
        return
    target = out_file.resolve()
    if any(Path(item).resolve() == target for item in inputs):
        raise UserError(f"{option} {out_file} is a file this command reads; write elsewhere")
    if (out_file.exists() or out_file.is_symlink()) and not force:
        raise UserError(f"{option} {out_file} exists; use --force to overwrite it")


def report_file_outside(out_file: Path, run_dir: Path) -> Path | None:
    """``report --out``: the run's own report (``None``: written as without --out), or a file
    outside the run folder. A run folder's files are the run's, written as one transaction by
    its writers; --out once replaced the run's metrics.json with the HTML."""
    folder = run_dir.resolve()
    target = out_file.resolve()
    if target == folder / RunFolder.REPORT:
        return None
    if target == folder or folder in target.parents:
        raise UserError(f"--out {out_file} is inside the run folder {run_dir}, whose files "
                        f"are the run's: omit --out for {run_dir / RunFolder.REPORT}, or write "
                        "outside it")
    return out_file
