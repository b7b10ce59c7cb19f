"""Which configuration each tree's clgemm, with its shipped databases, chooses for the H100 (as
a bench JSON file records it, both backends) at C-ordered shapes MxNxK, nothing run; for each
shape, which of the earlier trees the last one chooses as. Tells which side of turns measured
between earlier trees a later tree's calls are:
    python3 scripts/choice_at.py SHAPES CUDA_BENCH.json OPENCL_BENCH.json NAME=TREE ..."""

import subprocess
import sys

from choice_moves import DEVICE_OF

CHOOSE = DEVICE_OF + """
for path in sys.argv[3:]:
    dev = device_of(path)
    for s in sys.argv[2].split(","):
        m, n, k = map(int, s.split("x"))
        shape = (n, m, k)  # the kernels see a C-ordered product transposed
        c = choice.choose_kernel(dev, shape)
        print(dev.backend, s, c.rung, sorted(c.params.items()), choice.split_for(dev, c, shape))
"""


def choices(tree: str, shapes: str, benches: list[str]) -> list[str]:
    return subprocess.run([sys.executable, "-c", CHOOSE, tree, shapes, *benches], check=True,
                          capture_output=True, text=True).stdout.splitlines()


def main(shapes: str, benches: list[str], trees: list[tuple[str, str]]) -> None:
    rows = [choices(tree, shapes, benches) for _, tree in trees]
    (last_name, _), earlier = trees[-1], trees[:-1]
    print(f"| backend | shape | kernel ({last_name}) | K slices | {last_name} chooses as |")
    print("|---|---|---|---|---|")
    for i, line in enumerate(rows[-1]):
        backend, shape, rung, *_, split = line.split()
        same = [name for (name, _), got in zip(earlier, rows) if got[i] == line] or ["neither"]
        print(f"| {backend} | {shape} | {rung} | {split} | {', '.join(same)} |")


if __name__ == "__main__":
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:4], [tuple(a.split("=", 1)) for a in sys.argv[4:]])
