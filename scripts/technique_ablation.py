"""What each technique of the tiled kernel's stored configuration adds on one device, at each
square size: the configuration as stored, then with each technique it uses taken out, kernel
only, each result checked against float64, all of them in turn for ROUNDS rounds
(clgemm.tuner.ablation). The course's table reads the first size of files named
ablation-*.txt under results/.
Usage: python scripts/technique_ablation.py DEVICE BACKEND ROUNDS SIZE [SIZE...]"""

import sys

from clgemm.library import gemm as api
from clgemm.tuner.ablation import ablate

if __name__ == "__main__":  # each variant's first launch is in a child that imports this
    dev, backend_name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    be = api.backend_for(dev, backend_name)
    for size in (int(s) for s in sys.argv[4:]):
        ablate(be, size, rounds, lambda line: print(line, flush=True))
