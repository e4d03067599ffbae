"""Traffic patterns and injection processes follow BookSim's definitions."""

import random

import pytest

from archmodel.models.network.traffic import make_pattern, make_process


@pytest.mark.parametrize("name", ["transpose", "bitcomp", "bitrev", "shuffle", "tornado", "neighbor"])
def test_permutation_patterns_are_permutations(name):
    pattern = make_pattern(name, 64, dims=(8, 8))
    assert sorted(pattern(s, None) for s in range(64)) == list(range(64))


def test_pattern_values():
    rng = random.Random(0)
    assert make_pattern("bitcomp", 64)(5, rng) == 58
    assert make_pattern("transpose", 64, dims=(8, 8))(8 * 2 + 5, rng) == 8 * 5 + 2  # (5, 2) -> (2, 5)
    assert make_pattern("bitrev", 16)(0b0001, rng) == 0b1000
    assert make_pattern("shuffle", 16)(0b1001, rng) == 0b0011
    assert make_pattern("tornado", 64, dims=(8, 8))(0, rng) == 3 + 8 * 3
    assert make_pattern("neighbor", 16, dims=(4, 4))(3, rng) == 0 + 4


def test_uniform_includes_the_source_and_hotspot_prefers_its_spots():
    rng = random.Random(1)
    uniform = make_pattern("uniform", 4)
    assert {uniform(2, rng) for _ in range(200)} == {0, 1, 2, 3}
    hot = make_pattern("hotspot", 64, hotspots=(7,), hotspot_fraction=0.5)
    share = sum(hot(0, rng) == 7 for _ in range(4000)) / 4000
    assert 0.47 < share < 0.55


@pytest.mark.parametrize("name", ["bernoulli", "onoff"])
def test_injection_processes_have_the_asked_rate(name):
    rng = random.Random(2)
    process = make_process(name, 0.2, alpha=0.05, beta=0.2)
    total = sum(process.gap(rng) for _ in range(20000))
    assert abs(20000 / total - 0.2) < 0.01


def test_onoff_is_burstier_than_bernoulli():
    def gap_variance(process):
        rng = random.Random(3)
        gaps = [process.gap(rng) for _ in range(20000)]
        mean = sum(gaps) / len(gaps)
        return sum((g - mean) ** 2 for g in gaps) / len(gaps)
    assert gap_variance(make_process("onoff", 0.1, 0.02, 0.1)) > 2 * gap_variance(make_process("bernoulli", 0.1))
