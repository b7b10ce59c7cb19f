"""The hardware figures the performance bound needs, each with where it came from.

OpenCL reports compute units, clock and local memory per work-group, but not how many FP32 lanes
a compute unit has, how wide its local memory is or how fast its DRAM is. Those come from a short
table of devices this project has numbers for, matched on the device's name and type; anything
else gets generic figures marked "assumed", and every figure can be replaced from the command
line. Each figure keeps its source so that a printed bound always says what it rests on: a bound
built on an assumed figure is only as good as that assumption.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from clgemm.core.errors import UsageError
from clgemm.devices.limits import DeviceLimits

DEVICE = "device"          # queried from the runtime
ASSUMED = "assumed"        # a generic guess: check it, or override it


@dataclass(frozen=True)
class Hardware:
    """Per compute unit unless named otherwise. "Sub-group" is the set of work-items that one
    instruction serves: a warp on NVIDIA, a vector of SIMD lanes on a CPU."""

    name: str
    #: which table row (or fallback) the figures come from
    kind: str
    device_type: str
    compute_units: int
    clock_mhz: float
    #: FP32 fused multiply-add lanes
    lanes_per_cu: float
    simd_width: int
    #: sub-group instructions issued per clock (all kinds together)
    issue_per_clock: float
    #: sub-group load instructions per clock
    loads_per_clock: float
    #: floats one work-item's load instruction moves at most: a wider vector in the source is
    #: read by several (NVIDIA: 128 bits per thread)
    widest_load_floats: int
    #: instructions one sub-group can issue per clock (a warp: 1; a CPU thread: several)
    subgroup_issue_per_clock: float
    #: local-memory bytes delivered per clock
    local_bytes_per_clock: float
    local_mem_per_cu: int
    #: None: registers do not limit how many work-groups are resident
    registers_per_cu: int | None
    max_registers_per_item: int | None
    max_items_per_cu: int
    max_groups_per_cu: int
    #: sub-groups whose instructions the unit can interleave to hide latency
    max_subgroups_per_cu: int
    #: clocks before an FMA's result can feed the next FMA
    fma_latency: float
    #: DRAM bandwidth of the whole device, GB/s
    mem_gbps: float
    #: whether the work-items of a sub-group always run together (GPU), so that a work-group
    #: smaller than a sub-group leaves lanes idle; a CPU compiler may vectorise otherwise
    lockstep: bool
    #: figure name -> where it came from (DEVICE, "table: ...", ASSUMED, "--option")
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def ghz(self) -> float:
        return self.clock_mhz / 1e3

    @property
    def peak_gflops(self) -> float:
        """FMA lanes x compute units x clock x 2 FLOPs per FMA."""
        return 2 * self.lanes_per_cu * self.compute_units * self.ghz

    @property
    def fma_per_clock(self) -> float:
        """Sub-group FMA instructions a compute unit completes per clock."""
        return self.lanes_per_cu / self.simd_width

    @property
    def local_gbps_per_cu(self) -> float:
        return self.local_bytes_per_clock * self.ghz

    def source(self, figure: str) -> str:
        return self.sources.get(figure, ASSUMED)

    def assumed(self) -> list[str]:
        """The figures that rest on a generic guess rather than the device or the table."""
        return [k for k, v in self.sources.items() if v == ASSUMED]

    def to_json(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["sources"] = dict(self.sources)
        d["peak_gflops"] = self.peak_gflops
        d["local_gbps_per_cu"] = self.local_gbps_per_cu
        return d

    def summary(self) -> list[str]:
        """Lines a reader can check: the peak and its factors, then the bandwidths, each with
        its source in brackets."""
        s = self.source
        lines = [f"{self.name}: figures from {self.kind}"]
        factors = (f"{self.lanes_per_cu:g} FP32 lanes/CU [{s('lanes_per_cu')}] x "
                   f"{self.compute_units} CUs [{s('compute_units')}] x {self.clock_mhz:g} MHz "
                   f"[{s('clock_mhz')}] x 2")
        if s("peak_gflops") == "derived":
            lines.append(f"  peak {self.peak_gflops:,.0f} GFLOP/s = {factors}")
        else:
            lines.append(f"  peak {self.peak_gflops:,.0f} GFLOP/s [{s('peak_gflops')}]")
        lines.append(f"  local memory {self.local_bytes_per_clock:g} B/clock/CU = "
                     f"{self.local_gbps_per_cu:,.0f} GB/s per CU [{s('local_bytes_per_clock')}]; "
                     f"DRAM {self.mem_gbps:,.0f} GB/s [{s('mem_gbps')}]")
        lines.append(f"  sub-group {self.simd_width} [{s('simd_width')}], issue "
                     f"{self.issue_per_clock:g}/clock/CU [{s('issue_per_clock')}], FMA latency "
                     f"{self.fma_latency:g} clocks [{s('fma_latency')}]")
        return lines


# -- the table -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Row:
    label: str
    device_type: str
    pattern: str
    figures: Mapping[str, Any]
    #: figures in this row that are guesses even for a matching device
    guessed: tuple[str, ...] = ()


#: one Hopper SM: 4 sub-partitions, each issuing one warp instruction per clock to 32 FP32 lanes;
#: 128 B/clock of shared memory (32 banks x 4 B); 228 KiB shared memory, 64 K registers
_HOPPER = dict(lanes_per_cu=128, simd_width=32, issue_per_clock=4, loads_per_clock=4,
               widest_load_floats=4, subgroup_issue_per_clock=1,
               local_bytes_per_clock=128, local_mem_per_cu=228 * 1024, registers_per_cu=65536,
               max_registers_per_item=255, max_items_per_cu=2048, max_groups_per_cu=32,
               max_subgroups_per_cu=64, fma_latency=4, lockstep=True,
               compute_units=132, clock_mhz=1980)

#: one x86 core: 2 FMA units and 2 loads per clock, 4 instructions issued per clock, one
#: work-group at a time (PoCL runs a work-group's items as a loop on one thread); its L1 cache
#: stands in for local memory; DRAM per core is a guess for a share of a server's bandwidth
_X86 = dict(issue_per_clock=4, loads_per_clock=2, subgroup_issue_per_clock=4,
            registers_per_cu=None,
            max_registers_per_item=None, max_items_per_cu=1 << 20, max_groups_per_cu=1,
            max_subgroups_per_cu=1, fma_latency=4, lockstep=False, compute_units=1,
            clock_mhz=2000)
_CPU_MEM_GBPS_PER_CORE = 15.0

TABLE: tuple[_Row, ...] = (
    _Row("the table (NVIDIA H200, Hopper)", "GPU", r"\bH200\b", {**_HOPPER, "mem_gbps": 4800}),
    _Row("the table (NVIDIA H100 PCIe, Hopper)", "GPU", r"\bH100\b.*PCIe",
         {**_HOPPER, "compute_units": 114, "clock_mhz": 1755, "mem_gbps": 2000}),
    _Row("the table (NVIDIA H100 SXM, Hopper)", "GPU", r"\bH100\b", {**_HOPPER, "mem_gbps": 3350}),
    _Row("the table (x86 with AVX-512: 2 FMA units x 16 lanes per core)", "CPU",
         r"avx-?512|znver[45]|sapphirerapids|emeraldrapids|graniterapids|icelake|cascadelake|"
         r"cooperlake|tigerlake",
         {**_X86, "lanes_per_cu": 32, "simd_width": 16, "local_bytes_per_clock": 128,
          "widest_load_floats": 16},
         guessed=("mem_gbps",)),
    _Row("the table (x86 with AVX2: 2 FMA units x 8 lanes per core)", "CPU",
         r"avx2|haswell|broadwell|skylake|kabylake|coffeelake|cometlake|alderlake|raptorlake|"
         r"znver[123]",
         {**_X86, "lanes_per_cu": 16, "simd_width": 8, "local_bytes_per_clock": 64,
          "widest_load_floats": 8},
         guessed=("mem_gbps",)),
)

#: when nothing in the table matches: generic figures, all marked assumed
_FALLBACK: dict[str, tuple[str, Mapping[str, Any]]] = {
    "CPU": ("assumed figures for a CPU (AVX2-class: 2 FMA units x 8 lanes per core)",
            {**_X86, "lanes_per_cu": 16, "simd_width": 8, "local_bytes_per_clock": 64,
             "widest_load_floats": 8}),
    "GPU": ("assumed figures for a GPU (64 FP32 lanes per compute unit)",
            dict(lanes_per_cu=64, simd_width=32, issue_per_clock=2, loads_per_clock=2,
                 widest_load_floats=4, subgroup_issue_per_clock=1,
                 local_bytes_per_clock=128, registers_per_cu=65536, max_registers_per_item=255,
                 max_items_per_cu=2048, max_groups_per_cu=32, max_subgroups_per_cu=64,
                 fma_latency=4, lockstep=True, compute_units=1, clock_mhz=1000, mem_gbps=1000)),
}

#: figures the device itself reports; the table's values are used only where it reports nothing
_QUERIED = ("compute_units", "clock_mhz")


def _row_for(name: str, device_type: str) -> _Row | None:
    for row in TABLE:
        if row.device_type == device_type and re.search(row.pattern, name, re.IGNORECASE):
            return row
    return None


def cpu_vector_floats(name: str) -> int:
    """The floats of one vector register of the CPU a device name stands for (PoCL puts its
    compiler target in the name), from the table's row, else the assumed CPU's: what sizes a
    CPU kernel's register block and a pack's squares."""
    row = _row_for(name, "CPU")
    figures = row.figures if row is not None else _FALLBACK["CPU"][1]
    return int(figures["simd_width"])


def kernel_vector_floats(name: str) -> int:
    """`cpu_vector_floats` within the vector widths the kernels are built for (4-16 floats):
    the side of a pack's squares and of the self-packing form's pieces of sums."""
    return max(4, min(16, cpu_vector_floats(name)))


# -- overrides -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Overrides:
    """Figures given on the command line; None leaves the table's or the assumed value."""

    peak_gflops: float | None = None
    #: local-memory bandwidth per compute unit, GB/s
    local_gbps: float | None = None
    mem_gbps: float | None = None

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                option = "--" + f.name.replace("_", "-")
                raise UsageError(f"{option} {v}: must be a positive number")


def hardware_for(name: str, limits: DeviceLimits, clock_mhz: float,
                 overrides: Overrides | None = None) -> Hardware:
    """The figures for a device: queried ones (compute units, clock, local memory per work-group)
    from the device, the rest from the table row its name matches, else assumed; then any
    command-line overrides."""
    device_type = "CPU" if limits.device_type == "CPU" else "GPU"
    row = _row_for(name, device_type)
    if row is not None:
        kind, table = row.label, row.figures
        sources = {k: ("table" if k not in row.guessed else ASSUMED) for k in table}
    else:
        kind, table = _FALLBACK[device_type]
        sources = {k: ASSUMED for k in table}
    figures = dict(table)
    if device_type == "CPU" and "mem_gbps" not in figures:
        figures["mem_gbps"] = _CPU_MEM_GBPS_PER_CORE * max(1, limits.compute_units)
        sources["mem_gbps"] = ASSUMED
    reported = {"compute_units": limits.compute_units, "clock_mhz": clock_mhz}
    for key in _QUERIED:
        if reported[key] and reported[key] > 0:
            figures[key], sources[key] = reported[key], DEVICE
    if device_type == "CPU":
        # One work-group at a time: local memory is whatever one group may have.
        figures["local_mem_per_cu"] = max(limits.local_mem_bytes, 1)
        sources["local_mem_per_cu"] = DEVICE
    elif "local_mem_per_cu" not in figures:
        # Unknown units: at least the one work-group the device promises room for.
        figures["local_mem_per_cu"] = limits.local_mem_bytes
        sources["local_mem_per_cu"] = ASSUMED
    sources["peak_gflops"] = "derived"
    hw = Hardware(name=name, kind=kind, device_type=device_type,
                  sources=sources, **figures)
    return apply_overrides(hw, overrides)


def apply_overrides(hw: Hardware, overrides: Overrides | None) -> Hardware:
    """A peak override sets the lanes per compute unit that give it at the device's clock and
    compute units (so every term that scales with the peak follows); a local bandwidth override
    sets the bytes per clock that give it."""
    if overrides is None:
        return hw
    sources = dict(hw.sources)
    changes: dict[str, Any] = {}
    if overrides.peak_gflops is not None:
        changes["lanes_per_cu"] = overrides.peak_gflops / (2 * hw.compute_units * hw.ghz)
        sources["lanes_per_cu"] = sources["peak_gflops"] = "--peak-gflops"
    if overrides.local_gbps is not None:
        changes["local_bytes_per_clock"] = overrides.local_gbps / hw.ghz
        sources["local_bytes_per_clock"] = "--local-gbps"
    if overrides.mem_gbps is not None:
        changes["mem_gbps"] = overrides.mem_gbps
        sources["mem_gbps"] = "--mem-gbps"
    return dataclasses.replace(hw, sources=sources, **changes)


def hardware_for_device(device: Any, overrides: Overrides | None = None) -> Hardware:
    """`hardware_for` a DeviceInfo (or anything with name, clock_mhz and limits())."""
    return hardware_for(device.name, device.limits(), device.clock_mhz, overrides)


def hardware_from_record(record: Mapping[str, Any], overrides: Overrides | None = None
                         ) -> Hardware:
    """`hardware_for` a device as a ladder or bench JSON file records it (its "device"), so a
    committed result can be set against the bound without the device at hand."""
    limits = DeviceLimits(compute_units=int(record.get("compute_units") or 0),
                          device_type=str(record.get("type", "GPU")),
                          local_mem_bytes=int(record.get("local_mem_bytes") or 0),
                          compute_capability=str(record.get("compute_capability") or ""))
    return hardware_for(str(record.get("name", "")), limits,
                        float(record.get("clock_mhz") or 0), overrides)
