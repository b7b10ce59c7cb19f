"""clgemm: a portable OpenCL SGEMM kernel ladder, tuner and benchmark.

The Python API is this module's names: `gemm`, `matmul` and `gemm_buffers` multiply,
`devices` lists what they can run on, `configure` says which kernel and parameters a device
would run, and `tune` tunes a device as `clgemm tune` does. docs/python.md describes them with examples.
"""

from __future__ import annotations

from typing import Sequence as _Sequence

from clgemm.backends import list_devices as _list_devices
from clgemm.backends import registry as _registry
from clgemm.configs.configuration import Config
from clgemm.configs.configuration import configure as _configure
from clgemm.core.errors import UsageError as _UsageError
from clgemm.core.problem import Problem as _Problem
# Lowest layer first, as tests/unit/test_house.py orders them; this package is the layer on top.
# What the functions below use themselves carries a leading underscore: the namespace holds
# the public API alone.
from clgemm.core.version import __version__
from clgemm.devices.info import DeviceInfo
from clgemm.library.gemm import choose_kernel as _choose_kernel
from clgemm.library.gemm import gemm, gemm_buffers, gemm_buffers_batched, matmul
from clgemm.measure.ladder import default_size as _default_size
from clgemm.rungs import get_rung as _get_rung
from clgemm.rungs import parse_rungs as _parse_rungs
from clgemm.tuner.tune_run import TuneResult, tune

# `from __future__ import annotations` binds its feature flag as a module name; annotations
# stay strings without it.
del annotations


def devices() -> list[DeviceInfo]:
    """Every device clgemm can run on, numbered as `clgemm devices` numbers them, so that an
    index from the command line means the same device here (`gemm(..., device=2)`)."""
    return _list_devices()


def configure(device: DeviceInfo | str | int | None = None, rung: int | str | None = None,
              shape: int | _Sequence[int] | None = None, *,
              backend: str | None = None) -> Config:
    """The kernel and parameters a device would run, and where the parameters came from.

    With `rung` (1-10, or a library kernel: 11 or "direct", 12 or "tiled", 13 or "tiled-any"):
    that kernel's configuration at `shape`, as `clgemm ladder` and `clgemm bench` run it.
    Without: the kernel gemm() chooses for that shape, with its configuration. `shape` is
    M, N, K as the kernels see them (column-major, as in BLAS), or one size for a square
    product; by default the ladder's size for the device (512 on a CPU, 4096 on a GPU).
    `device` is an index from `devices()`, a part of a device's name, or a DeviceInfo (default:
    $CLGEMM_DEVICE's, else the first CPU device; with `backend`, that backend's first device).
    The answer's `source` names the level of the lookup chain it came from ("tuned",
    "family: NAME", "default: CPU", ...) or "default" for the kernel's own parameters."""
    dev = _registry.device_info(device, _registry.split_backend(backend)[1])
    if shape is None:
        shape = _default_size(dev)
    dims = (shape,) * 3 if isinstance(shape, int) else tuple(shape)
    if len(dims) != 3:
        raise _UsageError(f"shape={shape!r}: give one size or three (M, N, K)")
    m, n, k = _Problem(*dims).as_tuple()
    if rung is None:
        return _choose_kernel(dev, m, n, k)
    numbers = _parse_rungs(rung) if isinstance(rung, str) else [_get_rung(rung).number]
    if len(numbers) != 1:
        raise _UsageError(f"rung={rung!r}: name one kernel, not {len(numbers)}")
    return _configure(dev, numbers[0], (m, n, k))


__all__ = ["Config", "DeviceInfo", "TuneResult", "__version__", "configure", "devices", "gemm",
           "gemm_buffers", "gemm_buffers_batched", "matmul", "tune"]


def __dir__() -> list[str]:
    """The public API only: the submodules the imports above bind as attributes (`api`,
    `errors`, ...) stay importable by name but are not part of it."""
    return sorted(__all__)
