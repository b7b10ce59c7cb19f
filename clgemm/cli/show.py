"""`clgemm show`: a rung's kernel source exactly as it is compiled."""

from __future__ import annotations

import click

from clgemm.cli.options import RUNG, output_options, param_option, parse_param_options
from clgemm.cli.output import Output
from clgemm.core.paths import KERNELS
from clgemm.rungs import REGISTRY, get_rung

#: the "format" of what `clgemm show --json` writes
FORMAT = "clgemm-show"


@click.command()
@click.argument("rung_number", metavar="RUNG", type=RUNG)
@param_option("NAME=VALUE, repeatable")
@output_options(wide=False)
def show(rung_number: int, param_opts: tuple[str, ...], out: Output) -> None:
    """Print a rung's source as it is compiled: the macros set, then the kernel. RUNG: 1-10, or
    a library kernel by number or name (direct, tiled, tiled-any, skinny)."""
    rung = get_rung(rung_number)
    params = rung.resolve(parse_param_options(param_opts, [rung_number]).get(rung_number))
    rung.validate(params)
    macros = rung.macros(params)
    derived = rung.derive(params)  # not passed: the kernel file derives them itself
    helpers = rung.helpers_for(params)
    common, kernel = (KERNELS / "common.h").read_text(), (KERNELS / rung.file).read_text()
    which = (f"rung {rung.number}" if rung.number in REGISTRY
             else f"kernel {rung.number} ('{rung.slug}')")
    lines = [f"// {which}: {rung.title} ({rung.file}, kernel {rung.kernel})",
             "// build options:", *(f"#define {k} {v}" for k, v in macros.items())]
    if derived:
        lines.append("// derived by the kernel: "
                     + ", ".join(f"{k} = {v}" for k, v in derived.items()))
    for helper in helpers:
        opts = " ".join(f"-D{k}={v}" for k, v in helper.macros.items())
        lines.append(f"// helper step before it: {helper.name} ({helper.file}: {helper.kernel}, "
                     f"{opts})")
    out.table("\n".join([*lines, common, kernel]))
    out.write({"format": FORMAT, "rung": rung.number, "title": rung.title, "file": rung.file,
               "kernel": rung.kernel, "params": params, "macros": macros, "derived": derived,
               "helpers": [{"name": h.name, "file": h.file, "kernel": h.kernel,
                            "macros": dict(h.macros)} for h in helpers],
               "source": f"{common}\n{kernel}"})
