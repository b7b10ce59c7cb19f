"""`clgemm bench`: the best rung per problem shape against the device's vendor BLAS and NumPy.

For each shape the candidate rungs (by default 6-8 and the tiled kernels 12 and 13, plus the rung
that `gemm` itself would pick, `api.choose_kernel`) run with their tuned parameters where the
database has a usable entry (`config.configure`: the lookup chain's nearest stored shape whose size
constraints hold here), else their defaults; those that need tile-multiple sizes are skipped, by
name and reason, where their parameters cannot do the shape (rung 10 and kernel 13 do any size).
The fastest correct rung is the "best rung" and is compared with cuBLAS (CUDA devices), CLBlast (OpenCL devices) and NumPy's BLAS
(always; on a GPU that is the host CPU, a yardstick for the host and not a like-for-like rival).

Correctness. Every contender is checked once against the float64 product before it is timed:
rungs through `runner.run_rung` (output poisoned with NaN, one launch, relative error), the
libraries through their own judged rows in `references`. A wrong or failing contender is listed
with its status and never timed, so it can never be the best rung or a reference.

Timing. All contenders of a shape are measured side by side in one run, interleaved: warm-up
rounds first, then timed rounds in each of which every contender runs once, the order rotated by
one place per round (round r starts with contender r mod n), so slow drift (clocks, heat, a
neighbour's load) falls on all of them alike. The reported time is the median of a contender's
timed runs. Rungs are timed as the runner times them (device events per launch) and their time
*includes the transpose of B* that rungs 5-13 need, since the libraries do the whole product
from the same column-major A and B; the kernel and helper parts are in the JSON. CLBlast and
cuBLAS are timed as in `references` (a marker to CLBlast's last event, CUDA events around
cublasSgemm); NumPy by host wall time, writing into a C allocated once (`matmul(..., out=)`), as
every contender writes into a C of its own that was allocated and written before timing starts
(so no timed call pays for first-touch page faults, which PoCL's lazily mapped buffers and a
fresh NumPy result would otherwise add).

Repeats adapt: without --repeats each contender gets about TARGET_S of timed work (its warm-up
time decides how many runs that is), at least MIN_REPEATS and at most MAX_REPEATS; contenders
that need more runs than the slowest carry on in further rounds among themselves, still
rotated. --repeats R makes it exactly R for every contender.

Caches. A rung's own timing (the ladder's, the tuner's) re-launches on the same buffers, so at
small sizes A, B and C sit in the last-level cache (an H100's L2 holds 50 MB, the L3 of the
CPU here 32 MB) from the second launch on: that times a warm cache a real caller rarely has, and
favours whoever runs right after a contender that read the same inputs. So below ROTATE_BYTES
(64 MiB) of A+B+C the bench makes several input sets, enough that between two uses of one set
at least ROTATE_BYTES of other inputs are read (at most MAX_SETS, and no more than a quarter of
device memory), and every timed call, whichever contender makes it, takes the next set in turn.
Only the first set is checked against float64: the kernels are the same on all of them. Above
ROTATE_BYTES one set is used; such inputs mostly cannot stay cached between calls anyway. A
consequence: at small sizes the bench's GFLOP/s can be lower than the ladder's or the tuning
database's for the same configuration, which were measured warm.

Memory. A shape whose buffers exceed the device's largest allocation, its memory, the 32-bit
indexing of the kernels, or the host's available memory (the float64 reference lives there) is
skipped with a note; so is one whose allocation fails.
"""

from __future__ import annotations

from clgemm.measure.bench.engine import (MAX_REPEATS, MIN_REPEATS, TARGET_S, Contender, measure,
                                         planned_repeats, rotated)
from clgemm.measure.bench.run import (REF_LABEL, BenchRun, add_bound, default_sizes, run_bench,
                                      shape_text)
from clgemm.measure.bench.sets import (MAX_SETS, ROTATE_BYTES, device_bytes_per_set, input_sets,
                                       memory_problem)
from clgemm.measure.bench.shape import DEFAULT_RUNGS, bench_shape, pick_best

__all__ = ["DEFAULT_RUNGS", "MAX_REPEATS", "MAX_SETS", "MIN_REPEATS", "REF_LABEL", "ROTATE_BYTES",
           "TARGET_S", "BenchRun", "Contender", "add_bound", "bench_shape", "default_sizes",
           "device_bytes_per_set", "input_sets", "measure", "memory_problem", "pick_best",
           "planned_repeats", "rotated", "run_bench", "shape_text"]
