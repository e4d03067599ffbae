"""DRAM energy against a DRAMPower-style hand computation, and bank states in the waveform."""

from vcd.reader import TokenKind, tokenize

from archmodel.kernel import Simulator
from archmodel.models.memory import AddressMapping, preset
from archmodel.models.memory.commands import ACT, PRE, RD
from archmodel.models.messages import MemRequest
from archmodel.trace import VcdTracer

from .wiring import controller_with_checker, ported_controller


def test_energy_of_one_closed_page_read_is_the_drampower_hand_computation():
    top, dram, checker = controller_with_checker("DDR4-2400R", page_policy="closed", refresh="none",
                                                 stop_when_done=False)
    log = []
    dram.add_command_listener(lambda cycle, kind, *rest: log.append((cycle, kind)))
    dram.attach_stream([(0, AddressMapping(preset("DDR4-2400R")).encode(bank=1, row=5), False)])
    Simulator(top).run(cycles=100)
    # tRCD 16 after the ACT; the PRE waits for tRAS 39 (tRTP 9 after the RD is sooner); then
    # nothing is left to do (no refresh), so the run ends at cycle 39.
    assert log == [(0, ACT), (16, RD), (39, PRE)]
    assert dram.elapsed_cycles == 40
    # Micron MT40A1G8 (DDR4-2400R, 8 devices per rank): VDD 1.2 V, tCK 0.833 ns, IDD0 48 mA,
    # IDD2N 34 mA, IDD3N 43 mA, IDD4R 135 mA; tRC 55, tRAS 39, tBL 4 cycles. mA x V x ns = pJ.
    devices, vdd, tck = 8, 1.2, 0.833
    act_pre = vdd * (48 * 55 - (43 * 39 + 34 * (55 - 39))) * tck * devices
    read = vdd * (135 - 43) * 4 * tck * devices
    background = vdd * (43 * 39 + 34 * (40 - 39)) * tck * devices  # a row open from cycle 0 to 39
    assert round(act_pre, 3) == 3350.659 and round(read, 3) == 2942.822
    assert abs(dram.energy_nj.value - (act_pre + read + background) / 1000) < 1e-9
    assert checker.violation_count.value == 0


def _bank_state_changes(path, name):
    """(time in ps, value) of one string signal of a VCD, read back with pyvcd."""
    ids, scope, changes, now = {}, [], [], 0
    with open(path, "rb") as stream:
        for token in tokenize(stream):
            if token.kind is TokenKind.SCOPE:
                scope.append(token.scope.ident)
            elif token.kind is TokenKind.UPSCOPE:
                scope.pop()
            elif token.kind is TokenKind.VAR:
                ids[".".join(scope + [token.var.reference])] = token.var.id_code
            elif token.kind is TokenKind.CHANGE_TIME:
                now = token.time_change
            elif token.kind is TokenKind.CHANGE_STRING and token.data.id_code == ids[name]:
                if not changes or changes[-1][1] != token.data.value:
                    changes.append((now, token.data.value))
    return ids, changes


def test_bank_states_appear_in_the_waveform(tmp_path):
    standard = "DDR4-2400R"
    t = preset(standard)
    m = AddressMapping(t)
    addresses = [m.encode(bankgroup=1, bank=2, row=7), m.encode(bankgroup=1, bank=2, row=7, column=3),
                 m.encode(bankgroup=1, bank=2, row=8)]
    reads = [MemRequest(address=a, size_bytes=64, tag=i) for i, a in enumerate(addresses)]
    top, src, dram, sink, checker = ported_controller(standard, reads, cycles=[0, 100, 200])
    sim = Simulator(top)
    path = tmp_path / "dram.vcd"
    with VcdTracer(path, select="top.dram.*") as tracer:
        sim.add_observer(tracer)
        sim.run()
    bank = m.flat_bank(0, 1, 2)
    ids, changes = _bank_state_changes(path, f"top.dram.bank{bank}_state")
    assert "top.dram.command" in ids and "top.dram.data_bus" in ids and "top.dram.rq_depth" in ids
    period = dram.domain.period_ps
    states = [value for _, value in changes]
    # The first read arrives at cycle 1 (one channel cycle): ACT, open tRCD later. The conflict
    # arrives at 201: PRE; tRP later the bank is closed and activated at the same edge.
    assert states == ["closed", "activating", "open", "precharging", "activating", "open"]
    cycles = [time // period for time, _ in changes]
    assert cycles == [0, 1, 1 + t.tRCD, 201, 201 + t.tRP, 201 + t.tRP + t.tRCD]
    assert checker.violation_count.value == 0
