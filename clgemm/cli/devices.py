"""`clgemm devices`: every device, numbered as `--device` takes them."""

from __future__ import annotations

import json

import click

from ..backends.opencl import nvidia_icd_note
from ..backends import list_devices
from ..report import devices_table
from .options import json_flag


@click.command()
@json_flag("print JSON instead of a table")
def devices(as_json: bool) -> None:
    """List every device, numbered across platforms."""
    found = list_devices()
    if as_json:
        click.echo(json.dumps([d.to_json() for d in found], indent=2))
    elif not found:
        click.echo("no OpenCL device found (on Debian: apt-get install pocl-opencl-icd)")
    else:
        click.echo(devices_table(found))
    note = nvidia_icd_note()
    if note:
        click.echo(note, err=True)
