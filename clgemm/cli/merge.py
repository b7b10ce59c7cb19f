"""`clgemm merge`: tuning databases from many machines pooled into one folder, per device the
best verified entry of each slot (`clgemm.configs.merge`)."""

from __future__ import annotations

from pathlib import Path

import click

from clgemm.cli.output import Output
from clgemm.cli.options import output_options
from clgemm.configs.database import results_dir
from clgemm.configs.merge import merge as merge_databases
from clgemm.core.tables import Column, fit_lines, render

#: the "format" of what `clgemm merge --json` writes
FORMAT = "clgemm-merge"


@click.command()
@click.argument("files", nargs=-1, metavar="DATABASE...",
                type=click.Path(dir_okay=False, path_type=Path))
@click.option("--into", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="the folder the merged databases go to, one file per device (default: "
                   "<results>, $CLGEMM_RESULTS or the per-user data folder; clgemm/tuning "
                   "in a checkout: the databases clgemm ships)")
@output_options()
def merge(files: tuple[Path, ...], into: Path | None, out: Output) -> None:
    """Merge tuning databases (from other machines, or a cluster's devices) into one folder:
    per device, each slot keeps its fastest verified entry with the provenance it was measured
    with. A file that is not a clgemm tuning database is refused before anything is written."""
    folder = into if into is not None else results_dir()
    done = merge_databases(list(files), folder)
    rows = []
    for m in done:
        kept = sum(1 for _, _, r in m.outcomes if not r.stored)
        rows.append([m.path.name, len(m.sources), len(m.outcomes), m.stored, kept, m.skipped])
    table = render([Column("database (one per device)", short="database", wrap=40), "files",
                    "entries", "stored", Column("not stored", short="kept out"),
                    Column("unusable", drop=1)], rows, out.layout)
    lines = [f"merged {len(files)} file(s) into {folder}:", table,
             "stored: the entry is now its slot's; kept out: a faster or as fast one is "
             "there; unusable: entries of a source that cannot be used, left out"]
    out.table("\n".join(fit_lines(lines, out.layout)))
    out.write({"format": FORMAT, "into": str(folder),
               "databases": [{"device": m.device_key, "backend": m.backend,
                              "path": str(m.path), "sources": [str(s) for s in m.sources],
                              "skipped": m.skipped,
                              "entries": [{"source": str(src), "slot": slot,
                                           "stored": r.stored, "why": r.why}
                                          for src, slot, r in m.outcomes]}
                             for m in done]})
