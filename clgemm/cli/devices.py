"""`clgemm devices`: every device, numbered as `--device` takes them."""

from __future__ import annotations

import click

from clgemm.backends import list_devices
from clgemm.backends.registry import install_hints
from clgemm.backends.opencl import nvidia_icd_note
from clgemm.cli.ladder_tables import devices_rows, devices_table
from clgemm.cli.options import output_options
from clgemm.cli.output import Output
from clgemm.configs.lookup import read_summary
from clgemm.core.tables import csv_text


@click.command()
@output_options(csv=True)
def devices(out: Output) -> None:
    """List every device, numbered across platforms, and where each one's tuning comes from."""
    found = list_devices()
    if not found:
        out.say("no device found: " + "; ".join(install_hints().values()))
    else:
        out.table(devices_table(found, out.layout))
        out.note(f"tuning: the best level of the lookup chain with entries for the device; "
                 f"{read_summary()}")
    rows = devices_rows(found)
    out.write([{**d.to_json(), "tuning": r["tuning"]} for d, r in zip(found, rows)],
              csv_text(rows))
    note = nvidia_icd_note()
    if note:
        out.note(note)
