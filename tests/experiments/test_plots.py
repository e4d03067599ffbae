"""The plots of a sweep's table: the latency-throughput figure finds each curve's zero-load
latency and saturation rate (interpolated where latency reaches twice zero-load; an unstable
point counts as above), leaving failed points out; specs parse exactly."""

import pytest

from archmodel.experiments import parse_plot
from archmodel.experiments.plots import PlotSpec, axis_order, check_plot, plot
from archmodel.kernel import ArchError


def _row(vcs, rate, latency, outcome="measured"):
    return {"vcs": vcs, "rate": rate, "outcome": outcome, "T.net.packet_latency": latency,
            "T.net.network_latency": latency, "T.net.accepted": rate, "T.net.offered": rate}


def test_the_noc_figure_gives_each_curves_saturation_rate(tmp_path):
    rows = [_row(2, 0.1, 10.0), _row(2, 0.2, 14.0), _row(2, 0.3, 30.0),  # 2 x 10 reached between 0.2 and 0.3
            _row(4, 0.1, 12.0), _row(4, 0.2, 13.0), _row(4, 0.3, 15.0, "unstable"),  # unstable: midway
            _row(8, 0.1, 9.0), _row(8, 0.2, None, "deadlock"), _row(8, 0.3, 11.0),  # never reached; failure left out
            _row(16, 0.1, 10.0), _row(16, 0.1, 12.0), _row(16, 0.2, 20.0), _row(16, 0.2, 24.0)]  # two seeds, averaged
    columns = ["T.net.packet_latency", "T.net.network_latency", "T.net.accepted", "T.net.offered"]
    spec = check_plot(parse_plot("noc,hue=vcs"), ["vcs", "rate"], ["vcs", "rate"], columns, "T.net")
    assert spec == PlotSpec("noc", x="rate", hue="vcs", noc="T.net")  # the swept parameter that is not the hue
    with pytest.raises(ArchError, match="--plot noc: say which swept parameter is the offered rate"):
        check_plot(parse_plot("noc"), ["vcs", "rate"], ["vcs", "rate"], columns, "T.net")
    with pytest.raises(ArchError) as caught:
        check_plot(parse_plot("noc"), ["rate"], ["rate"], columns[:2], "T.net")
    assert caught.value.message == "--plot: accepted 'T.net.accepted' is not a column of this sweep (not kept: add it to --metric)"
    found = plot(rows, spec, tmp_path / "noc.png", ["vcs", "rate"])
    assert found[2] == (10.0, pytest.approx(0.2 + 6 / 16 * 0.1))
    assert found[4] == (12.0, pytest.approx(0.25))
    assert found[8] == (9.0, None)
    assert found[16] == (11.0, 0.2)
    assert (tmp_path / "noc.png").read_bytes()[:4] == b"\x89PNG"


def test_plot_specs_parse_exactly():
    assert parse_plot("x=rate,y=T.a,hue=depth") == PlotSpec("xy", "rate", "T.a", "depth")
    assert parse_plot(" noc , x=rate ") == PlotSpec("noc", "rate")


def test_axis_values_with_units_sort_by_size_not_as_text():
    # a sweep over C = 25 Mbit/s, 1.6 Gbit/s, ... keeps the values as written
    written = ["1600 Mbit/s", "25 Mbit/s", "3.2 Gbit/s", '"400 Mbit/s"', 10, 2.5, "uniform", "2 ns", "1 us"]
    ordered = sorted(written, key=axis_order)
    assert ordered[:2] == [2.5, 10] and ordered[-1] == "uniform"
    rates, times = ordered[2:6], ordered[6:8]  # each dimension together, in order of size
    assert (rates, times) == (["25 Mbit/s", '"400 Mbit/s"', "1600 Mbit/s", "3.2 Gbit/s"], ["2 ns", "1 us"])
