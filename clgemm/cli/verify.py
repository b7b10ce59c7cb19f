"""`clgemm verify`: the conformance sweep's command; the sweep itself is `clgemm.measure.verify`."""

from __future__ import annotations

import json

import click

from clgemm.backends import select_device
from clgemm.cli.options import command_line, device_options, output_file, output_options
from clgemm.cli.output import Output, progress
from clgemm.core.errors import ClgemmError
from clgemm.core.paths import write_output
from clgemm.core.tables import csv_text
from clgemm.devices.info import DeviceInfo
from clgemm.measure.verify import (failures_json, read_cases, replay, report_json, run_verify,
                                   summary_rows, summary_table)
from clgemm.measure.verify_running import RunningCase, left_behind
from clgemm.rungs import kernel_label, parse_rungs
from clgemm.tuner.first_launch import Trials

#: failures listed one per line on the terminal; the --failures file holds them all
SHOWN_FAILURES = 20


@click.command()
@device_options
@click.option("--rungs", "-r", default="all,direct,tiled,tiled-any,skinny", show_default=True,
              help="e.g. 1-5, 1,3,6-10, or direct, tiled, tiled-any, skinny (the library kernels)")
@click.option("--quick", is_flag=True, help="a covering subset of the sweep (seconds)")
@output_file("--failures", "failures_file",
             help="write failing cases to this JSON file (replay with --replay)")
@click.option("--replay", "replay_file", type=click.Path(dir_okay=False), default=None,
              help="run the cases of a --failures file again instead of the sweep")
@output_options(csv=True)
def verify(device: str | None, backend: str | None, rungs: str, quick: bool,
           failures_file: str | None, replay_file: str | None, out: Output) -> None:
    """Conformance sweep of gemm() and every rung: sizes, leading dimensions, offsets,
    transposes, layouts, alpha and beta, against a float64 reference."""
    dev = select_device(device, backend=backend)
    trial = Trials(dev, progress)
    numbers = None
    _name_left_behind(dev, out)
    running = RunningCase(dev)
    try:
        if replay_file:
            cases, recorded = read_cases(replay_file)
            if recorded and recorded != dev.key:
                out.note(f"note: the cases were recorded on {recorded}; replaying them on "
                         f"{dev.key}")
            report = replay(dev, cases, progress, trial, running.mark)
        else:
            numbers = parse_rungs(rungs)
            out.note(f"verify on device {dev.index}: {dev.name} ({dev.backend}), rungs "
                     f"{', '.join(kernel_label(n).removeprefix('rung ') for n in numbers)}, "
                     f"{'quick' if quick else 'full'} sweep")
            report = run_verify(dev, numbers, quick, progress, trial, running.mark)
    finally:
        running.clear()
    out.table(summary_table(report, out.layout))
    for r in report.failures[:SHOWN_FAILURES]:
        out.note(f"FAILED {r.case.label()} "
                 f"[{kernel_label(r.case.rung) if r.case.rung else 'chosen by gemm()'}]: "
                 f"{r.message}")
    if len(report.failures) > SHOWN_FAILURES:
        out.note(f"... and {len(report.failures) - SHOWN_FAILURES} more")
    if failures_file:
        write_output(failures_file,
                     json.dumps(failures_json(report, command_line()), indent=1) + "\n",
                     "--failures")
        out.note(f"wrote {len(report.failures)} failing case(s) to {failures_file}")
    out.write(report_json(report, command_line(), numbers, None if replay_file else quick),
              csv_text(summary_rows(report)))
    if report.failures:
        raise ClgemmError(f"{len(report.failures)} of {report.total} cases failed")


def _name_left_behind(dev: DeviceInfo, out: Output) -> None:
    """Name the cases that earlier sweeps of this device were running when their process
    ended (a runtime that crashed on a kernel), each with the file that replays it."""
    for path, _ in left_behind(dev):
        try:
            case = read_cases(path)[0][0]
        except (ClgemmError, IndexError):
            continue
        kernel = kernel_label(case.rung) if case.rung else "chosen by gemm()"
        out.note(f"note: an earlier verify of this device ended while running "
                 f"{case.label()} [{kernel}]; 'clgemm verify --replay {path}' runs it again")
