"""Every stored configuration of the library's kernels that gemm() could choose on a device,
tried as the first call to use it tries it (clgemm/library/trial.py), once per transpose pair
at the shape it was stored for (alpha 1.5, beta 0): the verdict and the trial's wall time, the
build included where it was not built before. Kernel sizes are column-major M x N x K.
Usage: python scripts/trial_entries.py DEVICE [BACKEND]"""

import itertools
import sys
import time

from clgemm.configs import lookup
from clgemm.configs.configuration import Config
from clgemm.library import gemm as api
from clgemm.library.signatures import try_configuration
from clgemm.rungs import LIBRARY

be = api.backend_for(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
print(f"# {be.device.name.strip()} ({be.device.backend}, {be.device.platform.strip()} {be.device.driver_version})", flush=True)
seen: set = set()
tried = wrong = 0
for rung in LIBRARY.values():
    for found in lookup.candidates(be.device, rung, None):
        key = (rung.number, tuple(sorted(found.params.items())))
        if key in seen:
            continue
        seen.add(key)
        config = Config(rung.number, found.params, found.label)
        for trans in itertools.product((False, True), repeat=2):
            t0 = time.perf_counter()
            why = try_configuration(be, config, found.shape, trans, alpha=1.5)
            ms = (time.perf_counter() - t0) * 1e3
            tried += 1
            wrong += why is not None
            shown = "x".join(map(str, found.shape))
            print(f"{rung.slug:9} {shown:16} {'NT'[trans[0]]}{'NT'[trans[1]]} {ms:8.1f} ms  "
                  f"{'ok' if why is None else why}  {config.text()}", flush=True)
print(f"{tried} trials of {len(seen)} configurations, {wrong} wrong", flush=True)
