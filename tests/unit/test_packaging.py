"""What an installed wheel holds and where an installed clgemm writes.

The package reads its kernel sources and the project's tuning databases from inside itself
(`clgemm/core/paths.py`), so a file that setup.cfg's package_data does not name is missing from every
wheel, and clgemm fails there on the first rung while every test run from the checkout passes.
These tests ask setuptools which data files it would put in the wheel, as `pip wheel .` does,
and compare them with what the checkout holds and what the code reads. `.ci/wheel-test` then
builds and installs the wheel for real.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from setuptools.dist import Distribution

from clgemm.cli import main
from clgemm.configs import database
from clgemm.core import paths
from clgemm.rungs import ALL_RUNGS


def _shipped(monkeypatch) -> set[Path]:
    """The data files setuptools would build into the wheel from setup.cfg, as absolute paths."""
    monkeypatch.chdir(paths.ROOT)
    dist = Distribution()
    dist.parse_config_files(["setup.cfg"])
    build_py = dist.get_command_obj("build_py")
    build_py.ensure_finalized()
    return {(paths.ROOT / src / name).resolve()
            for _, src, _, names in build_py.data_files for name in names}


def _files(folder: Path) -> set[Path]:
    """Every file of a package-data folder (lock files of a database are local, not data)."""
    return {p.resolve() for p in folder.rglob("*") if p.is_file()
            and "__pycache__" not in p.parts and not p.name.endswith(".lock")}


def test_every_kernel_file_and_shipped_database_is_package_data(monkeypatch):
    shipped = _shipped(monkeypatch)
    present = _files(paths.KERNELS) | _files(paths.TUNING)
    assert any(p.suffix == ".cl" for p in present) and any(p.suffix == ".json" for p in present)
    missing = sorted(str(p.relative_to(paths.ROOT)) for p in present - shipped)
    assert not missing, (f"not named by setup.cfg's [options.package_data], so no wheel holds "
                         f"them: {missing}")


def test_every_kernel_file_the_code_names_is_shipped(monkeypatch):
    """The files the rung records and the modules name (helpers, headers) exist and are data."""
    shipped = _shipped(monkeypatch)
    named = {"common.h"}
    for rung in ALL_RUNGS.values():
        named |= {rung.file, *(h.file for h in rung.helpers)}
    for module in paths.PACKAGE.rglob("*.py"):
        named |= set(re.findall(r"[\"'](\w+\.(?:cl|h))[\"']", module.read_text()))
    lacking = sorted(n for n in named if (paths.KERNELS / n).resolve() not in shipped)
    assert not lacking, f"named in clgemm/ but not shipped from clgemm/kernels/: {lacking}"


def test_every_committed_tuning_database_is_shipped():
    """A database left in results/ (where CLGEMM_RESULTS=results puts one) would be read by the
    course but by no install: the project's databases belong in clgemm/tuning/."""
    stray = []
    for path in sorted(paths.RESULTS.rglob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("format") == database.FORMAT:
            stray.append(str(path.relative_to(paths.ROOT)))
    assert not stray, f"tuning databases outside {paths.TUNING_REL}/, so never shipped: {stray}"


def test_the_shipped_databases_are_read_and_never_written(monkeypatch, tmp_path):
    monkeypatch.delenv("CLGEMM_RESULTS", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    roots = database.read_roots()
    assert roots[-1] == paths.TUNING and paths.TUNING.is_relative_to(paths.PACKAGE)
    assert not roots[0].is_relative_to(paths.PACKAGE)
    assert not database.results_dir().is_relative_to(paths.PACKAGE)
    assert not database.database_path("some-device").is_relative_to(paths.PACKAGE)
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path / "mine"))
    assert database.read_roots() == [tmp_path / "mine", paths.TUNING]
    monkeypatch.setenv("CLGEMM_SHIPPED_TUNING", "0")
    assert database.read_roots() == [tmp_path / "mine"]


def test_report_outside_a_checkout_is_one_error_line(monkeypatch, tmp_path, capsys):
    """Installed from a wheel, the folder above the package is site-packages: no ladder/, no
    results/. `clgemm report` says so in one line and exits 2, writing nothing."""
    monkeypatch.setattr(paths, "ROOT", tmp_path)
    assert main(["report", "--check"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: clgemm report needs a checkout")
    assert list(tmp_path.iterdir()) == []


def _distribution(monkeypatch) -> Distribution:
    monkeypatch.chdir(paths.ROOT)
    dist = Distribution()
    dist.parse_config_files(["setup.cfg"])
    return dist


def test_every_course_page_is_installed_beside_the_package(monkeypatch):
    """`clgemm explain` names a page of the course; a wheel installs them all under its
    prefix (share/clgemm/ladder), from the checkout's own ladder/, not from copies."""
    dist = _distribution(monkeypatch)
    installed = {str(paths.COURSE_DATA): set()}
    for folder, names in dist.data_files:
        for pattern in names:
            installed.setdefault(folder, set()).update(
                p.resolve() for p in paths.ROOT.glob(pattern))
    pages = {p.resolve() for p in (paths.ROOT / "ladder").glob("*.md")}
    assert pages and installed[str(paths.COURSE_DATA)] == pages


def test_the_metadata_names_its_authors_and_no_address_it_does_not_have(monkeypatch):
    meta = _distribution(monkeypatch).metadata
    assert meta.author and meta.license == "MIT" and meta.keywords and meta.classifiers
    assert not meta.url and not meta.project_urls  # no public address exists to name


def _page_named(capsys, rung: str) -> Path:
    assert main(["explain", rung, "--wide"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines()
                if ln.startswith("  page:"))
    return Path(line.split()[1].split("#")[0])


def test_explain_names_a_page_that_exists_from_anywhere(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # not the checkout: a relative ladder/ would name nothing
    for rung in ("6", "tiled"):
        page = _page_named(capsys, rung)
        assert page.is_absolute() and page.is_file(), page


def test_installed_the_course_is_found_under_the_prefix(capsys, monkeypatch, tmp_path):
    """Installed from a wheel, the folder above the package has no ladder/: the pages are in
    the environment's share/clgemm/ladder, and explain names them there."""
    prefix = tmp_path / "venv"
    course = prefix / paths.COURSE_DATA
    course.mkdir(parents=True)
    for page in (paths.ROOT / "ladder").glob("*.md"):
        (course / page.name).write_text(page.read_text())
    monkeypatch.setattr(paths, "ROOT", tmp_path / "site-packages")
    monkeypatch.setattr(paths.sysconfig, "get_path", lambda name, scheme=None: str(prefix))
    assert paths.course_folder() == course
    assert _page_named(capsys, "6") == course / "06-register-blocking.md"
    for page in course.iterdir():
        page.unlink()
    assert paths.course_folder() is None
    assert main(["explain", "6"]) == 0
    assert "ladder/06-register-blocking.md in the clgemm repository" in capsys.readouterr().out


def test_the_package_says_it_is_typed(monkeypatch):
    """py.typed (PEP 561) ships, so a user's type checker reads clgemm's annotations."""
    assert (paths.PACKAGE / "py.typed").is_file()
    assert (paths.PACKAGE / "py.typed").resolve() in _shipped(monkeypatch)
