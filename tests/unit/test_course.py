"""The course's parts on their own: block markers refill without touching prose, the macro and
tuned tables follow the registry, and `clgemm explain`."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from clgemm.core.errors import UsageError
from clgemm.core.paths import ROOT, TUNING
from clgemm.course.data import Device, Results, TunedEntry, TuningDatabase, load_results
from clgemm.course.pages import fill, find_blocks
from clgemm.course.tables import macros_block, tuned_block
from clgemm.rungs import Param, get_rung


def _clgemm(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clgemm", *args], capture_output=True, text=True,
                          timeout=120)


PAGE = """# Title

Prose before.
<!-- begin generated: one -->
old one
<!-- end generated: one -->
Prose between.
<!-- begin generated: two -->
two
<!-- end generated: two -->
Prose after.
"""


def test_fill_keeps_prose_and_names_changed_blocks():
    new, changed = fill(PAGE, {"one": "new one\n\nsecond line", "two": "two"})
    assert changed == ["one"]
    assert new == PAGE.replace("old one\n", "new one\n\nsecond line\n")
    again, changed = fill(new, {"one": "new one\n\nsecond line", "two": "two"})
    assert again == new and changed == []


@pytest.mark.parametrize("text,needle", [
    (PAGE.replace("<!-- end generated: one -->\n", ""), "begins inside block 'one'"),
    (PAGE.replace("<!-- begin generated: two -->\n", ""), "end of block 'two' without its begin"),
    (PAGE + "<!-- begin generated: one -->\nx\n<!-- end generated: one -->\n", "appears twice"),
    (PAGE.replace("<!-- end generated: two -->\n", ""), "'two' has no end marker"),
])
def test_malformed_markers_are_refused_by_name(text, needle):
    with pytest.raises(UsageError, match=needle):
        find_blocks(text, "page.md")


def test_missing_and_unknown_blocks_are_refused():
    with pytest.raises(UsageError, match="no block 'three'"):
        fill(PAGE, {"one": "", "two": "", "three": ""}, "page.md")
    with pytest.raises(UsageError, match="unknown generated block 'two'"):
        fill(PAGE, {"one": ""}, "page.md")


def test_macros_and_tuned_tables_follow_the_registry():
    rung = get_rung(6)
    grown = dataclasses.replace(rung, params=rung.params + (
        Param("VWM", (1, 2, 4), 2, "vector width of the A register block"),))
    text = macros_block(grown)
    assert "| `VWM` | 2 | 1, 2, 4 | vector width of the A register block |" in text
    for p in rung.params:
        assert f"| `{p.name}` | {p.default} |" in text
    # Entries tuned with a macro the rung no longer has are shown, without a geometry they no
    # longer have (a macro that was only added reads at its default: those entries still apply).
    grown = dataclasses.replace(grown, params=tuple(p for p in grown.params if p.name != "PAD"))
    results = load_results(ROOT / "results", TUNING)
    assert any(e.rung == 6 for db in results.databases for e in db.entries)
    old = tuned_block(rung, results)
    new = tuned_block(grown, results)
    assert "tuned before this rung's macros changed" in new
    assert "tuned before this rung's macros changed" not in old


@pytest.mark.parametrize("shape,groups", [
    ((1024, 1024, 1024), "256: 64 tiles of C × 4 slices of K (1.9 per compute unit)"),
    ((4096, 4096, 4096), "1024 (7.8 per compute unit)"),
])
def test_tuned_table_counts_the_slices_gemm_splits_k_into(shape, groups):
    """A stored configuration's work-groups are those gemm() launches at its shape: 128 x 128
    tiles leave half of 132 units idle at 1024 cubed, so K is split in four there."""
    params = {"TSM": 128, "TSN": 128, "TSK": 8, "WPTM": 8, "WPTN": 8, "WIDTH": 4}
    dev = Device(key="gpu", name="NVIDIA H100 80GB HBM3", backend="cuda", kind="GPU",
                 compute_units=132, local_mem_bytes=49152)
    db = TuningDatabase("db.json", dev, (TunedEntry(12, shape, params, 1000.0),))
    results = Results(folder=ROOT / "results", databases=[db])
    assert f"| {groups} |" in tuned_block(get_rung(12), results)


def test_explain_prints_summary_macros_and_diff():
    r = _clgemm("explain", "7")
    assert r.returncode == 0, r.stderr
    rung = get_rung(7)
    words = " ".join(r.stdout.split())  # prose and the macros' meanings wrap to the terminal
    for needle in (rung.title, rung.adds, rung.teaches, "--- clgemm/kernels/06_register_blocking.cl",
                   "+++ clgemm/kernels/07_wide_loads.cl", "SPREAD(v, A_SLOT)"):
        assert " ".join(needle.split()) in words
    for p in rung.params:
        assert p.name in r.stdout and " ".join(p.meaning.split()) in words
    first = _clgemm("explain", "1")
    assert first.returncode == 0 and "void gemm_naive" in first.stdout
    assert "+++ " not in first.stdout


@pytest.mark.parametrize("arg,needle", [("0", "there is no rung 0"), ("15", "there is no rung 15"),
                                        ("two", "'two' is not a valid integer")])
def test_explain_bad_rung_is_one_error_line(arg, needle):
    r = _clgemm("explain", arg)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0]


def test_devices_sharing_a_name_are_told_apart_by_driver(tmp_path):
    run = json.loads((ROOT / "results/h100/ladder-opencl-4096-tuned.json").read_text())
    (tmp_path / "results/a").mkdir(parents=True)
    (tmp_path / "results/b").mkdir()
    (tmp_path / "results/a/ladder.json").write_text(json.dumps(run))
    run["device"].update(driver_version="999.1", key="opencl-nvidia-h100-999.1")
    (tmp_path / "results/b/ladder.json").write_text(json.dumps(run))
    results = load_results(tmp_path / "results")
    labels = sorted(r.device.label for r in results.runs)
    assert labels == ["NVIDIA H100 80GB HBM3 (OpenCL, driver 580.159.04)",
                      "NVIDIA H100 80GB HBM3 (OpenCL, driver 999.1)"]
    alone = load_results(ROOT / "results")
    assert all("driver" not in r.device.label for r in alone.runs)


def _bench(name: str, backend: str, kind: str, rows: list) -> "object":
    from clgemm.course.data import Bench, Device

    device = Device(key=f"{backend}-{name}", name=name, backend=backend, kind=kind)
    return Bench(path=f"results/x/bench-{backend}.json", device=device, rows=tuple(rows))


def _bench_row(shape, best, **refs):
    return {"shape": list(shape), "best": {"gflops": best, "status": "ok"},
            "references": [{"key": k, "name": k, "gflops": v, "status": "ok"}
                           for k, v in refs.items()]}


def test_targets_compare_opencl_with_the_cuda_runs_cublas_and_name_the_worst_shape(tmp_path):
    from clgemm.course.data import Results
    from clgemm.course.targets import targets_block

    gpu = "Some GPU"
    opencl = _bench(gpu, "opencl", "GPU", [
        _bench_row((4096, 4096, 4096), 40.0, clblast=32.0),
        _bench_row((2049, 2049, 2049), 9.0, clblast=10.0),          # the worst large shape
        _bench_row((1023, 1023, 1023), 1.0, clblast=10.0),          # under 1024: not counted
        _bench_row((256, 256, 256), 1.0, clblast=4.0)])             # too small to count
    cuda = _bench(gpu, "cuda", "GPU", [_bench_row((4096, 4096, 4096), 45.0, cublas=50.0)])
    cpu = _bench("Some CPU", "opencl", "CPU", [
        _bench_row((1024, 1024, 1024), 60.0, clblast=20.0, numpy=200.0)])
    text = targets_block(Results(tmp_path, benches=[opencl, cuda, cpu]))
    assert "40.0 GFLOP/s, 80.0% of cuBLAS (target 80%), 1.25× CLBlast" in text
    assert "lowest 0.90× (at 2049³" in text
    assert "45.0 GFLOP/s, 90.0% of cuBLAS (50.0 GFLOP/s in the same run" in text
    assert "1024³: best rung 60.0 GFLOP/s, 3.00× CLBlast (target 3×), 30.0% of NumPy's" in text
    assert targets_block(Results(tmp_path)) == "No bench run in `results/` yet."


def test_effects_group_a_journal_by_the_named_parameters(tmp_path):
    from clgemm.course.data import Device, JournalFile
    from clgemm.course.effects import effect_table

    def rec(vwm, gflops, status="ok"):
        return {"rung": 12, "config": {"VWM": vwm, "TSM": 64}, "gflops": gflops, "status": status}

    journal = JournalFile("results/j.jsonl", Device("k", "GPU", "opencl", "GPU"), (64, 64, 64), {},
                          (rec(1, 10.0), rec(1, 20.0), rec(4, 40.0), rec(4, None, "wrong")))
    rows = [r.split(" | ")[:5] for r in effect_table([journal], 12, ["VWM"]).splitlines()[2:]]
    assert rows == [["| 1", "2", "0", "20.0", "50%"], ["| 4", "1", "1", "40.0", "100%"]]
    # the record's own TSM, and the defaults of what it does not name, e.g. PANELS=0
    assert "TSM=64" in effect_table([journal], 12, ["VWM"]) and "PANELS=0" in \
        effect_table([journal], 12, ["VWM"])


def test_a_run_without_a_rung_says_not_measured(tmp_path):
    """A ladder file made before a rung existed (no row for it) reads "not measured" on the
    rung's page and in the device's ladder table, and nothing breaks."""
    from clgemm.course.tables import ladder_table, measured_block

    run = json.loads((ROOT / "results/h100/ladder-opencl-4096-tuned.json").read_text())
    (tmp_path / "results/a").mkdir(parents=True)
    (tmp_path / "results/a/old.json").write_text(json.dumps(
        {**run, "rows": [r for r in run["rows"] if r["rung"] <= 8]}))
    new = dict(run, rows=[dict(r) for r in run["rows"] if r["rung"] <= 9])
    new["rows"].append({**new["rows"][-1], "rung": 9})
    new["device"] = {**run["device"], "key": "opencl-other", "name": "Other GPU"}
    (tmp_path / "results/a/new.json").write_text(json.dumps(new))
    results = load_results(tmp_path / "results")
    text = measured_block(get_rung(9), results)
    lines = [ln for ln in text.splitlines() if ln.startswith("| NVIDIA") or ln.startswith("| Other")]
    assert len(lines) == 2 and "not measured" in lines[0] and "not measured" not in lines[1]
    table = ladder_table([r for r in results.runs if r.device.key != "opencl-other"])
    assert "| 10 | [any size, bounds-checked](10-any-size.md) | not measured |" in table
    assert measured_block(get_rung(10), results) == \
        "No ladder run in `results/` holds this rung yet."


def test_beyond_page_describes_the_library_kernels():
    from clgemm.course import page_link
    from clgemm.rungs import LIBRARY

    index = (ROOT / "ladder/README.md").read_text()
    assert "(beyond.md)" in index
    page = (ROOT / "ladder/beyond.md").read_text()
    blocks = {b.name for b in find_blocks(page)}
    for n, rung in LIBRARY.items():
        assert f"## Kernel {n}: {rung.slug}\n" in page
        assert page_link(rung) == f"beyond.md#kernel-{n}-{rung.slug}"
        for part in ("summary", "diff", "macros", "measured", "tuned", "plots"):
            assert f"{rung.slug}-{part}" in blocks
        for p in rung.params:
            assert f"| `{p.name}` | {p.default} |" in page
    for words in ("register vectors", "straight from global", "panels", "LOCKSTEP",
                  "one launch"):
        assert words in page


def test_explain_a_library_kernel_against_what_it_builds_on():
    by_name = _clgemm("explain", "tiled")
    r = _clgemm("explain", "12")
    assert r.returncode == 0, r.stderr
    assert by_name.returncode == 0 and by_name.stdout == r.stdout  # a name or its number
    assert "kernel 12 ('tiled'" in r.stdout and "diff against rung 9" in r.stdout
    assert "+++ clgemm/kernels/tiled.cl" in r.stdout
    assert "beyond.md#kernel-12-tiled" in r.stdout
    r = _clgemm("explain", "13")
    assert "diff against kernel 12" in r.stdout and "+++ clgemm/kernels/tiled_any.cl" in r.stdout
