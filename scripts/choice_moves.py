"""How many shapes change kernel between two trees' databases, by the lookup's own reckoning
(nothing runs): each tree's clgemm, with its shipped databases, chooses for the H100 as a
bench JSON file records it (both backends), over a grid of M, N in SIZES and K in DEPTHS.
Prints the moves from one kernel to another and their count (configurations, and the slices of
K they run in, that change within a kernel counted too); with --list first every shape that
moves, as gemm() is called with it.
    python3 scripts/choice_moves.py [--list] OLD_TREE NEW_TREE CUDA_BENCH.json OPENCL_BENCH.json"""

import itertools
import json
import subprocess
import sys
from collections import Counter

SIZES = (64, 100, 128, 200, 256, 300, 384, 500, 512, 640, 700, 768, 800, 900, 999, 1000, 1024,
         1100, 1200, 1500, 1536, 2000, 2048, 2500, 3000, 4000, 4096)
DEPTHS = (64, 256, 500, 1000, 2000, 4000, 16000)

#: the code a tree's clgemm runs to rebuild the H100 of a bench JSON file: `device_of(path)`
DEVICE_OF = """
import itertools, json, sys
sys.path.insert(0, sys.argv[1])
from clgemm.devices.info import DeviceInfo
from clgemm.configs import choice


def device_of(path):
    d = json.load(open(path))["device"]
    fields = {k: v for k, v in d.items() if k in DeviceInfo.__dataclass_fields__}
    for k in ("max_work_item_sizes", "sub_group_sizes"):
        fields[k] = tuple(fields[k])
    dev = DeviceInfo(**fields)
    assert dev.key == d["key"], (dev.key, d["key"])
    return dev
"""

CHOOSE = DEVICE_OF + """
for path in sys.argv[2:]:
    dev = device_of(path)
    cross = choice.crossover(dev)
    for m, n, k in itertools.product(SIZES, SIZES, DEPTHS):
        c = choice.choose_kernel(dev, (m, n, k), lambda r, p: False, cross)
        params = ",".join(f"{a}={b}" for a, b in sorted(c.params.items()))
        print(dev.backend, m, n, k, c.rung, f"{params},split={choice.split_for(dev, c, (m, n, k))}")
"""


def choices(tree: str, benches: list[str]) -> list[str]:
    code = f"SIZES, DEPTHS = {SIZES!r}, {DEPTHS!r}\n" + CHOOSE
    return subprocess.run([sys.executable, "-c", code, tree, *benches], check=True,
                          capture_output=True, text=True).stdout.splitlines()


def main(old: str, new: str, benches: list[str], listed: bool = False) -> None:
    moves = Counter()
    for a, b in zip(choices(old, benches), choices(new, benches)):
        backend, m, n, k, was, was_params = a.split()
        now, now_params = b.split()[-2:]
        if (was, was_params) != (now, now_params):
            moves[(backend, was, now)] += 1
            if listed:  # as gemm() is called: C-ordered, so the lookup sees N x M x K
                print(f"{backend} {n}x{m}x{k}: {was} {was_params} -> {now} {now_params}")
    for (backend, was, now), count in sorted(moves.items()):
        print(f"{backend}: kernel {was} -> {now}: {count} shapes")
    print(f"of {len(SIZES) ** 2 * len(DEPTHS)} shapes per backend")


if __name__ == "__main__":
    listed = "--list" in sys.argv
    argv = [a for a in sys.argv if a != "--list"]
    if len(argv) != 5:
        sys.exit(__doc__)
    main(argv[1], argv[2], argv[3:], listed)
