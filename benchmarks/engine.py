"""Engine throughput: archmodel against PyMTL3 and Amaranth on the same designs, in one run.

Designs, built the same way in every engine:

* register chains: a counter register followed by N-1 stages computing r[i] <= r[i-1] + 1,
  each stage its own component (a 17-register pipeline, and chains of 64 and 1024);
* queue rings: N two-entry valid/ready queues in a ring, a token in every other queue.

archmodel runs in this process, with and without a VCD; each peer runs as a subprocess in
its own virtual environment under ``benchmarks/.peers/<name>``, created with pip on first use
(Amaranth 0.5 pins pyvcd below 0.5, hence one environment per peer). A peer that cannot be
installed is reported in the table and the run goes on. A plain Python loop over the same
ring gives the floor for message passing, and a subprocess elaborates a 100,000-component
system to measure elaboration time and peak memory.

Usage: ``python benchmarks/engine.py [--quick] [--no-peers] [--cycles N] [--json out.json]``.
This is a benchmark, not a test: it prints a table and exits 0 whatever it measures.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path

HERE = Path(__file__).resolve().parent
if __name__ == "__main__" and str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))  # run from a checkout without installing

from archmodel.kernel import Component, In, Out, Param, Simulator, at_least, connect, model  # noqa: E402

PEER_DIR = HERE / ".peers"
PEERS = {
    "PyMTL3": {"venv": "pymtl3", "install": ["pymtl3"], "script": HERE / "peers" / "pymtl3_designs.py"},
    "Amaranth": {"venv": "amaranth", "install": ["amaranth==0.5.*"], "script": HERE / "peers" / "amaranth_designs.py"},
}

# (label, design, size): the same list in every engine.
DESIGNS = [
    ("pipeline 17", "chain", 17),
    ("chain 64", "chain", 64),
    ("chain 1024", "chain", 1024),
    ("queue ring 64", "ring", 64),
    ("queue ring 1024", "ring", 1024),
]
UNIT = {"chain": "register-cycles/s", "ring": "queue-cycles/s"}

# Work per run, in register- or queue-cycles; a run's cycles are this divided by the size.
# archmodel's run without VCD is repeated and the fastest kept: other work on the machine
# only ever slows a run down.
BUDGETS = {
    "full": {"archmodel": 1_000_000, "repeats": 3, "peer": 300_000, "peer_vcd": 60_000, "elaborate": 100_000},
    "quick": {"archmodel": 100_000, "repeats": 1, "peer": 20_000, "peer_vcd": 5_000, "elaborate": 20_000},
}


@model(catalogue=False)
class ChainCounter(Component):
    """The head of a register chain: a free-running counter register."""

    def setup(self) -> None:
        self.r = self.register("r", 0)

    def tick(self) -> None:
        self.r.set(self.r.value + 1)


@model(catalogue=False)
class ChainStage(Component):
    """One chain stage: its register takes the upstream register's value plus one.

    Registers are readable across components (a registered wire), so ``upstream`` is the
    previous stage's register, set by the chain after construction.
    """

    def setup(self) -> None:
        self.r = self.register("r", 0)
        self.upstream = None

    def tick(self) -> None:
        self.r.set(self.upstream.value + 1)


@model(catalogue=False)
class RegisterChain(Component):
    """A counter followed by ``size - 1`` plus-one stages; ``last`` is the final register."""

    size = Param(int, 17, "registers in the chain", check=at_least(1))

    def setup(self) -> None:
        previous = ChainCounter("s0", self).r
        for i in range(1, self.size):
            stage = ChainStage(f"s{i}", self)
            stage.upstream = previous
            previous = stage.r
        self.last = previous


@model(catalogue=False)
class RingQueue(Component):
    """A minimal two-entry queue: the library Fifo's behaviour without its statistics.

    Dequeue before enqueue at each edge, sleep when nothing moved (an arrival or a returning
    credit wakes it). It shows what the kernel costs on its own, next to the Fifo row that
    adds the model's bookkeeping (counters, an occupancy level and register, full cycles).
    """

    depth = Param(int, 2, "messages the queue holds", check=at_least(1))
    inp = In("tokens")
    out = Out("tokens")

    def setup(self) -> None:
        self.queue = deque()

    def tick(self) -> None:
        queue = self.queue
        sent = bool(queue) and self.out.try_send(queue[0])
        if sent:
            queue.popleft()
        taken = len(queue) < self.depth and self.inp.valid
        if taken:
            queue.append(self.inp.recv())
        if not (sent or taken):
            self.sleep()


def library_fifo():
    """The library's Fifo model, or None while it does not exist."""
    try:
        from archmodel.models.basic.fifo import Fifo
    except ImportError:
        return None
    return Fifo


@model(catalogue=False)
class QueueRing(Component):
    """``size`` queues connected in a ring by latency-1 channels, a token in every other one.

    Tokens start on the channels into the even queues, as if sent just before time 0.
    """

    size = Param(int, 64, "queues in the ring", check=at_least(2))
    queue_model = Param(str, "Fifo", "Fifo (the library model) or RingQueue (kernel only)")

    def setup(self) -> None:
        kind = library_fifo() if self.queue_model == "Fifo" else RingQueue
        queues = [kind(f"q{i}", self, depth=2) for i in range(self.size)]
        self.queues = queues
        self.links = [connect(queues[i].out, queues[(i + 1) % self.size].inp, latency=1)
                      for i in range(self.size)]
        for i in range(0, self.size, 2):
            preload(self.links[i - 1], i)


def preload(channel, message) -> None:
    """Put ``message`` on ``channel`` at time 0, holding a credit, as a send before the run would."""
    channel.flight.append((0, message))
    channel.credits -= 1


def build(design: str, size: int, queue_model: str = "Fifo") -> Component:
    """The archmodel top of one benchmark design."""
    if design == "chain":
        return RegisterChain("chain", size=size)
    return QueueRing("ring", size=size, queue_model=queue_model)


def check_value(design: str, top: Component) -> int:
    """The chain's last register, or the tokens held in the ring (must stay size / 2)."""
    if design == "chain":
        return top.last.value
    return sum(len(ch.flight) for ch in top.links) + sum(len(q.queue) for q in top.queues)


def vcd_tracer_class():
    """``archmodel.trace.VcdTracer``, or None while it does not exist."""
    try:
        from archmodel.trace import VcdTracer
    except ImportError:
        return None
    return VcdTracer


def run_archmodel(design: str, size: int, cycles: int, vcd_path: str | None = None,
                  queue_model: str = "Fifo") -> dict:
    """Build, elaborate and run one design in this process; times in seconds."""
    start = time.perf_counter()
    top = build(design, size, queue_model)
    sim = Simulator(top)
    tracer = None
    if vcd_path is not None:
        tracer = vcd_tracer_class()(vcd_path, select=("*",))
        sim.add_observer(tracer)
    elaborated = time.perf_counter()
    result = sim.run(cycles=cycles)
    finished = time.perf_counter()
    if tracer is not None and hasattr(tracer, "close"):
        tracer.close()
    return {"elab_s": elaborated - start, "run_s": finished - elaborated, "cycles": cycles,
            "check": check_value(design, top), "ticks": result.ticks,
            "vcd_bytes": os.path.getsize(vcd_path) if vcd_path and os.path.exists(vcd_path) else None}


def run_plain_ring(size: int, cycles: int) -> dict:
    """The queue ring as a plain Python loop: deques, two phases per cycle, no framework.

    A queue hands its head to the next queue when that one holds fewer than two tokens,
    decided from the state at the start of the cycle, like the RTL queues of the peers.
    """
    start = time.perf_counter()
    queues = [deque([i]) if i % 2 == 0 else deque() for i in range(size)]
    pairs = list(zip(queues, queues[1:] + queues[:1]))
    elaborated = time.perf_counter()
    for _ in range(cycles):
        moving = [(src, dst) for src, dst in pairs if src and len(dst) < 2]
        for src, dst in moving:
            dst.append(src.popleft())
    finished = time.perf_counter()
    return {"elab_s": elaborated - start, "run_s": finished - elaborated, "cycles": cycles,
            "check": sum(map(len, queues))}


def peer_python(name: str, log) -> tuple[str | None, str | None]:
    """The peer venv's python, creating the venv with pip on first use; or (None, why not)."""
    spec = PEERS[name]
    venv = PEER_DIR / spec["venv"]
    python = venv / "bin" / "python"
    marker = venv / ".installed"
    if marker.exists() and python.exists():
        return str(python), None
    log(f"installing {name} into {venv} (first use) ...")
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True,
                       capture_output=True, text=True, timeout=300)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *spec["install"]], check=True,
                       capture_output=True, text=True, timeout=900)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as err:
        output = getattr(err, "stderr", "") or str(err)
        last = [line for line in str(output).splitlines() if line.strip()][-1:] or ["unknown error"]
        return None, f"not installed: {last[0][:60]}"
    marker.write_text(" ".join(spec["install"]) + "\n")
    return str(python), None


def run_peer(python: str, name: str, design: str, size: int, cycles: int, vcd_path: str | None = None) -> dict:
    """Run one design in a peer's venv; the script prints one JSON line."""
    command = [python, str(PEERS[name]["script"]), design, str(size), str(cycles)]
    if vcd_path is not None:
        command.append(vcd_path)
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        tail = [line for line in done.stderr.splitlines() if line.strip()][-1:] or ["no output"]
        return {"error": f"failed: {tail[0][:60]}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def elaborate_only(size: int) -> dict:
    """Build and elaborate a ring of ``size`` library queues; time and this process's peak RSS."""
    start = time.perf_counter()
    top = build("ring", size, "Fifo" if library_fifo() else "RingQueue")
    sim = Simulator(top)
    elapsed = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {"components": len(sim.components), "elab_s": elapsed, "peak_rss_mb": peak_kib / 1024}


def run_elaboration_subprocess(size: int) -> dict:
    """``elaborate_only`` in a fresh interpreter, so the peak memory is its own."""
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--elaborate-only", str(size)],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def rate(run: dict | None, size: int) -> float | None:
    """Register- or queue-cycles per second of one run."""
    if not run or "error" in run or not run.get("run_s"):
        return None
    return size * run["cycles"] / run["run_s"]


def fmt_rate(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 1e6:
        return f"{value / 1e6:.2f}M"
    return f"{value / 1e3:.0f}k"


def fmt_s(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def cycles_for(budget: int, size: int, forced: int | None) -> int:
    return forced if forced is not None else max(20, budget // size)


def measure(args, log) -> dict:
    """Run every design in every engine; returns rows and the elaboration figure."""
    budget = BUDGETS["quick" if args.quick else "full"]
    with tempfile.TemporaryDirectory(prefix="archmodel-bench-") as tmp:
        return measure_in(args, log, budget, Path(tmp))


def measure_in(args, log, budget: dict, workdir: Path) -> dict:
    """:func:`measure`, writing VCDs in ``workdir``."""
    vcd_class = vcd_tracer_class()
    fifo = library_fifo()
    peers = {}
    if not args.no_peers:
        for name in PEERS:
            peers[name] = peer_python(name, log)
    rows = []
    for label, design, size in DESIGNS:
        engines = []
        if design == "chain":
            engines.append(("archmodel", None))
        else:
            if fifo is not None:
                engines.append(("archmodel (Fifo)", "Fifo"))
            engines.append(("archmodel (RingQueue)", "RingQueue"))
        for engine, queue_model in engines:
            cycles = cycles_for(budget["archmodel"], size, args.cycles)
            log(f"{label}: {engine}, {cycles} cycles")
            plain = min((run_archmodel(design, size, cycles, queue_model=queue_model)
                         for _ in range(budget["repeats"])), key=lambda run: run["run_s"])
            if vcd_class is not None:
                # The traced run is repeated as often, so that the VCD cost compares like with like.
                vcd_path = workdir / f"{design}{size}.vcd"
                traced = min((run_archmodel(design, size, cycles, str(vcd_path), queue_model)
                              for _ in range(budget["repeats"])), key=lambda run: run["run_s"])
                os.remove(vcd_path)
            else:
                traced = {"error": "pending: archmodel.trace.VcdTracer not there yet"}
            rows.append({"design": label, "kind": design, "size": size, "engine": engine,
                         "run": plain, "vcd": traced})
        if design == "ring":
            cycles = cycles_for(budget["archmodel"], size, args.cycles)
            log(f"{label}: plain Python loop, {cycles} cycles")
            rows.append({"design": label, "kind": design, "size": size, "engine": "plain Python loop",
                         "run": run_plain_ring(size, cycles), "vcd": None})
        for name, (python, why_not) in peers.items():
            row = {"design": label, "kind": design, "size": size, "engine": name}
            if python is None:
                row["run"] = row["vcd"] = {"error": why_not}
            else:
                cycles = cycles_for(budget["peer"], size, args.cycles)
                log(f"{label}: {name}, {cycles} cycles")
                row["run"] = run_peer(python, name, design, size, cycles)
                vcd_cycles = cycles_for(budget["peer_vcd"], size, args.cycles)
                vcd_path = workdir / f"{name}-{design}{size}.vcd"
                row["vcd"] = run_peer(python, name, design, size, vcd_cycles, str(vcd_path))
                if vcd_path.exists():
                    os.remove(vcd_path)
            rows.append(row)
    log(f"elaborating {budget['elaborate']} components in a subprocess")
    elaboration = run_elaboration_subprocess(budget["elaborate"])
    return {"rows": rows, "elaboration": elaboration, "budget": budget}


def annotate(result: dict) -> None:
    """Add rates, VCD cost and the speed-up of archmodel over each engine to every row."""
    rows = result["rows"]
    for row in rows:
        row["rate"] = rate(row["run"], row["size"])
        row["vcd_rate"] = rate(row["vcd"], row["size"])
        row["vcd_cost"] = row["rate"] / row["vcd_rate"] if row["rate"] and row["vcd_rate"] else None
    for row in rows:
        ours = [r["rate"] for r in rows if r["design"] == row["design"] and r["engine"].startswith("archmodel")
                and r["rate"]]
        row["archmodel_over"] = ours[0] / row["rate"] if ours and row["rate"] else None


def targets(result: dict) -> list[tuple[str, str, bool | None]]:
    """The issue's targets, each with the measured figure and whether it is met."""
    rows = result["rows"]
    peer_names = set(PEERS)
    checks = []
    for label, design, size in DESIGNS:
        ours = [r for r in rows if r["design"] == label and r["engine"].startswith("archmodel")]
        peers = [r["rate"] for r in rows if r["design"] == label and r["engine"] in peer_names and r["rate"]]
        need = 1 if design == "chain" else 10
        for row in ours:
            if peers and row["rate"]:
                ratio = row["rate"] / max(peers)
                checks.append((f"{label}, {row['engine']}: >= {need}x the faster peer", f"{ratio:.1f}x",
                               ratio >= need))
            else:
                checks.append((f"{label}, {row['engine']}: >= {need}x the faster peer", "no peer measured", None))
            if row["vcd_cost"]:
                checks.append((f"{label}, {row['engine']}: VCD costs <= 2x", f"{row['vcd_cost']:.2f}x",
                               row["vcd_cost"] <= 2))
            else:
                checks.append((f"{label}, {row['engine']}: VCD costs <= 2x", "pending (no VcdTracer)", None))
    elab = result["elaboration"]
    if "error" in elab:
        checks.append(("elaboration", elab["error"], False))
    else:
        n = elab["components"]
        checks.append((f"elaborate {n:,} components in < 10 s", f"{elab['elab_s']:.2f} s", elab["elab_s"] < 10))
        checks.append((f"elaborate {n:,} components in < 2 GB", f"{elab['peak_rss_mb']:.0f} MB peak RSS",
                       elab["peak_rss_mb"] < 2048))
    return checks


def table(result: dict) -> str:
    """The aligned table printed at the end (and pasted into the README)."""
    header = ["design", "engine", "elab s", "cycles", "run s", "rate", "VCD rate", "VCD cost", "archmodel /"]
    lines = [header]
    for row in result["rows"]:
        run, vcd = row["run"], row["vcd"]
        if "error" in run:
            lines.append([row["design"], row["engine"], run["error"], "", "", "", "", "", ""])
            continue
        if vcd is None:
            vcd_rate = "n/a"
        elif "error" in vcd:
            vcd_rate = "pending" if vcd["error"].startswith("pending") else vcd["error"]
        else:
            vcd_rate = fmt_rate(row["vcd_rate"])
        lines.append([
            row["design"], row["engine"], fmt_s(run.get("elab_s")), str(run["cycles"]), fmt_s(run["run_s"]),
            fmt_rate(row["rate"]), vcd_rate, f"{row['vcd_cost']:.2f}x" if row["vcd_cost"] else "-",
            f"{row['archmodel_over']:.2f}x" if row["archmodel_over"] else "-",
        ])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = []
    for n, line in enumerate(lines):
        cells = [cell.ljust(widths[i]) if i < 2 else cell.rjust(widths[i]) for i, cell in enumerate(line)]
        out.append("  ".join(cells).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    out.append("")
    out.append("rate: register-cycles/s for chains, queue-cycles/s for rings; VCD cost: rate without / with VCD;")
    out.append("archmodel /: archmodel's rate over this engine's (the first archmodel row of the design).")
    elab = result["elaboration"]
    if "error" in elab:
        out.append(f"elaboration: {elab['error']}")
    else:
        out.append(f"elaboration: {elab['components']:,} components in {elab['elab_s']:.2f} s, "
                   f"peak RSS {elab['peak_rss_mb']:.0f} MB")
    out.append("")
    out.append("targets:")
    for what, measured, met in targets(result):
        verdict = "met" if met else ("n/a" if met is None else "NOT met")
        out.append(f"  {verdict:8s} {what}: {measured}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small budgets: a smoke run in under a minute")
    parser.add_argument("--no-peers", action="store_true", help="measure archmodel and the plain loop only")
    parser.add_argument("--cycles", type=int, help="cycles for every run (default: a work budget per design)")
    parser.add_argument("--json", metavar="PATH", help="also write the measurements as JSON")
    parser.add_argument("--elaborate-only", type=int, metavar="N", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.elaborate_only:
        print(json.dumps(elaborate_only(args.elaborate_only)))
        return 0

    def log(message: str) -> None:
        print(f"... {message}", file=sys.stderr, flush=True)

    result = measure(args, log)
    annotate(result)
    stamp = datetime.date.today().isoformat()
    print(f"archmodel engine benchmark, {stamp}, Python {platform.python_version()}, {os.cpu_count()} cores")
    print(table(result))
    if args.json:
        result["date"] = stamp
        result["python"] = platform.python_version()
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
