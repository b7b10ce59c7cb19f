"""`clgemm report` on the committed pages and on a copy of them: staleness is found and named,
new results are discovered, regeneration is exact, and plots are optional."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from clgemm.cli import main
from clgemm.core.paths import ROOT, TUNING_REL
from clgemm.course import page_name
from clgemm.course.build import report
from clgemm.course.data import load_results
from clgemm.course.pages import find_blocks
from clgemm.rungs import REGISTRY, get_rung

NO_MATPLOTLIB = "import sys; sys.modules['matplotlib'] = None; "


def _clgemm(*args: str, prelude: str = "") -> subprocess.CompletedProcess:
    code = prelude + "import sys; from clgemm.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=300)


def test_committed_pages_are_up_to_date_without_matplotlib():
    r = _clgemm("report", "--check", prelude=NO_MATPLOTLIB)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "up to date" in r.stdout


@pytest.fixture()
def checkout(tmp_path):
    """A copy of the parts of the repository that the report reads and writes."""
    for name in ("results", "ladder", TUNING_REL):
        shutil.copytree(ROOT / name, tmp_path / name)
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    # the tiling pictures are drawn from the kernels and the module that reads them
    shutil.copytree(ROOT / "clgemm" / "kernels", tmp_path / "clgemm" / "kernels")
    (tmp_path / "clgemm" / "course").mkdir()
    shutil.copy(ROOT / "clgemm" / "course" / "tiling.py", tmp_path / "clgemm" / "course")
    return tmp_path


def test_hand_edits_inside_a_block_are_stale_and_outside_are_kept(checkout):
    page = checkout / "ladder" / page_name(get_rung(3))
    text = page.read_text()
    assert report(checkout, write=False).stale_blocks == []
    page.write_text(text.replace("## The idea", "## The idea, reworded"))
    assert report(checkout, write=False).stale_blocks == []
    measured = find_blocks(text)[[b.name for b in find_blocks(text)].index("measured")]
    edited = text[:measured.start] + "| typed | by hand |\n" + text[measured.end:]
    page.write_text(edited.replace("## The idea", "## The idea, reworded"))
    out = report(checkout, write=False)
    assert out.stale_blocks == [f"ladder/{page.name}: measured"]
    assert page.read_text().count("typed | by hand") == 1      # --check wrote nothing
    report(checkout, write=True, draw=False)
    fixed = page.read_text()
    assert "typed | by hand" not in fixed and "## The idea, reworded" in fixed


def test_new_device_is_discovered_and_flagged_until_regenerated(checkout):
    src = json.loads((checkout / "results/h100/ladder-opencl-4096-tuned.json").read_text())
    src["device"].update(name="Example GPU 9000", key="opencl-example-gpu-9000-1.0",
                         driver_version="1.0")
    for row in src["rows"]:
        row["gflops"] = row["gflops"] * 1.5 if row["gflops"] else None
    (checkout / "results/example").mkdir()
    (checkout / "results/example/ladder-opencl-4096-tuned.json").write_text(json.dumps(src))

    out = report(checkout, write=False)
    stale = set(out.stale_blocks)
    assert {"ladder/README.md: devices", "ladder/README.md: ladders",
            "results/README.md: runs"} <= stale
    for rung in REGISTRY.values():
        assert f"ladder/{page_name(rung)}: measured" in stale
    assert any("example-gpu-9000" in p for p in out.stale_plots)

    report(checkout, write=True, draw=False)
    again = report(checkout, write=False)
    assert again.stale_blocks == []
    assert [p for p in again.stale_plots] == [p for p in out.stale_plots]  # plots still to draw
    page = (checkout / "ladder" / page_name(get_rung(7))).read_text()
    expected = f"{src['rows'][6]['gflops']:,.1f}"
    assert "Example GPU 9000 (OpenCL)" in page and expected in page


def test_check_command_names_stale_blocks_and_exits_1(checkout, monkeypatch, capsys):
    import clgemm.core.paths

    page = checkout / "ladder" / "README.md"
    text = page.read_text()
    devices = next(b for b in find_blocks(text) if b.name == "devices")
    page.write_text(text[:devices.start] + "stale\n" + text[devices.end:])
    monkeypatch.setattr(clgemm.core.paths, "ROOT", checkout)
    assert main(["report", "--check"]) == 1
    captured = capsys.readouterr()
    assert "stale: ladder/README.md: devices" in captured.out
    assert captured.err.strip().startswith("error: 1 generated part(s) are stale")


def test_report_without_matplotlib_writes_pages_and_says_how_to_install(checkout, monkeypatch):
    for png in (checkout / "results" / "plots").glob("ladder-*.png"):
        png.unlink()
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    said: list[str] = []
    out = report(checkout, write=True, say=said.append)
    assert out.plots_skipped and out.drawn == []
    hint = [s for s in said if "matplotlib" in s]
    assert len(hint) == 1 and "pip install 'clgemm[plots]'" in hint[0]
    assert out.stale_plots and all("ladder-" in p for p in out.stale_plots)


def test_plots_are_drawn_and_recorded(checkout):
    pytest.importorskip("matplotlib")
    from clgemm.course import plots

    results = load_results(checkout / "results")
    specs = plots.plan(results)
    one_each = [next(s for s in specs if s.kind == kind)
                for kind in ("ladder", "bench", "landscape", "wg-shapes")]
    folder = checkout / "results" / "plots"
    for s in one_each:
        (folder / s.name).unlink()
    assert {s.name for s in plots.out_of_date(specs, checkout)} == {s.name for s in one_each}
    drawn = plots.draw_all(specs, results, checkout)
    assert sorted(drawn) == sorted(s.name for s in one_each)
    for s in one_each:
        assert (folder / s.name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert plots.out_of_date(specs, checkout) == []
