"""The sparse backing store: pages on first write, zeros elsewhere, any size and alignment."""

import pytest

from archmodel.models.memory.backing_store import BackingStore


def test_an_untouched_store_of_8_gib_holds_no_page_and_reads_zeros():
    store = BackingStore(8 << 30)
    assert store.read((8 << 30) - 16, 16) == bytes(16)
    assert store.allocated_bytes == 0


def test_a_write_across_pages_allocates_just_those_pages_and_reads_back():
    store = BackingStore(1 << 20, page_bytes=4096)
    data = bytes(range(256)) * 40  # 10240 bytes from 4000: pages 0, 1, 2 and 3
    store.write(4000, data)
    assert sorted(store.pages) == [0, 1, 2, 3]
    assert store.read(4000, len(data)) == data
    assert store.read(3990, 12) == bytes(10) + data[:2]
    assert store.read(4000 + len(data) - 1, 3) == data[-1:] + bytes(2)


def test_a_page_size_must_be_a_power_of_two():
    with pytest.raises(ValueError, match="page_bytes must be a power of two, got 3000"):
        BackingStore(1 << 20, page_bytes=3000)


def _controller(**params):
    from archmodel.kernel import Component
    from archmodel.models.memory import DramController

    return DramController("dram", Component("top"), standard="HBM2E", **params)


def test_a_controller_backdoor_spans_bursts_and_pages_from_its_base_address():
    dram = _controller(base_address=0x8000_0000)
    data = bytes(range(251)) * 33  # 8283 bytes from 7 bytes before a page: three pages
    dram.backdoor_write(0x8000_0ff9, data)
    assert dram.backdoor_read(0x8000_0ff9, len(data)) == data
    assert dram.backdoor_read(0x8000_0ff0, 9) == bytes(9)
    assert sorted(dram.store.pages) == [0, 1, 2, 3]
    assert dram.size_bytes == 256 << 20


def test_a_backdoor_access_outside_the_controller_is_a_value_error_naming_the_range():
    dram = _controller(base_address=0x8000_0000)
    with pytest.raises(ValueError) as err:
        dram.backdoor_write(0x8fff_fffc, bytes(8))
    assert str(err.value) == ("top.dram: backdoor write of 8 bytes at 0x8ffffffc is outside this memory "
                              "(0x80000000 .. 0x8fffffff, 268435456 bytes)")
    with pytest.raises(ValueError) as err:
        dram.backdoor_read(0x7fff_ffff, 2)
    assert str(err.value) == ("top.dram: backdoor read of 2 bytes at 0x7fffffff is outside this memory "
                              "(0x80000000 .. 0x8fffffff, 268435456 bytes)")
