"""What the kernel-only sweeps against cuBLAS share (register_block_sweep.py,
register_cap_sweep.py, read_b_pipeline_sweep.py): the backend measured, with the CUDA path
beside it for cuBLAS's SGEMM where the device has one, and cuBLAS's time in each round."""

import time
from typing import Any

from clgemm.core.problem import Problem
from clgemm.library import gemm as api
from clgemm.measure.references import vendor_reference
from clgemm.measure.rung_runner import Workspace


def backends(dev: str, backend_name: str) -> tuple[Any, Any]:
    """(the backend measured, the one whose vendor SGEMM is timed beside it), with the run's
    header printed: cuBLAS beside OpenCL too where the device has the CUDA path, else the
    backend's own vendor SGEMM."""
    be = api.backend_for(dev, backend_name)
    try:
        vendor = be if backend_name == "cuda" else api.backend_for(dev, "cuda")
    except Exception as exc:  # noqa: BLE001 - any reason: the backend's own vendor SGEMM instead
        print(f"# no CUDA path ({exc}): the vendor SGEMM is the backend's own", flush=True)
        vendor = be
    print(f"# {be.device.name} ({backend_name}), "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)
    return be, vendor


def workspaces(be: Any, vendor: Any, problem: Problem) -> tuple[Workspace, Workspace]:
    """The operands on the measured backend, and on the vendor's where that is another."""
    ws = Workspace(be, problem)
    return ws, ws if vendor is be else Workspace(vendor, problem)


def vendor_round(vendor: Any, ref_ws: Workspace, runs: dict[str, list[float]]) -> str:
    """One timing of the vendor's SGEMM into runs["vendor"]; its name."""
    ref = vendor_reference(vendor, ref_ws, warmup=2, repeats=10)
    runs.setdefault("vendor", []).append(ref["gflops"] or 0.0)
    return str(ref["name"])
