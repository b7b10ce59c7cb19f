"""The per-device tuner: search each rung's macro space, verify every result, keep the best.

`space` builds and prunes the search space, `strategies` choose what to measure next,
`evaluate` measures in an isolated worker with compilation overlapped, `journal` records every
result as it comes, `tune` ties one rung's run together, `session` one shape's rungs, `run` a
whole run of several rungs and shapes, and `replay` scores strategies offline;
`clgemm.cli.tune` is its command and `run.tune` (`clgemm.tune`) its Python entry point.
The best results go to `clgemm.configs.database`, where the ladder finds them.
"""
