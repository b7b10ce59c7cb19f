"""Generated blocks inside hand-written pages: find them, refill them, tell which are stale.

A block is everything between `<!-- begin generated: NAME -->` and `<!-- end generated: NAME -->`
(HTML comments, so GitHub shows neither marker). Only the text between the markers is ever
rewritten; prose around the blocks is left byte for byte as it is. A page whose blocks do not
match what the generator produces (a block missing, one it does not know, a marker without its
partner) is refused by name rather than guessed at, so that prose is never overwritten.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from clgemm.core.errors import UsageError

BEGIN = "<!-- begin generated: {} -->"
END = "<!-- end generated: {} -->"
_MARKER = re.compile(r"<!-- (begin|end) generated: ([A-Za-z0-9_.-]+) -->")


@dataclass(frozen=True)
class Block:
    name: str
    start: int      # index of the first character after the begin marker's line
    end: int        # index of the end marker
    text: str


def find_blocks(text: str, where: str = "page") -> list[Block]:
    """The blocks of a page, in order; malformed markers are a UsageError naming them."""
    blocks: list[Block] = []
    open_name, open_at = None, 0
    for m in _MARKER.finditer(text):
        kind, name = m.group(1), m.group(2)
        line = text.count("\n", 0, m.start()) + 1
        if kind == "begin":
            if open_name is not None:
                raise UsageError(f"{where}:{line}: block '{name}' begins inside block "
                                 f"'{open_name}'")
            if any(b.name == name for b in blocks):
                raise UsageError(f"{where}:{line}: block '{name}' appears twice")
            if not text.startswith("\n", m.end()):
                raise UsageError(f"{where}:{line}: the begin marker of '{name}' must end its line")
            open_name, open_at = name, m.end() + 1
        else:
            if open_name != name:
                raise UsageError(f"{where}:{line}: end of block '{name}' without its begin")
            blocks.append(Block(name, open_at, m.start(), text[open_at:m.start()]))
            open_name = None
    if open_name is not None:
        raise UsageError(f"{where}: block '{open_name}' has no end marker")
    return blocks


def body(generated: str) -> str:
    """How a block's text sits between its markers: its lines, then a newline."""
    return generated.rstrip("\n") + "\n"


def fill(text: str, generated: Mapping[str, str], where: str = "page") -> tuple[str, list[str]]:
    """(the page with every block refilled, names of the blocks whose text changed)."""
    blocks = find_blocks(text, where)
    have = {b.name for b in blocks}
    missing = [n for n in generated if n not in have]
    unknown = [b.name for b in blocks if b.name not in generated]
    if missing:
        raise UsageError(f"{where}: no block {', '.join(repr(n) for n in missing)}; add "
                         + " ".join(f"{BEGIN.format(n)} {END.format(n)}" for n in missing)
                         + " on lines of their own where it belongs")
    if unknown:
        raise UsageError(f"{where}: unknown generated block {', '.join(map(repr, unknown))} "
                         f"(this page has {', '.join(map(repr, generated))})")
    out, pos, changed = [], 0, []
    for b in blocks:
        new = body(generated[b.name])
        if new != b.text:
            changed.append(b.name)
        out.append(text[pos:b.start])
        out.append(new)
        pos = b.end
    out.append(text[pos:])
    return "".join(out), changed


def refresh(path: Path, generated: Mapping[str, str], write: bool, where: str) -> list[str]:
    """Refill the blocks of the page at `path`; write it only when `write` and something
    changed. Returns the stale block names."""
    path = Path(path)
    if not path.exists():
        raise UsageError(f"{where} is missing: it should be a page with the generated blocks "
                         f"{', '.join(generated)}")
    text = path.read_text()
    new, changed = fill(text, generated, where)
    if write and changed:
        path.write_text(new)
    return changed
