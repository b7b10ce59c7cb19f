"""Every environment variable clgemm reads goes through `clgemm.core.settings`: no other module reads
`os.environ` or calls `os.getenv`, and each accessor parses its variable one way (empty is unset,
blanks and words it does not know are refused naming the variable)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from clgemm.backends import registry
from clgemm.configs.database import read_roots, results_dir, user_results_dir
from clgemm.core import settings
from clgemm.core.errors import UsageError
from clgemm.core.paths import TUNING

PACKAGE = Path(__file__).resolve().parents[2] / "clgemm"
READERS = {"environ", "environb", "getenv", "getenvb"}


def env_reads(source: str) -> list[int]:
    """The lines that read the environment: `os.environ` (but for setting or deleting one
    variable, for a child process), `os.getenv`, and either imported from `os` by name."""
    tree = ast.parse(source)
    writes = {id(node.value) for node in ast.walk(tree)
              if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del))}
    lines = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr in READERS
                and isinstance(node.value, ast.Name) and node.value.id == "os"
                and id(node) not in writes):
            lines.append(node.lineno)
        elif (isinstance(node, ast.ImportFrom) and node.module == "os"
              and any(a.name in READERS for a in node.names)):
            lines.append(node.lineno)
    return sorted(lines)


def test_only_settings_reads_the_environment():
    found = {str(p.relative_to(PACKAGE)): env_reads(p.read_text())
             for p in sorted(PACKAGE.rglob("*.py")) if p.name != "settings.py"}
    assert {name: lines for name, lines in found.items() if lines} == {}


def test_env_reads_tells_reads_from_writes():
    source = ("import os\nfrom os import getenv\na = os.environ.get('X')\nb = os.getenv('Y')\n"
              "os.environ['Z'] = '1'\ndel os.environ['Z']\nc = dict(os.environ)\n")
    assert env_reads(source) == [2, 3, 4, 7]
    assert env_reads(Path(settings.__file__).read_text())  # the one place that reads


@pytest.fixture
def clean(monkeypatch):
    for name in (settings.DEVICE, settings.RESULTS, settings.SHIPPED_TUNING,
                 settings.CLBLAST_LIB, settings.LIBRARY_PATH, settings.CUPY_TF32,
                 settings.NO_COLOR, settings.XDG_DATA_HOME):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_unset_and_empty_mean_the_default(clean):
    for value in (None, ""):
        if value is not None:
            for name in (settings.DEVICE, settings.RESULTS, settings.SHIPPED_TUNING,
                         settings.CLBLAST_LIB, settings.LIBRARY_PATH, settings.CUPY_TF32,
                         settings.NO_COLOR):
                clean.setenv(name, value)
        assert settings.device() is None
        assert settings.results() is None
        assert settings.shipped_tuning() is True
        assert settings.clblast_library() is None
        assert settings.library_path() == []
        assert settings.cupy_tf32() is False
        assert settings.no_color() is False
    assert results_dir() == user_results_dir()


def test_values_read(clean, tmp_path):
    clean.setenv(settings.DEVICE, " 1")
    clean.setenv(settings.RESULTS, str(tmp_path))
    clean.setenv(settings.CLBLAST_LIB, "/opt/libclblast.so")
    clean.setenv(settings.LIBRARY_PATH, "/a::/b:")
    clean.setenv(settings.CUPY_TF32, "1")
    clean.setenv(settings.NO_COLOR, "x")
    clean.setenv(settings.XDG_DATA_HOME, "/data")
    assert settings.device() == " 1"
    assert settings.results() == tmp_path and results_dir() == tmp_path
    assert settings.clblast_library() == "/opt/libclblast.so"
    assert settings.library_path() == ["/a", "/b"]
    assert settings.cupy_tf32() is True and settings.no_color() is True
    clean.setenv(settings.CUPY_TF32, "0")
    assert settings.cupy_tf32() is False


@pytest.mark.parametrize("value,read", [("0", False), ("off", False), (" No ", False),
                                        ("FALSE", False), ("1", True), ("yes", True),
                                        (" on", True), ("True", True)])
def test_shipped_tuning_words(clean, tmp_path, value, read):
    clean.setenv(settings.RESULTS, str(tmp_path))
    clean.setenv(settings.SHIPPED_TUNING, value)
    assert settings.shipped_tuning() is read
    assert (TUNING in read_roots()) is read


@pytest.mark.parametrize("name,value,said", [
    (settings.SHIPPED_TUNING, "maybe", "CLGEMM_SHIPPED_TUNING='maybe': give 0"),
    (settings.SHIPPED_TUNING, "  ", "CLGEMM_SHIPPED_TUNING='  ': give 0"),
    (settings.DEVICE, "  ", "CLGEMM_DEVICE='  ': blanks name no device"),
    (settings.RESULTS, " \t", "CLGEMM_RESULTS=' \\t': blanks name no folder"),
    (settings.CLBLAST_LIB, " ", "CLGEMM_CLBLAST_LIB=' ': blanks name no library"),
])
def test_bad_values_refused_naming_the_variable(clean, name, value, said):
    clean.setenv(name, value)
    accessor = {settings.SHIPPED_TUNING: settings.shipped_tuning, settings.DEVICE: settings.device,
                settings.RESULTS: settings.results, settings.CLBLAST_LIB: settings.clblast_library}
    with pytest.raises(UsageError) as info:
        accessor[name]()
    assert str(info.value).startswith(said) and "\n" not in str(info.value)


def test_blank_device_refused_where_a_device_is_chosen(clean, device):
    """Needs a device: choosing one lists them first (skipped in the unit tier without one)."""
    clean.setenv(settings.DEVICE, "   ")
    with pytest.raises(UsageError, match="CLGEMM_DEVICE='   ': blanks name no device"):
        registry.select_device(None)
    assert registry.select_device(0).index == 0  # a device named outright needs no variable
