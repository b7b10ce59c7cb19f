"""Where each kernel's share of the FMA peak went, side by side, from Nsight Compute's printouts
(`clgemm.model.gap.account`, as `clgemm model --counters` gives it for one of gemm()'s
kernels): a Markdown table of the measured factors, whose product is each kernel's share, and
why each is what it is. The device's figures (schedulers, warp width) come from a recorded run.

    python3 scripts/gap_account.py RECORD.json SIZE LABEL=FILE[,FILE] ...
"""

from __future__ import annotations

import sys

from clgemm.devices.hardware import Overrides, hardware_for_device
from clgemm.devices.record import device_from_record
from clgemm.model.counters import read_counters
from clgemm.model.gap import account


def main(record: str, size: int, kernels: list[str]) -> None:
    hw = hardware_for_device(device_from_record(record), Overrides())
    accounts = {}
    for spec in kernels:
        label, files = spec.split("=", 1)
        accounts[label] = account(read_counters(tuple(files.split(","))), hw, 2 * size ** 3)
    labels = list(accounts)
    print(f"{size}³, {hw.name}; measured shares (their product is the share of the FMA peak)\n")
    print("| factor | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    first = accounts[labels[0]]
    for i, factor in enumerate(first.factors):
        cells = [f"{accounts[k].factors[i].measured:.1%}" for k in labels]
        print(f"| {factor.name} | " + " | ".join(cells) + " |")
    print("| **share of the FMA peak** | " +
          " | ".join(f"**{accounts[k].share:.1%}**" for k in labels) + " |")
    print("| from the duration and clock | " + " | ".join(
        f"{accounts[k].share_from_time:.1%}" if accounts[k].share_from_time else "-"
        for k in labels) + " |")
    print()
    for label in labels:
        a = accounts[label]
        print(f"- {label} (`{a.counters.kernel}`):")
        for factor in a.factors[:3]:
            print(f"  - {factor.name}: {factor.why}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3:])
