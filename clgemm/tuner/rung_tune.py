"""Tuning one rung: propose, measure, journal, then confirm the winners and store the best.

The loop is deliberately dumb about search and careful about bookkeeping. Everything a strategy
decides from is the journal's history, so an interrupted run resumes by reading the journal back;
the budget counts what the journal holds, so an interrupted-and-resumed run does exactly as many
evaluations as an uninterrupted one, and its time counts the seconds earlier runs spent (each
search ends by journaling them, interrupted or not). The rung's default configuration is
measured first (when the funnel kept it): it anchors every comparison ("x default") and gives
adaptive strategies a sane starting point. A search-time measurement uses few repeats, so the
few best are measured again with more repeats before one is stored; the database gets that
confirmation's numbers (median, spread), not a lucky single draw.

A journal is a file anyone can edit, so its records are checked before they count: a record
whose configuration is not a parameter set of its rung (an unknown name, a value that is not an
integer, a value outside what a kernel's int macro holds, one that breaks the rung's minimum or
divisibility constraints) or whose numbers are not numbers is skipped with a note, never built,
confirmed or stored.
"""

from __future__ import annotations

import hashlib
import random
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping, TextIO

from clgemm.configs.database import PACK_COUNTED, READS_B_ONLY, Database, Entry
from clgemm.configs.launch import HELPERS_FILE
from clgemm.core.files import FileWriteError
from clgemm.core.paths import KERNELS
from clgemm.core.problem import Problem
from clgemm.core.validation import is_finite
from clgemm.core.version import __version__
from clgemm.devices.info import DeviceInfo
from clgemm.measure.ladder import provenance
from clgemm.rungs import VALUE_ERRORS, Rung
from clgemm.rungs.tiled import TILED
from clgemm.tuner.evaluate import Measurer, measure_many
from clgemm.tuner.journal import Journal, now
from clgemm.tuner.progress import Progress
from clgemm.tuner.space import Config, SearchSpace
from clgemm.tuner.strategies import Strategy, Trial, make_strategy

#: strategy used by "auto" when the budget cannot cover the space. Chosen by replay: on an
#: exhaustive rung-5 journal from PoCL (600 configurations) it reached a median 86% of the best
#: at a 5% budget and 100% at 10%, against 75% and 78% for random sampling and 84%/90% for the
#: genetic search; it also led on the synthetic single-peak space of the tests.
AUTO_PARTIAL = "annealing"


@dataclass
class TuneOptions:
    strategy: str = "auto"
    budget: int | None = None
    time_s: float | None = None
    seed: int = 0
    heuristics: bool = True
    batch: int = 4
    confirm: int = 3
    confirm_repeats: int = 10
    confirm_warmup: int = 1
    #: configurations measured first, after the default (the best known elsewhere: transfer)
    seeds: tuple[Mapping[str, int], ...] = ()


@dataclass
class RungOutcome:
    rung: int
    title: str
    space_size: int
    strategy: str
    measured: int = 0
    measured_now: int = 0
    statuses: Counter = field(default_factory=Counter)
    best: dict | None = None
    default: dict | None = None
    entry: Entry | None = None
    stored: bool = False
    #: why the entry was stored or not (`Database.record`'s answer, as the summary prints it)
    why: str = ""
    stop: str = ""

    @property
    def failures(self) -> int:
        return sum(v for k, v in self.statuses.items() if k != "ok")


#: the stored configurations (after the default) whose variants are measured with the seeds
VARIANT_SEEDS = 2
#: a seed measured below this share of the best so far has its variants left unmeasured: on a
#: CPU at 2048 cubed the default's (local-memory tiles, a tenth of the seeds' speed there) took
#: most of a plain tune's step, before any variant of the seeds it stores
VARIANT_WORTH = 0.5


def kernel_digest(rung: Rung) -> str:
    """Short hash of the sources a rung compiles, to notice a kernel edited under a journal:
    with a rung whose configurations may need helpers of their own (the tiled kernel's panels),
    the BLAS helpers' file, whose pack of both operands their measured time counts."""
    h = hashlib.sha1()
    extra = (HELPERS_FILE,) if rung.extra_helpers is not None else ()
    for name in ("common.h", rung.file, *(hp.file for hp in rung.helpers), *extra):
        try:
            h.update((KERNELS / name).read_bytes())
        except OSError:
            h.update(name.encode())
    return h.hexdigest()[:12]


def resolve_strategy(name: str, options: TuneOptions, space_size: int) -> str:
    if name.strip().lower() != "auto":
        return name.strip().lower()
    unbounded = options.budget is None and options.time_s is None
    if unbounded or (options.budget is not None and options.budget >= space_size):
        return "exhaustive"
    return AUTO_PARTIAL


def journal_header(device: DeviceInfo, problem: Problem, rungs: list[Rung],
                   options: TuneOptions, repeats: int, warmup: int, command: str,
                   strategies: Mapping[int, str] | None = None) -> dict:
    """The first line of a journal: what its results are valid for and how they were made
    (`strategies`: the strategy each rung resolved to, which replay reports)."""
    return {
        "device": device.key, "device_name": device.name, "platform": device.platform,
        "backend": device.backend, "driver": device.driver_version,
        "size": problem.as_list(), **({"batch": problem.batch} if problem.batch > 1 else {}),
        "rungs": [r.number for r in rungs], "clgemm": __version__,
        "params": {str(r.number): {p.name: list(p.candidates) for p in r.params} for r in rungs},
        "kernels": {str(r.number): kernel_digest(r) for r in rungs},
        "strategy": options.strategy,
        "strategies": {str(k): v for k, v in (strategies or {}).items()},
        "seed": options.seed, "heuristics": options.heuristics,
        "repeats": repeats, "warmup": warmup, "created": now(), "command": command,
    }


def _record(rung: Rung, params: Mapping[str, int], res: Mapping[str, Any], kind: str) -> dict:
    return {"kind": kind, "rung": rung.number, "config": dict(params),
            "status": res.get("status"), "ms": res.get("ms"), "gflops": res.get("gflops"),
            "rel_error": res.get("rel_error"), "helper_ms": res.get("helper_ms"),
            "message": res.get("message", ""), "times_ms": res.get("times_ms") or [],
            "eval_s": round(float(res.get("eval_s") or 0.0), 4),
            "prebuilt": res.get("prebuilt"), "time": now(),
            **({"ran_on": res["ran_on"]} if res.get("ran_on") else {})}


def _short(rec: Mapping[str, Any] | None) -> str:
    if not rec or not rec.get("gflops"):
        return "-"
    return f"{rec['gflops']:.2f} GFLOP/s (" + " ".join(f"{k}={v}" for k, v in
                                                    rec["config"].items()) + ")"


#: the values a parameter may take: what the kernels' int macros hold
PARAM_LIMIT = 2 ** 31


def _broken_constraint(rung: Rung, params: Mapping[str, int]) -> str | None:
    """The first of the rung's own constraints (minimum values, divisibility) the parameters
    break; a predicate that raises counts as broken, as in the funnel."""
    for c in rung.all_constraints():
        if c.stage != "divisibility":
            continue
        try:
            if not c.holds_on(dict(params), None):
                return c.name
        except VALUE_ERRORS:
            return c.name
    return None


def record_problem(rung: Rung, rec: Mapping[str, Any]) -> str | None:
    """Why a journal record of `rung` cannot be used, or None if it can."""
    params = rung.complete(rec.get("config"))
    if params is None:
        return f"config {rec.get('config')!r} is not a parameter set of rung {rung.number}"
    if any(not -PARAM_LIMIT < v < PARAM_LIMIT for v in params.values()):
        return f"config {rec.get('config')!r} holds a value beyond a 32-bit integer"
    broken = _broken_constraint(rung, params)
    if broken is not None:
        return f"config {rec.get('config')!r} breaks rung {rung.number}'s constraint '{broken}'"
    if not isinstance(rec.get("status"), str):
        return f"status {rec.get('status')!r} is not a string"
    if rec["status"] != "ok":
        return None
    for name in ("gflops", "ms"):
        if not (is_finite(rec.get(name)) and rec[name] > 0):
            return f"{name} {rec.get(name)!r} is not a positive number"
    for name in ("rel_error", "helper_ms"):
        if rec.get(name) is not None and not is_finite(rec[name]):
            return f"{name} {rec[name]!r} is not a number"
    times = rec.get("times_ms") or []
    if not isinstance(times, list) or not all(is_finite(t) for t in times):
        return f"times_ms {times!r} is not a list of numbers"
    return None


def usable_records(rung: Rung, records: list[dict]) -> tuple[list[dict], list[str]]:
    """The records that can be used, their configurations as the rung reads them now
    (`Rung.complete`), and why each of the others cannot."""
    usable, skipped = [], []
    for r in records:
        why = record_problem(rung, r)
        if why is None:
            usable.append({**r, "config": rung.complete(r["config"])})
        else:
            skipped.append(why)
    return usable, skipped


@dataclass
class _Search:
    """One rung's search under way: what is measured (the journal's records included), the
    strategy's history and the best verified record so far."""

    rung: Rung
    space: SearchSpace
    journal: Journal
    evaluator: Measurer
    options: TuneOptions
    ref: int | str
    out: RungOutcome
    history: list[Trial] = field(default_factory=list)
    measured: set[Config] = field(default_factory=set)
    best: dict | None = None
    start: float = 0.0
    #: seconds of search the journal says earlier runs spent on this rung (`spent_before`)
    before_s: float = 0.0
    #: whether the last batch waited for its builds longer than it measured (`batch_size`);
    #: a step's first batch is the options' own, since one as large as the builders may hold a
    #: step of a few seconds past its time waiting for builds it then has no time to measure
    build_bound: bool = False
    #: each seed whose variants are measured with the seeds and not yet combined (`combined`),
    #: with those variants: each one's configuration and the parameter and value it changes
    bases: list[tuple[Config, list[tuple[Config, str, int]]]] = field(default_factory=list)
    #: each variant queued with the seeds, and the seeds it varies (`worth_measuring`)
    variant_of: dict[Config, list[Config]] = field(default_factory=dict)

    def resume(self, stream: TextIO | None) -> None:
        """Count what the journal already holds, so that a resumed search goes on where it
        stopped and its budget counts the measurements of before."""
        done_records, skipped = usable_records(self.rung, self.journal.results(self.rung.number))
        if skipped:
            print(f"note: journal {self.journal.path}: {len(skipped)} record(s) of rung "
                  f"{self.rung.number} skipped, not used or built (first: {skipped[0]})",
                  file=stream or sys.stderr)
        for r in done_records:
            key = self.space.key(r["config"])
            self.out.statuses[r.get("status", "?")] += 1
            if key is not None:
                self.measured.add(key)
                self.history.append(Trial(key, r.get("gflops") if r.get("status") == "ok"
                                          else None))
        self.out.measured = len(done_records)
        ok = [r for r in done_records if r.get("status") == "ok" and r.get("gflops")]
        self.best = max(ok, key=lambda r: r["gflops"]) if ok else None
        self.before_s = spent_before(self.journal.records, self.rung.number)

    def seeds(self, default_key: Config | None) -> list[Config]:
        """The default, then the options' seeds, where the space holds them and they are not
        measured yet: measured before the strategy proposes anything."""
        seeds: list[Config] = []
        for key in [default_key, *(self.space.key(p) for p in self.options.seeds)]:
            if (key is not None and key in self.space.index and key not in self.measured
                    and key not in seeds):
                seeds.append(key)
        return seeds + [v for v in self._variants(seeds[:VARIANT_SEEDS + 1])
                        if v not in seeds and v not in self.measured]

    def _variants(self, seeds: list[Config]) -> list[Config]:
        """Each seed with one variant parameter (`Param.variant`) or one register vector's
        width (`Param.read_width`) set otherwise, where the space holds it: either changes how a
        configuration runs, not its tiles, so a new one (a kernel option added since the seed
        was stored) or a width the seed's device loads better is worth trying on the
        configurations already known to be good before the strategy strays from them
        (results/h100/gap has a stored configuration that reads A faster as wider vectors)."""
        names = [p.name for p in self.rung.params if p.variant or p.read_width]
        found: list[Config] = []
        for seed in seeds:
            params, own = self.space.params(seed), []
            for name in names:
                for value in self.space.candidates[self.space.names.index(name)]:
                    key = self.space.key({**params, name: value})
                    if value != params[name] and key is not None and key in self.space.index:
                        own.append((key, name, value))
                        self.variant_of.setdefault(key, []).append(seed)
                        if key not in found:
                            found.append(key)
            self.bases.append((seed, own))
        return found

    def worth_measuring(self, queue: list[Config]) -> list[Config]:
        """The queued seeds less the variants whose every seed has measured below
        VARIANT_WORTH of the best so far, or failed; those seeds are combined no more either.
        A variant changes how a configuration runs, not its tiles: on a seed that far behind
        it has too far to go to be worth a step's time."""
        if self.best is None or not self.variant_of:
            return queue
        floor = VARIANT_WORTH * self.best["gflops"]
        scores = {t.config: t.score for t in self.history}

        def behind(seed: Config) -> bool:
            return seed in scores and (scores[seed] or 0.0) < floor

        self.bases = [(seed, own) for seed, own in self.bases if not behind(seed)]
        return [c for c in queue
                if c not in self.variant_of or not all(map(behind, self.variant_of[c]))]

    def combined(self) -> list[Config]:
        """For each base whose variants are all measured (`bases`), once: the base with every
        change of one of its variants that measured faster than the base made at once, each
        parameter at its fastest value, where that is two changes or more and in the space.
        The changes interact: on an H200 the default tiled configuration ran slower with a
        pipeline alone and faster with wide reads of B alone, and the fastest configuration
        stored for that GPU has both; a walk of one-parameter moves that starts elsewhere may
        never put such changes together (results/h200/combined-variants)."""
        scores = {t.config: t.score for t in self.history} if self.bases else {}
        out: list[Config] = []
        for base, variants in list(self.bases):
            if base not in scores or any(v not in scores for v, _, _ in variants):
                continue
            self.bases.remove((base, variants))
            best: dict[str, tuple[float, int]] = {}
            for v, name, value in variants:
                score, base_score = scores[v], scores[base]
                if (score and base_score and score > base_score
                        and score > best.get(name, (0.0, 0))[0]):
                    best[name] = (score, value)
            key = self.space.key({**self.space.params(base),
                                  **{n: value for n, (_, value) in best.items()}})
            if (len(best) >= 2 and key is not None and key in self.space.index
                    and key not in self.measured and key not in out):
                out.append(key)
        return out

    def remaining(self) -> int:
        unmeasured = len(self.space) - sum(1 for c in self.measured if c in self.space.index)
        if self.options.budget is None:
            return unmeasured
        return min(max(self.options.budget - self.out.measured, 0), unmeasured)

    def out_of_time(self) -> bool:
        return (self.options.time_s is not None
                and self.before_s + time.monotonic() - self.start >= self.options.time_s)

    def spent(self) -> str:
        """Why the search must stop before the next batch ('' where it may go on)."""
        if self.remaining() == 0:
            return ("budget" if self.options.budget is not None
                    and self.out.measured >= self.options.budget else "space exhausted")
        return "time" if self.out_of_time() else ""

    def run(self, strategy: Strategy, rng: random.Random, seeds: list[Config],
            stream: TextIO | None) -> None:
        """Propose and measure batches until the budget, the time, the space or the strategy
        runs out; `out.stop` says which."""
        options, name = self.options, self.out.strategy
        total = len(self.space) if options.budget is None else min(options.budget,
                                                                     len(self.space))
        left_s = None if options.time_s is None else max(options.time_s - self.before_s, 0.0)
        progress = Progress(f"rung {self.rung.number}", total, left_s, stream=stream)
        self.start = time.monotonic()
        stalls = 0
        try:
            while not (stop := self.spent()):
                # a batch for each device measuring at once
                n = min(self.batch_size() * getattr(self.evaluator, "width", 1),
                        self.remaining())
                # the seeds first (a base's helpful variants combined as soon as all are
                # measured), the strategy filling the batch (every device busy)
                seeds = self.combined() + self.worth_measuring(seeds)
                proposed, seeds = seeds[:n], seeds[n:]
                if len(proposed) < n:
                    proposed += strategy.propose(self.space, self.history, rng,
                                                 n - len(proposed))
                if not proposed:
                    stop = ("space exhausted"
                            if len(self.measured & set(self.space.index)) >= len(self.space)
                            else f"{name} has nothing more to propose")
                    break
                batch = [c for c in dict.fromkeys(proposed)
                         if c in self.space.index and c not in self.measured][:n]
                stalls = 0 if batch else stalls + 1
                if stalls >= 3:
                    stop = f"{name} proposes only measured configurations"
                    break
                self.measure(batch, progress)
            if stop == "time" and not self.out.measured_now and self.before_s:
                stop = "time, spent by earlier runs"
            self.out.stop = stop
            progress.update(self.out.measured, self.out.measured_now, self.out.failures,
                            _short(self.best), force=True)
        finally:
            progress.close()
            # what this run spent, so that a resumed run's time counts it as its budget
            # counts the measurements (a run killed outright leaves none: it gets its time
            # anew). Not kept among this run's records: a journal that a failed run began
            # holds no measurement and is still removed on closing.
            try:
                self.journal.append({"kind": "spent", "rung": self.rung.number,
                                     "seconds": round(time.monotonic() - self.start, 3),
                                     "time": now()}, keep=False)
            except FileWriteError:  # a full disk: the next run only gets its time anew, and
                pass                # an error already on its way is not replaced by this one

    def batch_size(self) -> int:
        """The options' batch, or as many configurations as the builders build at once while
        the last batch's time went mostly to waiting for its builds: a batch smaller than the
        builders then waits on its slowest compile with the others idle, whereas where
        measuring takes the time, small batches let the strategy move more often."""
        builders = getattr(self.evaluator, "builders", 0)
        return max(self.options.batch, builders if self.build_bound else 0)

    def measure(self, batch: list[Config], progress: Progress) -> None:
        """Build the batch ahead, then measure and journal each configuration in turn."""
        if not batch:
            return
        configs = [self.space.params(c) for c in batch]
        started, measuring = time.monotonic(), 0.0
        self.evaluator.prebuild(self.ref, configs)
        for res in measure_many(self.evaluator, self.ref, configs, self.out_of_time):
            measuring += float(res.get("eval_s") or 0.0)
            params = res["params"]
            c = self.space.key(params)
            rec = _record(self.rung, params, res, "search")
            self.journal.append(rec)
            if c is not None:
                self.count(c, rec)
            progress.update(self.out.measured, self.out.measured_now, self.out.failures,
                            _short(self.best))
        self.build_bound = time.monotonic() - started > 2.0 * measuring

    def count(self, c: Config, rec: dict) -> None:
        self.measured.add(c)
        self.history.append(Trial(c, rec["gflops"] if rec["status"] == "ok" else None))
        self.out.measured += 1
        self.out.measured_now += 1
        self.out.statuses[rec["status"]] += 1
        if rec["status"] == "ok" and rec["gflops"] and (
                self.best is None or rec["gflops"] > self.best["gflops"]):
            self.best = rec


def spent_before(records: list[dict], rung: int) -> float:
    """Seconds of search the journal's earlier runs spent on the rung: the sum of their "spent"
    records. A journal is a file anyone can edit, so a value that is not a finite number of
    seconds, zero or more, counts as nothing."""
    total = 0.0
    for r in records:
        if r.get("kind") == "spent" and r.get("rung") == rung:
            seconds: Any = r.get("seconds")
            if is_finite(seconds) and seconds >= 0:
                total += float(seconds)
    return total


def _default_record(rung: Rung, space: SearchSpace, journal: Journal,
                    default_key: Config | None) -> dict | None:
    """The default configuration's verified search record, which "x default" compares with."""
    if default_key is None:
        return None
    return next((r for r in usable_records(rung, journal.results(rung.number))[0]
                 if space.key(r["config"]) == default_key and r.get("status") == "ok"), None)


def tune_rung(rung: Rung, space: SearchSpace, journal: Journal, evaluator: Measurer,
              options: TuneOptions, *, device: DeviceInfo, problem: Problem, command: str = "",
              ref: int | str | None = None, stream: TextIO | None = None,
              db: Database | None = None) -> RungOutcome:
    """Search one rung's space, then confirm and (with `db`) store the best verified result."""
    ref = rung.number if ref is None else ref
    name = resolve_strategy(options.strategy, options, len(space))
    strategy = make_strategy(name)
    rng = random.Random(options.seed * 1000 + rung.number)
    out = RungOutcome(rung.number, rung.title, len(space), name)
    search = _Search(rung, space, journal, evaluator, options, ref, out)
    search.resume(stream)
    default_key = space.key(rung.defaults())
    search.run(strategy, rng, search.seeds(default_key), stream)
    default = _default_record(rung, space, journal, default_key)
    out.best, out.entry, out.default = _confirm(rung, space, journal, evaluator, options, ref,
                                                device, problem, command, name, default)
    if out.entry is not None and db is not None:
        recorded = db.record(out.entry)
        out.stored, out.why = recorded.stored, recorded.text()
    return out


#: the confirmation runs in this many alternating rounds, or (`confirm_plan`) as few as two
CONFIRM_ROUNDS = 5

#: a timed search's confirmation takes about this share of the search's seconds, or
#: CONFIRM_FLOOR_S where that is more. Short steps keep more than two rounds so: the first two
#: rounds' winner was at times not that of all five, on a 2-core CPU a much slower one
#: (results/h100/fresh-tune/sixth/confirm-two-rounds.txt)
CONFIRM_SHARE = 0.25
CONFIRM_FLOOR_S = 5.0


def confirm_allowance(options: TuneOptions) -> float | None:
    """The seconds a timed search's confirmation should stay within (None: untimed)."""
    if options.time_s is None:
        return None
    return max(CONFIRM_FLOOR_S, CONFIRM_SHARE * options.time_s)


def confirm_plan(first_round_s: float, allowance: float | None, repeats: int,
                 first_repeats: int) -> tuple[int, int]:
    """The rounds in all and the launches each later round takes, after a first round of
    `first_repeats` launches a candidate took `first_round_s`. Every evaluation costs a
    worker's round trip, a build from the cache and a check, which on a loaded machine took
    seconds whatever the launches took (results/h100/fresh-tune/fifth, before the check left
    the BLAS: results/h100/fresh-tune/sixth): within the allowance, fewer rounds of more
    launches keep the launches each candidate is judged by, and two rounds, one in each order,
    keep every candidate measured before and after the others."""
    rounds = CONFIRM_ROUNDS
    if allowance is not None and first_round_s > 0:
        fit = int(max(allowance - first_round_s, 0.0) // first_round_s)
        rounds = max(2, min(CONFIRM_ROUNDS, 1 + fit))
    owed = max(repeats - first_repeats, 0)
    return rounds, max(1, -(-owed // (rounds - 1)))


def _confirm_rounds(rung: Rung, top: list[dict], journal: Journal, evaluator: Measurer,
                    options: TuneOptions, ref: int | str, problem: Problem) -> list[tuple]:
    """Measure the candidates in alternating rounds and judge each by the median of all its
    launches. Measured one after the other, candidates see different machine states (on a
    loaded 2-core CPU the same kernel drifts by 15% or more between minutes), and the fastest
    of them would often be the luckiest; rounds put every candidate, the default included,
    under the same conditions."""
    per_round = first = max(1, -(-options.confirm_repeats // CONFIRM_ROUNDS))
    samples: dict[int, list[float]] = {i: [] for i in range(len(top))}
    last: dict[int, dict] = {}
    failed: set[int] = set()
    rounds, rnd, started = CONFIRM_ROUNDS, 0, time.monotonic()
    while rnd < rounds:
        if rnd == 1:
            rounds, per_round = confirm_plan(time.monotonic() - started,
                                             confirm_allowance(options),
                                             options.confirm_repeats, first)
        order = list(range(len(top)))
        for i in (order if rnd % 2 == 0 else order[::-1]):
            if i in failed:
                continue
            res = evaluator.evaluate(ref, top[i]["config"], repeats=per_round,
                                     warmup=options.confirm_warmup)
            rec = _record(rung, top[i]["config"], res, "confirm")
            journal.append(rec)
            if rec["status"] == "ok" and rec["gflops"]:
                samples[i].extend(float(t) for t in rec["times_ms"])
                last[i] = rec
            else:
                failed.add(i)
        rnd += 1
    confirmed = []
    for i, r in enumerate(top):
        if i in failed or not samples[i]:
            continue
        ms = statistics.median(samples[i])
        rec = dict(last[i], ms=ms, gflops=problem.gflops(ms), times_ms=samples[i])
        confirmed.append((r, rec, len(samples[i]), options.confirm_warmup))
    return confirmed


def _confirm(rung: Rung, space: SearchSpace, journal: Journal, evaluator: Measurer,
             options: TuneOptions, ref: int | str, device: DeviceInfo, problem: Problem,
             command: str, strategy: str, default: dict | None
             ) -> tuple[dict | None, Entry | None, dict | None]:
    """Re-measure the best few, and the default, with more repeats; the fastest that still
    verifies wins. Returns (winner's record, its database entry, the default's record), the
    default re-measured alongside so that "x default" compares like with like."""
    records = usable_records(rung, journal.results(rung.number))[0]
    ok = [r for r in records if r.get("status") == "ok" and r.get("gflops")]
    ok.sort(key=lambda r: -r["gflops"])
    top: list[dict] = []
    for r in ok:
        if all(r["config"] != t["config"] for t in top):
            top.append(r)
        if len(top) >= max(options.confirm, 1):
            break
    if not top:
        return None, None, default
    if options.confirm <= 0:
        confirmed = [(top[0], top[0], int(journal.header.get("repeats", 0)),
                      int(journal.header.get("warmup", 0)))]
    else:
        if default is not None and all(default["config"] != t["config"] for t in top):
            top.append(default)
        confirmed = _confirm_rounds(rung, top, journal, evaluator, options, ref, problem)
        for r, rec, _, _ in confirmed:
            if default is not None and r["config"] == default["config"]:
                default = rec
    if not confirmed:
        return top[0], None, default
    search_rec, rec, repeats, warmup = max(confirmed, key=lambda t: t[1]["gflops"])
    times = [float(t) for t in rec.get("times_ms") or []]
    prov = provenance(command)
    prov.update({"driver": device.driver_version, "device": device.name,
                 "platform": device.platform, "opencl_version": device.version,
                 "journal": str(journal.path), "strategy": strategy,
                 "evaluations": len(records), "space": len(space),
                 "heuristics": options.heuristics, "search_gflops": search_rec.get("gflops"),
                 "kernel_digest": kernel_digest(rung)})
    if space.reads_b_only:
        prov[READS_B_ONLY] = True
    if rung.number == TILED.number:
        prov[PACK_COUNTED] = True
    entry = Entry(rung=rung.number, shape=problem.as_list(), batch=problem.batch,
                  backend=device.backend,
                  params={k: int(v) for k, v in rec["config"].items()}, ms=float(rec["ms"]),
                  gflops=float(rec["gflops"]), rel_error=rec.get("rel_error"),
                  helper_ms=rec.get("helper_ms"), repeats=repeats, warmup=warmup,
                  times_ms=times, spread_ms=[min(times), max(times)] if times else [],
                  provenance=prov)
    return rec, entry, default
