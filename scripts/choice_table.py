"""gemm()'s kernel choice at each shape on one device, one line a shape, from whichever package
is first on PYTHONPATH, so that two trees' choices can be set side by side (diff):
    python scripts/choice_table.py DEVICE SHAPE [SHAPE...]     (SHAPE: S or MxNxK)"""

import sys

from clgemm.library import gemm as api


def main(device: str, shapes: list[str]) -> None:
    dev = api.backend_for(device).device
    print(f"# {dev.name} ({dev.backend})")
    for text in shapes:
        m, n, k = (int(x) for x in text.split("x")) if "x" in text else (int(text),) * 3
        print(f"{m}x{n}x{k}: {api.choose_kernel(dev, m, n, k).describe()}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
