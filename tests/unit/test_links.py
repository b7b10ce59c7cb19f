"""Every relative link in the repository's markdown pages leads somewhere: to a file or folder
that exists and, where it names a heading of a markdown page (`page.md#heading`), to a heading
that page has. Pages move (the README's sections went to docs/, kernels into the package), and
a link that breaks says nothing until a reader follows it."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKIP_DIRS = {".git", ".venv", ".pytest_cache", "build", "dist", "node_modules", ".tuned", ".whl"}

#: [text](target) and ![alt](target), the target up to a space (a title may follow) or ')'
INLINE = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
#: [label]: target
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.M)
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def _pages() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.md")
                  if not SKIP_DIRS & set(p.relative_to(ROOT).parts)
                  and not any(part.endswith(".egg-info") for part in p.parts))


def _prose(text: str, spans: bool = False) -> str:
    """The page without fenced code blocks and, unless `spans`, without code spans: where
    brackets are not links (a heading's code spans are part of its anchor)."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            lines.append("")
            continue
        lines.append("" if fenced else line if spans else CODE_SPAN.sub("", line))
    return "\n".join(lines)


def links(text: str) -> list[str]:
    prose = _prose(text)
    return [m.group(1) for m in INLINE.finditer(prose)] + REFERENCE.findall(prose)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces as
    hyphens."""
    text = re.sub(r"<[^>]+>", "", heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in _prose(text, spans=True).splitlines():
        m = re.match(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    found.update(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", text))
    return found


def broken(page: Path) -> list[str]:
    out = []
    text = page.read_text(encoding="utf-8")
    for target in links(text):
        if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, mailto:, ...
            continue
        path_part, _, fragment = target.partition("#")
        path_part = unquote(path_part.split("?", 1)[0])
        dest = page if not path_part else (page.parent / path_part)
        if not path_part.startswith("/") and not dest.exists():
            out.append(f"{target}: no such file")
            continue
        if fragment and dest.is_file() and dest.suffix == ".md":
            if unquote(fragment).lower() not in anchors(dest.read_text(encoding="utf-8")):
                out.append(f"{target}: {dest.relative_to(ROOT)} has no heading #{fragment}")
    return out


def test_the_check_finds_broken_links(tmp_path, monkeypatch):
    """A missing file, a missing heading and a link in code (not a link) are told apart."""
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "other.md").write_text("# A `code` heading: yes\n\n## Twice\n\n## Twice\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](other.md#a-code-heading-yes) [ok2](other.md#twice-1) "
                    "[gone](missing.md) [bad](other.md#nope) `[code](nowhere.md)`\n"
                    "```\n[fenced](nowhere.md)\n```\n[web](https://example.com/x.md)\n"
                    "[ref]: ./missing-too.png\n")
    assert broken(page) == ["missing.md: no such file",
                            "other.md#nope: other.md has no heading #nope",
                            "./missing-too.png: no such file"]


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(page):
    assert broken(page) == []
