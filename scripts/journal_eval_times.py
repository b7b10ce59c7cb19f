"""Where a tune's searches spent their time, from its journals packed as a .tgz (the
`journals-*.tgz` beside a plain tune's results): per journal, the configurations searched and
the median seconds the measuring process took for one (`eval_s`: building what was not built
ahead, the checked launch and the timed ones).

    python3 scripts/journal_eval_times.py JOURNALS.tgz [...]
"""

from __future__ import annotations

import json
import statistics
import sys
import tarfile


def main(paths: list[str]) -> None:
    if not paths:
        raise SystemExit(__doc__)
    for path in paths:
        print(f"{path}\n\n| journal | searched | median s a configuration |\n|---|---|---|")
        with tarfile.open(path) as tar:
            for member in sorted(tar.getmembers(), key=lambda m: m.name):
                if not member.name.endswith(".jsonl"):
                    continue
                handle = tar.extractfile(member)
                assert handle is not None
                records = [json.loads(line) for line in handle.read().decode().splitlines()
                           if line.strip()]
                times = [r["eval_s"] for r in records
                         if r.get("kind") == "search" and r.get("eval_s") is not None]
                if times:
                    name = member.name.rsplit("/", 1)[-1].removesuffix(".jsonl")
                    print(f"| {name} | {len(times)} | {statistics.median(times):.2f} |")
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
