"""Hardware counters of one kernel launch, read from Nsight Compute's text output.

The bound (`model/bound.py`) says what a kernel's source cannot get past; counters say what the
launch did. Setting the two side by side is how the gap between them gets a name, so the
counters are read here from what `ncu` prints (its section tables, and the list `--metrics`
prints), which a user can save with a shell redirect and commit, rather than from a report
format that needs NVIDIA's tools to open.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping

from clgemm.core.errors import UsageError
from clgemm.core.files import read_text

#: how `ncu` heads one launch: "  name (64, 64, 1)x(8, 4, 1), Context 1, Stream 7, ..."
_LAUNCH = re.compile(r"^\s+(\S+) \((\d+), (\d+), (\d+)\)x\((\d+), (\d+), (\d+)\), Context")
_NUMBER = re.compile(r"^-?[\d,]*\.?\d+$")
_STALL = re.compile(r"smsp__average_warps_issue_stalled_(\w+)_per_issue_active\.ratio")

#: the counters an account needs, by the names `ncu` prints them under (a section's row, or a
#: metric of --metrics); the first name found is taken
_NEEDED: Mapping[str, tuple[str, ...]] = {
    "elapsed_cycles": ("Elapsed Cycles", "sm__cycles_elapsed.max"),
    "active_cycles": ("SM Active Cycles", "sm__cycles_active.avg"),
    "executed": ("Executed Instructions", "smsp__inst_executed.sum"),
    "ffma_threads": ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",),
    "sms": ("# SMs",),
}
_OPTIONAL: Mapping[str, tuple[str, ...]] = {
    "sm_ghz": ("SM Frequency",),
    "duration_ms": ("Duration",),
    "registers": ("Registers Per Thread",),
    "warps_per_sm": ("Achieved Active Warps Per SM",),
    "warps_per_scheduler": ("Active Warps Per Scheduler",),
    "block_limit_registers": ("Block Limit Registers",),
    "block_limit_shared": ("Block Limit Shared Mem",),
    "shared_loads": ("smsp__inst_executed_op_shared_ld.sum",),
    "ldgsts": ("smsp__inst_executed_op_ldgsts.sum",),
    "global_loads": ("smsp__inst_executed_op_global_ld.sum",),
}
#: unit -> factor to the unit the field holds (ms, GHz)
_SCALE = {"duration_ms": {"ms": 1.0, "msecond": 1.0, "us": 1e-3, "usecond": 1e-3,
                          "ns": 1e-6, "nsecond": 1e-6, "s": 1e3, "second": 1e3},
          "sm_ghz": {"ghz": 1.0, "mhz": 1e-3, "hz": 1e-9, "cycle/nsecond": 1.0,
                     "cycle/usecond": 1e-3}}


class CountersError(UsageError):
    """A counters file that cannot be read as one launch's counters."""


@dataclass(frozen=True)
class Counters:
    """One launch: the figures that multiply to its share of the FMA peak, and those that say
    why each factor is what it is."""

    source: str
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    elapsed_cycles: float
    active_cycles: float
    executed: float
    ffma_threads: float
    sms: int
    sm_ghz: float | None = None
    duration_ms: float | None = None
    registers: float | None = None
    warps_per_sm: float | None = None
    warps_per_scheduler: float | None = None
    block_limit_registers: float | None = None
    block_limit_shared: float | None = None
    shared_loads: float | None = None
    ldgsts: float | None = None
    global_loads: float | None = None
    #: stall reason -> warps stalled for it per issued instruction
    stalls: Mapping[str, float] = field(default_factory=dict)

    @property
    def block_size(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def grid_size(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]


def _value(cells: list[str]) -> tuple[str, str, float] | None:
    """(name, unit, value) of a table row, or None where its last cell is not a number."""
    if len(cells) < 2 or not _NUMBER.match(cells[-1]):
        return None
    unit = cells[1] if len(cells) >= 3 else ""
    return cells[0], unit, float(cells[-1].replace(",", ""))


Launch = tuple[str, tuple[int, ...]]
Rows = dict[str, tuple[str, float]]


def _rows(text: str, where: str) -> tuple[Launch, Rows]:
    """The launch's heading and its rows, name -> (unit, value); refuses a file of several
    launches, whose counters would mix."""
    launches = [m for line in text.splitlines() if (m := _LAUNCH.match(line))]
    if not launches:
        raise CountersError(f"{where} holds no launch as Nsight Compute prints one "
                            f"('  name (x, y, z)x(x, y, z), Context ...')")
    heads = {(m.group(1), tuple(int(g) for g in m.groups()[1:])) for m in launches}
    if len(heads) > 1:
        raise CountersError(f"{where} holds {len(heads)} different launches; profile one "
                            f"(ncu --launch-count 1) per file")
    rows: Rows = {}
    for line in text.splitlines():
        if line.startswith("#") or line.startswith("=="):
            continue
        # name, unit and value, two spaces or more apart; a value may follow its unit by one
        row = _value(re.split(r"\s{2,}|\s(?=[\d,.]+$)", line.strip()))
        if row is not None:
            rows.setdefault(row[0], (row[1], row[2]))
    return heads.pop(), rows


def _pick(rows: Mapping[str, tuple[str, float]], names: tuple[str, ...], key: str
          ) -> float | None:
    for name in names:
        if name in rows:
            unit, value = rows[name]
            scale = _SCALE.get(key)
            if scale is not None:
                factor = scale.get(unit.lower())
                if factor is None:
                    return None
                value *= factor
            return value
    return None


def parse_counters(texts: Mapping[str, str]) -> Counters:
    """The counters of one launch from one or more of `ncu`'s printouts of it (name -> text):
    the sections in one run and the metrics in another, say. The first file that has a
    counter gives it; every file must be of the same kernel, grid and block."""
    heads: set[Launch] = set()
    rows: Rows = {}
    for where, text in texts.items():
        head, found = _rows(text, where)
        heads.add(head)
        for name, row in found.items():
            rows.setdefault(name, row)
    if len(heads) > 1:
        raise CountersError(f"{', '.join(texts)} are of different launches "
                            f"({'; '.join(f'{n} {d}' for n, d in sorted(heads))}); give the "
                            f"files of one")
    (kernel, dims), = heads
    values: dict[str, float | None] = {}
    for key, names in {**_NEEDED, **_OPTIONAL}.items():
        values[key] = _pick(rows, names, key)
    missing = [names[0] for key, names in _NEEDED.items() if not values[key]]
    if missing:
        raise CountersError(f"{', '.join(texts)} lack {', '.join(missing)}: run ncu with the "
                            f"sections SpeedOfLight, InstructionStats and LaunchStats, and "
                            f"--metrics smsp__sass_thread_inst_executed_op_ffma_pred_on.sum")
    stalls = {m.group(1): value for name, (_, value) in rows.items()
              if (m := _STALL.fullmatch(name))}
    required = {key: float(values.pop(key) or 0) for key in _NEEDED}
    return Counters(source=", ".join(texts), kernel=kernel,
                    grid=(dims[0], dims[1], dims[2]), block=(dims[3], dims[4], dims[5]),
                    elapsed_cycles=required["elapsed_cycles"],
                    active_cycles=required["active_cycles"], executed=required["executed"],
                    ffma_threads=required["ffma_threads"], sms=int(required["sms"]),
                    stalls=stalls, **values)


def read_counters(paths: tuple[str, ...]) -> Counters:
    """`parse_counters` of files (`read_text` refuses what is not a small regular UTF-8 file)."""
    return parse_counters({path: read_text(path, "counters file") for path in paths})
