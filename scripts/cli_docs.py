"""Regenerate the generated blocks of docs/cli.md from real output: for each command, the keys
of its JSON (top level and rows) and a short example, run on this machine's default device at
small sizes.

    .venv/bin/python scripts/cli_docs.py          # rewrite the blocks
    .venv/bin/python scripts/cli_docs.py --check  # exit 1 if a block's keys differ

The tune example writes into a results folder of its own, so it leaves nothing a user keeps.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "cli.md"

#: name in docs/cli.md -> the command run (with --json - added), and the list whose items are
#: the rows described
COMMANDS: dict[str, tuple[list[str], str | None]] = {
    "devices": (["devices"], None),
    "ladder": (["ladder", "--size", "64", "--rungs", "1-2", "--repeats", "1"], "rows"),
    "ladder-vs-defaults": (["ladder", "--vs-defaults", "--size", "64", "--rungs", "3",
                            "--repeats", "1"], "rows"),
    "show": (["show", "5"], None),
    "model": (["model", "--size", "256"], "rungs"),
    "tune": (["tune", "--size", "64", "--rungs", "3", "--budget", "2", "--jobs", "0",
              "--confirm", "0", "--repeats", "1", "--warmup", "0"], "rungs"),
    "verify": (["verify", "--quick", "--rungs", "1"], "groups"),
    "bench": (["bench", "--sizes", "64", "--rungs", "6", "--repeats", "1"], "rows"),
    "bench-call": (["bench", "--call", "--sizes", "64"], "rows"),
}


def run(args: list[str], results: str) -> Any:
    env = {**os.environ, **({"CLGEMM_RESULTS": results} if args[0] == "tune" else {})}
    env.pop("COLUMNS", None)
    r = subprocess.run([sys.executable, "-m", "clgemm", *args, "--json", "-"], cwd=ROOT,
                       capture_output=True, text=True, env=env, check=False)
    if r.returncode != 0:
        raise SystemExit(f"clgemm {' '.join(args)} failed:\n{r.stderr}")
    return json.loads(r.stdout)


def trim(x: Any, rows: str | None = None, whole: bool = True, top: bool = True) -> Any:
    """An example short enough to read: lists of objects and long lists cut to their first
    item, long strings cut, and objects other than the top one and the rows cut to five keys
    (a "..." key says how many more there are)."""
    if isinstance(x, dict):
        items = list(x.items())
        if not whole and len(items) > 8:
            items = items[:5] + [("...", f"{len(items) - 5} more keys")]
        return {k: trim(v, None, k == rows if top else whole, False) if k != "..." else v
                for k, v in items}
    if isinstance(x, list):
        short = len(x) <= 4 and all(not isinstance(v, (dict, list)) for v in x)
        return [trim(v, None, whole, top) for v in (x if short else x[:1])]
    if isinstance(x, str) and len(x) > 60:
        return x[:57] + "..."
    return x


def keys_line(name: str, keys: list[str]) -> str:
    return f"- keys of `{name}`: " + ", ".join(f"`{k}`" for k in keys)


def block(name: str, data: Any, rows: str | None, command: list[str]) -> str:
    first = data[0] if isinstance(data, list) else data
    lines = [keys_line(name, list(first))]
    if rows and first.get(rows):
        lines.append(f"- keys of each of `{rows}`: "
                     + ", ".join(f"`{k}`" for k in first[rows][0]))
    if isinstance(data, dict) and isinstance(data.get("device"), dict):
        data = {**data, "device": {k: data["device"][k] for k in ("index", "backend", "name",
                                                                   "type", "key")}}
        lines.append("")
        lines.append("(`device` cut to five of its keys: it is `devices --json`'s object)")
    example = trim(data[:1] if isinstance(data, list) else data, rows)
    lines += ["", f"`clgemm {' '.join(command)} --json -`, cut short:", "",
              "```json", json.dumps(example, indent=2), "```"]
    return "\n".join(lines)


def main() -> int:
    check = "--check" in sys.argv[1:]
    text = DOC.read_text()
    stale = []
    with tempfile.TemporaryDirectory(prefix="clgemm-cli-docs-") as results:
        for name, (command, rows) in COMMANDS.items():
            pattern = re.compile(rf"(<!-- generated: json-{name} -->\n)(.*?)"
                                 rf"(<!-- end generated: json-{name} -->)", re.S)
            m = pattern.search(text)
            if m is None:
                raise SystemExit(f"docs/cli.md has no block json-{name}")
            data = run(command, results)
            new = block(name, data, rows, command) + "\n"
            if check:
                if m.group(2).split("\n", 2)[:2] != new.split("\n", 2)[:2]:
                    stale.append(name)
                continue
            text = text[:m.start(2)] + new + text[m.end(2):]
    if check:
        for name in stale:
            print(f"stale: docs/cli.md block json-{name}")
        return 1 if stale else 0
    DOC.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
