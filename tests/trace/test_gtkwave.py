"""GTKWave reads our files: every trace of the .gtkw is displayed, values at chosen times are the
engine's, the view is zoomed to the whole run, and failed runs still open."""

import os
import re
import shutil
import signal
import subprocess

import pytest

from archmodel.kernel import ClockDomain, DeadlockError, ModelAssertion, Simulator
from archmodel.trace import VcdTracer

from .designs import Waveform, counter_and_pair
from .test_vcd_tracer import PERIOD, run_until_failure

INSTALL = "install gtkwave and xvfb (apt-get install -y gtkwave xvfb); .ci/run does this"

# GTKWave stops on a Tcl error and waits for a user, so everything is caught and it always quits.
SCRIPT = r"""
if {[catch {
    set out [open {%(out)s} w]
    foreach name [gtkwave::getDisplayedSignals] { puts $out "displayed $name" }
    puts $out "span [gtkwave::getMinTime] [gtkwave::getMaxTime] [gtkwave::getWindowStartTime] [gtkwave::getWindowEndTime]"
    foreach t {%(times)s} {
        gtkwave::setMarker $t
        foreach name [gtkwave::getDisplayedSignals] {
            puts $out "value $t $name [gtkwave::getTraceValueAtMarkerFromName $name]"
        }
    }
    close $out
} err]} {
    catch { set out [open {%(out)s} a]; puts $out "error $err"; close $out }
}
catch { gtkwave::/File/Quit }
exit
"""


def gtkwave_view(tmp_path, vcd_path, gtkw_path, times):
    """Open the pair in GTKWave (headless) and return what it displays and the values it shows."""
    missing = [tool for tool in ("gtkwave", "xvfb-run") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"{' and '.join(missing)} not found: {INSTALL}")
    out = tmp_path / f"{vcd_path.stem}.gtkwave.txt"
    script = tmp_path / f"{vcd_path.stem}.tcl"
    script.write_text(SCRIPT % {"out": out, "times": " ".join(map(str, times))})
    # xvfb-run's X authority file in tmp_path (else it makes a folder in /tmp), and GTKWave, the
    # X server and xvfb-run in a session of their own, all killed if GTKWave hangs: killing
    # xvfb-run alone would leave its X server running and its folder behind.
    run = subprocess.Popen(["xvfb-run", "-a", "-f", str(tmp_path / "Xauthority"), "gtkwave", "-S", str(script),
                            str(vcd_path), str(gtkw_path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           cwd=tmp_path, start_new_session=True)
    try:
        run.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
        pytest.fail(f"gtkwave did not quit within 30 s on {vcd_path}")
    lines = out.read_text().splitlines()
    errors = [line for line in lines if line.startswith("error")]
    assert not errors, errors
    displayed = [line.split(" ", 1)[1] for line in lines if line.startswith("displayed ")]
    span = next(tuple(int(x) for x in line.split()[1:]) for line in lines if line.startswith("span "))
    values = {}
    for line in lines:
        if line.startswith("value "):
            _, t, name, *rest = line.split(" ", 3)
            values[int(t), name] = rest[0] if rest else ""
    return displayed, span, values


def saved_traces(gtkw_path):
    """The trace names of a .gtkw, in order (not directives, flags, comments or group markers)."""
    return [line for line in gtkw_path.read_text().splitlines()
            if line and line[0] not in "[*@-"]


def vcd_name(trace):
    return re.sub(r"\[\d+:0\]$", "", trace)


def check_values(wave, values):
    for (t, trace), shown in values.items():
        expected = wave.at(vcd_name(trace), t)
        if isinstance(expected, float):
            assert float(shown) == pytest.approx(expected, rel=1e-12), (t, trace)
        else:
            assert shown == str(expected), (t, trace, shown, expected)


def test_gtkwave_shows_our_traces_and_values(tmp_path):
    top = counter_and_pair(sink_clock=ClockDomain("slow", 1600))
    sim = Simulator(top, seed=5)
    path = tmp_path / "run.vcd"
    with VcdTracer(path) as tracer:
        sim.add_observer(tracer)
        sim.run(cycles=30)
    wave = Waveform(path)
    traces = saved_traces(tracer.gtkw_path)
    assert len(traces) == 10 and {vcd_name(t) for t in traces} == set(wave.vars)
    times = [0, 500, 3000, 7200, 12_800, 21_000, 29_999]
    displayed, (first, last, window_start, window_end), values = gtkwave_view(tmp_path, path, tracer.gtkw_path, times)
    assert displayed == traces
    assert (first, last) == (0, 30 * PERIOD)
    assert window_start == 0 and last <= window_end < 1.5 * last  # zoomed to fit
    assert len(values) == len(times) * len(traces)
    check_values(wave, values)
    # ...and those are the values the components logged.
    counter, source = top.child("counter"), top.child("pair").child("src")
    assert values[7200, "top.counter.count[7:0]"] == str(counter.log[7000]["count"])
    assert values[7200, "top.counter.phase"] == counter.log[7000]["phase"]
    assert values[12_800, "top.pair.src.out.valid"] == str(int(source.log[12_000]["valid"]))
    assert values[12_800, "top.pair.src.out.ready"] == str(int(source.log[12_000]["ready"]))


def test_save_file_groups_each_component(tmp_path):
    path = tmp_path / "run.vcd"
    sim = Simulator(counter_and_pair(), seed=5)
    with VcdTracer(path) as tracer:
        sim.add_observer(tracer)
        sim.run(cycles=3)
    text = tracer.gtkw_path.read_text()
    assert '[dumpfile] "run.vcd"' in text
    assert '[savefile] "run.gtkw"' in text  # its own final name, not the one it was written under
    groups = [line[1:] for line in text.splitlines() if line.startswith("-")]
    # Each group is opened and closed: component, then its output ports nested inside.
    assert groups == ["top.counter", "top.counter", "top.pair.src", "top.pair.src.out", "top.pair.src.out",
                      "top.pair.src", "top.pair.dst", "top.pair.dst"]
    assert saved_traces(tracer.gtkw_path)[:4] == ["top.counter.count[7:0]", "top.counter.phase",
                                                  "top.counter.odd", "top.counter.mean"]


@pytest.mark.parametrize("failure", ["assertion", "interrupt", "deadlock"])
def test_gtkwave_opens_the_vcd_of_a_failed_run(tmp_path, failure):
    if failure == "deadlock":
        top = counter_and_pair()
        top.child("pair").child("dst").take = 0.0
        error, sim_args = DeadlockError, {"watchdog_cycles": 10}
    else:
        top = counter_and_pair(**{"fail_at" if failure == "assertion" else "interrupt_at": 12})
        error, sim_args = (ModelAssertion if failure == "assertion" else KeyboardInterrupt), {}
    sim, wave = run_until_failure(tmp_path, top, error, **sim_args)
    path = tmp_path / "failed.vcd"
    times = [0, sim.now - PERIOD, sim.now]
    displayed, (first, last, _, _), values = gtkwave_view(tmp_path, path, path.with_suffix(".gtkw"), times)
    assert displayed == saved_traces(path.with_suffix(".gtkw")) and len(displayed) == 10
    assert (first, last) == (0, sim.now + PERIOD) == (0, wave.end)
    check_values(wave, values)
