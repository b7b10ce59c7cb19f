"""pytest plugin: every failed comparison of tests/test_skinny.py saved whole to $OUT/wrong-N.npz."""
import os
import sys

import numpy as np

_state = {"node": "", "n": 0}


def pytest_runtest_setup(item):
    _state["node"] = item.nodeid
    mod = sys.modules.get("test_skinny")
    if mod is not None and not getattr(mod, "_dumping", False):
        inner = mod._close

        def close(got, want):
            ok = inner(got, want)
            if not ok:
                _state["n"] += 1
                path = os.path.join(os.environ.get("OUT", "/tmp"), f"wrong-{_state['n']}.npz")
                np.savez(path, got=got, want=want, node=np.array(_state["node"]))
                print("SAVED", path, _state["node"], file=sys.stderr, flush=True)
            return ok

        mod._close = close
        mod._dumping = True
