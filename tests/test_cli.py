"""The command line, in-process through cli.main and once through python -m."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import hprofkit
from hprofkit.cli import main
from conftest import INVENTORY_BY_NAME, dump_path

# Depends on how hprofkit is installed (package data, entry points, extras):
# .ci/run runs these tests against the wheel too.
pytestmark = pytest.mark.installed


def test_info(capsys):
    name = "leakcanary__leak_service_binder.hprof"
    assert main(["info", str(dump_path(name))]) == 0
    out = capsys.readouterr().out
    assert "JAVA PROFILE 1.0.3, identifier size 4" in out
    assert str(INVENTORY_BY_NAME[name]["timestamp_ms"]) in out
    assert "HEAP_DUMP_SEGMENT" in out and "647" in out


def test_info_of_compressed_input_shows_both_sizes(capsys):
    assert main(["info", str(dump_path("py-hprof__example-java.hprof.bz2"))]) == 0
    out = capsys.readouterr().out
    assert "bzip2" in out and "3.6 MiB decompressed" in out


def test_stats_json_shape(capsys):
    name = "platform_tools_base__dialer.android-hprof"
    assert main(["stats", str(dump_path(name)), "--json", "--top", "5"]) == 0
    doc = json.loads(capsys.readouterr().out)
    entry = INVENTORY_BY_NAME[name]
    assert doc["version"] == "1.0.3" and doc["id_size"] == 4
    assert doc["records"]["HEAP_DUMP_SEGMENT"]["count"] == entry["top_level_records"]["0x1C"]
    assert doc["subrecords"]["INSTANCE_DUMP"]["count"] == entry["instances"]
    assert doc["subrecords"]["HEAP_DUMP_INFO"]["count"] == entry["android_heap_dump_info"]
    assert len(doc["histogram"]) == 5
    assert set(doc["histogram"][0]) == {"class", "class_id", "instances", "shallow_size"}
    sizes = [row["shallow_size"] for row in doc["histogram"]]
    assert sizes == sorted(sizes, reverse=True)


def test_stats_text(capsys):
    assert main(["stats", str(dump_path("mat__sun_jdk6_32bit.hprof")), "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "INSTANCE_DUMP" in out and "top 3 of" in out


def test_stats_object_renders_for_notebooks():
    stats = hprofkit.stats(dump_path("platform_art__RI.hprof"))
    html = stats._repr_html_()
    assert "<table>" in html and "STRING" in html and "java.lang.String" in html
    assert "Stats" in repr(stats)
    assert stats.to_dict()["records"]["STRING"]["count"] == INVENTORY_BY_NAME["platform_art__RI.hprof"][
        "top_level_records"]["0x01"]


def test_demo_runs_and_checks_itself():
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "demo"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "check: histogram equals what the writer wrote" in proc.stdout and "OK" in proc.stdout


def test_help_and_usage_errors():
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "info" in proc.stdout and "stats" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "hprofkit"], capture_output=True, text=True)
    assert proc.returncode == 2


def test_cli_default_format_is_lossless_with_keep_all(tmp_path):
    src = dump_path("mat__sun_jdk6_31_hprofagent_compressedOops.hprof")
    packed, restored = tmp_path / "x.hpk", tmp_path / "x.hprof"
    assert main(["encode", "-i", str(src), "-o", str(packed), "--keep-all"]) == 0
    assert packed.stat().st_size < src.stat().st_size / 3
    assert main(["decode", "-i", str(packed), "-o", str(restored)]) == 0
    assert restored.read_bytes() == src.read_bytes()


@pytest.mark.parametrize("options, words", [
    (["--format", "tailor", "--keep-all"], "strip='none' cannot be honoured"),
    (["--format", "tailor", "--strip", "int"], "cannot be honoured"),
    (["--format", "tailor", "--drop-traces"], "drop_traces"),
    (["--format", "hprof", "--level", "3"], "not compressed"),
    (["--format", "hprof", "--drop-traces"], "drop_traces"),
    (["--keep-all", "--strip", "int"], "--keep-all and --strip"),
    (["--strip", "bytes"], "unknown primitive type 'bytes'"),
])
def test_cli_refuses_what_a_format_cannot_honour(tmp_path, capsys, options, words):
    """A usage error (exit 2, the usage and one error line), no output file:
    the same check as encode() and Encoder() (tests/test_codec_options.py)."""
    src = dump_path("leakcanary__leak_service_binder.hprof")
    with pytest.raises(SystemExit) as exit:
        main(["encode", *options, "-i", str(src), "-o", str(tmp_path / "x")])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: hprofkit encode ") and err.count("usage:") == 1
    assert words in err.splitlines()[-1] and err.splitlines()[-1].startswith("hprofkit encode: error: ")
    assert not (tmp_path / "x").exists()
