"""Where imports may come from (beside the importing file, the bundled library, folders the
user allows with --import-path), what an import outside them reports (nothing of the file's
content), source files that are not UTF-8, and the manifest's list of every file read."""

import hashlib
import json

from archmodel.cli import main

SYSTEM = """system S {
    src : Source(count = 3)
    sink : Sink()
    src.out -> sink.inp
}
"""


def _check(capsys, *argv):
    code = main(["check", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_an_import_of_a_file_that_is_not_arch_is_refused_without_quoting_it(tmp_path, capsys):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=hunter2\n")
    for target in (secret, "/proc/self/environ"):
        top = tmp_path / "top.arch"
        top.write_text(f'import "{target}"\n' + SYSTEM)
        code, text = _check(capsys, top)
        assert code == 2
        assert f"top.arch:1:8: error: import '{target}' does not name a .arch file" in text
        assert "hunter2" not in text and "PATH=" not in text


def test_an_import_that_climbs_out_of_its_folder_is_refused_unless_the_folder_is_allowed(tmp_path, capsys):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "parts.arch").write_text("const SECRET_LOOKING = 1\n")
    project = tmp_path / "project" / "sub"
    project.mkdir(parents=True)
    top = project / "top.arch"
    top.write_text('import "../../shared/parts.arch"\n' + SYSTEM)
    code, text = _check(capsys, top)
    assert code == 2
    assert "error: import '../../shared/parts.arch' leaves the folders imports may come from" in text
    assert f'import "parts.arch" and give --import-path {shared}' in text
    assert "SECRET_LOOKING" not in text
    # the way the hint says works
    top.write_text('import "parts.arch"\n' + SYSTEM)
    assert _check(capsys, top)[0] == 2  # not found without the folder allowed
    assert _check(capsys, top, "--import-path", shared)[0] == 0


def test_a_link_beside_the_file_that_points_outside_is_refused(tmp_path, capsys):
    outside = tmp_path / "elsewhere.arch"
    outside.write_text("const X = 1\n")
    folder = tmp_path / "here"
    folder.mkdir()
    (folder / "alias.arch").symlink_to(outside)
    top = folder / "top.arch"
    top.write_text('import "alias.arch"\n' + SYSTEM)
    code, text = _check(capsys, top)
    assert code == 2 and "leaves the folders imports may come from" in text


def test_imports_still_come_from_beside_the_file_and_from_the_library(tmp_path, capsys):
    (tmp_path / "mine.arch").write_text("const N = 3\n")
    top = tmp_path / "top.arch"
    top.write_text('import "mine.arch"\nimport "stages.arch"\n' + SYSTEM.replace("count = 3", "count = N"))
    assert _check(capsys, top) == (0, f"ok: {top}: system S, 3 components (3 instances), 1 channels, 1 clock domain\n")


def test_a_source_that_is_not_utf8_names_the_first_bad_byte_and_quotes_nothing(tmp_path, capsys):
    top = tmp_path / "latin1.arch"
    top.write_bytes(SYSTEM.replace("src : Source", "src : Source // caf\xe9").encode("latin-1"))
    code, text = _check(capsys, top)
    assert code == 2
    assert f"{top}:2:24: error: the file is not UTF-8 text: byte 0xe9 here is not a character" in text
    assert "Traceback" not in text and "caf" not in text


def test_a_byte_order_mark_is_read_as_nothing(tmp_path, capsys):
    top = tmp_path / "bom.arch"
    top.write_bytes(b"\xef\xbb\xbf" + SYSTEM.encode())
    assert _check(capsys, top)[0] == 0


def test_the_manifest_lists_every_file_read_with_its_sha256(tmp_path, capsys):
    part = tmp_path / "mine.arch"
    part.write_text("const N = 3\n")
    top = tmp_path / "top.arch"
    top.write_text('import "mine.arch"\n' + SYSTEM.replace("count = 3", "count = N"))
    stats = tmp_path / "s.json"
    assert main(["run", str(top), "--stats", str(stats), "-q"]) == 0
    files = json.loads(stats.read_text())["manifest"]["files_read"]
    digest = {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in (top, part)}
    assert {name.rsplit("/", 1)[-1]: sha for name, sha in files.items()} == digest
