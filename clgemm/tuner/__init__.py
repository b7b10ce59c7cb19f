"""The per-device tuner: search each rung's macro space, verify every result, keep the best.

`space` builds and prunes the search space, `strategies` choose what to measure next,
`evaluate` measures in an isolated worker with compilation overlapped (and `first_launch`
tries there what the ladder and verify borrow from another device), `journal` records every
result as it comes, `rung_tune` tunes one rung, `shape_tune` one shape's rungs, `tune_run` a
whole run of several rungs and shapes (its `TuneSettings` in `settings`), and `replay` scores
strategies offline; `clgemm.cli.tune` is its command and `tune_run.tune` (`clgemm.tune`) its
Python entry point, both running one `tune_run.Tuning`.
The best results go to `clgemm.configs.database`, where the ladder finds them.
"""
