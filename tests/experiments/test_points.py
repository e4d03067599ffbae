"""The points of a sweep: specs parsed exactly, grids in nested-loop order, zips, random
samples reproducible from their seed and inside their ranges, bad specs rejected with the
reason."""

import pytest

from archmodel.experiments import generate, parse_axis
from archmodel.experiments.points import display_value
from archmodel.kernel import ArchError


def test_ranges_and_lists_parse_to_expression_text():
    assert parse_axis("rate=0.05:0.25:0.05").values == ("0.05", "0.1", "0.15", "0.2", "0.25")
    assert parse_axis("depth=2:8:2").values == ("2", "4", "6", "8")  # integers stay integers (int parameters)
    assert parse_axis("depth=2:7:2").values == ("2", "4", "6")  # stop inclusive only when reached
    assert parse_axis('traffic="uniform","a,b",f(1, 2)').values == ('"uniform"', '"a,b"', "f(1, 2)")
    assert parse_axis("hop=1 ns, 2 ns").values == ("1 ns", "2 ns")
    ranged = parse_axis("rate=0.1:0.4")
    assert (ranged.values, ranged.low, ranged.high, ranged.integer) == (None, 0.1, 0.4, False)
    assert parse_axis("depth=2:16").integer


def test_values_show_as_numbers_and_unquoted_strings():
    assert [display_value(t) for t in ("4", "-3", "0.25", "1e-05", '"uniform"', "2 ns", "true")] == \
        [4, -3, 0.25, 1e-05, "uniform", "2 ns", True]


@pytest.mark.parametrize("spec, message", [
    ("rate", "--sweep 'rate' is not NAME=START:STOP:STEP, NAME=LOW:HIGH or NAME=V1,V2,..."),
    ("2x=1,2", "--sweep '2x=1,2' is not NAME=START:STOP:STEP, NAME=LOW:HIGH or NAME=V1,V2,..."),
    ("rate=0.1:x:0.1", "--sweep 'rate=0.1:x:0.1': a range is START:STOP:STEP or LOW:HIGH of plain numbers"),
    ("rate=1:2:3:4", "--sweep 'rate=1:2:3:4': a range is START:STOP:STEP or LOW:HIGH of plain numbers"),
    ("rate=0.5:0.1:0.1", "--sweep 'rate=0.5:0.1:0.1': the range ends (0.1) before it starts (0.5)"),
    ("rate=0.1:0.5:0", "--sweep 'rate=0.1:0.5:0': the step must be positive, got 0"),
    ("depth=2,,4", "--sweep 'depth=2,,4' has an empty value"),
])
def test_bad_specs_say_what_is_wrong(spec, message):
    with pytest.raises(ArchError) as caught:
        parse_axis(spec)
    assert caught.value.message == message


def test_a_grid_is_every_combination_first_axis_outermost_with_the_fixed_parameters_and_seeds():
    points = generate([parse_axis("a=1,2"), parse_axis("b=x,y")], fixed={"n": "5"}, seed=7, seeds=2)
    assert [(p.values, p.seed) for p in points] == [
        ({"n": 5, "a": a, "b": b}, s) for a in (1, 2) for b in ("x", "y") for s in (7, 8)]
    assert points[0].overrides == {"n": "5", "a": "1", "b": "x"}


def test_zip_pairs_values_and_needs_equal_lengths():
    points = generate([parse_axis("a=1,2,3"), parse_axis("b=4:6:1")], mode="zip")
    assert [p.values for p in points] == [{"a": 1, "b": 4}, {"a": 2, "b": 5}, {"a": 3, "b": 6}]
    with pytest.raises(ArchError, match="must be equally long: a has 3, b has 2"):
        generate([parse_axis("a=1,2,3"), parse_axis("b=4,5")], mode="zip")


def test_random_points_are_reproducible_inside_their_ranges_and_distinct():
    axes = [parse_axis("rate=0.1:0.4"), parse_axis("depth=2:16"), parse_axis("vcs=1,2,4"), parse_axis("x=0:1:0.25")]
    points = generate(axes, mode="random", samples=50, seed=3)
    assert points == generate(axes, mode="random", samples=50, seed=3)
    assert points != generate(axes, mode="random", samples=50, seed=4)
    assert len(points) == len({tuple(p.values.items()) for p in points}) == 50  # continuous: no repeats
    for p in points:
        v = p.values
        assert 0.1 <= v["rate"] <= 0.4 and isinstance(v["rate"], float)
        assert 2 <= v["depth"] <= 16 and isinstance(v["depth"], int)
        assert v["vcs"] in (1, 2, 4) and v["x"] in (0.0, 0.25, 0.5, 0.75, 1.0)
    # a draw that repeats an earlier point is dropped: two lists of two values give at most 4
    small = generate([parse_axis("a=1,2"), parse_axis("b=1,2")], mode="random", samples=40, seed=0)
    assert sorted(tuple(p.values.values()) for p in small) == [(1, 1), (1, 2), (2, 1), (2, 2)]


@pytest.mark.parametrize("kwargs, message", [
    (dict(axes=["rate=0.1:0.2"]), "--sweep rate is a range without a step"),
    (dict(axes=["a=1", "a=2"]), "--sweep a is given twice"),
    (dict(axes=["a=1"], fixed={"a": "2"}), "'a' is both swept (--sweep) and fixed (-p)"),
    (dict(axes=["a=1"], mode="random"), "random points need --samples N (at least 1)"),
    (dict(axes=["a=1"], seeds=0), "--seeds must be at least 1, got 0"),
])
def test_bad_combinations_say_what_is_wrong(kwargs, message):
    axes = [parse_axis(a) for a in kwargs.pop("axes")]
    with pytest.raises(ArchError) as caught:
        generate(axes, **kwargs)
    assert caught.value.message.startswith(message)
