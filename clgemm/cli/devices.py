"""`clgemm devices`: every device, numbered as `--device` takes them."""

from __future__ import annotations

import click

from ..backends.opencl import nvidia_icd_note
from ..backends import list_devices
from ..report import devices_rows, devices_table
from ..tables import csv_text
from .options import output_options
from .output import Output


@click.command()
@output_options(csv=True)
def devices(out: Output) -> None:
    """List every device, numbered across platforms."""
    found = list_devices()
    if not found:
        out.say("no OpenCL device found (on Debian: apt-get install pocl-opencl-icd)")
    else:
        out.table(devices_table(found, out.layout))
    rows = devices_rows(found)
    out.write([{**d.to_json(), "tuning": r["tuning"]} for d, r in zip(found, rows)],
              csv_text(rows))
    note = nvidia_icd_note()
    if note:
        out.note(note)
