"""Where the values of a wrong result that tests/test_skinny.py printed come from: every value
pytest showed of the first wrong C in a log is looked for among the right results and operands
of every case of the test's sweeps (its inputs come from seeded generators, so they are made
again here), and each match is printed. Run from the repository root:
    python3 scripts/skinny_failure_match.py LOG"""
import itertools
import re
import sys

sys.path.insert(0, "tests")
import numpy as np
import test_skinny
from layouts import rand, reference

text = open(sys.argv[1]).read()
shown = text[text.index("where False = _close(array(") + 27:]
shown = shown[:shown.index("shape=")]
values = list(dict.fromkeys(float(v) for v in re.findall(r"-?\d\.\d+e[+-]\d+", shown)))
print(f"values shown of the wrong C: {values}")
sweeps = {name: test_skinny.SHAPES for name in test_skinny.PARAM_SETS}
sweeps["split"] = [(300, 7, 400), (9, 261, 84), (70, 5, 30)]
for name, shapes in sweeps.items():
    rng = np.random.default_rng(len(name))  # as test_skinny.sweep_cases seeds it
    for (m, n, k), (ta, tb) in itertools.product(shapes, itertools.product((False, True),
                                                                           repeat=2)):
        a = rand(rng, (k, m) if ta else (m, k))
        b = rand(rng, (n, k) if tb else (k, n))
        for alpha, beta in ((1.5, 0.0), (-0.5, 2.0)):
            c = rand(rng, (m, n)) if beta else np.full((m, n), np.nan, np.float32)
            right = reference(a, b, c, alpha, beta, ta, tb)
            for what, x in (("right C", right), ("A", a), ("B", b)):
                for v in values:
                    at = np.argwhere(np.abs(x - v) <= 1e-6 * max(1.0, abs(v)))
                    for i, j in at[:3]:
                        print(f"{v:+.7e} is {what}[{i}, {j}] of {name} {m}x{n}x{k} "
                              f"ta={ta} tb={tb} alpha={alpha} beta={beta}")
