"""Run a tune (on a cluster or not), optionally kill one of its local cluster's workers or the
tune itself in the middle, and check its journals: every configuration recorded once per
journal, and on a cluster every record naming the device (and worker) it ran on.

    python scripts/cluster_tune_check.py [--kill-device I --kill-after N] [--stop-after N]
        -- TUNE-ARGS...

TUNE-ARGS go to `clgemm tune` as they are (give it --json -). With --kill-device, once the
journal of device I holds N search records, the local cluster's worker of device I (the
process its last record names) is killed with SIGKILL; its nanny starts another, and the
configuration it had under way must be measured again, once. With --stop-after, once the
journals hold N search records the tune itself gets SIGINT (a Ctrl-C): a run of the same
command with --resume must then finish it. The report goes to stdout, a table per journal, and
ends with a line `summary: {...}` (JSON: wall seconds, records, best) that
`cluster_two_gpus_table.py` reads; the exit status is 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from clgemm.tuner.worker import parent_pid




def _search_records(results: Path, device_key: str | None) -> list[dict[str, Any]]:
    out = []
    for journal in results.glob("journals/*/*.jsonl"):
        if device_key and device_key not in str(journal):
            continue
        for line in journal.read_text().splitlines()[1:]:
            try:
                record = json.loads(line)
            except ValueError:  # a line being written
                continue
            if record.get("kind") == "search":
                out.append(record)
    return out


def _device_key(index: int) -> str:
    out = subprocess.run([sys.executable, "-m", "clgemm", "devices", "--json", "-"],
                         capture_output=True, text=True, check=True).stdout
    return next(d["key"] for d in json.loads(out) if d["index"] == index)


def check(journal: Path, on_cluster: bool = True
          ) -> tuple[list[str], bool, list[dict[str, Any]]]:
    """The lines that describe one journal, whether it passed (off a cluster, records need
    not say where they ran), and its search records."""
    lines = journal.read_text().splitlines()
    records = [json.loads(line) for line in lines[1:] if line.strip()]
    search = [r for r in records if r.get("kind") == "search"]
    keys = Counter(json.dumps(r["config"], sort_keys=True) for r in search)
    twice = [k for k, n in keys.items() if n > 1]
    unnamed = [r for r in records if on_cluster and r.get("kind") in ("search", "confirm")
               and not r.get("ran_on")]
    by_device = Counter((r["ran_on"].get("host"), r["ran_on"].get("index"),
                         r["ran_on"].get("name"), r["ran_on"].get("pci", "-"))
                        for r in search if r.get("ran_on"))
    workers = Counter(r["ran_on"].get("worker") for r in search if r.get("ran_on"))
    # each run of the journal (a resumed one adds its own) confirms after its "spent" record:
    # one worker per run
    runs: list[set[str]] = [set()]
    for r in records:
        if r.get("kind") == "spent":
            runs.append(set())
        elif r.get("kind") == "confirm" and r.get("ran_on"):
            runs[-1].add(r["ran_on"].get("worker"))
    confirm_workers = set().union(*runs)
    ok = not twice and not unnamed and all(len(run) <= 1 for run in runs)
    out = [f"journal {journal}",
           f"  search records {len(search)}, configurations {len(keys)}, recorded twice "
           f"{len(twice)}, records naming no device {len(unnamed)}; statuses "
           f"{dict(Counter(r.get('status') for r in search))}",
           f"  workers of the search: {len(workers)} ({', '.join(f'{w}: {n}' for w, n in workers.items())}); "
           f"of the confirmation: {len(confirm_workers)} over {sum(1 for r in runs if r)} "
           f"run(s), one a run"]
    out += [f"  ran on host {h}, device {i} ({name}), pci {pci}: {n} search records"
            for (h, i, name, pci), n in by_device.items()]
    out.append(f"  check: {'passed' if ok else 'FAILED'}")
    return out, ok, search


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kill-device", type=int, default=None)
    ap.add_argument("--kill-after", type=int, default=3)
    ap.add_argument("--stop-after", type=int, default=None)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("tune", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    tune_args = [a for a in args.tune if a != "--"]
    results = Path(os.environ.get("CLGEMM_RESULTS") or "")
    if not results.name:
        ap.error("set CLGEMM_RESULTS to a folder of this run's own")
    key = _device_key(args.kill_device) if args.kill_device is not None else None
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "clgemm", "tune", *tune_args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed: list[str] = []
    stopped = ""
    watching = args.kill_device is not None or args.stop_after is not None
    while watching and proc.poll() is None:
        if args.stop_after is not None and not stopped:
            records = _search_records(results, None)
            if len(records) >= args.stop_after:
                proc.send_signal(signal.SIGINT)
                stopped = (f"stopped the tune (SIGINT) after {time.monotonic() - t0:.1f} s, "
                           f"its journals holding {len(records)} search records")
        if args.kill_device is None or killed:
            time.sleep(0.05)
            continue
        records = _search_records(results, key)
        if len(records) >= args.kill_after:
            # the worker that measured the last record, a child of the tune (its local cluster)
            pid = int(records[-1].get("ran_on", {}).get("pid", -1))
            if parent_pid(pid) == proc.pid:
                os.kill(pid, signal.SIGKILL)
                killed.append(f"killed the worker of device {args.kill_device} (pid {pid}) "
                              f"after {time.monotonic() - t0:.1f} s, its journal holding "
                              f"{len(records)} search records")
        time.sleep(0.05)
    stdout, stderr = proc.communicate(timeout=args.timeout)
    print(f"clgemm tune {' '.join(tune_args)}: exit {proc.returncode} after "
          f"{time.monotonic() - t0:.1f} s")
    print(*killed or (["no worker killed"] if args.kill_device is None else
                      ["the worker was NOT killed: the tune ended first"]), sep="\n")
    if args.stop_after is not None:
        print(stopped or "the tune was NOT stopped: it ended first")
    wall_s = time.monotonic() - t0
    # the notes are wrapped to the terminal's width: read them as one line
    requeued = re.findall(r"worker (\S+) left with (.*?) under way", " ".join(stderr.split()))
    print("requeued: " + ("; ".join(f"{params} (worker {w})" for w, params in requeued)
                          or "none"))
    ok = ((proc.returncode == 0 or (stopped and proc.returncode == 130))
          and (args.kill_device is None or bool(killed))
          and (args.stop_after is None or bool(stopped)))
    data: Any = json.loads(stdout) if stdout.strip().startswith("{") else {}
    on_cluster = "--cluster" in tune_args
    rungs = [r for d in data.get("devices", [data]) for r in d.get("rungs", [])]
    for r in rungs:
        shown = " ".join(f"{k}={v}" for k, v in (r.get("params") or {}).items())
        print(f"best of rung {r['rung']} at {'x'.join(map(str, r['shape']))}: "
              f"{r.get('gflops') or 0:.1f} GFLOP/s after {r['measured']} evaluations "
              f"({r['stopped']}): {shown or '-'}")
    journals = [Path(j) for d in data.get("devices", [data]) for j in d.get("journals", [])]
    if not journals:  # a stopped tune writes no JSON: its journals are where it wrote them
        journals = sorted(results.glob("journals/*/*.jsonl"))
    summary: dict[str, Any] = {"wall_s": round(wall_s, 1), "exit": proc.returncode,
                               "records": 0, "configurations": 0, "eval_s": 0.0, "best": None}
    for journal in journals:
        lines, passed, search = check(journal, on_cluster)
        print(*lines, sep="\n")
        ok = ok and passed
        summary["records"] += len(search)
        summary["configurations"] += len({json.dumps(r["config"], sort_keys=True)
                                          for r in search})
        summary["eval_s"] = round(summary["eval_s"]
                                  + sum(r.get("eval_s") or 0 for r in search), 1)
    if rungs:
        summary["best"] = {"gflops": rungs[0].get("gflops"), "params": rungs[0].get("params")}
    if proc.returncode != 0 or os.environ.get("CLUSTER_CHECK_STDERR"):
        print(stderr[-3000:])
    summary["passed"] = ok
    print("summary: " + json.dumps(summary))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
