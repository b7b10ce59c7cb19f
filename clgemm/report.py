"""Tables for the terminal (tabulate) from ladder runs and device lists."""

from __future__ import annotations

from tabulate import tabulate

from . import lookup
from .devices import DeviceInfo
from .hardware import Hardware
from .ladder import LadderRun
from .model import Bound
from .references import percent_of
from .rungs import get_rung
from .runner import RunResult
from .tuner.budget import default_tune_minutes


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB" if n < 2**30 else f"{n / 2**30:,.1f} GiB"


def devices_table(devices: list[DeviceInfo]) -> str:
    rows = [[d.index, d.backend, d.platform, d.name, d.type, d.compute_units, f"{d.clock_mhz} MHz",
             _mib(d.global_mem_bytes), _mib(d.local_mem_bytes) if d.local_mem_bytes >= 2**20
             else f"{d.local_mem_bytes // 1024} KiB", d.max_work_group_size, d.driver_version,
             tuning_level(d)]
            for d in devices]
    return tabulate(rows, headers=["#", "backend", "platform", "device", "type", "CUs", "clock",
                                   "global mem", "local mem", "max WG", "driver", "tuning"])


def _num(x, fmt):
    return "" if x is None else format(x, fmt)


def _reason(r: RunResult) -> str:
    """A failed row's message without the words its status already says ("build failed: ")."""
    said = r.status.replace("-", " ") + ": "
    return r.message[len(said):] if r.message.startswith(said) else r.message


def ladder_table(run: LadderRun) -> str:
    ups = run.speedups()
    base = run.reference()
    bounds = run.bounds()
    rows = []
    for r in run.rows:
        rung = get_rung(r.rung)
        up_prev, up_first = ups[r.rung]
        status = r.status if r.ok or not r.message else f"{r.status}: {_reason(r)}"
        b = bounds[r.rung]
        rows.append([r.rung, rung.title, rung.adds, rung.params_text(r.params),
                     run.sources.get(r.rung, "default"), _num(r.ms, ".3f"), _num(r.helper_ms, ".3f"),
                     _num(r.gflops, ".1f"), _num(percent_of(r.gflops, base), ".1f"),
                     _num(b.percent(r.gflops) if b else None, ".1f"),
                     _num(up_prev, ".2f"), _num(up_first, ".1f"),
                     _num(r.rel_error, ".1e") if r.rel_error not in (None, float("inf")) else "",
                     status])
    for ref in run.references:
        state = ref.get("status", "ok")
        status = "reference" if state == "ok" else f"{state}: {ref.get('note', '')}"
        if ref.get("timing") and state == "ok":
            status += f" ({ref['timing']})"
        err = ref.get("rel_error")
        rows.append(["ref", ref["name"], ref.get("where", ""), "", "", _num(ref["ms"], ".3f"), "",
                     _num(ref["gflops"], ".1f"), _num(percent_of(ref["gflops"], base), ".1f"),
                     "", "", "", _num(err, ".1e"), status])
    p = run.problem
    head = (f"{run.device.name} ({run.device.backend}, {run.device.platform}, driver "
            f"{run.device.driver_version})  M={p.m} N={p.n} K={p.k}")
    table = tabulate(rows, headers=["rung", "name", "adds", "parameters", "config", "ms",
                                    "helper ms", "GFLOP/s", "% ref", "% bound", "x prev",
                                    "x rung 1", "rel err", "status"], disable_numparse=True)
    foot = (f"% ref: share of {base['name']}'s GFLOP/s" if base
            else "% ref: no reference ran correctly")
    return "\n".join([head, table, foot, *bound_footer(run.hardware_figures(), bounds)])


def bound_footer(hw: Hardware, bounds: dict[int, Bound | None]) -> list[str]:
    """What the "% bound" column rests on: the device figures (with their sources) and, per
    rung, the term that limits its bound (see `clgemm model`)."""
    lines = ["% bound: share of the model's upper bound (clgemm model --rung N shows its terms); "
             "device figures:", *hw.summary()]
    for number, b in bounds.items():
        if b is not None:
            lines.append(f"  rung {number}: bound {b.gflops:,.0f} GFLOP/s, limited by "
                         f"{b.limit_text()}")
    return lines


def tuning_level(device: DeviceInfo) -> str:
    """The best level of the lookup chain that holds anything for this device, for the devices
    table: 'tuned', 'tuned (driver X)', 'family: NAME', 'default: CPU' or 'none'."""
    best = None
    for db, who in lookup.stored_databases():
        level = lookup.device_level(device, who)
        if level is not None and db.entries and (best is None or level[0] < best[0]):
            best = level
    return best[1] if best else "none"


def tuning_notes(device: DeviceInfo, numbers: list[int], sources: dict[int, str],
                 use_defaults: bool) -> list[str]:
    """Lines under the ladder table: where a device runs untuned, the command that tunes it and
    what it costs; stored entries of an earlier parameter set, which are not used."""
    notes = []
    own = [n for n in numbers if sources.get(n, "").startswith("tuned")]
    if not use_defaults and not own:
        borrowed = sorted({s for s in sources.values() if s not in ("default", "user")})
        where = (f"its configurations come from {', '.join(borrowed)}" if borrowed
                 else "every rung ran at its defaults")
        notes.append(f"note: {device.name} has no tuning of its own ({where}); "
                     f"'clgemm tune --device {device.index}' tunes the whole ladder in at most "
                     f"{default_tune_minutes(device)} minutes")
    for n in numbers:
        stale = lookup.stale_entries(device, get_rung(n))
        if stale:
            notes.append(f"note: rung {n}: {stale} stored entr{'y' if stale == 1 else 'ies'} for "
                         f"this device hold{'s' if stale == 1 else ''} an earlier parameter set "
                         f"of the rung (stale) and {'is' if stale == 1 else 'are'} not used")
    return notes
