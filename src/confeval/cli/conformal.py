"""``confeval NAME calibrate`` and ``confeval NAME apply`` for a suite with a conformal predictor
(sets, intervals). Parses, calls :mod:`confeval.verbs.conformal` and prints."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..runs import check_output_folder, dumps
from ..suites.base import Suite
from ._common import ForceOpt, JsonOpt, OutOpt, err, out, print_json, write_run
from ._files import refuse_to_overwrite
from ._options import Given, with_options
from .apply import ReportOpt, exit_if_void, print_validity

__all__ = ["add_conformal_commands"]

InputArg = Annotated[Path, typer.Argument(metavar="FILE", help="Labelled records (or a run "
                                                                "folder): every usable row "
                                                                "calibrates.")]
PredictorArg = Annotated[Path, typer.Argument(metavar="PREDICTOR", help="A conformal.json "
                                                                        "written by `calibrate "
                                                                        "--out`.")]
BatchesArg = Annotated[list[Path], typer.Argument(
    metavar="RECORDS...", help="New records (the truth not needed; where every file carries "
                               "it, the coverage itself is checked): one file is a batch; "
                               "several files, or a folder of them (name order), a stream.")]
PredictionsOut = Annotated[Path | None, typer.Option(
    "--out", help="Write the records with their predictions (.jsonl, .csv, .parquet, "
                  "optionally .gz).")]
StrictOpt = Annotated[bool, typer.Option(
    "--strict", help="Exit 4 when the promise is void (the new records are not exchangeable "
                     "with the calibration data, or the miscoverage is above alpha).")]
def add_conformal_commands(app: typer.Typer, suite: Suite) -> None:
    """``calibrate`` and ``apply`` in the suite's group."""
    from ..verbs.promise import ValidityOptions

    step = suite.conformal()
    name = suite.name

    def calibrate(given: Given, source: InputArg, as_json: JsonOpt = False,
                  out_dir: OutOpt = None, force: ForceOpt = False) -> None:
        from ..verbs.conformal import (
            CONFORMAL_FILE,
            calibrate_input,
            conformal_config,
            conformal_section,
        )

        check_output_folder(out_dir, f"{name} calibrate", force=force, suite=name,
                            inputs=[source])
        beside = given.on_command_line()
        done = calibrate_input(suite, source, given.values, frozenset(beside))
        if out_dir is not None:
            write_run(out_dir, conformal_config(f"{name} calibrate", [source], None, beside),
                      conformal_section(name, "conformal", {str(source): done.result}),
                      force=force, files={CONFORMAL_FILE: dumps(done.document) + "\n"})
        if as_json:
            print_json({"calibrate": done.result})
            return
        out.print(f"{source}: {done.result['promise']} ({done.result['n_calibration']:,} "
                  "calibration items)", markup=False)

    def apply(given: Given, predictor: PredictorArg, records: BatchesArg,
              out_file: PredictionsOut = None, report_dir: ReportOpt = None,
              strict: StrictOpt = False, force: ForceOpt = False,
              as_json: JsonOpt = False) -> None:
        from ..records import write_table
        from ..suites.options import build
        from ..verbs.conformal import (
            apply_conformal,
            apply_result,
            conformal_config,
            conformal_section,
        )
        from ..verbs.promise import batch_files

        refuse_to_overwrite(out_file, force, inputs=[predictor, *records])
        check_output_folder(report_dir, f"{name} apply", force=force, suite=name,
                            inputs=[predictor, *records], option="--report")
        options = build(ValidityOptions, given.values, what=f"confeval {name} apply")
        done = apply_conformal(predictor, records, options)
        for skipped in done.skipped:
            err.print(f"skipped {skipped}: not a records file", markup=False)
        if out_file is not None:
            write_table(done.frame, out_file)
        if report_dir is not None:
            write_run(report_dir, conformal_config(f"{name} apply", batch_files(records)[0],
                                                   options, policy=predictor),
                      conformal_section(name, "validity", {str(predictor): apply_result(done)}),
                      force=force)
        validity = done.validity
        if as_json:
            print_json({"apply": {"predictor": str(predictor), **done.counts,
                                  "batches": done.batches, "validity": validity},
                        "validity": validity})
        else:
            c = done.counts
            where = done.batches[0]["file"] if len(done.batches) == 1 else \
                f"{len(done.batches)} files"
            out.print(f"{where}: {c['predicted']:,} predicted, {c['labelled']:,} with the "
                      "truth" + (f"; written to {out_file}" if out_file else ""),
                      markup=False)
            print_validity(validity)
        exit_if_void(validity, strict)

    calibrate.__doc__ = (f"Calibrate a conformal predictor on labelled records and write it "
                         f"(--out DIR: conformal.json, run.json, metrics.json, report.html) "
                         f"for `confeval {name} apply`: every usable row calibrates, with "
                         "the suite's options and --alpha.")
    apply.__doc__ = ("Predict new records with a conformal.json and check that its coverage "
                     "promise still applies: the new records tested against the calibration "
                     "data it summarises (one file: a two-sample test; a stream: an online "
                     "test martingale), and, where they carry the truth, the realised "
                     "miscoverage watched against alpha.")
    app.command("calibrate")(with_options(suite.Options, "score", also=[step.Options],
                                          skip=step.ignores)(calibrate))
    app.command("apply")(with_options(ValidityOptions, "score")(apply))
