"""A whole bench run: every shape in turn on one backend, and its table, JSON and CSV."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from clgemm.backends import open_backend, vendor_blas
from clgemm.configs.configuration import Trial
from clgemm.configs.database import load
from clgemm.core.problem import Problem
from clgemm.core.tables import (BRIEF_NOTE, FULL, SPREAD_NOTE, Column, Layout, fit_lines,
                                noisy_warning, params_brief, params_text, render, spread_cell,
                                status_cell)
from clgemm.devices.hardware import Hardware, hardware_for_device
from clgemm.measure.bench.engine import MAX_REPEATS, MIN_REPEATS, TARGET_S
from clgemm.measure.bench.sets import MAX_SETS, ROTATE_BYTES, _release_memory
from clgemm.measure.bench.shape import DEFAULT_RUNGS, _clean, bench_shape
from clgemm.measure.ladder import default_repeats, provenance
from clgemm.model.bound import bound_for
from clgemm.rungs import get_rung

#: reference keys (JSON, CSV) per backend; NumPy's is always there
REF_LABEL = {"clblast": "CLBlast", "cublas": "cuBLAS", "numpy": "NumPy"}


def default_sizes(device: Any) -> list[Problem]:
    """Square powers of two, non-tile sizes, and LU-shaped trailing updates N x BS . BS x N
    (M = N, K = BS, as in Li, Dongarra and Tomov's GEMM study); smaller sets on a CPU."""
    squares: tuple[int, ...]
    odd: tuple[int, ...]
    lu_n: tuple[int, ...]
    lu_bs: tuple[int, ...]
    if device.is_cpu:
        squares, odd, lu_n, lu_bs = (256, 512, 1024, 2048), (1000, 1023), (1024, 2048), (64, 256)
    else:
        squares = (256, 512, 1024, 2048, 4096, 8192)
        odd, lu_n, lu_bs = (1000, 1023, 2049, 4097), (4096, 8192), (64, 128, 256)
    out = [Problem(s, s, s) for s in (*squares, *odd)]
    out += [Problem(n, n, bs) for n in lu_n for bs in lu_bs]
    return out


def shape_text(p: Problem) -> str:
    return f"{p.m}x{p.n}x{p.k}"


@dataclass
class BenchRun:
    device: Any
    rows: list[dict]
    settings: dict
    command: str = ""
    #: figures of the performance bound, None where none was computed
    hardware: Hardware | None = None

    @property
    def ref_keys(self) -> list[str]:
        vendor = vendor_blas(self.device.backend).key
        return ([vendor] if vendor else []) + ["numpy"]

    def to_json(self) -> dict:
        hw = self.hardware.to_json() if self.hardware else None
        return _scrub({"format": "clgemm-bench", "device": self.device.to_json(),
                       "settings": self.settings, "provenance": provenance(self.command),
                       "bound_hardware": hw, "rows": self.rows})

    def csv_rows(self) -> list[dict]:
        out = []
        for r in self.rows:
            best = r.get("best") or {}
            flat = {"m": r["shape"][0], "n": r["shape"][1], "k": r["shape"][2],
                    "status": r["status"], "note": r["note"], "input_sets": r["input_sets"],
                    "best_rung": best.get("rung"), "best_title": best.get("name"),
                    "best_params": " ".join(f"{k}={v}" for k, v in best.get("params", {}).items()),
                    "best_source": best.get("source"), "best_gemm_pick": best.get("gemm_pick"),
                    "best_ms": best.get("ms"), "best_kernel_ms": best.get("kernel_ms"),
                    "best_helper_ms": best.get("helper_ms"), "best_gflops": best.get("gflops"),
                    "best_rel_error": best.get("rel_error"), "best_repeats": best.get("repeats"),
                    "best_bound_gflops": (r.get("bound") or {}).get("gflops"),
                    "best_pct_of_bound": (r.get("bound") or {}).get("pct"),
                    "best_bound_limit": (r.get("bound") or {}).get("limit")}
            refs_by_key = {ref["key"]: ref for ref in r.get("references", [])}
            for key in self.ref_keys:
                ref = refs_by_key.get(key, {})
                flat[f"{key}_status"] = ref.get("status")
                flat[f"{key}_ms"] = ref.get("ms")
                flat[f"{key}_gflops"] = ref.get("gflops")
                flat[f"ratio_{key}"] = r.get("ratios", {}).get(key)
            out.append({k: ("" if v is None else v) for k, v in flat.items()})
        return out

    def csv_text(self) -> str:
        rows = self.csv_rows()
        if not rows:
            return ""
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return buf.getvalue()

    def table(self, layout: Layout = FULL) -> str:
        """One line per shape: the best rung, its time, the spread of its repeats and its
        bound, each library's GFLOP/s and the rung's speed over it. Fitted: the rung's short
        name, only the parameters that differ from its defaults, the libraries' own GFLOP/s
        left out first. A line under the table names every contender whose repeats spread too
        widely to trust."""
        repeats: list[tuple[str, Sequence[float] | None]] = []
        body = [_bench_row(r, self.ref_keys, layout.wide, repeats) for r in self.rows]
        d = self.device
        head = f"{d.name} ({d.backend}, {d.platform}, driver {d.driver_version})"
        table = render(_bench_columns(self.ref_keys, d.is_cpu), body, layout)
        foot = self._footer(table.shown, layout.wide, repeats)
        return "\n".join(fit_lines([head, table, *foot], layout))

    def _footer(self, shown: Sequence[str], wide: bool,
                repeats: list[tuple[str, Sequence[float] | None]]) -> list[str]:
        """The lines under the table: what its ratios and the columns it shows (`shown`) mean,
        why inputs rotate, which contenders are noisy, and what the bound rests on."""
        foot = ["x REF: the best rung's GFLOP/s over REF's (above 1: the rung is faster). Rung "
                "times include the transpose of B; all contenders timed interleaved, median."]
        if "spread" in shown:
            foot.append(SPREAD_NOTE + " (the best rung's)")
        if not wide:
            foot += [BRIEF_NOTE, "config: where the parameters came from; *: gemm()'s own pick"]
        if not self.device.is_cpu:
            foot.append("NumPy runs on the host CPU, not on the device.")
        rotated_rows = [r for r in self.rows if r.get("input_sets", 0) > 1]
        if rotated_rows:
            foot.append(f"Below {ROTATE_BYTES // 2**20} MiB of A+B+C the inputs rotate among "
                        f"several sets, so no call reads a cache warmed by the call before it.")
        foot += noisy_warning(repeats)
        if self.hardware and "% bound" in shown:
            foot.append("bound: the best rung's upper bound from the performance model, with the "
                        "transpose of B's DRAM traffic in the time as in the rung's; device "
                        "figures:")
            foot += self.hardware.summary()
            by_limit: dict[str, list[str]] = {}
            for r in self.rows:
                if r.get("bound"):
                    by_limit.setdefault(r["bound"]["limit"], []).append(
                        shape_text(Problem(*r["shape"])))
            foot += [f"  limited by {limit}: {', '.join(shapes)}"
                     for limit, shapes in by_limit.items()]
        return foot


def _num(x: Any, fmt: str) -> str:
    return "" if x is None else format(x, fmt)


def _bench_columns(ref_keys: list[str], is_cpu: bool) -> list[Column | str]:
    """The bench table's columns: the best rung's, then two per reference library (NumPy's
    marked as running on the host where the device is not the CPU)."""
    host = "" if is_cpu else " (host)"
    columns: list[Column | str] = [
        "shape", Column("best rung", wrap=12), Column("parameters", wrap=20),
        Column("config", wrap=8), Column("ms", drop=4),
        Column("spread", drop=5, right=True), "GFLOP/s", Column("bound", drop=1), "% bound"]
    for i, key in enumerate(ref_keys):
        label = REF_LABEL[key] + (host if key == "numpy" else "")
        columns += [Column(f"{label} GFLOP/s", short=label, drop=3 - i),
                    f"x {REF_LABEL[key]}"]
    columns.append(Column("notes", wrap=16))
    return columns


def _best_cells(best: dict, wide: bool) -> list[str]:
    """The best rung's name, parameters and where they came from; fitted, its short name and
    only the parameters that differ from its defaults."""
    config = best.get("source", "")
    if best.get("gemm_pick"):
        config += ", gemm's pick" if wide else "*"
    params = best.get("params", {})
    if best and not wide:
        params_cell = params_brief(params, get_rung(best["rung"]).defaults())
        name = f"{best['rung']} {get_rung(best['rung']).slug}"
    else:
        params_cell = params_text(params)
        name = f"{best['rung']} {best['name']}" if best else ""
    return [name, params_cell, config]


def _bench_row(r: dict, ref_keys: list[str], wide: bool,
               repeats: list[tuple[str, Sequence[float] | None]]) -> list[str]:
    """One shape's line of the bench table; the timed repeats of its contenders go to
    `repeats` (label, times)."""
    best = r.get("best") or {}
    shape = shape_text(Problem(*r["shape"]))
    if best:
        repeats.append((f"{shape} rung {best['rung']}", best.get("times_ms")))
    repeats += [(f"{shape} {REF_LABEL.get(ref['key'], ref['key'])}", ref.get("times_ms"))
                for ref in r.get("references", []) if ref.get("status") == "ok"]
    line = [shape, *_best_cells(best, wide), _num(best.get("ms"), ".3f"),
            spread_cell(best.get("times_ms")), _num(best.get("gflops"), ".1f"),
            _num((r.get("bound") or {}).get("gflops"), ".1f"),
            _num((r.get("bound") or {}).get("pct"), ".1f")]
    refs_by_key = {ref["key"]: ref for ref in r.get("references", [])}
    for key in ref_keys:
        ref = refs_by_key.get(key, {})
        line += [_num(ref.get("gflops"), ".1f") or status_cell(ref.get("status", "")),
                 _num(r.get("ratios", {}).get(key), ".2f")]
    line.append(status_cell(_notes(r)))
    return line


def _notes(row: dict) -> str:
    parts = [row["note"]] if row.get("note") else []
    for d in row.get("rungs", []):
        if d["status"] not in ("ok", "unsupported-size"):
            parts.append(f"rung {d['rung']} {d['status']}")
    for ref in row.get("references", []):
        if ref["status"] not in ("ok",):
            parts.append(f"{REF_LABEL.get(ref['key'], ref['key'])} {ref['status']}")
    return "; ".join(parts)


def _scrub(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _scrub(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_scrub(v) for v in x]
    return _clean(x)


def add_bound(row: dict, hardware: Hardware) -> None:
    """The best rung's performance bound on the row's shape (model.py), on the same footing as
    its time: the transpose of B's DRAM traffic included."""
    best = row.get("best")
    if not best or not best.get("gflops"):
        return
    b = bound_for(get_rung(best["rung"]), best["params"], Problem(*row["shape"]), hardware)
    if b is None:
        return
    row["bound"] = {"gflops": b.gflops_with_helpers(), "kernel_gflops": b.gflops,
                    "pct": b.percent(best["gflops"], helpers=True), "limit": b.limit,
                    "why": b.term(b.limit).detail}


def run_bench(device: Any, problems: Sequence[Problem], rungs: Sequence[int] | None = None,
              repeats: int | None = None, warmup: int | None = None, target_s: float = TARGET_S,
              rotate_bytes: int = ROTATE_BYTES, command: str = "",
              progress: Callable[[str], None] | None = None,
              hardware: Hardware | None = None, trial: Trial | None = None) -> BenchRun:
    """Every shape in turn on one backend of the device; `hardware` (by default the device's
    figures) gives each shape's best rung its performance bound; `trial` tries borrowed
    configurations in a child process first (`tuner.first_launch`)."""
    hardware = hardware or hardware_for_device(device)
    warmup = default_repeats(device)[0] if warmup is None else warmup
    load(device)  # a tuning database that cannot be read is refused now, not at the nth shape
    backend = open_backend(device)
    rows = []
    try:
        for i, p in enumerate(problems, 1):
            def say(msg: str, i=i, p=p) -> None:
                if progress:
                    progress(f"[{i}/{len(problems)}] {shape_text(p)}: {msg}")

            row = bench_shape(backend, device, p, rungs, repeats=repeats, warmup=warmup,
                              target_s=target_s, rotate_bytes=rotate_bytes, progress=say,
                              trial=trial)
            if row["status"] == "skipped":
                say(f"skipped: {row['note']}")
            add_bound(row, hardware)
            rows.append(row)
            _release_memory(backend)  # the shape's buffers, before the next one allocates
    finally:
        backend.release()
    settings = {"rungs": list(rungs) if rungs is not None else None,
                "default_rungs": list(DEFAULT_RUNGS), "warmup": warmup,
                "repeats": repeats, "adaptive_repeats": repeats is None,
                "target_s": target_s, "min_repeats": MIN_REPEATS,
                "max_repeats": MAX_REPEATS["CPU" if device.is_cpu else "GPU"],
                "rotate_bytes": rotate_bytes, "max_sets": MAX_SETS,
                "rung_time": "kernel + transpose of B (device events)"}
    return BenchRun(device, rows, settings, command, hardware)
