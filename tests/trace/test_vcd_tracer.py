"""The VCD tracer: scope tree, values equal to what the components did, handshake pulses across
idle skipping and clock domains, determinism under shuffled tick order, selection, time
windows, and a well-formed file after failures."""

import pytest

from archmodel.kernel import (ArchError, ClockDomain, Component, DeadlockError, ModelAssertion,
                              Param, Simulator, connect, model)
from archmodel.trace import VcdTracer, summarize_payload

from .designs import (LoggedCounter, Napper, SlowSink, StallingSource, Taker, Waveform,
                      counter_and_pair)

PERIOD = 1000


def traced_run(tmp_path, top=None, cycles=60, seed=3, shuffle_seed=None, name="run", **tracer_args):
    top = top if top is not None else counter_and_pair()
    sim = Simulator(top, seed=seed, shuffle=shuffle_seed is not None, shuffle_seed=shuffle_seed)
    path = tmp_path / f"{name}.vcd"
    with VcdTracer(path, **tracer_args) as tracer:
        sim.add_observer(tracer)
        sim.run(cycles=cycles)
    return top, Waveform(path), path


def check_counter(wave, counter, times):
    for t in times:
        logged = counter.log[t]
        assert wave.at("top.counter.count", t) == logged["count"], t
        assert wave.at("top.counter.phase", t) == logged["phase"], t
        assert wave.at("top.counter.odd", t) == int(logged["odd"]), t
        assert wave.at("top.counter.mean", t) == pytest.approx(logged["mean"], rel=1e-15), t


def check_handshake(wave, source, times, period=PERIOD):
    prefix = "top.pair.src.out."
    for t in times:
        logged = source.log[t]
        assert wave.at(prefix + "valid", t) == int(logged["valid"]), t
        assert wave.at(prefix + "ready", t) == int(logged["ready"]), t
        assert wave.at(prefix + "fire", t) == int(logged["fire"]), t
        if logged["valid"]:
            assert wave.at(prefix + "data", t) == logged["data"], t
        if t >= period:
            # What the source saw at this edge is what the previous edge left behind.
            assert wave.at(prefix + "occupancy", t - 1) == logged["occupancy"], t


def test_scope_tree_mirrors_the_hierarchy(tmp_path):
    _, wave, _ = traced_run(tmp_path, cycles=3)
    assert wave.scopes == ["top", "top.counter", "top.pair", "top.pair.dst", "top.pair.src",
                           "top.pair.src.out"]
    kinds = {name: (kind, size) for name, (_, kind, size) in wave.vars.items()}
    assert kinds == {
        "top.counter.count": ("reg", 8), "top.counter.phase": ("string", 1),
        "top.counter.odd": ("reg", 1), "top.counter.mean": ("real", 64),
        "top.pair.dst.held": ("reg", 16),
        "top.pair.src.out.valid": ("wire", 1), "top.pair.src.out.ready": ("wire", 1),
        "top.pair.src.out.fire": ("wire", 1), "top.pair.src.out.occupancy": ("wire", 2),
        "top.pair.src.out.data": ("string", 1),
    }


def test_values_equal_what_the_components_did(tmp_path):
    top, wave, _ = traced_run(tmp_path, cycles=60)
    counter, source, sink = top.child("counter"), top.child("pair").child("src"), top.child("pair").child("dst")
    check_counter(wave, counter, range(0, 60 * PERIOD, PERIOD))
    check_handshake(wave, source, range(0, 60 * PERIOD, PERIOD))
    # The run exercised stalls and back-pressure, and a transfer shows exactly as valid and ready.
    fires = [t for t, e in source.log.items() if e["fire"]]
    assert any(e["valid"] and not e["ready"] for e in source.log.values())
    assert any(not e["valid"] for e in source.log.values())
    edges = range(0, 60 * PERIOD, PERIOD)
    assert [t for t in edges if wave.at("top.pair.src.out.fire", t)] == fires
    assert all(wave.at("top.pair.src.out.fire", t) == (wave.at("top.pair.src.out.valid", t)
                                                       and wave.at("top.pair.src.out.ready", t)) for t in edges)
    assert wave.edges("top.pair.dst.held")[-1][1] == len(sink.taken)
    assert wave.end == 60 * PERIOD  # the last edge is at 59 ns; its cycle ends at 60 ns


def test_handshake_in_another_clock_domain(tmp_path):
    # The sink's 1.6 ns clock returns credits between the source's edges.
    top = counter_and_pair(sink_clock=ClockDomain("slow", 1600))
    top, wave, _ = traced_run(tmp_path, top=top, cycles=80)
    source = top.child("pair").child("src")
    check_handshake(wave, source, range(0, 80 * PERIOD, PERIOD))
    receiver_edges = {t for t, _ in top.child("pair").child("dst").taken}
    # Only occupancy moves at a receiver edge between the source's edges.
    for name in ("valid", "ready", "fire"):
        assert all(t % PERIOD == 0 for t, _ in wave.edges(f"top.pair.src.out.{name}"))
    assert any(t % PERIOD for t, _ in wave.edges("top.pair.src.out.occupancy"))
    assert receiver_edges


def test_pulses_fall_at_the_next_edge_across_idle_time(tmp_path):
    top = Component("top", clock=ClockDomain("clk", PERIOD))
    napper, taker = Napper("src", top, gap=40, bursts=3), Taker("dst", top)
    connect(napper.out, taker.inp, latency=5)
    _, wave, _ = traced_run(tmp_path, top=top, cycles=1000)
    assert napper.sent_at == [0, 40_000, 80_000]
    pulse = [(0, 1), (1000, 0), (40_000, 1), (41_000, 0), (80_000, 1), (81_000, 0)]
    assert wave.edges("top.src.out.valid") == pulse
    assert wave.edges("top.src.out.fire") == pulse
    assert wave.edges("top.src.out.ready") == [(0, 1)]
    assert wave.edges("top.src.out.occupancy") == [(0, 1), (5000, 0), (40_000, 1), (45_000, 0),
                                                   (80_000, 1), (85_000, 0)]
    assert wave.edges("top.src.out.data") == [(0, "0"), (40_000, "1"), (80_000, "2")]
    assert wave.end == 121_000  # the last tick (the napper waking to find nothing to do) + 1 cycle


@model(catalogue=False)
class WideNapper(Napper):
    """A napper whose messages take several cycles on a narrow link."""

    bits = Param(int, 64, "message size")

    def tick(self):
        if self.now < self.resume_at:
            self.sleep()
        elif len(self.sent_at) < self.bursts and self.out.ready:
            self.out.send(len(self.sent_at), bits=self.bits)
            self.sent_at.append(self.now)
            self.resume_at = self.now + self.gap * self.domain.period_ps
            self.sleep_for(self.gap)
        else:
            self.sleep()


def test_ready_returns_when_a_busy_link_frees(tmp_path):
    top = Component("top", clock=ClockDomain("clk", PERIOD))
    napper, taker = WideNapper("src", top, gap=10, bursts=2, bits=64), Taker("dst", top)
    connect(napper.out, taker.inp, latency=3, width_bits=16)
    _, wave, _ = traced_run(tmp_path, top=top, cycles=100)
    # Four beats: the link is busy for the edges at 1, 2 and 3 ns; nothing touches it at 4 ns.
    assert wave.edges("top.src.out.ready") == [(0, 1), (1000, 0), (4000, 1), (11_000, 0), (14_000, 1)]


@pytest.mark.parametrize("sink_period", [None, 1600])
def test_shuffled_tick_order_gives_the_same_bytes(tmp_path, sink_period):
    files = []
    for shuffle_seed in (None, 1, 2, 3):
        top = counter_and_pair(sink_clock=ClockDomain("sink", sink_period) if sink_period else None, pairs=3)
        _, _, path = traced_run(tmp_path, top=top, cycles=80, shuffle_seed=shuffle_seed, name=f"s{shuffle_seed}")
        files.append(path.read_bytes())
    assert all(f == files[0] for f in files[1:])
    assert b"$date" not in files[0]


def test_running_in_slices_gives_the_same_bytes(tmp_path):
    _, _, whole = traced_run(tmp_path, cycles=50, name="whole")
    sim = Simulator(counter_and_pair(), seed=3)
    sliced = tmp_path / "sliced.vcd"
    with VcdTracer(sliced) as tracer:
        sim.add_observer(tracer)
        sim.run(cycles=17)
        # flushed at the end of each run(), under its temporary name until closed
        assert b"$enddefinitions" in tracer.writing_path.read_bytes() and not sliced.exists()
        sim.run(cycles=50)
    assert sliced.read_bytes() == whole.read_bytes()


def test_glob_selection(tmp_path):
    top = counter_and_pair()
    top, wave, _ = traced_run(tmp_path, top=top, select=("*.count", "top.pair.src.out.v*"))
    assert set(wave.vars) == {"top.counter.count", "top.pair.src.out.valid"}
    check_counter_count = [wave.at("top.counter.count", t) == e["count"] for t, e in top.child("counter").log.items()]
    assert all(check_counter_count)
    assert top.child("pair").child("src").out.channel.traced is False  # released at close


def test_unselected_signals_cost_nothing(tmp_path):
    top = counter_and_pair()
    sim = Simulator(top, seed=3)
    with VcdTracer(tmp_path / "run.vcd", select=("top.pair.dst.*",)) as tracer:
        sim.add_observer(tracer)
        sim.run(cycles=5)
        assert [r.path for r in sim.registers if r.var is not None] == ["top.pair.dst.held"]
        assert not any(ch.traced for ch in sim.channels)
    assert all(r.var is None for r in sim.registers)


def test_array_indices_select_literally(tmp_path):
    top = Component("top", clock=ClockDomain("clk", PERIOD))
    for i in range(3):
        LoggedCounter(f"core[{i}]", top)
    _, wave, _ = traced_run(tmp_path, top=top, cycles=4, select=("top.core[1].count", "*[2].odd"))
    assert set(wave.vars) == {"top.core[1].count", "top.core[2].odd"}
    assert wave.edges("top.core[1].count") == [(0, 1), (1000, 2), (2000, 3), (3000, 4)]


def test_a_pattern_matching_nothing_is_an_error(tmp_path):
    sim = Simulator(counter_and_pair())
    with VcdTracer(tmp_path / "run.vcd", select=("top.counter.*", "top.piar.*")) as tracer:
        with pytest.raises(ArchError) as err:
            sim.add_observer(tracer)
            sim.run(cycles=2)
    assert str(err.value) == ("error: trace selection 'top.piar.*' matches no signal\n"
                              "hint: did you mean 'top.pair.*'?")


@pytest.mark.parametrize("start, end", [(10_000, 20_000), (10_500, 19_500), (0, 5000), (30_000, None)])
def test_time_window(tmp_path, start, end):
    top, wave, _ = traced_run(tmp_path, cycles=40, start_ps=start, end_ps=end)
    counter, source = top.child("counter"), top.child("pair").child("src")
    last = 40 * PERIOD if end is None else end
    assert wave.times[0] == start and wave.end == last
    assert all(start <= t <= last for t in wave.times)
    # Every value inside the window, including the initial ones, is the engine's.
    edges = [t for t in range(0, 40 * PERIOD, PERIOD) if t < last]
    inside = [max(start, t) for t in edges if t + PERIOD > start]
    for t in inside:
        edge = t - t % PERIOD
        assert wave.at("top.counter.count", t) == counter.log[edge]["count"]
        assert wave.at("top.pair.src.out.valid", t) == int(source.log[edge]["valid"])
        assert wave.at("top.pair.src.out.ready", t) == int(source.log[edge]["ready"])


def test_window_in_idle_time_shows_the_values_held(tmp_path):
    top = Component("top", clock=ClockDomain("clk", PERIOD))
    napper, taker = Napper("src", top, gap=40, bursts=3), Taker("dst", top)
    connect(napper.out, taker.inp, latency=5)
    _, wave, _ = traced_run(tmp_path, top=top, cycles=1000, start_ps=20_000, end_ps=60_000)
    assert wave.edges("top.src.out.valid") == [(20_000, 0), (40_000, 1), (41_000, 0)]
    assert wave.edges("top.src.out.data") == [(20_000, "0"), (40_000, "1")]
    assert wave.times[0] == 20_000 and wave.end == 60_000


def test_bad_window_is_an_error(tmp_path):
    with pytest.raises(ArchError, match=r"trace window ends \(5 ps\) before it starts \(10 ps\)"):
        VcdTracer(tmp_path / "x.vcd", start_ps=10, end_ps=5)


def run_until_failure(tmp_path, top, error, **sim_args):
    sim = Simulator(top, seed=3, **sim_args)
    path = tmp_path / "failed.vcd"
    with pytest.raises(error):
        with VcdTracer(path) as tracer:
            sim.add_observer(tracer)
            sim.run(cycles=1000)
    tracer.close()  # idempotent
    return sim, Waveform(path)


@pytest.mark.parametrize("error, args", [(ModelAssertion, {"fail_at": 25}),
                                         (KeyboardInterrupt, {"interrupt_at": 25})])
def test_a_failed_run_leaves_a_complete_vcd(tmp_path, error, args):
    top = counter_and_pair(**args)
    sim, wave = run_until_failure(tmp_path, top, error)
    assert sim.now == 25_000
    assert wave.end == 26_000
    check_counter(wave, top.child("counter"), range(0, 25 * PERIOD, PERIOD))
    check_handshake(wave, top.child("pair").child("src"), range(0, 25 * PERIOD, PERIOD))
    assert (tmp_path / "failed.gtkw").exists()


def test_a_deadlock_leaves_a_complete_vcd(tmp_path):
    top = Component("top", clock=ClockDomain("clk", PERIOD))
    source = StallingSource("src", top, pause=0.0)
    sink = SlowSink("dst", top, take=0.0)
    connect(source.out, sink.inp, capacity=3)
    sim, wave = run_until_failure(tmp_path, top, DeadlockError, watchdog_cycles=10)
    assert wave.end == sim.now + PERIOD
    assert wave.edges("top.src.out.occupancy") == [(0, 1), (1000, 2), (2000, 3)]
    assert wave.edges("top.src.out.ready") == [(0, 1), (3000, 0)]
    assert wave.edges("top.src.out.valid") == [(0, 1)]
    assert wave.edges("top.src.out.data")[-1] == (3000, "item 3")


def test_one_tracer_per_simulator(tmp_path):
    sim = Simulator(counter_and_pair())
    first, second = VcdTracer(tmp_path / "a.vcd"), VcdTracer(tmp_path / "b.vcd", gtkw=False)
    sim.add_observer(first)
    sim.add_observer(second)
    with pytest.raises(ArchError, match="already has a VCD tracer writing"):
        sim.run(cycles=2)
    first.close()
    second.close()
    again = Simulator(counter_and_pair())
    again.add_observer(first)
    with pytest.raises(ArchError, match="is closed; make a new one"):
        again.run(cycles=1)


class ChannelLog:
    """Another observer, tracing one channel itself: it logs each edge's handshake flags."""

    def __init__(self, channel):
        self.channel = channel
        self.seen = []

    def begin(self, sim):
        self.channel.traced = True

    def registers(self, t, dirty):
        pass

    def channels(self, t, touched):
        self.seen += [(t, ch.offered, ch.fired, ch.took) for ch in touched if ch is self.channel]

    def flush(self, sim):
        pass


def test_a_channel_another_observer_traces_is_settled_by_the_tracer(tmp_path):
    plain = counter_and_pair(pairs=2)
    channel = plain.children[2].children[0].out.channel  # top.pair1.src.out, not selected below
    alone = ChannelLog(channel)
    sim = Simulator(plain, seed=3)
    sim.add_observer(alone)
    sim.run(cycles=30)
    top = counter_and_pair(pairs=2)
    beside = ChannelLog(top.children[2].children[0].out.channel)
    sim = Simulator(top, seed=3)
    with VcdTracer(tmp_path / "beside.vcd", select=("top.pair.*",), gtkw=False) as tracer:
        sim.add_observer(tracer)
        sim.add_observer(beside)
        sim.run(cycles=30)
    # the tracer clears the flags of every channel used, its own or not
    assert beside.seen == alone.seen and any(fired for _, _, fired, _ in alone.seen)
    assert not any(name.startswith("top.pair1") for name in tracer.signals)


def test_an_observer_committing_before_the_tracer_is_named(tmp_path):
    class Committing(ChannelLog):
        def commit_registers(self, t, dirty):
            pass

    top = counter_and_pair()
    sim = Simulator(top)
    sim.add_observer(Committing(top.children[1].children[0].out.channel))
    with VcdTracer(tmp_path / "late.vcd", gtkw=False) as tracer:
        with pytest.raises(ArchError, match=r"^error: top already has an observer \(Committing\) that commits its "
                                            r"registers or settles its channels; the VCD tracer does both"):
            sim.add_observer(tracer)
            sim.run(cycles=2)


def test_payload_summaries_are_short_ascii():
    assert summarize_payload(42) == "42"
    assert summarize_payload("héllo") == "h\\xe9llo"
    assert summarize_payload(list(range(100))) == "[0, 1, 2, 3, ...]"
    assert len(summarize_payload("x" * 500)) == 40


def test_register_set_to_a_value_of_another_type_is_named(tmp_path):
    @model(catalogue=False)
    class Confused(Component):
        """Puts a float into an int register."""

        def setup(self):
            self.level = self.register("level", 0)

        def tick(self):
            self.level.set(0.5)

    top = Component("top", clock=ClockDomain("clk", PERIOD))
    Confused("c", top)
    with pytest.raises(ModelAssertion, match=r"top.c.level at 0 ps: register traced as an int or bool "
                                              r"\(its initial value was int\) was set to 0.5"):
        traced_run(tmp_path, top=top, cycles=2)


def test_values_wider_than_the_register_are_truncated(tmp_path):
    top = Component("top", clock=ClockDomain("clk", PERIOD))
    counter = LoggedCounter("counter", top)
    counter.count.width = 4
    _, wave, _ = traced_run(tmp_path, top=top, cycles=20)
    assert [wave.at("top.counter.count", t) for t in (0, 14_000, 15_000, 16_000)] == [1, 15, 0, 1]


def test_attached_to_a_running_simulator_it_starts_now(tmp_path):
    top = counter_and_pair()
    sim = Simulator(top, seed=3)
    sim.run(cycles=10)
    path = tmp_path / "late.vcd"
    with VcdTracer(path) as tracer:
        sim.add_observer(tracer)
        sim.run(cycles=20)
    wave = Waveform(path)
    counter = top.child("counter")
    assert wave.times[0] == 9000 and wave.end == 20_000
    assert [wave.at("top.counter.count", t) for t in (9000, 10_000, 19_000)] == \
        [counter.log[t]["count"] for t in (9000, 10_000, 19_000)]


def test_a_tracer_closed_before_any_run_leaves_a_valid_file(tmp_path):
    tracer = VcdTracer(tmp_path / "empty.vcd")
    tracer.close()
    wave = Waveform(tmp_path / "empty.vcd")
    assert wave.vars == {} and (tmp_path / "empty.gtkw").exists()


@model(catalogue=False)
class Stepper(Component):
    """Three registers stepping at every edge, set in registration order or backwards."""

    backwards = Param(bool, False, "set the registers in the reverse of their registration order")

    def setup(self):
        self.regs = [self.register(name, 0, width=8) for name in ("a", "b", "c")]

    def tick(self):
        # a steps by 1, b by 2, c by 3; every fourth edge each is set to the value it holds
        for step, reg in sorted(enumerate(self.regs, 1), reverse=self.backwards):
            reg.set(reg.value + step if self.cycle % 4 else reg.value)


def test_registers_set_out_of_order_at_every_edge_give_the_same_bytes(tmp_path):
    files = []
    for backwards in (False, True):
        top = Component("top", clock=ClockDomain("clk", PERIOD))
        for index in range(3):
            Stepper(f"s{index}", top, backwards=backwards)
        _, wave, path = traced_run(tmp_path, top=top, cycles=30, name=f"backwards{backwards}")
        files.append(path.read_bytes())
    assert files[0] == files[1]
    assert wave.edges("top.s1.c")[:5] == [(0, 0), (1000, 3), (2000, 6), (3000, 9), (5000, 12)]


@model(catalogue=False)
class Rotor(Component):
    """Six registers stepping at every edge, set in registration order, in that order rotated
    by one more at each edge (one run of registers, then the run before it), or odd ones
    first and even ones after (two runs that interleave)."""

    order = Param(str, "straight", "straight, rotated or interleaved")

    def setup(self):
        self.regs = [self.register(f"r{i}", 0, width=8) for i in range(6)]

    def tick(self):
        regs = self.regs
        if self.order == "rotated":
            shift = self.cycle % 6
            regs = regs[shift:] + regs[:shift]
        elif self.order == "interleaved":
            regs = regs[1::2] + regs[::2]
        for index, reg in enumerate(self.regs):
            # (every fifth edge r2 keeps its value: a rotation whose lines skip one)
            if not (index == 2 and self.cycle % 5 == 0):
                reg.next = reg.value + index + 1
        for reg in regs:
            reg.set(reg.next)


def test_a_register_list_rotated_or_interleaved_gives_the_same_bytes(tmp_path):
    files = {}
    for order in ("straight", "rotated", "interleaved"):
        top = Component("top", clock=ClockDomain("clk", PERIOD))
        Rotor("u", top, order=order)
        _, wave, path = traced_run(tmp_path, top=top, cycles=40, name=order)
        files[order] = path.read_bytes()
    assert files["rotated"] == files["straight"] == files["interleaved"]
    assert wave.edges("top.u.r2")[:6] == [(0, 0), (1000, 3), (2000, 6), (3000, 9), (4000, 12), (6000, 15)]
    assert wave.edges("top.u.r5")[:3] == [(0, 6), (1000, 12), (2000, 18)]


@model(catalogue=False)
class Queuer(Component):
    """A state register holding a list (unhashable: no memo can keep its text), and a plain one."""

    def setup(self):
        self.held = self.register("held", "empty")
        self.count = self.register("count", 0, width=4)

    def tick(self):
        count = self.count.value + 1
        self.count.set(count)
        self.held.set(list(range(count % 3)) if count % 4 else "empty")


def test_a_state_register_may_hold_an_unhashable_value(tmp_path):
    top = Component("top", clock=ClockDomain("clk", PERIOD))
    Queuer("q", top)
    _, wave, _ = traced_run(tmp_path, top=top, cycles=9)
    assert wave.edges("top.q.held") == [(0, "[0]"), (1000, "[0, 1]"), (2000, "[]"), (3000, "empty"),
                                        (4000, "[0, 1]"), (5000, "[]"), (6000, "[0]"), (7000, "empty"), (8000, "[]")]
    assert wave.edges("top.q.count")[:3] == [(0, 1), (1000, 2), (2000, 3)]


@model(catalogue=False)
class Scatter(Component):
    """Two 12-bit registers jumping about their values, one of them set negative and too wide."""

    def setup(self):
        self.a = self.register("a", 0, width=12)
        self.b = self.register("b", 0, width=12)
        self.log = {}

    def tick(self):
        a = (self.a.value * 1103 + 17) % 4096
        self.a.set(a)
        self.b.set(-a if a & 1 else a + 3 * 4096)
        self.log[self.sim.now] = (a, (-a if a & 1 else a) & 0xFFF)


def test_registers_whose_bits_become_a_table_mid_run_show_every_value(tmp_path):
    # 12 bits: the bits become a table once 64 values were made, about the 40th edge
    top = Component("top", clock=ClockDomain("clk", PERIOD))
    scatter = Scatter("s", top)
    sim = Simulator(top)
    path = tmp_path / "scatter.vcd"
    with VcdTracer(path, gtkw=False) as tracer:
        sim.add_observer(tracer)
        sim.run(cycles=300)
        assert all(isinstance(reg.var[0], list) for reg in (scatter.a, scatter.b))  # (looked up in the table)
    wave = Waveform(path)
    assert len({a for a, _ in scatter.log.values()}) > 200
    for t, (a, b) in scatter.log.items():
        assert (wave.at("top.s.a", t), wave.at("top.s.b", t)) == (a, b), t
