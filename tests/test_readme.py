"""The README's worked example is code: run its component and its test as written."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_the_worked_example_defines_a_component_and_its_test_passes():
    blocks = python_blocks()
    assert len(blocks) == 2
    namespace: dict = {}
    exec(compile(blocks[0] + blocks[1], str(README), "exec"), namespace)
    namespace["test_running_sum_with_stalls"]()
    assert "Outputs the running sum" in namespace["RunningSum"].documentation()


def test_the_readme_test_command_is_what_ci_runs():
    command = re.search(r"```sh\n(scripts/install-test-tools.*?)\n```", README.read_text()).group(1)
    ci = (README.parent / ".ci" / "run").read_text()
    assert command in ci.splitlines()


def test_the_arch_example_checks_and_runs(tmp_path, capsys):
    from archmodel.cli import main

    text = README.read_text()
    section = text[text.index("## Describing a system"):]
    source = re.search(r"```\n(.*?)```", section, flags=re.S).group(1)
    path = tmp_path / "readme.arch"
    path.write_text(source)
    assert main(["check", str(path)]) == 0
    assert main(["run", str(path), "-q", "--vcd", str(tmp_path / "readme.vcd")]) == 0
    assert "stopped at" in capsys.readouterr().err
