"""The DRAM presets of library/dram.arch through the language: the controller's ``queue``
organisation (shared or DRAMSim3's per-bank command queues) as a preset parameter, on the
single-channel presets and on the multi-channel memories (every channel controller)."""

import re

import pytest

from archmodel.cli import main
from archmodel.kernel import Simulator
from archmodel.lang.elaborate import load
from archmodel.models.memory import DramController


_PRESET_SYSTEM = """import "dram.arch"

system Queues(queue: string = "shared") {
    clock dram = 1200 MHz
    gen  : DramTrafficGenerator(pattern = "random", count = 400, write_fraction = 0.33, capacity_bytes = 8 GiB)
    mem  : DDR4_2400R(queue = queue)
    sink : Sink(stop_after = 400, record = false)
    gen.out -> mem.req
    mem.resp -> sink.inp
}
"""


def _preset_system(tmp_path, text=_PRESET_SYSTEM):
    path = tmp_path / "queues.arch"
    path.write_text(text)
    return path


@pytest.mark.parametrize("queue", ["shared", "per_bank"])
def test_the_dram_library_presets_take_the_controllers_queue_organisation(queue, tmp_path):
    top = load(_preset_system(tmp_path), params={"queue": f'"{queue}"'}).top
    (ctrl,) = [part for part in top.walk() if isinstance(part, DramController)]
    Simulator(top).run()
    assert ctrl.queue == queue and ctrl.client_requests.value == 400
    # Only per-bank command queues hold bursts in the banks' queues.
    assert (ctrl.command_queue_depth.maximum > 0) is (queue == "per_bank")


@pytest.mark.parametrize("memory", ["DDR4(channels = 2)", "HBM2E(channels = 4)"])
@pytest.mark.parametrize("queue", ["shared", "per_bank"])
def test_every_channel_of_a_multi_channel_memory_takes_the_queue_organisation(memory, queue, tmp_path):
    text = _PRESET_SYSTEM.replace("DDR4_2400R(queue = queue)", memory.replace(")", ", queue = queue)"))
    text = text.replace("capacity_bytes = 8 GiB", "capacity_bytes = 1 GiB")  # 4 HBM2E pseudo-channels hold 1 GiB
    top = load(_preset_system(tmp_path, text), params={"queue": f'"{queue}"'}).top
    channels = [part for part in top.walk() if isinstance(part, DramController)]
    Simulator(top).run()
    assert len(channels) == int(memory.split("= ")[1].rstrip(")"))
    assert all(ch.queue == queue for ch in channels)
    assert sum(ch.client_requests.value for ch in channels) >= 400  # pieces of split requests counted apart
    assert all((ch.command_queue_depth.maximum > 0) is (queue == "per_bank") for ch in channels)


def test_a_misspelled_queue_of_a_preset_is_a_located_error_with_a_hint(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _preset_system(tmp_path, _PRESET_SYSTEM.replace('queue: string = "shared"', 'queue: string = "perbank"'))
    assert main(["check", "queues.arch"]) == 2
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    # Located where the user wrote the value; the hint names the library line passing it on.
    assert first == ("queues.arch:3:31: error: parameter 'queue' of 'DramController' must be one of 'shared', "
                     "'per_bank', got \"perbank\"") and "Traceback" not in err
    hint = [line for line in err.splitlines() if line.startswith("hint: ")][0]
    assert hint.startswith("hint: did you mean 'per_bank'? (queue: str = 'shared' -- ")
    assert re.search(r"; the value reaches the model at .*library/dram\.arch:\d+:\d+$", hint)
