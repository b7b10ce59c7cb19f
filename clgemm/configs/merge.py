"""Tuning databases from many machines pooled into one folder: per device, the best verified
entry of each slot, with the provenance it was measured with.

A lab tunes its devices on several machines (or a cluster's workers tune theirs) and gathers
the files; merging them is `Database.record` applied entry by entry, the rule a tune stores by:
an empty slot takes the entry, a faster one replaces what is there, the same parameters measured
again keep the newer measurement, and an entry its rung cannot run never displaces one it can.
Every file is read whole and checked before anything is written, so a file of another format
(or a newer version of this one, or one a hand broke) stops the merge with its name and leaves
the target folder as it was. Entries a source holds but cannot use are not carried over: a
merged database holds what was measured and verified. Each output file is written as a tune
writes its database (merged under the file's lock with what is on disk, then replaced
atomically), so a merge into the folder clgemm ships (`clgemm/tuning/`) or into the per-user
results folder while a tune writes there loses nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from clgemm.configs.database import Database, Recorded, database_path, read_any
from clgemm.core.errors import UsageError
from clgemm.core.problem import Problem


@dataclass
class Merged:
    """What a merge did to one device's database: the file, and per source entry what became
    of it."""

    path: Path
    device_key: str
    backend: str
    sources: list[Path] = field(default_factory=list)
    outcomes: list[tuple[Path, str, Recorded]] = field(default_factory=list)
    #: entries of the sources that cannot be used, left out
    skipped: int = 0

    @property
    def stored(self) -> int:
        return sum(1 for _, _, r in self.outcomes if r.stored)


def read_sources(paths: Sequence[Path]) -> list[Database]:
    """Every source read and checked, before anything is written: a file that is not a clgemm
    tuning database of a version this clgemm reads stops the merge, named."""
    if not paths:
        raise UsageError("give the tuning databases to merge")
    seen: set[Path] = set()
    out = []
    for path in paths:
        p = Path(path)
        if not p.is_file():
            raise UsageError(f"{p}: no such file" if not p.exists() else f"{p}: not a file")
        if p.resolve() in seen:
            continue
        seen.add(p.resolve())
        out.append(read_any(p))
    return out


def merge(paths: Sequence[Path], into: Path) -> list[Merged]:
    """Merge the databases at `paths` into the folder `into`, one file per device key there
    (`<into>/<device-key>.json`, added to what it holds); returns what became of each."""
    sources = read_sources(paths)
    targets: dict[tuple[str, str], Merged] = {}
    dbs: dict[tuple[str, str], Database] = {}
    for src in sources:
        key = (src.device_key, src.backend)
        if key not in dbs:
            path = database_path(src.device_key, into)
            target = read_any(path) if path.exists() else Database(path, *key)
            if (target.device_key, target.backend) != key:
                raise UsageError(f"{path} belongs to {target.device_key} ({target.backend}), "
                                 f"not {key[0]} ({key[1]}): refusing to merge into it")
            dbs[key] = target
            targets[key] = Merged(path, *key)
        db, done = dbs[key], targets[key]
        db.meta = {**src.meta, **db.meta}
        done.sources.append(src.path)
        done.skipped += len(src.invalid)
        for entry in src.entries:
            if src.unusable(entry) is not None:
                done.skipped += 1
                continue
            slot = f"rung {entry.rung} at {Problem.of((entry.batch, *entry.shape)).label}"
            done.outcomes.append((src.path, slot, db.record(entry)))
    for key, db in dbs.items():
        db.save()
    return list(targets.values())


__all__ = ["Merged", "merge", "read_sources"]
