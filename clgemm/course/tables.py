"""The markdown inside every generated block, from the registry, the kernels and the results.

Each function returns the text of one block. Numbers have one fixed format each (GFLOP/s with
one decimal and thousands separators, ratios with two decimals, shares in percent with one) and
every list is sorted, so the same files always give the same bytes: that is what lets
`clgemm report --check` compare pages exactly.
"""

from __future__ import annotations

import math
import posixpath
from typing import Iterable, Sequence

from clgemm.backends import registry
from clgemm.course import BEYOND, page_link, page_name
from clgemm.configs.splits import read_b_pays_on, slices_of_rung
from clgemm.course.data import Device, Results, Row, Run, TunedEntry
from clgemm.course.diffs import diff_stats, kernel_file, previous, rung_diff
from clgemm.course.macros import constraint_rows, geometry, kib, macro_rows
from clgemm.devices.hardware import hardware_from_record
from clgemm.rungs import REGISTRY, Rung, get_rung

DASH = "–"
#: what a table says where a run holds no row for a rung (a file measured before the rung existed)
NOT_MEASURED = "not measured"


# -- formatting -------------------------------------------------------------------------------
def gflops(x: float | None) -> str:
    return DASH if x is None else f"{x:,.1f}"


def ratio(x: float | None) -> str:
    return DASH if x is None else f"{x:.2f}×"


def percent(x: float | None) -> str:
    return DASH if x is None else f"{x:.1f}%"


def size_text(size: Sequence[int], batch: int = 1) -> str:
    """A product's size, and where `batch` is above 1 the stack of them, as the pages say it."""
    m, n, k = size
    one = f"{m}³" if m == n == k else f"{m}×{n}×{k}"
    return one if batch == 1 else f"{batch}×{one}"


def params_text(params: dict, defaults: dict | None = None) -> str:
    """`NAME=value` pairs; values that differ from `defaults` in bold."""
    parts = []
    for name, value in params.items():
        text = f"{name}={value}"
        if defaults is not None and name in defaults and defaults[name] != value:
            text = f"**{text}**"
        parts.append(text)
    return " ".join(parts) or DASH


def link(target: str, here: str, text: str | None = None) -> str:
    """A markdown link to `target` (relative to the repository) from a page in folder `here`."""
    return f"[{text or posixpath.basename(target)}]({posixpath.relpath(target, here)})"


def table(headers: Sequence[str], rows: Iterable[Sequence[object]],
          right: Sequence[int] = ()) -> str:
    """A GitHub markdown table; columns whose index is in `right` are right-aligned."""
    def cell(x: object) -> str:
        return str(x).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in headers) + " |",
             "|" + "|".join("---:" if i in right else "---" for i in range(len(headers))) + "|"]
    lines += ["| " + " | ".join(cell(x) for x in row) + " |" for row in rows]
    return "\n".join(lines)


def config_label(run: Run) -> str:
    if run.kind == "vs-defaults":
        return f"{run.config} (alternating rounds)"
    return run.config


# -- rung pages -------------------------------------------------------------------------------
def summary_block(rung: Rung) -> str:
    here = "ladder"
    before = previous(rung)
    after = next((REGISTRY[n] for n in sorted(REGISTRY) if n > rung.number), None)
    sizes = ("any M, N and K" if rung.any_size else
             "M, N and K multiples of the work-group's tile of C and of the tile depth")
    helpers = ", ".join(f"{h.name} (`{h.kernel}` in `{kernel_file(h.file)}`)"
                        for h in rung.helpers)
    nav = [link(f"ladder/{page_name(before)}", here, f"← rung {before.number}: {before.title}")
           if before else "", link("ladder/README.md", here, "index"),
           link(f"ladder/{page_name(after)}", here, f"rung {after.number}: {after.title} →")
           if after else link(f"ladder/{BEYOND}", here, "beyond the ladder: the library's "
                                                         "kernels →")]
    lines = [f"**Rung {rung.number} of {len(REGISTRY)}: {rung.title}.**",
             "",
             f"- adds: {rung.adds}",
             f"- teaches: {rung.teaches}",
             f"- kernel: `{rung.kernel}` in {link(kernel_file(rung.file), here)}",
             f"- sizes it accepts: {sizes}",
             f"- helper kernels before it: {helpers or 'none'}",
             f"- see it compiled: `clgemm show {rung.number}`; in the terminal: "
             f"`clgemm explain {rung.number}`",
             "",
             " · ".join(x for x in nav if x)]
    return "\n".join(lines)


def diff_block(rung: Rung) -> str:
    text = rung_diff(rung)
    before = previous(rung)
    if before is None:
        return (f"The whole kernel, `{kernel_file(rung.file)}` (every later rung is shown as a "
                f"change "
                f"to the one before it):\n\n```c\n{text}```")
    added, removed = diff_stats(text)
    return (f"`{kernel_file(before.file)}` → `{kernel_file(rung.file)}`: {added} lines added, "
            f"{removed} removed.\n\n```diff\n{text}```")


def macros_block(rung: Rung) -> str:
    rows = [(f"`{m.name}`", m.default, ", ".join(map(str, m.candidates)), m.meaning, m.effect)
            for m in macro_rows(rung)]
    out = [table(["macro", "default", "candidates (tuner)", "meaning",
                  "one step from the default (other macros at their defaults)"], rows, right=(1,))]
    g = geometry(rung, rung.defaults())
    if g is not None:
        derived = ", ".join(f"`{k}` = {v}" for k, v in g.derived.items())
        out.append("")
        out.append(f"At the defaults: work-group {g.work_group[0]}×{g.work_group[1]} "
                   f"({g.work_items} work-items), {g.outputs_per_item} "
                   f"output{'' if g.outputs_per_item == 1 else 's'} per work-item, "
                   f"a {g.tile[0]}×{g.tile[1]} tile of C per work-group, "
                   f"{kib(g.local_bytes)} of local memory"
                   + (f"; derived macros {derived}" if derived else "") + ".")
    out.append("")
    out.append("The rung's constraints, in the order the tuner's pruning funnel applies them "
               "(the tuner adds its own heuristics and the problem size; `clgemm tune` prints "
               "the whole funnel with what each step removed):")
    out.append("")
    out += [f"- {stage}: {name}" for stage, name in constraint_rows(rung)]
    return "\n".join(out)


def _previous_ok(run: Run, rung: int) -> Row | None:
    """The row a rung's speed-up is measured against: the closest ladder rung below it that ran
    correctly; for a library kernel, the fastest ladder rung of the run."""
    if rung not in REGISTRY:
        ladder = [r for r in run.rows if r.rung in REGISTRY and r.gflops]
        # every row of `ladder` has GFLOP/s (the filter above); `or 0.0` narrows the Optional
        return max(ladder, key=lambda r: r.gflops or 0.0) if ladder else None
    earlier = [r for r in run.rows if r.rung < rung and r.gflops]
    return earlier[-1] if earlier else None


def measured_block(rung: Rung, results: Results, here: str = "ladder") -> str:
    """Every run that measured the rung; once one has, every other run too, as "not measured"
    (a file made before the rung existed, or without it)."""
    if not any(run.row(rung.number) for run in results.runs):
        return "No ladder run in `results/` holds this rung yet."
    rows = []
    for run in results.runs:
        row = run.row(rung.number)
        if row is None:
            rows.append([run.device.label, size_text(run.size), config_label(run), DASH, DASH,
                         DASH, DASH, NOT_MEASURED, link(run.path, here)])
            continue
        prev = _previous_ok(run, rung.number)
        up = row.gflops / prev.gflops if row.gflops and prev and prev.gflops else None
        ref = (f"{percent(row.pct_of_reference)} of {run.base}"
               if row.pct_of_reference is not None and run.base else DASH)
        # a rung with nothing stored runs at its defaults even in a run of tuned parameters
        source = row.source if run.kind == "ladder" else config_label(run)
        rows.append([run.device.label, size_text(run.size), source,
                     params_text(row.params), gflops(row.gflops), ratio(up), ref, row.status,
                     link(run.path, here)])
    against = "× previous rung" if rung.number in REGISTRY else "× fastest ladder rung"
    return table(["device", "size", "parameters from", "parameters", "GFLOP/s",
                  against, "share of reference", "status", "file"], rows, right=(4, 5))


def _search_text(e) -> str:
    if e.evaluations is None:
        return e.strategy or DASH
    space = f" of {e.space}" if e.space is not None else ""
    return f"{e.strategy}, {e.evaluations}{space} configurations"


def _groups_text(rung: Rung, dev: Device, e: TunedEntry, tile: tuple[int, int]) -> str:
    """The work-groups a stored configuration launches at its shape as gemm() runs it: its
    tiles of C, times the slices of K gemm() splits it into there (by the same rule, from the
    device's recorded compute units and the figures the bound keeps for it)."""
    n_groups = math.ceil(e.shape[0] / tile[0]) * math.ceil(e.shape[1] / tile[1]) * e.batch
    slices = 1
    if dev.compute_units and e.batch == 1:
        hw = hardware_from_record({"name": dev.name, "type": dev.kind or "GPU",
                                   "compute_units": dev.compute_units,
                                   "local_mem_bytes": dev.local_mem_bytes})
        slices = slices_of_rung(rung.number, dev.compute_units, e.params, e.shape,
                                read_b_pays_on(hw, e.shape, dev.backend))
    text = str(n_groups * slices)
    if slices > 1:
        text += f": {n_groups} tiles of C × {slices} slices of K"
    if dev.compute_units:
        text += f" ({n_groups * slices / dev.compute_units:,.1f} per compute unit)"
    return text


def tuned_block(rung: Rung, results: Results, here: str = "ladder") -> str:
    rows = []
    stale = False
    for db in results.databases:
        dev = db.device
        for e in db.entries:
            if e.rung != rung.number:
                continue
            g = geometry(rung, e.params)
            if g is None:
                stale = True
                wg = items = local = groups = DASH
            else:
                wg = f"{g.work_group[0]}×{g.work_group[1]} ({g.work_items})"
                items = str(g.outputs_per_item)
                local = kib(g.local_bytes)
                if dev.local_mem_bytes:
                    share = 100 * g.local_bytes / dev.local_mem_bytes
                    local += f" ({share:.0f}% of {kib(dev.local_mem_bytes)})"
                groups = _groups_text(rung, dev, e, g.tile)
            rows.append([dev.label, dev.kind or DASH, size_text(e.shape, e.batch),
                         params_text(e.params, rung.defaults()), gflops(e.gflops), wg, items,
                         local, groups, _search_text(e), link(db.path, here)])
    if not rows:
        return "No tuning database in `results/` holds this rung yet."
    out = [table(["device", "type", "tuned at", "parameters (bold: not the default)", "GFLOP/s",
                  "work-group (work-items)", "outputs per work-item", "local memory",
                  "work-groups", "search", "database"], rows, right=(4,))]
    if stale:
        out.append("")
        out.append("–: parameters tuned before this rung's macros changed; `clgemm tune` again "
                   "to fill them in.")
    return "\n".join(out)


def plots_block(images: Sequence[tuple[str, str]], here: str = "ladder",
                none: str = "No plot for this rung yet.") -> str:
    """Image links, each `(path relative to the repository, caption)`."""
    if not images:
        return none
    return "\n\n".join(f"![{caption}]({posixpath.relpath(path, here)})\n*{caption}*"
                       for path, caption in images)


# -- the index --------------------------------------------------------------------------------
def rungs_block(here: str = "ladder") -> str:
    rows = [(r.number, link(f"ladder/{page_name(r)}", here, r.title), r.adds, r.teaches)
            for r in (REGISTRY[n] for n in sorted(REGISTRY))]
    return table(["rung", "page", "adds", "teaches"], rows)


def devices_block(results: Results, here: str = "ladder") -> str:
    rows = []
    for d in results.devices():
        runs = len({r.path for r in results.runs if r.device.key == d.key})
        benches = sum(1 for b in results.benches if b.device.key == d.key)
        tuned = sorted({e.rung for db in results.databases if db.device.key == d.key
                        for e in db.entries})
        journals = sum(1 for j in results.journals if j.device.key == d.key)
        rows.append([d.name, registry.label(d.backend), d.kind or DASH,
                     d.compute_units or DASH,
                     kib(d.local_mem_bytes) if d.local_mem_bytes else DASH,
                     d.max_work_group_size or DASH, d.driver or DASH, runs, benches,
                     _rung_ranges(tuned) or DASH, journals])
    if not rows:
        return "No results committed yet."
    return table(["device", "backend", "type", "compute units", "local memory", "max work-group",
                  "driver", "ladder files", "bench files", "tuned rungs", "journals"], rows,
                 right=(3, 5, 7, 8, 10))


def _rung_ranges(numbers: Sequence[int]) -> str:
    """[1, 2, 3, 5] -> '1-3, 5'."""
    out, start = [], None
    for i, n in enumerate(numbers):
        if start is None:
            start = n
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            out.append(str(start) if start == n else f"{start}-{n}")
            start = None
    return ", ".join(out)


def ladder_groups(results: Results) -> list[list[Run]]:
    """Runs of one device and size together, in the order of `results.runs`."""
    groups: dict[tuple, list[Run]] = {}
    for run in results.runs:
        groups.setdefault((run.device.key, run.size), []).append(run)
    return list(groups.values())


def _rung_title(n: int) -> str:
    try:
        return get_rung(n).title
    except Exception:  # a number no kernel has (a file from elsewhere): shown without a name
        return ""


def ladder_table(runs: Sequence[Run], here: str = "ladder") -> str:
    """GFLOP/s per rung (rows) for each run of one device and size (columns), then the
    reference libraries each run measured. Every rung of the ladder has a row, "not measured"
    where a run holds none for it; library kernels appear where a run measured them."""
    numbers = sorted(set(REGISTRY) | {r.rung for run in runs for r in run.rows})
    headers = ["rung", "name"] + [f"{config_label(run)}: GFLOP/s" for run in runs]
    rows: list[Sequence[object]] = []
    for n in numbers:
        title = _rung_title(n)
        cells = []
        for run in runs:
            row = run.row(n)
            cells.append(NOT_MEASURED if row is None else (gflops(row.gflops) if row.gflops
                                                           else row.status))
        rows.append([n, link(f"ladder/{page_link(get_rung(n))}", here, title)
                     if title else title] + cells)
    names = sorted({ref.name for run in runs for ref in run.references})
    for name in names:
        cells = []
        for run in runs:
            ref = next((x for x in run.references if x.name == name), None)
            cells.append(DASH if ref is None else (gflops(ref.gflops) if ref.gflops
                                                   else ref.status))
        rows.append(["ref", name] + cells)
    files = ", ".join(link(p, here) for p in dict.fromkeys(run.path for run in runs))
    return table(headers, rows, right=tuple(range(2, 2 + len(runs)))) + f"\n\nFrom {files}."


def ladders_block(results: Results, images: dict[str, str], here: str = "ladder") -> str:
    """Per device and size: the chart (when planned) and its numbers.

    `images` maps '<device key> <size>' to the chart's path relative to the repository."""
    groups = ladder_groups(results)
    if not groups:
        return "No ladder run in `results/` yet: run `clgemm ladder --json FILE` and commit it."
    out = []
    for runs in groups:
        first = runs[0]
        out.append(f"### {first.device.label}, {size_text(first.size)}")
        out.append("")
        image = images.get(f"{first.device.key} {size_text(first.size)}")
        if image:
            out.append(f"![ladder on {first.device.label}]({posixpath.relpath(image, here)})")
            out.append("")
        out.append(ladder_table(runs, here))
        out.append("")
    return "\n".join(out).rstrip()


# -- results/README.md ------------------------------------------------------------------------
def runs_block(results: Results, here: str = "results") -> str:
    seen: dict[str, Run] = {}
    for run in results.runs:
        seen.setdefault(run.path, run)
    rows = [[link(r.path, here, r.path.removeprefix("results/")), r.device.label,
             size_text(r.size), "tuned against defaults" if r.kind == "vs-defaults" else r.config,
             r.date[:10] or DASH, f"`{r.command}`" if r.command else DASH]
            for r in seen.values()]
    if not rows:
        return "None yet."
    return table(["file", "device", "size", "parameters", "date", "command"], rows)


def bench_block(results: Results, images: dict[str, str], here: str = "results") -> str:
    if not results.benches:
        return "None yet."
    out = []
    for b in results.benches:
        out.append(f"### {b.device.label}: {link(b.path, here, b.path.removeprefix('results/'))}")
        out.append("")
        if b.command:
            out.append(f"`{b.command}` ({b.date[:10]})")
            out.append("")
        if b.path in images:
            out.append(f"![bench on {b.device.label}]({posixpath.relpath(images[b.path], here)})")
            out.append("")
        names = []
        for row in b.rows:
            for ref in row.get("references") or []:
                if ref["name"] not in names:
                    names.append(ref["name"])
        headers = ["shape", "best rung", "GFLOP/s"] + [f"{n}: GFLOP/s" for n in names] + \
                  [f"best rung / {n}" for n in names]
        rows = []
        for row in b.rows:
            best = row.get("best") or {}
            refs = {r["name"]: r for r in row.get("references") or []}
            ok = {n: refs[n]["gflops"] for n in names
                  if n in refs and refs[n].get("status", "ok") == "ok"}
            g = best.get("gflops") if best.get("status", "ok") == "ok" else None
            rows.append([size_text(row["shape"]), best.get("rung", DASH), gflops(g)]
                        + [gflops(ok.get(n)) for n in names]
                        + [ratio(g / ok[n]) if g and ok.get(n) else DASH for n in names])
        out.append(table(headers, rows, right=tuple(range(1, len(headers)))))
        out.append("")
    return "\n".join(out).rstrip()


def databases_block(results: Results, here: str = "results") -> str:
    rows = []
    for db in results.databases:
        shapes = sorted({(e.batch, e.shape) for e in db.entries}, key=lambda bs: (bs[1], bs[0]))
        dates = sorted(e.date[:10] for e in db.entries if e.date)
        rows.append([link(db.path, here, db.path.removeprefix("results/")), db.device.label,
                     _rung_ranges(sorted({e.rung for e in db.entries})) or DASH,
                     ", ".join(size_text(s, b) for b, s in shapes) or DASH,
                     (dates[0] if dates[0] == dates[-1] else f"{dates[0]} – {dates[-1]}")
                     if dates else DASH])
    if not rows:
        return "None yet."
    return table(["database", "device", "rungs", "tuned at", "date"], rows)


def journals_block(results: Results, here: str = "results") -> str:
    rows = []
    for j in results.journals:
        for n in j.rungs():
            recs = j.records_of(n)
            ok = sum(1 for r in recs if r.get("status") == "ok")
            rows.append([link(j.path, here, j.path.removeprefix("results/journals/")),
                         j.device.label, n, size_text(j.size), j.strategy(n), len(recs), ok])
    if not rows:
        return "None yet."
    return table(["journal", "device", "rung", "size", "strategy", "measured", "ok"], rows,
                 right=(2, 5, 6))
