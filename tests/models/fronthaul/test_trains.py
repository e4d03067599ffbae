"""The ``trains`` engine against the frame-by-frame model: with and without in-network
processing every frame's path is computed ahead and sent in trains, and every statistic of
every component (slot latencies and their p99, per-link load and utilisation, deadline misses,
sum rates, AP waits), the run's end and each slot's latency must equal the frame-by-frame
run's exactly, on random layouts, capacities, chunkings, processing times, TDD patterns and
cable lengths."""

import random

import pytest

from archmodel.kernel import ArchError, ClockDomain, ParameterError, Simulator
from archmodel.models.fronthaul import FronthaulNetwork


def _figures(top) -> dict:
    """Every statistic of every component (samples in order) and the registers' values."""
    out = {}
    for comp in top.walk():
        for stat in comp.stats:
            out[stat.path] = list(stat.samples) if stat.kind == "distribution" else stat.value
    return out


def _run(engine: str, seed: int, **params):
    period = params.pop("period_ps")
    top = FronthaulNetwork("fh", clock=ClockDomain("fh", period), engine=engine, **params)
    sim = Simulator(top, seed=seed, watchdog_cycles=max(100_000, 2 * params["slot_ps"] // period))
    result = sim.run()
    assert result.reason == "stopped"
    return top, sim


def _random_config(rng: random.Random) -> dict:
    stripes = rng.choice([1, 2, 3, 4])
    per_stripe = rng.choice([1, 2, 3, 5, 8])
    chunks = rng.choice([1, 2, 3, 7, 14])
    slot_ps = rng.choice([100_000_000, 250_000_000, 1_000_000_000])
    # from a link just carrying the headers to several times what the frames need
    capacity = rng.choice([2e6, 1e7, 5e7, 1e8, 4e8, 3.2e9]) * rng.uniform(0.5, 2.0)
    header = rng.choice([0, 16, 64])
    inp = rng.random() < 0.5
    need = (1 if inp else stripes * per_stripe) * (header + 1) * 1e12 / (slot_ps // chunks)
    antennas = rng.choice([1, 2, 4])
    return dict(inp=inp, aps=stripes * per_stripe, stripes=stripes, aps_per_stripe=per_stripe,
                users=rng.randint(1, min(6, antennas * stripes * per_stripe)), antennas=antennas, chunks=chunks, slot_ps=slot_ps, slots=rng.randint(1, 5),
                tdd_pattern=rng.choice(["U", "U", "DU", "UUD", "DDDU"]), capacity_bps=max(capacity, 2 * need),
                processing_ps=rng.choice([0, 1, 999, 3_000_000, 10_000_000]), header_bits=header,
                area_m=rng.choice([10.0, 400.0, 3000.0]), link_fixed_ps=rng.choice([0, 100_000, 12_345]),
                ps_per_m=rng.choice([0, 4300, 5000]), period_ps=rng.choice([1000, 10_000, 7_000]))


@pytest.mark.parametrize("case", range(40))
def test_trains_give_the_frame_by_frame_statistics_exactly(case):
    rng = random.Random(case)
    config = _random_config(rng)
    _same_figures(case, config)


@pytest.mark.parametrize("case", range(12))
def test_inp_trains_give_the_frame_by_frame_statistics_exactly(case):
    config = _random_config(random.Random(1000 + case))
    config["inp"] = True  # (the capacity drawn covers the no-INP budget, so INP's too)
    _same_figures(case, config)


def _same_figures(case: int, config: dict) -> None:
    if "U" not in config["tdd_pattern"][: config["slots"]] and config["slots"] < len(config["tdd_pattern"]):
        config["slots"] = len(config["tdd_pattern"])
    frames, frames_sim = _run("frames", case, **dict(config))
    trains, trains_sim = _run("trains", case, **dict(config))
    assert _figures(trains) == _figures(frames), config
    assert trains.summary() == frames.summary()
    assert trains_sim.now == frames_sim.now
    assert trains.cp.role.trains and not frames.cp.role.trains


def test_auto_takes_trains_without_waveforms_and_frames_with_them(tmp_path, monkeypatch):
    from archmodel.trace import VcdTracer

    monkeypatch.chdir(tmp_path)
    small = dict(aps=4, stripes=2, users=2, antennas=2, slots=2, capacity_bps=1e9, clock=ClockDomain("ns", 1000))
    for inp, traced, expected in ((False, False, True), (True, False, True), (False, True, False),
                                  (True, True, False)):
        top = FronthaulNetwork("fh", inp=inp, **small)
        sim = Simulator(top)
        if traced:
            sim.add_observer(VcdTracer(tmp_path / "w.vcd"))
        sim.run()
        assert top.cp.role.trains is expected
        assert all(ap.role.trains is expected for ap in top.access_points)


def test_an_unknown_engine_is_an_error_naming_it():
    with pytest.raises(ParameterError, match="engine"):
        FronthaulNetwork("fh", engine="train", clock=ClockDomain("ns", 1000))


def test_trains_with_waveforms_is_an_error_naming_the_engine(tmp_path, monkeypatch):
    from archmodel.trace import VcdTracer

    monkeypatch.chdir(tmp_path)
    top = FronthaulNetwork("fh", engine="trains", inp=False, aps=2, stripes=1, users=1, antennas=1, slots=1,
                           clock=ClockDomain("ns", 1000))
    sim = Simulator(top)
    sim.add_observer(VcdTracer(tmp_path / "w.vcd"))
    with pytest.raises(ArchError, match="engine = 'trains' sends frames ahead") as info:
        sim.run()
    assert info.value.hint == "trace with engine = 'auto' or 'frames'"
