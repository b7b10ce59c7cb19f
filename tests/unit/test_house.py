"""The rules of the house that code review would otherwise have to remember: imports run one
way through the layers (the package's own `__init__`, the public API, included: nothing below
imports a name from it), only the backends import pyopencl or CuPy, only the command line
imports click, only the cluster tune imports Dask (an optional extra), no module imports another of clgemm's inside a function, and no two classes
share a name."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest

from clgemm.core.problem import Problem
from clgemm.devices.limits import DeviceLimits
from clgemm.rungs import Constraint, get_rung
from clgemm.tuner import plan
from clgemm.tuner import rung_tune as tune
from clgemm.tuner.space import build_space

PACKAGE = Path(__file__).resolve().parents[2] / "clgemm"

#: the layers, lowest first, each a package of clgemm; a module may import from its own layer
#: and the ones below
LAYERS = [
    ("core", ["core"]),
    ("devices", ["devices"]),
    ("backends", ["backends"]),
    ("kernels", ["rungs"]),
    ("configurations", ["configs"]),
    ("model", ["model"]),
    ("library", ["library"]),
    ("measuring", ["measure"]),
    ("tuner", ["tuner"]),
    ("course", ["course"]),
    ("command line", ["cli", "__main__"]),
]
#: the modules that may sit at the package's root: the public API and `python -m clgemm`
ROOT_MODULES = {"", "__main__"}
#: third-party libraries only one part of the package may import
OWNERS = {"pyopencl": "backends.opencl", "cupy": "backends.cuda", "cupy_backends": "backends.cuda",
          "click": "cli", "dask": "tuner.cluster", "distributed": "tuner.cluster"}


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


def _layer_name(index: int) -> str:
    return LAYERS[index][0] if index < len(LAYERS) else "package"


def _imports(name: str, path: Path) -> list[tuple[ast.AST, str, bool]]:
    """(node, imported module relative to the package or a third-party name, inside a
    function) for every import. `from . import x` imports the module `x` where there is one,
    else the name `x` of the package's `__init__`."""
    tree = ast.parse(path.read_text())
    in_function = {id(n) for f in ast.walk(tree)
                   if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(f)}
    package = [p for p in (name.split(".") if path.name == "__init__.py"
                           else name.split(".")[:-1]) if p]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)] if node.level > 1 else package
                mod = ".".join([*base, *([node.module] if node.module else [])])
                targets = [_imported(mod, alias.name) for alias in node.names]
            else:
                targets = [node.module or ""]
        else:
            continue
        out += [(node, t, id(node) in in_function) for t in targets]
    return out


MODULES = _modules()


def _imported(package: str, name: str) -> str:
    """What `from <package> import <name>` imports: the submodule where there is one, else the
    package's `__init__` (as "clgemm" or "clgemm.<package>")."""
    sub = f"{package}.{name}" if package else name
    if sub in MODULES:
        return f"clgemm.{sub}"
    return f"clgemm.{package}" if package else "clgemm"


def test_every_module_lives_in_a_layer_package():
    """The folder tree is the architecture: a module at the root belongs to no layer."""
    loose = sorted(n for n in MODULES if "." not in n and n not in ROOT_MODULES
                   and not (PACKAGE / n).is_dir())
    assert not loose, f"modules at clgemm's root, outside every layer package: {loose}"
    packages = {n.split(".")[0] for n in MODULES} - ROOT_MODULES
    assert packages == {p for _, tops in LAYERS for p in tops} - {"__main__"}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_run_one_way(name):
    mine = _layer(name)
    for node, target, _ in _imports(name, MODULES[name]):
        if not target.startswith("clgemm"):
            continue
        other = target[len("clgemm."):]
        assert _layer(other) <= mine, (
            f"clgemm.{name} ({_layer_name(mine)}) imports {target} ({_layer_name(_layer(other))}) "
            f"at line {node.lineno}")


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


def test_no_two_classes_share_a_name():
    """A name says what a class holds: two classes of one name (a kernel launch and a tuning
    step both called `Step`) make every import of it ambiguous to a reader."""
    where: dict[str, list[str]] = {}
    for name, path in MODULES.items():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(f"clgemm.{name}")
    doubled = {cls: mods for cls, mods in where.items() if len(mods) > 1}
    assert not doubled, f"classes defined more than once: {doubled}"


#: the most lines a function may take, its signature and docstring included
MAX_FUNCTION_LINES = 60
#: the functions that may be longer (module.qualified name), each with its reason: none today
LONG_FUNCTIONS: dict[str, str] = {}


def _function_lengths(module: str, path: Path) -> dict[str, int]:
    """Every function and method of a module, by qualified name (class and enclosing function
    included), with its length in lines."""
    out: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}.{child.name}" if prefix else child.name
                if not isinstance(child, ast.ClassDef):
                    out[f"{module}.{name}" if module else name] = (
                        child.end_lineno - child.lineno + 1)
                visit(child, name)
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text()), "")
    return out


def test_functions_are_short_or_listed_with_a_reason():
    lengths = {}
    for name, path in MODULES.items():
        lengths.update(_function_lengths(name, path))
    long = {f: n for f, n in lengths.items() if n > MAX_FUNCTION_LINES}
    unlisted = [f"clgemm.{f} ({n} lines)" for f, n in sorted(long.items())
                if f not in LONG_FUNCTIONS]
    assert not unlisted, (f"functions over {MAX_FUNCTION_LINES} lines: {', '.join(unlisted)}; "
                          f"split them by what each part does, or list them in LONG_FUNCTIONS "
                          f"with the reason")
    stale = [f"clgemm.{f}" for f in sorted(LONG_FUNCTIONS) if f not in long]
    assert not stale, (f"listed in LONG_FUNCTIONS but no longer over {MAX_FUNCTION_LINES} lines "
                       f"(or gone): {', '.join(stale)}; remove them from the list")
    assert all(reason.strip() for reason in LONG_FUNCTIONS.values())


#: a constraint with a misspelt name, and one with a misspelt attribute: faults of the code
TYPOS = [lambda p, lim: p["TS"] % TSS == 0,  # type: ignore[name-defined] # noqa: F821
         lambda p, lim: p["TS"] <= lim.max_work_group_sizes]


@pytest.mark.parametrize("typo", TYPOS, ids=["NameError", "AttributeError"])
def test_a_broken_constraint_is_raised_not_taken_for_an_unusable_configuration(typo):
    """A constraint that divides by a parameter's zero breaks for that configuration; one that
    cannot run at all is a fault of the constraint, which must surface rather than quietly
    empty the search space (the funnel, the resumed journal's check, the model's ranking)."""
    rung, limits, problem = get_rung(1), DeviceLimits(), Problem(64, 64, 64)
    zero = Constraint("divides by zero", "heuristic", lambda p, lim: 64 % (p["TS"] - p["TS"]) == 0)
    space = build_space(rung, limits, problem, extra_heuristics=[zero])
    assert len(space) == len(build_space(rung, limits, problem))  # may not empty: all kept
    with pytest.raises((NameError, AttributeError)):
        build_space(rung, limits, problem, extra_heuristics=[Constraint("typo", "heuristic",
                                                                        typo)])
    broken = SimpleNamespace(all_constraints=lambda: [Constraint("typo", "divisibility", typo)])
    with pytest.raises((NameError, AttributeError)):
        tune._broken_constraint(broken, {"TS": 16})
    divides = SimpleNamespace(all_constraints=lambda: [Constraint("zero", "divisibility",
                                                                  zero.holds)])
    assert tune._broken_constraint(divides, {"TS": 16}) == "zero"


def test_the_models_ranking_skips_what_it_cannot_count_and_raises_faults(monkeypatch):
    rung, problem = get_rung(1), Problem(64, 64, 64)
    space = build_space(rung, DeviceLimits(), problem)
    device = SimpleNamespace(is_cpu=True, name="cpu", vendor="", compute_units=2, type="CPU")
    monkeypatch.setattr(plan, "hardware_for_device", lambda dev: None)

    def no_count(*args):
        raise KeyError("no inner-loop count")

    monkeypatch.setattr(plan, "bound", no_count)
    assert plan.bound_seeds(device, rung, space, problem.as_tuple()) == []

    def fault(*args):
        raise AttributeError("'Hardware' object has no attribute 'typo'")

    monkeypatch.setattr(plan, "bound", fault)
    with pytest.raises(AttributeError):
        plan.bound_seeds(device, rung, space, problem.as_tuple())
