"""The rules of the house that code review would otherwise have to remember: imports run one
way through the layers, only the backends import pyopencl or CuPy, only the command line
imports click, and no module imports another of clgemm's inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "clgemm"

#: the layers, lowest first; a module may import from its own layer and the ones below
LAYERS = [
    ("core", ["errors", "values", "problem", "limits", "paths", "files", "locks", "memory", "check",
              "sources", "family", "hardware", "tables"]),
    ("devices", ["devices", "device_record"]),
    ("backends", ["backends"]),
    ("rungs and configurations", ["rungs", "database", "lookup", "config", "launch",
                                  "inner_loops"]),
    ("library and measuring", ["api", "runner", "references", "bench", "callbench", "ladder",
                               "verify", "model"]),
    ("tools", ["tuner", "course", "report", "plots", "measured"]),
    ("command line", ["cli", "__main__"]),
]
#: third-party libraries only one part of the package may import
OWNERS = {"pyopencl": "backends.opencl", "cupy": "backends.cuda", "cupy_backends": "backends.cuda",
          "click": "cli"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join(p for p in parts if p != "__init__")
        out[name] = path
    return out


def _layer(name: str) -> int:
    top = name.split(".")[0]
    if top == "":
        return len(LAYERS)  # the package's own __init__: the public API, above the library
    for i, (_, tops) in enumerate(LAYERS):
        if top in tops:
            return i
    raise AssertionError(f"module clgemm.{name} belongs to no layer: add it to LAYERS")


def _imports(name: str, path: Path) -> list[tuple[ast.AST, str, bool]]:
    """(node, imported module relative to the package or a third-party name, inside a
    function) for every import."""
    tree = ast.parse(path.read_text())
    in_function = {id(n) for f in ast.walk(tree)
                   if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(f)}
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)] if node.level > 1 else package
                mod = ".".join([*base, *([node.module] if node.module else [])])
                targets = [f"clgemm.{mod}" if mod else "clgemm"]
            else:
                targets = [node.module or ""]
        else:
            continue
        out += [(node, t, id(node) in in_function) for t in targets]
    return out


MODULES = _modules()


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_run_one_way(name):
    mine = _layer(name)
    for node, target, _ in _imports(name, MODULES[name]):
        if not target.startswith("clgemm") or target == "clgemm":
            continue
        other = target[len("clgemm."):]
        assert _layer(other) <= mine, (
            f"clgemm.{name} ({LAYERS[mine][0] if mine < len(LAYERS) else 'package'}) imports "
            f"{target} ({LAYERS[_layer(other)][0]}) at line {node.lineno}")


@pytest.mark.parametrize("name", sorted(MODULES))
def test_third_party_owners_and_no_imports_in_functions(name):
    for node, target, in_function in _imports(name, MODULES[name]):
        top = target.split(".")[0]
        owner = OWNERS.get(top)
        if owner is not None:
            assert name == owner or name.startswith(owner + "."), (
                f"clgemm.{name} imports {top} (line {node.lineno}); only clgemm.{owner} may")
        if in_function and target.startswith("clgemm"):
            raise AssertionError(f"clgemm.{name} imports {target} inside a function "
                                 f"(line {node.lineno}): import it at the top")
