"""Tables for the terminal from ladder runs and device lists, in full or fitted to a width
(`clgemm.core.tables`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from clgemm.configs import lookup
from clgemm.core.tables import (BRIEF_NOTE, FULL, SPREAD_NOTE, Column, Layout, fit_lines,
                                noisy_warning, params_brief, render, spread_cell, status_cell)
from clgemm.devices.hardware import Hardware
from clgemm.devices.info import DeviceInfo
from clgemm.measure.ladder import LadderRun, size_needs
from clgemm.measure.references import percent_of
from clgemm.measure.rung_runner import RunResult
from clgemm.model.bound import Bound
from clgemm.rungs import get_rung
from clgemm.tuner.budget import default_tune_minutes


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB" if n < 2**30 else f"{n / 2**30:,.1f} GiB"


def devices_table(devices: list[DeviceInfo], layout: Layout = FULL) -> str:
    rows = [[d.index, d.backend, d.platform, d.name, d.type, d.compute_units, f"{d.clock_mhz} MHz",
             _mib(d.global_mem_bytes), _mib(d.local_mem_bytes) if d.local_mem_bytes >= 2**20
             else f"{d.local_mem_bytes // 1024} KiB", d.max_work_group_size, d.driver_version,
             tuning_level(d)]
            for d in devices]
    columns: list[Column | str] = [
        Column("#", right=True), "backend", Column("platform", wrap=12),
        Column("device", wrap=16), "type", Column("CUs", right=True), "clock",
        "global mem", Column("local mem", drop=2), Column("max WG", drop=1, right=True),
        Column("driver", wrap=10), Column("tuning", wrap=10)]
    return render(columns, rows, layout)


def devices_rows(devices: list[DeviceInfo]) -> list[dict[str, Any]]:
    """One flat row per device, for CSV: the JSON's fields, lists joined by spaces, and the
    tuning level the table shows."""
    out = []
    for d in devices:
        row = {k: " ".join(map(str, v)) if isinstance(v, list) else v
               for k, v in d.to_json().items()}
        row["tuning"] = tuning_level(d)
        out.append(row)
    return out


def _num(x, fmt):
    return "" if x is None else format(x, fmt)


def _reason(r: RunResult) -> str:
    """A failed row's message without the words its status already says ("build failed: ")."""
    said = r.status.replace("-", " ") + ": "
    return r.message[len(said):] if r.message.startswith(said) else r.message


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[0] + (" ..." if len(lines) > 1 else "") if lines else ""


def _size_lines(run: LadderRun, wide: bool) -> list[str]:
    """Under a ladder whose size some rungs could not do: what their tiles need (fitted; in
    full the status column says it), and the nearest size at which every selected rung runs."""
    groups: dict[str, list[RunResult]] = {}
    for r in run.rows:
        if r.status == "unsupported-size":
            needs = size_needs(get_rung(r.rung).size_multiples(r.params))
            groups.setdefault(needs, []).append(r)
    if not groups:
        return []
    lines = [] if wide else [
        f"rung{'s' if len(rows) > 1 else ''} {', '.join(str(r.rung) for r in rows)} "
        f"unsupported-size: need{'' if len(rows) > 1 else 's'} {needs}"
        for needs, rows in groups.items()]
    near = run.runs_all_at
    if near is not None:
        size = (f"M=N=K={near.m} (--size {near.m})" if near.m == near.n == near.k
                else f"M={near.m} N={near.n} K={near.k} (--mnk {near.m} {near.n} {near.k})")
        lines.append(f"the nearest size at which every selected rung runs: {size}")
    return lines


@dataclass
class _Asides:
    """What the fitted ladder table says under itself rather than in a cell, and every row's
    timed repeats (label, times) for the warning about noisy rows."""

    failures: list[str] = field(default_factory=list)
    timings: list[str] = field(default_factory=list)
    repeats: list[tuple[str, Sequence[float] | None]] = field(default_factory=list)


def _rung_rows(run: LadderRun, bounds: dict[int, Bound | None], wide: bool,
               asides: _Asides) -> list[list[Any]]:
    """One row per rung; fitted, a failure's message moves to `asides`."""
    ups = run.speedups()
    base = run.reference()
    rows: list[list[Any]] = []
    for r in run.rows:
        rung = get_rung(r.rung)
        up_prev, up_first = ups[r.rung]
        if wide:
            status = r.status if r.ok or not r.message else f"{r.status}: {_reason(r)}"
        else:
            status = r.status
            if not r.ok and r.message and r.status != "unsupported-size":
                asides.failures.append(f"rung {r.rung} {r.status}: {_first_line(_reason(r))}")
        b = bounds[r.rung]
        if r.ok:
            asides.repeats.append((f"rung {r.rung}", r.times_ms))
        rows.append([r.rung, rung.title if wide else rung.slug, rung.adds,
                     rung.params_text(r.params) if wide else params_brief(r.params,
                                                                          rung.defaults()),
                     run.sources.get(r.rung, "default"), _num(r.ms, ".3f"),
                     spread_cell(r.times_ms if r.ok else None), _num(r.helper_ms, ".3f"),
                     _num(r.gflops, ".1f"), _num(percent_of(r.gflops, base), ".1f"),
                     _num(b.percent(r.gflops) if b else None, ".1f"),
                     _num(up_prev, ".2f"), _num(up_first, ".1f"),
                     _num(r.rel_error, ".1e") if r.rel_error not in (None, float("inf")) else "",
                     status_cell(status)])
    return rows


def _reference_rows(run: LadderRun, wide: bool, asides: _Asides) -> list[list[Any]]:
    """One row per reference library; fitted, its failure or its timing moves to `asides`."""
    base = run.reference()
    rows: list[list[Any]] = []
    for ref in run.references:
        state = ref.get("status", "ok")
        if wide:
            status = "reference" if state == "ok" else f"{state}: {ref.get('note', '')}"
            if ref.get("timing") and state == "ok":
                status += f" ({ref['timing']})"
        else:
            status = "reference" if state == "ok" else state
            if state != "ok" and ref.get("note"):
                asides.failures.append(f"{ref['name']} {state}: {_first_line(ref['note'])}")
            elif ref.get("timing"):
                asides.timings.append(f"{ref['name'].split(' (')[0]}: {ref['timing']}")
        err = ref.get("rel_error")
        if state == "ok":
            asides.repeats.append((ref["name"].split(" (")[0], ref.get("times_ms")))
        rows.append(["ref", ref["name"] if wide else ref["name"].split(" (")[0],
                     ref.get("where", ""), "", "", _num(ref["ms"], ".3f"),
                     spread_cell(ref.get("times_ms") if state == "ok" else None), "",
                     _num(ref["gflops"], ".1f"), _num(percent_of(ref["gflops"], base), ".1f"),
                     "", "", "", _num(err, ".1e"), status_cell(status)])
    return rows


def _ladder_columns() -> list[Column | str]:
    return ["rung", "name", Column("adds", wrap=20, drop=1), Column("parameters", wrap=20),
            Column("config", wrap=8), "ms", Column("spread", drop=5, right=True),
            Column("helper ms", drop=4), "GFLOP/s", Column("% ref", drop=7),
            Column("% bound", drop=6), "x prev", Column("x rung 1", drop=2),
            Column("rel err", drop=3), "status"]


def _ladder_footer(run: LadderRun, shown: Sequence[str], bounds: dict[int, Bound | None],
                   layout: Layout, asides: _Asides) -> list[str]:
    """The lines under the table: only about the columns it shows (`shown`), then what the
    fitted table moved out of its cells, sizes some rungs could not do, noisy rows, and what
    the bound rests on."""
    base = run.reference()
    lines = []
    if "% ref" in shown:
        lines.append(f"% ref: share of {base['name']}'s GFLOP/s" if base
                     else "% ref: no reference ran correctly")
    if "spread" in shown:
        lines.append(SPREAD_NOTE)
    if not layout.wide:
        lines += [BRIEF_NOTE] + (["reference timing: " + "; ".join(asides.timings)]
                                 if asides.timings else [])
        lines += asides.failures
    lines += _size_lines(run, layout.wide)
    lines += noisy_warning(asides.repeats)
    if "% bound" in shown:
        lines += bound_footer(run.hardware_figures(), bounds, layout)
    return lines


def ladder_table(run: LadderRun, layout: Layout = FULL) -> str:
    """The ladder as a table. In full: every column, every parameter, failure messages in the
    status column. Fitted: short names, only the parameters that differ from the defaults, the
    failure messages and the references' timing under the table. The lines under it explain
    only the columns it shows, and call out the rows whose repeats spread too widely."""
    bounds = run.bounds()
    asides = _Asides()
    rows = (_rung_rows(run, bounds, layout.wide, asides)
            + _reference_rows(run, layout.wide, asides))
    p = run.problem
    head = (f"{run.device.name} ({run.device.backend}, {run.device.platform}, driver "
            f"{run.device.driver_version})  M={p.m} N={p.n} K={p.k}")
    table = render(_ladder_columns(), rows, layout)
    lines = [head, table, *_ladder_footer(run, table.shown, bounds, layout, asides)]
    return "\n".join(fit_lines(lines, layout))


def vs_defaults_table(result: dict[str, Any], layout: Layout = FULL) -> str:
    """`ladder --vs-defaults`: each tuned rung against its defaults, from
    `ladder.compare_with_defaults`."""
    rows = []
    for r in result["rows"]:
        rung = get_rung(r["rung"])
        params = (rung.params_text(r["tuned"]) if layout.wide
                  else params_brief(r["tuned"], rung.defaults()))
        ok = "slowdown" in r
        rows.append([r["rung"], params, f"{r['tuned_gflops']:.1f}" if ok else "",
                     f"{r['default_gflops']:.1f}" if ok else "",
                     f"{r['slowdown']:.3f}" if ok else "", status_cell(r["status"])])
    table = render(["rung", Column("tuned parameters", wrap=20), "tuned GFLOP/s",
                    "default GFLOP/s", "tuned/default time", Column("status", wrap=20)],
                   rows, layout)
    return "\n".join(fit_lines([table] + ([] if layout.wide else [BRIEF_NOTE]), layout))


def bound_footer(hw: Hardware, bounds: dict[int, Bound | None],
                 layout: Layout = FULL) -> list[str]:
    """What the "% bound" column rests on: the device figures (with their sources) and, per
    rung, the term that limits its bound (see `clgemm model`); fitted, without the term's
    reasoning, which `clgemm model --rung N` prints."""
    lines = ["% bound: share of the model's upper bound (clgemm model --rung N shows its terms); "
             "device figures:", *hw.summary()]
    for number, b in bounds.items():
        if b is not None:
            lines.append(f"  rung {number}: bound {b.gflops:,.0f} GFLOP/s, limited by "
                         f"{b.limit_text() if layout.wide else b.limit}")
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
    """Lines under the ladder table: where a device runs untuned, which databases were read, the
    command that tunes it and what it costs; stored entries of an earlier parameter set, which
    are not used."""
    notes = []
    own = [n for n in numbers if sources.get(n, "").startswith("tuned")]
    if not use_defaults and not own:
        borrowed = sorted({s for s in sources.values() if s not in ("default", "user")})
        where = (f"its configurations come from {', '.join(borrowed)}" if borrowed
                 else "every rung ran at its defaults")
        notes.append(f"note: {device.name} has no tuning of its own ({where}); "
                     f"'clgemm tune --device {device.index}' tunes the whole ladder in at most "
                     f"{default_tune_minutes(device)} minutes")
        notes.append(f"note: {lookup.read_summary()}")
    for n in numbers:
        stale = lookup.stale_entries(device, get_rung(n))
        if stale:
            notes.append(f"note: rung {n}: {stale} stored entr{'y' if stale == 1 else 'ies'} for "
                         f"this device hold{'s' if stale == 1 else ''} an earlier parameter set "
                         f"of the rung (stale) and {'is' if stale == 1 else 'are'} not used")
    return notes
