import math

import pytest

import archmodel.models
from archmodel.kernel import catalogue
from archmodel.models.basic import Crossbar, DelayLine, Fifo, RoundRobinArbiter, Sink, Source, Sram
from archmodel.models.messages import MemRequest, MemResponse, Packet

BASIC = [Crossbar, DelayLine, Fifo, RoundRobinArbiter, Sink, Source, Sram]


def test_importing_the_models_package_lists_every_basic_model():
    assert archmodel.models.basic.Fifo is Fifo
    models = catalogue()
    for klass in BASIC:
        assert models[klass.model_name] is klass


@pytest.mark.parametrize("klass", BASIC, ids=lambda k: k.__name__)
def test_documentation_reads_like_a_datasheet(klass):
    text = klass.documentation()
    assert text.startswith(f"{klass.__name__}  (archmodel.models.basic.")
    assert "Leaves out" in text
    for title, decls in (("parameters:", klass._param_decls), ("ports:", klass._port_decls),
                         ("statistics:", klass._stat_decls)):
        section = text.split(title, 1)[1]
        for name, decl in decls.items():
            assert f"  {name}: " in section
            assert decl.doc, f"{klass.__name__}.{name} has no description"
    summary = klass.summary_line()
    assert summary.endswith(".") and len(summary) < 200


def test_fifo_datasheet_lines():
    text = Fifo.documentation()
    assert "  depth: int = 2 [messages] -- messages the queue holds" in text
    assert "  inp: in -- messages to queue" in text
    assert "  full_cycles: counter [cycles] -- edges after which the queue held depth messages" in text


def test_messages_say_how_many_bits_they_occupy_on_a_link():
    assert Packet(source=0, dest=1, size_bits=256).size_bits == 256
    assert MemRequest(address=0, size_bytes=8).size_bits == 64
    assert MemRequest(address=0, size_bytes=8, is_write=True, data=bytes(8)).size_bits == 128
    assert MemResponse(tag=0, data=bytes(4)).size_bits == 32
    assert MemResponse(tag=0).size_bits == 64
    assert math.ceil(MemRequest(address=0, size_bytes=4, is_write=True, data=bytes(4)).size_bits / 32) == 3


def test_messages_are_immutable():
    packet = Packet(source=0, dest=1)
    with pytest.raises(AttributeError):
        packet.dest = 2
