"""Golden diagnostics: ``archmodel check errors/NAME.arch`` must print exactly ``NAME.err``.

Set ``ARCH_UPDATE_GOLDEN=1`` to rewrite the .err files after a deliberate change, then read
the diff.
"""

import os
from pathlib import Path

import pytest

from archmodel.cli import main

ERRORS = Path(__file__).parent / "errors"
CASES = sorted(p.stem for p in ERRORS.glob("*.arch"))


def test_every_listed_diagnostic_has_a_golden_case():
    required = {
        "syntax_missing_brace", "syntax_missing_colon", "syntax_arrow_typo", "syntax_stray_token",
        "syntax_end_of_file", "unknown_model", "unknown_parameter", "unknown_routing", "unknown_allocator",
        "unknown_preset", "unknown_engine", "param_unit_declared", "missing_parameter", "wrong_type",
        "wrong_unit", "out_of_range", "unknown_port", "index_out_of_range", "output_to_output",
        "input_driven_twice", "width_mismatch", "unconnected_port", "unknown_import", "import_cycle",
        "duplicate_name", "unbound_name", "division_by_zero", "too_many_instances", "recursion_too_deep",
        "value_passed_on",
    }
    assert required <= set(CASES)
    assert all((ERRORS / f"{case}.err").is_file() for case in CASES)


@pytest.mark.parametrize("case", CASES)
def test_check_prints_the_golden_diagnostic(case, monkeypatch, capsys):
    monkeypatch.chdir(ERRORS)
    code = main(["check", "--plugin", "../plugin_models.py", f"{case}.arch"])
    out, err = capsys.readouterr()
    golden = ERRORS / f"{case}.err"
    if os.environ.get("ARCH_UPDATE_GOLDEN"):
        golden.write_text(err)
    assert code == 2
    assert out == ""
    assert "Traceback" not in err
    assert err == golden.read_text()
