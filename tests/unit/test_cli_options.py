"""The command line's shared options: every command that opens a device takes --device and
--backend as `clgemm.cli.options` declares them, shared checks refuse the same way on every
command, and click stays inside `clgemm.cli`."""

import ast
from pathlib import Path

import click
import pytest

from clgemm.cli import cli, main
from clgemm.cli.options import device_options, timing_options

#: commands that open no device; every other command must take the shared device options
NO_DEVICE = {"devices", "show", "explain", "report", "merge"}
DEVICE_COMMANDS = sorted(set(cli.commands) - NO_DEVICE)
PACKAGE = Path(__file__).resolve().parents[2] / "clgemm"


def _declared(decorator) -> dict[str, dict]:
    """The options a decorator from `options` adds, as click describes them."""
    command = click.command()(decorator(lambda **kwargs: None))
    return {p.name: p.to_info_dict() for p in command.params}


def test_device_commands_are_the_expected_ones():
    assert DEVICE_COMMANDS == ["bench", "ladder", "model", "tune", "verify"]


@pytest.mark.parametrize("name", DEVICE_COMMANDS)
def test_device_and_backend_come_from_the_one_declaration(name):
    params = {p.name: p.to_info_dict() for p in cli.commands[name].params}
    for option, info in _declared(device_options).items():
        assert params.get(option) == info, (name, option)


@pytest.mark.parametrize("name", DEVICE_COMMANDS)
def test_device_and_backend_are_accepted(name, capsys):
    assert main([name, "--device", "0", "--backend", "opencl", "--help"]) == 0
    assert "--device" in capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(NO_DEVICE))
def test_commands_without_a_device_do_not_offer_one(name):
    assert "device" not in {p.name for p in cli.commands[name].params}


def _takes_repeats(name: str) -> bool:
    return "repeats" in {p.name for p in cli.commands[name].params}


@pytest.mark.parametrize("name", [n for n in sorted(cli.commands) if _takes_repeats(n)])
@pytest.mark.parametrize("args,message", [
    (("--repeats", "0"), "error: --repeats 0: must be positive"),
    (("--warmup", "-1"), "error: --warmup -1: must be >= 0"),
])
def test_repeats_and_warmup_are_refused_alike_before_any_device(name, args, message, capsys):
    # a device that does not exist: the option is refused first, while parsing
    assert main([name, "--device", "no-such-device", *args]) == 2
    assert capsys.readouterr().err.strip() == message


def test_repeats_and_warmup_share_validation_but_not_help():
    a = _declared(timing_options("A", "B"))
    b = _declared(timing_options("C", "D"))
    assert a["repeats"]["help"] == "A" and b["repeats"]["help"] == "C"
    assert {k: v for k, v in a["warmup"].items() if k != "help"} == \
        {k: v for k, v in b["warmup"].items() if k != "help"}


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))
    return names


def test_click_stays_in_the_cli_package_and_nothing_imports_it():
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] in ("cli", "__main__.py"):  # the program itself
            continue
        imports = _imports(path)
        assert not any(n == "click" or n.startswith("click.") for n in imports), path
        assert not any(n.lstrip(".").split(".")[0] == "cli" or n.startswith("clgemm.cli")
                       for n in imports), path
