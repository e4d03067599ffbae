"""Statistics: units, exact percentiles, time-weighted levels, derived figures, the table."""

from archmodel.kernel import (Bandwidth, Component, Counter, Distribution, Level, Simulator,
                              Utilisation, model, stats_dict, stats_table)


@model(catalogue=False)
class Meter(Component):
    """Moves 64 bytes on even cycles for 10 cycles; samples latencies 1..100; a level 0/4."""

    moved = Counter("bytes", "bytes moved")
    busy = Counter("cycles", "cycles moving data")
    latency = Distribution("cycles", "request latency")
    queue = Level("entries", "queue occupancy")
    bandwidth = Bandwidth("moved", "bytes moved per second")
    utilisation = Utilisation("busy", "share of cycles moving data")

    def tick(self):
        if self.cycle % 2 == 0:
            self.moved.add(64)
            self.busy.add()
        if self.cycle == 0:
            for value in range(1, 101):
                self.latency.sample(value)
        if self.cycle == 5:
            self.queue.set(4)
        if self.cycle == 9:
            self.sleep()


def run_meter():
    top = Component("top")
    meter = Meter("m", top)
    Simulator(top).run()
    return meter


def test_derived_figures():
    meter = run_meter()
    assert meter.elapsed_cycles == 10
    assert meter.moved.value == 320
    assert meter.bandwidth.summary()["value"] == 32.0  # 320 B in 10 ns
    assert meter.utilisation.summary()["value"] == 50.0
    assert meter.latency.summary() == {"value": 50.5, "count": 100, "min": 1.0, "p50": 50.0,
                                       "p99": 99.0, "max": 100.0}
    # 0 entries for cycles 0-4, 4 entries for cycles 5-9: time-weighted mean 2.
    assert meter.queue.summary() == {"value": 2.0, "max": 4}


def test_table_and_json_carry_names_units_and_descriptions():
    meter = run_meter()
    table = stats_table(meter.stats)
    lines = table.splitlines()
    assert lines[0].split() == ["statistic", "value", "unit", "detail", "description"]
    assert any(line.startswith("top.m.bandwidth") and "32" in line and "GB/s" in line for line in lines)
    data = stats_dict(meter.stats)
    assert data["top.m.latency"]["unit"] == "cycles"
    assert data["top.m.latency"]["p99"] == 99.0
    assert data["top.m.moved"] == {"unit": "bytes", "description": "bytes moved", "value": 320}
