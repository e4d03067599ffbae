"""Shared machinery of the RTL cross-checks: run an Icarus Verilog testbench on a stimulus
pattern, read back its per-cycle trace, present the same pattern to archmodel components,
and compare the two traces cycle by cycle.

A trace is a list of rows, one per cycle; a row maps signal names to integers (or ``None``
for a don't-care). Both testbenches print ``name=value`` pairs on lines that start with
``cycle=``, sampled one time unit before each rising edge; see ``tb.v``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from archmodel.kernel import Component, Param, model

RTL_DIR = Path(__file__).parent
MISSING_ICARUS = "install iverilog (apt-get install -y iverilog); .ci/run does this"
STIMULUS_FILE = "stimulus.mem"


def require_icarus() -> None:
    """Fail (never skip) the calling test when Icarus Verilog is not installed."""
    missing = [tool for tool in ("iverilog", "vvp") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"{' and '.join(missing)} not found on PATH: {MISSING_ICARUS}", pytrace=False)


def run_testbench(workdir: Path, top: str, sources: list[str], pattern: list[tuple[int, int]],
                  parameters: dict[str, int]) -> list[dict]:
    """Compile ``sources`` (files in tests/rtl) with ``top`` as the root into ``workdir``, run it
    on ``pattern`` (one two-bit line per cycle, plus one line the last edge looks ahead to) and
    return the trace it prints."""
    require_icarus()
    lines = [f"{a:b}{b:b}" for a, b in pattern] + ["00"]
    (workdir / STIMULUS_FILE).write_text("\n".join(lines) + "\n")
    image = workdir / f"{top}.vvp"
    command = ["iverilog", "-g2005", "-Wall", "-s", top, "-o", str(image)]
    command += [f"-P{top}.{name}={value}" for name, value in parameters.items()]
    command += [str(RTL_DIR / source) for source in sources]
    compiled = subprocess.run(command, capture_output=True, text=True, timeout=60)
    if compiled.returncode != 0:
        pytest.fail(f"iverilog failed ({' '.join(command)}):\n{compiled.stdout}{compiled.stderr}", pytrace=False)
    ran = subprocess.run(["vvp", "-n", image.name], cwd=workdir, capture_output=True, text=True, timeout=60)
    output = ran.stdout + ran.stderr
    # $readmemb only warns about a short or malformed stimulus file; treat that as fatal.
    complaints = [line for line in output.splitlines() if "ERROR" in line or "WARNING" in line.upper()]
    if ran.returncode != 0 or complaints:
        pytest.fail(f"vvp {image.name} failed (exit {ran.returncode}):\n" + "\n".join(complaints or [output]),
                    pytrace=False)
    trace = [parse_row(line) for line in ran.stdout.splitlines() if line.startswith("cycle=")]
    if len(trace) != len(pattern):
        pytest.fail(f"{top} printed {len(trace)} cycles, expected {len(pattern)}:\n{output}", pytrace=False)
    return trace


def parse_row(line: str) -> dict:
    """``cycle=3 in_valid=1 ...`` as a dict of ints; an x or z value is an error, not a 0."""
    row = {}
    for pair in line.split():
        name, _, text = pair.partition("=")
        try:
            row[name] = int(text)
        except ValueError:
            pytest.fail(f"RTL signal '{name}' is {text!r} (undefined) in: {line}", pytrace=False)
    return row


def format_row(row: dict) -> str:
    return " ".join(f"{name}={'-' if value is None else value}" for name, value in row.items())


def first_mismatch(rtl: list[dict], arch: list[dict], context: int = 3) -> str | None:
    """``None`` when both traces agree on every signal in every cycle; otherwise a report of the
    first differing cycle and signal with the few cycles around it from both sides."""
    if len(rtl) != len(arch):
        return f"the RTL trace has {len(rtl)} cycles and the archmodel trace {len(arch)}"
    for cycle, (rtl_row, arch_row) in enumerate(zip(rtl, arch)):
        if set(rtl_row) != set(arch_row):
            return (f"cycle {cycle}: the traces sample different signals: "
                    f"RTL {sorted(rtl_row)}, archmodel {sorted(arch_row)}")
        for name in rtl_row:
            if rtl_row[name] != arch_row[name]:
                lines = [f"cycle {cycle}: signal '{name}' is {rtl_row[name]} in RTL "
                         f"but {arch_row[name]} in archmodel"]
                for k in range(max(0, cycle - context), min(len(rtl), cycle + context + 1)):
                    lines.append(f"  rtl  {format_row(rtl[k])}")
                    lines.append(f"  arch {format_row(arch[k])}")
                return "\n".join(lines)
    return None


def longest_run(flags) -> int:
    """The length of the longest stretch of consecutive true values."""
    longest = current = 0
    for flag in flags:
        current = current + 1 if flag else 0
        longest = max(longest, current)
    return longest


@model(catalogue=False)
class Stimulus(Component):
    """The testbenches' stimulus registers: during cycle ``k`` the two one-bit registers named
    by ``signals`` hold ``pattern[k]``, loaded at edge ``k - 1`` (they start at ``pattern[0]``).
    Other components read them as registered wires, e.g. ``stimulus.out_ready.value``."""

    pattern = Param(tuple, doc="a pair of bits per cycle, in the order of signals")
    signals = Param(tuple, ("in_valid", "out_ready"), "the names of the two registers")

    def setup(self):
        self.bits = [self.register(name, bit, 1) for name, bit in zip(self.signals, self.pattern[0])]
        for reg in self.bits:
            setattr(self, reg.name, reg)

    def tick(self):
        # Past the end of the pattern the testbench reads its padding line, 00.
        following = self.cycle + 1
        values = self.pattern[following] if following < len(self.pattern) else (0, 0)
        for reg, bit in zip(self.bits, values):
            reg.set(bit)
