"""gemm()'s choices on an H200 replayed from the databases of tunes committed under results/,
nothing run: where a measured call said which choice is faster, the choice stays so."""

from __future__ import annotations

import dataclasses
import gzip
import shutil
from pathlib import Path

import pytest

from clgemm.configs import choice, lookup, splits
from clgemm.devices.info import DeviceInfo
from clgemm.devices.record import device_from_record
from clgemm.library import gemm as api
from clgemm.rungs.tiled import TILED, reads_b_itself
from clgemm.rungs.tiled_any import TILED_ANY

RESULTS = Path(__file__).resolve().parents[2] / "results" / "h100"
SEVENTH = RESULTS / "fresh-tune" / "seventh"
DEVICE_ALL = RESULTS / "device-all" / "plain"
OPENCL_DB = "opencl-nvidia-corporation-nvidia-h200-580.159.04.json.gz"


@pytest.fixture
def replayed(tmp_path, monkeypatch):
    """The OpenCL database of a committed tune, alone, and the H200 it was tuned on."""
    def use(folder: Path) -> DeviceInfo:
        with gzip.open(folder / OPENCL_DB) as packed, \
                open(tmp_path / OPENCL_DB.removesuffix(".gz"), "wb") as db:
            shutil.copyfileobj(packed, db)
        monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
        monkeypatch.setenv("CLGEMM_SHIPPED_TUNING", "0")
        api.clear_caches()
        lookup.forget()
        return device_from_record(str(SEVENTH / "large-opencl-fresh.json"))

    yield use
    api.clear_caches()
    lookup.forget()


def test_large_products_off_the_tiles_run_the_tiled_kernel_padded(replayed):
    """Through OpenCL, 4097 cubed and 2500x3500x4500 ran 10% and 3% faster on the tiled
    kernel padded than on the kernel for any size (results/h100/wave-launch), which the choice
    had expected faster while it counted a launch's last few groups as a whole wave."""
    h200 = replayed(SEVENTH)
    for shape in ((4097, 4097, 4097), (3500, 2500, 4500)):  # as the kernels see them
        assert choice.choose_kernel(h200, shape).rung == TILED.number, shape
    assert lookup.best_over_rungs(h200, (4097, 4097, 4097)).rung == TILED_ANY.number


def test_a_short_k_reads_b_in_one_launch_through_opencl(replayed):
    """With the `--device all` tune's database, 2048x2048x32 had run a pipeline behind its pack
    of B (30.4 us a call); counted at what a second launch costs through OpenCL, it reads B in
    one launch (17.4 us, results/h100/wave-launch)."""
    h200 = replayed(DEVICE_ALL)
    config = choice.choose_kernel(h200, (2048, 2048, 32))
    assert config.rung == TILED.number and reads_b_itself(config.params)


def test_a_tune_keeps_its_space_to_readers_only_where_the_least_launch_says_so():
    """Through OpenCL gemm() counts a second launch at 11 us, so reading B pays at
    4096x4096x128 there and not on the CUDA path; a tune keeps its space whole there, as the
    tunes that found a pipeline fastest at that shape measured it (results/h100/wave-launch).
    At 2048x2048x64 both figures say reading pays, and the tune's space is the readers'."""
    h200 = device_from_record(str(SEVENTH / "large-opencl-fresh.json"))
    cuda = dataclasses.replace(h200, backend="cuda")
    long_k, short_k = (4096, 4096, 128), (2048, 2048, 64)
    assert splits.read_b_pays(h200, long_k) and not splits.read_b_pays(cuda, long_k)
    assert not splits.read_b_pays_for_tune(h200, long_k)
    assert splits.read_b_pays_for_tune(h200, short_k) and splits.read_b_pays(cuda, short_k)
