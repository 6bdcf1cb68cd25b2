"""Deobfuscation (issue 20): hprofkit.Mapping, stats(mapping=) and
deobfuscate(), against the shared ProGuard-obfuscated HeapGen dumps and the
histogram of the clear program (../shared/data/obfuscated), the VisualVM
oracle, and Badoo's deobfuscator output (../shared/data/bmd), record by
record."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import hprofkit
from hprofkit import _hprof
from conftest import DATA, SHARED_TOOLS, kept_dump, peer

pytest_plugins = ["pytester"]

OBF = DATA / "obfuscated"
MAPPING = OBF / "mapping.txt"
KEY = json.loads((OBF / "heapgen_s5_16mb_clear_histogram.json").read_text())
DUMPS = ["heapgen_s5_16mb_obf.hprof.gz", "heapgen_s5_16mb_obf_android.hprof.gz"]
BADOO = DATA / "bmd" / "heapgen_s5_16mb_obf_android.deobfuscated.hprof.gz"


def dump_names(path) -> dict[str, tuple[list[str], list[str]]]:
    """{class name (Java spelling): (static field names, instance field names)}
    of a dump, in the order its CLASS_DUMPs list them, read record by record."""
    with hprofkit.open(path) as dump:
        fmt = ">Q" if dump.id_size == 8 else ">I"
        strings, names = {}, {}
        for record in dump.records():
            if record.tag == 0x01:
                body = bytes(record.body)
                strings[struct.unpack_from(fmt, body)[0]] = body[dump.id_size:].decode("utf-8", "replace")
            elif record.tag == 0x02:
                body = bytes(record.body)
                names[struct.unpack_from(fmt, body, 4)[0]] = struct.unpack_from(fmt, body, 8 + dump.id_size)[0]
        out = {}
        for sub in dump.subrecords():
            if sub.tag == 0x20:
                name = strings[names[sub.id]].replace("/", ".")
                out[name] = ([strings[n] for n, _, _ in sub.statics], [strings[n] for n, _ in sub.fields])
        return out


# -- Mapping -----------------------------------------------------------------------------

@pytest.mark.sanitize
def test_mapping_reads_the_shared_proguard_mapping():
    mapping = hprofkit.Mapping.read(MAPPING)
    assert len(mapping) == 4 and mapping.version is None
    for clear, entry in KEY["classes"].items():
        assert mapping.class_name(entry["obfuscated"]) == clear
        assert mapping.obfuscated_class(clear) == entry["obfuscated"]
        for clear_field, obfuscated, type_ in entry["static_fields"] + entry["instance_fields"]:
            if not obfuscated.startswith("<"):
                assert mapping.field_name(entry["obfuscated"], obfuscated, type_) == clear_field
    # One obfuscated name, several classes: fields map apart per declaring class.
    assert [mapping.field_name(c, "a") for c in ("a", "b", "c", "HeapGen")] == ["name", "owner", "next", "LEAKS"]
    # Spellings of dumps: HotSpot's internal names and arrays, ART's Java names, hidden lambdas.
    assert mapping.deobfuscate_class("[[La;") == "[[LHeapGen$Activity;"
    assert mapping.deobfuscate_class("c[]") == "HeapGen$Node[]"
    assert mapping.deobfuscate_class("b$$Lambda$7/0x0000000800c01234") == "HeapGen$Listener$$Lambda$7/0x0000000800c01234"
    assert mapping.deobfuscate_class("java/util/HashMap$Node") == "java/util/HashMap$Node"
    assert mapping.deobfuscate_class("[I") == "[I"
    assert mapping.deobfuscate_descriptor("(La;[Lc;J)Lb;") == "(LHeapGen$Activity;[LHeapGen$Node;J)LHeapGen$Listener;"


R8_MAPPING = """\
# compiler: R8
# {"id":"com.android.tools.r8.mapping","version":"2.2"}
com.example.Cart -> a.a:
# {"id":"sourceFile","fileName":"Cart.kt"}
    java.util.List items -> a
    int total -> a
    1:3:void <init>():10:12 -> <init>
    4:4:void com.example.Util.check(int):225 -> a
    4:4:void add(com.example.Item):30 -> a
    5:9:void add(com.example.Item):31:35 -> a
    10:10:void add(com.example.Item,int):50:50 -> a
    0:65535:int size():40:40 -> b
    1:1:void remove(com.example.Item):60:60 -> c
    # {"id":"com.android.tools.r8.residualsignature","signature":"(La/b;)V"}
    2:2:void remove(java.lang.String):70:70 -> c
    7:7:void checkout():0:0 -> d
    # {"id":"com.android.tools.r8.outlineCallsite","positions":{"1":8}}
    8:8:void checkout():80:80 -> d
    11:11:void com.example.Cart$$ExternalSyntheticLambda0.run():0:0 -> e
    # {"id":"com.android.tools.r8.synthesized"}
com.example.Item -> a.b:
com.example.Util -> a.c:
# {"id":"sourceFile","fileName":"Util.java"}
com.android.tools.r8.GeneratedOutlineSupport -> b:
    1:2:void outline0():0:1 -> a
    # {"id":"com.android.tools.r8.outline"}
"""


@pytest.mark.sanitize
def test_mapping_r8_frames():
    mapping = hprofkit.Mapping.parse(R8_MAPPING, "r8.txt")
    F = hprofkit.MappedFrame
    assert mapping.version == "2.2" and mapping.source_file("a.a") == "Cart.kt"
    # Line ranges: 5:9 -> 31:35.
    assert mapping.frames("a.a", "a", None, 7) == [F("com.example.Cart", "add", "(Lcom/example/Item;)V", "Cart.kt", 33)]
    # Inlined frames, innermost first, the inlinee's holder and source file.
    assert mapping.frames("a.a", "a", None, 4) == [F("com.example.Util", "check", "(I)V", "Util.java", 225),
                                                   F("com.example.Cart", "add", "(Lcom/example/Item;)V", "Cart.kt", 30)]
    # The catch-all range, and a frame whose line is unknown.
    assert mapping.frames("a.a", "b", None, 123) == [F("com.example.Cart", "size", "()I", "Cart.kt", 40)]
    assert mapping.frames("a.a", "b") == [F("com.example.Cart", "size", "()I", "Cart.kt", 40)]
    # Overloads told apart by the signature the frame gives (the residual one, or the renamed original).
    assert mapping.frames("a.a", "c", "(La/b;)V")[0].signature == "(Lcom/example/Item;)V"
    assert mapping.frames("a.a", "c", "(Ljava/lang/String;)V")[0].line == 70
    # Not told apart: the name they share, the signature and line unknown.
    assert mapping.frames("a.a", "c") == [F("com.example.Cart", "remove", None, "Cart.kt", None)]
    # Fields of one obfuscated name in one class: told apart by type only.
    assert mapping.field_name("a.a", "a", "object") == "items" and mapping.field_name("a.a", "a", "int") == "total"
    assert mapping.field_name("a.a", "a") is None
    # An outline hands its line to its caller's call site (1 -> 8), and leaves no frame of its own.
    assert mapping.retrace([("b", "a", None, 1), ("a.a", "d", None, 7)]) == \
        [[], [F("com.example.Cart", "checkout", "()V", "Cart.kt", 80)]]
    # R8's ":0:0" is no line; a frame R8 synthesized and inlined is dropped where a real one remains.
    assert mapping.frames("a.a", "d", None, 7)[0].line is None
    assert mapping.frames("a.a", "e", None, 11) == [F("com.example.Cart$$ExternalSyntheticLambda0", "run", "()V",
                                                       None, None)]
    assert mapping.frames("zz", "a") is None and mapping.frames("a.a", "zz") is None
    # ProGuard without line numbers: overloads the signature does not tell apart are one frame.
    proguard = hprofkit.Mapping.parse("A -> a:\n    void run(int) -> a\n    void run(java.lang.String) -> a\n"
                                      "    void stop() -> a\n")
    assert proguard.frames("a", "a", "(I)V") == [F("A", "run", "(I)V", None, None)]
    assert proguard.frames("a", "a", "(Z)V") is None  # run or stop: not told


@pytest.mark.parametrize("text, line", [
    ("    int a -> b\n", 1),
    ("A -> a:\n    int x -> y\nA B C\n", 3),
    ("A -> a:\n    void f(int -> a\n", 2),
    ("A -> a:\n\n# c\n    1:x:void f() -> a\n", 4),
])
def test_malformed_mapping_names_its_line(tmp_path, text, line):
    path = tmp_path / "mapping.txt"
    path.write_text(text)
    with pytest.raises(hprofkit.MappingError) as info:
        hprofkit.Mapping.read(path)
    assert info.value.line == line and info.value.path == str(path)
    assert f"{path} line {line}:" in str(info.value)
    assert isinstance(info.value, hprofkit.HprofError)


# -- stats(mapping=) ---------------------------------------------------------------------

@pytest.mark.parametrize("name", DUMPS)
def test_stats_with_mapping_gives_the_clear_histogram(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the mapping fits: no warning
        stats = hprofkit.stats(OBF / name, mapping=MAPPING)
    rows = {r.name: r for r in stats.histogram}
    for clear, count in KEY["instances"].items():
        assert rows[clear].instances == count
        assert rows[clear].obfuscated_name == KEY["classes"][clear]["obfuscated"]
    for obfuscated in KEY["obfuscated_histogram_before_deobfuscation"]:
        assert obfuscated not in rows
    assert rows["java.lang.String"].obfuscated_name is None
    assert stats.to_dict()["histogram"][0].keys() == {"class", "class_id", "instances", "shallow_size", "obfuscated"}
    plain = hprofkit.stats(OBF / name)
    assert sorted((r.instances, r.shallow_bytes) for r in plain.histogram) == \
        sorted((r.instances, r.shallow_bytes) for r in stats.histogram)


def test_stats_with_a_mapping_of_another_program_warns():
    with pytest.warns(hprofkit.MappingWarning, match=r"fits no class of .*leak_service_binder.*HeapGen\$Activity -> a"):
        hprofkit.stats(DATA / "hprof" / "leakcanary__leak_service_binder.hprof", mapping=MAPPING)


# -- deobfuscate() -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def deobfuscated(tmp_path_factory) -> dict[str, Path]:
    out = {}
    tmp = tmp_path_factory.mktemp("deobfuscated")
    for name in DUMPS:
        target = tmp / name.replace(".hprof.gz", "_clear.hprof")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = hprofkit.deobfuscate(OBF / name, target, mapping=MAPPING)
        assert (result.classes, result.fields, result.mismatch) == (3, 16, None)
        assert result.output == target.stat().st_size
        out[name] = target
    return out


@pytest.mark.parametrize("name", DUMPS)
def test_deobfuscated_dump_has_the_clear_names(deobfuscated, name):
    names = dump_names(deobfuscated[name])
    for clear, entry in KEY["classes"].items():
        statics, fields = names[clear]
        assert statics == [row[0] for row in entry["static_fields"]]
        assert fields == [row[0] for row in entry["instance_fields"]]
    for obfuscated in ("a", "b", "c"):
        assert obfuscated not in names
    stats = hprofkit.stats(deobfuscated[name])
    rows = {r.name: r.instances for r in stats.histogram}
    assert {clear: rows[clear] for clear in KEY["instances"]} == KEY["instances"]
    # The shared checker of the answer key agrees.
    check = subprocess.run([sys.executable, str(DATA.parent / "tools" / "obfuscate" / "histogram.py"), "verify",
                            str(deobfuscated[name]), str(OBF / "heapgen_s5_16mb_clear_histogram.json")],
                           capture_output=True, text=True)
    assert check.returncode == 0 and "RESULT: MATCH" in check.stdout, check.stdout + check.stderr


@pytest.mark.parametrize("name", DUMPS)
def test_deobfuscated_dump_changes_nothing_but_names(deobfuscated, name):
    """Every record and sub-record but STRINGs, LOAD_CLASSes, STACK_FRAMEs
    and CLASS_DUMPs is the input's, byte for byte, in the same order."""
    with hprofkit.open(OBF / name) as a, hprofkit.open(deobfuscated[name]) as b:
        assert (a.version, a.id_size, a.timestamp) == (b.version, b.id_size, b.timestamp)
        named = {0x01, 0x02, 0x04}
        ra = [(r.tag, bytes(r.body)) for r in a.records() if r.tag not in named and r.tag not in (0x0C, 0x1C)]
        rb = [(r.tag, bytes(r.body)) for r in b.records() if r.tag not in named and r.tag not in (0x0C, 0x1C)]
        assert ra == rb
        sa = [(s.tag, bytes(s.raw)) for s in a.subrecords() if s.tag != 0x20]
        sb = [(s.tag, bytes(s.raw)) for s in b.subrecords() if s.tag != 0x20]
        assert len(sa) == len(sb) and sa == sb
        strings_a = [bytes(r.body) for r in a.records() if r.tag == 0x01]
        strings_b = [bytes(r.body) for r in b.records() if r.tag == 0x01]
        assert strings_b[len(strings_b) - len(strings_a):] == strings_a  # every old string kept, new ones first


@pytest.mark.parametrize("name", DUMPS)
def test_deobfuscated_dump_equals_the_clear_histogram_in_visualvm(deobfuscated, name, oracle):
    theirs = oracle.run(deobfuscated[name])
    counts: dict[str, int] = {}
    for key, (count, *_) in theirs["histogram"].items():
        counts[key.rsplit("@", 1)[0]] = counts.get(key.rsplit("@", 1)[0], 0) + count
    assert {clear: counts.get(clear) for clear in KEY["instances"]} == KEY["instances"]
    for obfuscated in ("a", "b", "c"):
        assert obfuscated not in counts
    assert theirs["instances"] == hprofkit.stats(deobfuscated[name]).instances + \
        hprofkit.stats(deobfuscated[name]).arrays


def test_deobfuscated_android_dump_against_badoo_record_by_record(deobfuscated):
    """Badoo's deobfuscator on the same input: every record and sub-record is
    the same but for the deliberate differences docs/deobfuscation.md lists:
    the STRING records (its renamed in place and copies; ours all kept and
    new ones added), the string ids LOAD_CLASS and CLASS_DUMP use, where
    the CLASS_DUMPs are (Badoo writes them all first, re-cutting the
    segments), and HeapGen$Listener's field names, which Badoo gets wrong."""
    ours, theirs = deobfuscated[DUMPS[1]], BADOO
    with hprofkit.open(ours) as a, hprofkit.open(theirs) as b:
        assert (a.magic, a.id_size, a.timestamp) == (b.magic, b.id_size, b.timestamp)
        def records(dump):  # heap records by tag: Badoo cuts segments elsewhere; sub-records are compared below
            return [(r.tag, None if r.tag in (0x0C, 0x1C) else bytes(r.body))
                    for r in dump.records() if r.tag not in (0x01, 0x02)]
        assert records(a) == records(b)
        ra = [(s.tag, bytes(s.raw)) for s in a.subrecords() if s.tag != 0x20]
        rb = [(s.tag, bytes(s.raw)) for s in b.subrecords() if s.tag != 0x20]
        assert ra == rb
        ca = [(s.id, s.class_id, s.super_id, s.instance_size, [t for _, t, _ in s.statics], s.fields and
               [t for _, t in s.fields]) for s in a.subrecords() if s.tag == 0x20]
        cb = [(s.id, s.class_id, s.super_id, s.instance_size, [t for _, t, _ in s.statics], s.fields and
               [t for _, t in s.fields]) for s in b.subrecords() if s.tag == 0x20]
        assert len(ca) == len(cb) and sorted(ca) == sorted(cb)  # Badoo moves the CLASS_DUMPs to the front
    names_ours, names_theirs = dump_names(ours), dump_names(theirs)
    assert names_ours.keys() == names_theirs.keys()
    differ = {cls for cls in names_ours if names_ours[cls] != names_theirs[cls]}
    assert differ == {"HeapGen$Listener"}
    assert names_theirs["HeapGen$Listener"] == ([], ["HeapGen$Node", "HeapGen$Listener", "HeapGen$Activity"])
    assert names_ours["HeapGen$Listener"] == ([], ["weight", "id", "owner"])


def test_deobfuscate_refuses_to_overwrite_its_input(tmp_path):
    copy = tmp_path / "obf.hprof"
    copy.write_bytes(b"JAVA PROFILE 1.0.2\0" + struct.pack(">IQ", 4, 0))
    with pytest.raises(ValueError, match="is the input file"):
        hprofkit.deobfuscate(copy, copy, mapping=MAPPING)


def test_deobfuscate_warns_on_a_mapping_that_lacks_a_field(tmp_path):
    wrong = tmp_path / "mapping.txt"
    wrong.write_text(MAPPING.read_text().replace("    java.util.Map extras -> d\n", ""))
    with pytest.warns(hprofkit.MappingWarning, match=r"field 'd' of class a \(HeapGen\$Activity\) is not in"):
        result = hprofkit.deobfuscate(OBF / DUMPS[1], tmp_path / "out.hprof", mapping=wrong)
    assert result.mismatch is not None and result.fields == 15


@pytest.mark.sanitize
def test_renamer_output_does_not_depend_on_chunking():
    """The core renamer fed in pieces of every size writes the same bytes."""
    data = (DATA / "hprof" / "leakcanary__leak_service_binder.hprof").read_bytes()
    with hprofkit.open(data) as dump:
        cls = next(s for s in dump.subrecords() if s.tag == 0x20 and s.fields)
        class_id, n_statics, n_fields = cls.id, len(cls.statics), len(cls.fields)
    plan = dict(prelude=struct.pack(">BIII", 1, 0, 4 + 3, 0x7FFFFFF0) + b"new",
                classes=[(class_id, (0,) * n_statics, (0x7FFFFFF0,) * n_fields)])
    whole = _hprof.Renamer(**plan)
    expected = whole.feed(data) + whole.flush()
    for size in (13, 4093, 65537):
        renamer = _hprof.Renamer(**plan)
        pieces = [renamer.feed(data[i:i + size]) for i in range(0, len(data), size)]
        assert b"".join(pieces) + renamer.flush() == expected
    assert expected.count(b"\x7f\xff\xff\xf0") == n_fields + 1


# -- command line --------------------------------------------------------------------------

def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hprofkit", *map(str, args)], capture_output=True, text=True,
                          timeout=600)


def test_cli_deobfuscate_writes_what_the_library_writes(deobfuscated, tmp_path):
    out = tmp_path / "clear.hprof"
    proc = run_cli("deobfuscate", OBF / DUMPS[0], out, "--mapping", MAPPING)
    assert proc.returncode == 0, proc.stderr
    assert "renamed 3 classes, 16 fields" in proc.stdout and proc.stderr == ""
    assert out.read_bytes() == deobfuscated[DUMPS[0]].read_bytes()


def test_cli_deobfuscate_in_out_as_the_other_file_commands(deobfuscated, tmp_path):
    """IN [OUT] (OUT beside IN by default, never replacing a file) and --json, as encode takes them."""
    src = tmp_path / "app.hprof.gz"
    src.write_bytes((OBF / DUMPS[0]).read_bytes())
    proc = run_cli("deobfuscate", src, "--mapping", MAPPING, "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["output"] == str(tmp_path / "app.deobfuscated.hprof") and report["mismatch"] is None
    assert (report["classes"], report["fields"]) == (3, 16)
    out = tmp_path / "app.deobfuscated.hprof"
    assert report["written"] == out.stat().st_size and out.read_bytes() == deobfuscated[DUMPS[0]].read_bytes()
    proc = run_cli("deobfuscate", src, "--mapping", MAPPING)
    assert proc.returncode == 2 and "exists: name OUT to replace it" in proc.stderr


def test_cli_deobfuscate_through_pipes(deobfuscated):
    """- reads stdin and writes stdout (the report then goes to stderr)."""
    data = (OBF / DUMPS[1]).read_bytes()
    proc = subprocess.run([sys.executable, "-m", "hprofkit", "deobfuscate", "-", "-", "--mapping", str(MAPPING)],
                          input=data, capture_output=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == deobfuscated[DUMPS[1]].read_bytes()
    assert b"renamed 3 classes" in proc.stderr


def test_cli_stats_with_mapping():
    proc = run_cli("stats", OBF / DUMPS[1], "--mapping", MAPPING, "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["class"]: r for r in json.loads(proc.stdout)["histogram"]}
    assert rows["HeapGen$Node"]["instances"] == 6230 and rows["HeapGen$Node"]["obfuscated"] == "c"
    proc = run_cli("stats", DATA / "hprof" / "leakcanary__leak_service_binder.hprof", "--mapping", MAPPING)
    assert proc.returncode == 0
    assert proc.stderr.startswith("hprofkit: warning: ") and "fits no class" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_cli_malformed_mapping_is_one_line_naming_it(tmp_path):
    bad = tmp_path / "mapping.txt"
    bad.write_text("A -> a:\n    int x -> y\n    void f(int -> a\n")
    for args in (["stats", OBF / DUMPS[1]], ["info", OBF / DUMPS[1]], ["deobfuscate", OBF / DUMPS[1], tmp_path / "o"]):
        proc = run_cli(*args, "--mapping", bad)
        assert proc.returncode == 1 and proc.stdout == ""
        assert proc.stderr == f"hprofkit: error: malformed mapping: {bad} line 3: a method's parameter list has no ')'\n"
    assert not (tmp_path / "o").exists()


@pytest.mark.sanitize
def test_a_mapping_that_never_ends_is_refused_at_once(tmp_path):
    """#30: /dev/zero as a mapping was read whole (23.8 GB resident, then killed); a FIFO
    without a writer would block forever.  What is not a regular file is a MappingError before
    anything is read, in the API, on the command line and in [tool.hprofkit]."""
    fifo = tmp_path / "mapping.fifo"
    os.mkfifo(fifo)
    for path, kind in (("/dev/zero", "a character device"), (str(fifo), "a FIFO")):
        with pytest.raises(hprofkit.MappingError, match=f"is {kind}, not a regular file") as info:
            hprofkit.Mapping.read(path)
        assert info.value.path == path
        with pytest.raises(hprofkit.MappingError, match=kind):
            hprofkit.open_heap(OBF / DUMPS[0], mapping=path)
        proc = run_cli("top", OBF / DUMPS[0], "--mapping", path)
        assert proc.returncode == 1 and proc.stdout == ""
        assert proc.stderr == f"hprofkit: error: not a mapping: {path} is {kind}, not a regular file\n"
    with pytest.raises(IsADirectoryError):
        hprofkit.Mapping.read(tmp_path)


def test_a_name_given_to_several_classes_warns_naming_the_lines(tmp_path):
    """#30: a mapping giving one obfuscated name to three classes was taken silently (the first
    wins): a MappingWarning names the name, its lines and the class used."""
    path = tmp_path / "mapping.txt"
    path.write_text("com.a.First -> a.b:\n    int x -> a\ncom.a.Second -> a.b:\ncom.a.Other -> a.c:\n"
                    "com.a.Third -> a.b:\n")
    says = f"{path} gives the obfuscated name a.b to 3 classes (lines 1, 3, 5): the first, com.a.First, is used"
    with pytest.warns(hprofkit.MappingWarning) as caught:
        mapping = hprofkit.Mapping.read(path)
    assert [str(w.message) for w in caught] == [says]
    assert mapping.class_name("a.b") == "com.a.First"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hprofkit.Mapping.read(MAPPING)  # a real ProGuard mapping gives each name once
    proc = run_cli("stats", OBF / DUMPS[0], "--mapping", path)
    assert proc.returncode == 0
    assert f"hprofkit: warning: {says}\n" in proc.stderr


# -- a second obfuscation of the same program ------------------------------------------------

def obfuscation(tmp_path_factory, name: str, rules: str, megabytes: int) -> Path:
    """HeapGen (seed 5, `megabytes` MB) obfuscated by ProGuard
    (../shared/tools/obfuscate/make.sh) with heapgen.pro's rules and `rules`
    (files they name beside them: dict.txt, q to z), once per session: the
    folder holds out/ (make.sh's output) and work/ (its work files, the
    clear program's dump work/clear.hprof among them)."""
    peer("java")
    peer("proguard")
    tools = SHARED_TOOLS / "obfuscate"

    def make(root: Path) -> Path:
        root.mkdir()
        (root / "dict.txt").write_text("".join(f"{c}\n" for c in "qrstuvwxyz"))
        (root / "rules.pro").write_text((tools / "heapgen.pro").read_text() + rules)
        subprocess.run(["bash", str(tools / "make.sh"), str(root / "out"), str(megabytes), "5",
                        str(root / "rules.pro")],
                       check=True, capture_output=True, timeout=900, env={**os.environ, "KEEP": str(root / "work")})
        return root
    return kept_dump(tmp_path_factory, name, make, Path(__file__), tools / "make.sh", tools / "heapgen.pro",
                     SHARED_TOOLS / "heapgen" / "HeapGen.java")


@pytest.fixture(scope="session")
def second_obfuscation(tmp_path_factory) -> Path:
    """The shared dumps' program (HeapGen, 16 MB, seed 5) obfuscated again as
    another release would be: other names (a dictionary: q, r, s...), and
    line numbers kept (LineNumberTable, the source file renamed
    "SourceFile"), so its mapping has line ranges."""
    return obfuscation(tmp_path_factory, "second-obfuscation",
                       "-obfuscationdictionary dict.txt\n-classobfuscationdictionary dict.txt\n"
                       "-keepattributes LineNumberTable,SourceFile\n-renamesourcefileattribute SourceFile\n", 16)


def dump_frames(path) -> list[list[tuple]]:
    """Each STACK_TRACE's frames: (class, method, signature, source, line),
    HotSpot's hidden class addresses left out."""
    with hprofkit.open(path) as dump:
        ids = "Q" if dump.id_size == 8 else "I"
        strings, classes, frames, traces = {}, {}, {}, []
        records = [(r.tag, bytes(r.body)) for r in dump.records() if r.tag in (1, 2, 4, 5)]
    for tag, body in records:
        if tag == 1:
            strings[struct.unpack_from(">" + ids, body)[0]] = body[struct.calcsize(ids):].decode("utf-8", "replace")
        elif tag == 2:
            serial, _, _, name = struct.unpack(f">I{ids}I{ids}", body)
            classes[serial] = name
    for tag, body in records:
        if tag == 4:
            frame, method, sig, source, serial, line = struct.unpack(f">{ids}{ids}{ids}{ids}Ii", body)
            cls = strings.get(classes.get(serial), "").split("+0x")[0]
            frames[frame] = (cls, strings.get(method), strings.get(sig), strings.get(source), line)
        elif tag == 5:
            count = struct.unpack_from(">I", body, 8)[0]
            traces.append([frames[f] for f in struct.unpack_from(f">{count}{ids}", body, 12)])
    return traces


def test_second_obfuscation_deobfuscates_to_its_clear_histogram(second_obfuscation, tmp_path):
    out_dir = second_obfuscation / "out"
    mapping = hprofkit.Mapping.read(out_dir / "mapping.txt")
    key = json.loads((out_dir / "heapgen_s5_16mb_clear_histogram.json").read_text())
    assert mapping.obfuscated_class("HeapGen$Activity") == "q" != hprofkit.Mapping.read(MAPPING).obfuscated_class(
        "HeapGen$Activity")
    assert key["instances"] == KEY["instances"]  # the same program, budget and seed
    for name in ("heapgen_s5_16mb_obf.hprof.gz", "heapgen_s5_16mb_obf_android.hprof.gz"):
        out = tmp_path / name.replace(".gz", "")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = hprofkit.deobfuscate(out_dir / name, out, mapping=mapping)
        assert (result.classes, result.fields) == (3, 17)  # Node's f is renamed too now
        names = dump_names(out)
        for clear, entry in key["classes"].items():
            assert names[clear] == ([r[0] for r in entry["static_fields"]], [r[0] for r in entry["instance_fields"]])
        assert {c: r.instances for c in KEY["instances"] for r in hprofkit.stats(out).histogram if r.name == c} \
            == KEY["instances"]
    # The first release's mapping does not fit the second release's dump: it names
    # HeapGen's statics a, b, c, where this dump has q, r, s.
    with pytest.warns(hprofkit.MappingWarning, match=r"does not fit .*: field '[qrs]' of class HeapGen \(HeapGen\)"):
        hprofkit.deobfuscate(out_dir / "heapgen_s5_16mb_obf.hprof.gz", tmp_path / "wrong.hprof",
                             mapping=MAPPING)


def test_second_obfuscation_frames_retrace_to_the_clear_programs(second_obfuscation, tmp_path):
    """With line numbers kept, the mapping has ProGuard's line ranges: the
    deobfuscated dump's stack traces are the clear program's, frame for
    frame (class, method, signature, source file, line)."""
    out = tmp_path / "clear.hprof"
    result = hprofkit.deobfuscate(second_obfuscation / "work" / "obf.hprof", out,
                                  mapping=second_obfuscation / "out" / "mapping.txt")
    assert result.frames >= 2
    obfuscated, ours, clear = (dump_frames(p) for p in (second_obfuscation / "work" / "obf.hprof", out,
                                                         second_obfuscation / "work" / "clear.hprof"))
    assert any(f[:4] == ("HeapGen", "q", "()V", "SourceFile") for t in obfuscated for f in t)  # lambda$main$0
    assert obfuscated != clear and ours == clear



# -- fields of one obfuscated name (ProGuard's -overloadaggressively) -----------------------------

@pytest.fixture(scope="session")
def aggressive_obfuscation(tmp_path_factory) -> Path:
    """HeapGen obfuscated with -overloadaggressively: the fields of a class
    share one name wherever their types differ.  1 MB is the smallest budget
    with every class of the program instantiated."""
    return obfuscation(tmp_path_factory, "aggressive-obfuscation", "-overloadaggressively\n", 1)


def mapping_fields(text: str) -> dict[str, list[tuple[str, str, str]]]:
    """{obfuscated class: [(Java type, clear name, obfuscated name)]} of a
    ProGuard mapping's text, read line by line (no hprofkit)."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    fields: list[tuple[str, str, str]] = []
    for line in text.splitlines():
        if not line.startswith(" "):
            fields = out.setdefault(line.rstrip(":").split(" -> ")[1], [])
        elif "(" not in line:
            java_type, clear, _, obfuscated = line.split()
            fields.append((java_type, clear, obfuscated))
    return out


@pytest.mark.parametrize("dump", ["heapgen_s5_1mb_obf.hprof.gz", "heapgen_s5_1mb_obf_android.hprof.gz"])
def test_aggressively_overloaded_fields_read_with_their_clear_names(aggressive_obfuscation, dump, tmp_path):
    """#31 point 5: every static and field of every class of the answer key
    (the clear program's dump) has its clear name, in the heap and in the
    deobfuscated file, on the HotSpot dump and its ART-style rewrite."""
    out_dir = aggressive_obfuscation / "out"
    key = json.loads((out_dir / "heapgen_s5_1mb_clear_histogram.json").read_text())
    mapping = out_dir / "mapping.txt"
    primitive = {"boolean", "char", "float", "double", "byte", "short", "int", "long"}
    overloaded = [(cls, obfuscated) for cls, fields in mapping_fields(mapping.read_text()).items()
                  for obfuscated in {o for _, _, o in fields}
                  if sum(t not in primitive for t, _, o in fields if o == obfuscated) > 1]
    assert len(overloaded) >= 3  # several reference fields of one name: their types do not tell them apart
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        heap = hprofkit.open_heap(out_dir / dump, mapping=mapping)
        result = hprofkit.deobfuscate(out_dir / dump, tmp_path / "clear.hprof", mapping=mapping)
    written = dump_names(tmp_path / "clear.hprof")
    for clear, entry in key["classes"].items():
        want = ([r[0] for r in entry["static_fields"]], [r[0] for r in entry["instance_fields"]])
        cls = heap.find_class(clear)
        assert ([f.name for f in cls.statics()], [f.name for f in cls.fields()]) == want
        assert written[clear] == want
    assert result.fields == sum(r[0] != r[1] for e in key["classes"].values()
                                for r in e["static_fields"] + e["instance_fields"])
    # Values read by the clear names are those HeapGen.java gives the fields.
    activities = list(heap.find_class("HeapGen$Activity").instances())
    assert activities and all(a["bitmap"].class_name == "byte[]" and a["extras"].class_name == "java.util.HashMap"
                              and a["name"].as_str().startswith(("Activity#", "ThreadLocalHeld")) for a in activities)
    assert {r.name for r in activities[0].references()} >= {"bitmap", "extras", "name"}
    statics = {f.name: f.value for f in heap.find_class("HeapGen").statics()}
    assert statics["CACHE"].class_name == "java.util.HashMap" and statics["LEAKS"].class_name == "java.util.ArrayList"
    assert [r.name for r in statics["LEAKS"]["elementData"].references() if r.target] and \
        all(x.class_name == "HeapGen$Listener" for x in statics["LEAKS"]["elementData"].tolist() if x)


OVERLOADS = """\
com.example.Cart -> c:
    java.lang.String title -> a
    byte[] data -> a
    int count -> a
com.example.Pair -> p:
    java.util.List first -> a
    java.util.Map second -> a
com.example.Evidence -> e:
    int x -> b
    int y -> c
    int z -> a
com.example.Group -> g:
    java.util.Map m -> a
    java.util.Set s -> a
    java.util.List l -> a
"""


def write_overloads(path, fields: dict[str, list[tuple[str, str, Any]]], *, android: bool = False) -> None:
    """A dump of the classes of OVERLOADS: per obfuscated class, its fields
    in the dump's order as (obfuscated name, basic type, value); a value
    "String", "byte[]" or "ArrayList" is a new object of that class."""
    from hprofkit.writer import HprofWriter
    names = {"Object": "java.lang.Object", "String": "java.lang.String", "ArrayList": "java.util.ArrayList",
             "byte[]": "byte[]"}
    spell = (lambda n: n) if android else (lambda n: "[B" if n == "byte[]" else n.replace(".", "/"))
    with HprofWriter(path, version="1.0.3" if android else "1.0.2", id_size=4 if android else 8) as w:
        ids = {name: 0x100 + 0x10 * k for k, name in enumerate([*names, *fields])}
        for name, class_id in ids.items():
            w.load_class(class_id, spell(names.get(name, name)))
        with w.heap_dump() as h:
            if android:
                h.heap_dump_info("app")
            h.class_dump(ids["Object"])
            for name in ("String", "ArrayList", "byte[]"):
                h.class_dump(ids[name], super_id=ids["Object"])
            next_id = 0x1000
            for cls, rows in fields.items():
                h.class_dump(ids[cls], super_id=ids["Object"], fields=[(n, t) for n, t, _ in rows])
                values = []
                for _, _, value in rows:
                    if value == "byte[]":
                        value = h.primitive_array(next_id, "byte", b"abc")
                    elif value in ("String", "ArrayList"):
                        value = h.instance(next_id, ids[value], values=[])
                    values.append(value)
                    next_id += 0x10
                h.root_jni_global(h.instance(next_id, ids[cls], values=values))
                next_id += 0x10
        w.heap_dump_end()


def clear_fields(source, mapping, tmp_path) -> dict[str, tuple[list[str], list[str]]]:
    """{class: (the heap's field names, the deobfuscated file's)} of the classes of OVERLOADS."""
    heap = hprofkit.open_heap(source, mapping=mapping)
    hprofkit.deobfuscate(source, tmp_path / "clear.hprof", mapping=mapping)
    written = dump_names(tmp_path / "clear.hprof")
    return {clear: ([f.name for f in heap.find_class(clear).fields()], written[clear][1])
            for clear in ("com.example.Cart", "com.example.Pair", "com.example.Evidence", "com.example.Group")
            if heap.find_class(clear)}


@pytest.mark.parametrize("android", [False, True])
def test_values_tell_apart_fields_the_types_do_not(android, tmp_path):
    """Two reference fields named a: the class of each one's value (a String,
    a byte[]) fits one declared type only, whichever order the dump lists
    them in; the int a is told by its type."""
    mapping = hprofkit.Mapping.parse(OVERLOADS)
    clear = {"String": "title", "byte[]": "data", 7: "count"}
    for order in (["String", 7, "byte[]"], ["byte[]", 7, "String"], [7, "String", "byte[]"]):
        source = tmp_path / f"{'-'.join(map(str, order))}.hprof"
        write_overloads(source, {"c": [("a", "int" if v == 7 else "object", v) for v in order]}, android=android)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            names = clear_fields(source, mapping, tmp_path)
        assert names["com.example.Cart"] == ([clear[v] for v in order],) * 2


def test_fields_nothing_tells_apart_are_named_by_a_guess_the_warning_owns(tmp_path):
    """Two fields a, a List and a Map, both holding an ArrayList, which the
    dump cannot show to implement one and not the other; no other class
    shows the dump's order: a MappingWarning says which fields of which
    class are a guess; the heap and the file make the same guess."""
    source = tmp_path / "pair.hprof"
    write_overloads(source, {"p": [("a", "object", "ArrayList"), ("a", "object", "ArrayList")]})
    mapping = hprofkit.Mapping.parse(OVERLOADS, "overloads.txt")
    with pytest.warns(hprofkit.MappingWarning) as caught:
        names = clear_fields(source, mapping, tmp_path)
    messages = {str(w.message) for w in caught}
    assert len(messages) == 1 and len(caught) == 2  # the heap's and the file's
    message = messages.pop()
    assert message.startswith("overloads.txt gives the name 'a' to fields first, second of com.example.Pair (p) "
                              f"that {source} does not tell apart")
    heap_names, file_names = names["com.example.Pair"]
    assert sorted(heap_names) == ["first", "second"] and file_names == heap_names
    assert f"named {', '.join(heap_names)} in the dump's order, a guess" in message


@pytest.mark.parametrize("android", [False, True])
def test_the_dumps_own_order_tells_apart_what_values_cannot(android, tmp_path):
    """Three interface-typed fields a (Map m, Set s, List l), no values: the
    order decides.  ART lists a class's fields in dex field id order (by
    name, then type descriptor); HotSpot (JDK 17 here) in the class file's
    order reversed.  Which one the dump follows its other class shows:
    Evidence's fields x -> b, y -> c, z -> a, each told by its name."""
    mapping = hprofkit.Mapping.parse(OVERLOADS)
    group = [(t, c) for t, c, _ in mapping_fields(OVERLOADS)["g"]]
    evidence = [(o, c) for _, c, o in mapping_fields(OVERLOADS)["e"]]
    if android:  # sorted as dex sorts field ids: name, then descriptor
        group = sorted(group, key=lambda g: "L" + g[0].replace(".", "/") + ";")
        evidence = sorted(evidence)
    else:
        group, evidence = group[::-1], evidence[::-1]
    source = tmp_path / "order.hprof"
    write_overloads(source, {"e": [(o, "int", 1) for o, _ in evidence], "g": [("a", "object", None)] * 3},
                    android=android)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        names = clear_fields(source, mapping, tmp_path)
    assert names["com.example.Evidence"] == ([c for _, c in evidence],) * 2
    assert names["com.example.Group"] == ([c for _, c in group],) * 2


@pytest.mark.sanitize
def test_subrecords_of_one_tag():
    """deobfuscate's scan reads only CLASS_DUMPs: the iterator skips the rest in C."""
    data = (DATA / "hprof" / "leakcanary__leak_service_binder.hprof").read_bytes()
    every = [bytes(s.raw) for s in _hprof.subrecords(data) if s.tag == 0x20]
    assert every and [bytes(s.raw) for s in _hprof.subrecords(data, tag=0x20)] == every
    assert list(_hprof.subrecords(data, tag=0x20, heap_dump=5)) == []
    with pytest.raises(ValueError):
        _hprof.subrecords(data, tag=256)


def test_new_ids_go_in_the_gaps_when_above_the_highest_would_overflow():
    from hprofkit._deobfuscate import _fresh_ids
    assert _fresh_ids(41, 3, 4, lambda: pytest.fail("no scan needed")) == [42, 43, 44]
    assert _fresh_ids(0xFFFFFFFE, 3, 4, lambda: {1, 2, 4, 0xFFFFFFFE}) == [3, 5, 6]


@pytest.mark.sanitize
def test_one_mapping_shared_by_threads(tmp_path):
    """A Mapping is read-only: lookups and deobfuscations from several threads
    at once give what they give alone."""
    from concurrent.futures import ThreadPoolExecutor
    mapping = hprofkit.Mapping.parse(R8_MAPPING)
    expected = [mapping.frames("a.a", "a", None, line) for line in range(12)]

    def lookups(_):
        return [mapping.frames("a.a", "a", None, line) for line in range(12) for _ in range(50)][::50]

    def rewrite(i):
        out = tmp_path / f"out{i}.hprof"
        hprofkit.deobfuscate(OBF / DUMPS[1], out, mapping=shared)
        return out.read_bytes()

    shared = hprofkit.Mapping.read(MAPPING)
    with ThreadPoolExecutor(4) as pool:
        assert all(r == expected for r in pool.map(lookups, range(8)))
        outputs = list(pool.map(rewrite, range(3)))
    assert outputs[0] == outputs[1] == outputs[2]


# -- the heap, read through a mapping ----------------------------------------------------------

from hprofkit import match  # noqa: E402


@pytest.fixture(scope="module")
def mapped_heaps():
    """Both shared dumps opened with their mapping, then closed."""
    heaps = {name: hprofkit.open_heap(OBF / name, mapping=MAPPING) for name in DUMPS}
    yield heaps
    for heap in heaps.values():
        heap.close()


@pytest.mark.sanitize
@pytest.mark.parametrize("name", DUMPS)
def test_heap_with_mapping_has_the_clear_names(mapped_heaps, name):
    heap = mapped_heaps[name]
    assert isinstance(heap.mapping, hprofkit.Mapping) and heap.mapping.path == str(MAPPING)
    for clear, entry in KEY["classes"].items():
        cls = heap.find_class(clear)
        assert cls is not None and cls.name == clear and cls.obfuscated_name == entry["obfuscated"]
        assert [f.name for f in cls.fields()] == [row[0] for row in entry["instance_fields"]]
        assert [f.name for f in cls.statics()] == [row[0] for row in entry["static_fields"]]
        assert cls.instance_count == KEY["instances"].get(clear, 0)
    for obfuscated in ("a", "b", "c"):
        assert heap.find_class(obfuscated) is None
    assert heap.find_class("java.lang.String").obfuscated_name == "java.lang.String"
    listener = next(heap.find_class("HeapGen$Listener").instances())
    assert isinstance(listener["weight"], float) and listener["owner"].class_name == "HeapGen$Activity"
    assert [r.name for r in listener.references()] == ["owner"]
    assert {r.name for r in listener["owner"].referrers()} >= {"owner"}
    lambda_class = next(c for c in heap.classes if "$$Lambda" in c.name and c.name.startswith("HeapGen"))
    assert lambda_class.obfuscated_name == lambda_class.name  # its host keeps its name here


def test_heap_without_mapping_keeps_the_dumps_names():
    with hprofkit.open_heap(OBF / DUMPS[1]) as heap:
        cls = heap.find_class("b")
        assert heap.mapping is None and cls.obfuscated_name == cls.name == "b"
        assert [f.name for f in cls.fields()] == ["c", "b", "a"]


@pytest.mark.parametrize("name", DUMPS)
def test_heap_with_mapping_equals_the_heap_of_the_deobfuscated_dump(mapped_heaps, deobfuscated, name):
    """Reading through a mapping and reading what deobfuscate() wrote give the
    same names everywhere: classes, fields, statics, references, stack frames."""
    ours = mapped_heaps[name]
    with hprofkit.open_heap(deobfuscated[name]) as theirs:
        def classes(heap):
            return [(c.name, [f.name for f in c.fields()], [f.name for f in c.statics()]) for c in heap.classes]
        assert classes(ours) == classes(theirs)
        assert [r.frame for r in ours.gc_roots] == [r.frame for r in theirs.gc_roots]
        for clear in KEY["instances"]:
            for a, b in zip(ours.find_class(clear).instances(), theirs.find_class(clear).instances()):
                assert [(r.name, r.target_id) for r in a.references()] == \
                    [(r.name, r.target_id) for r in b.references()]
        # The dominator tree's views (main's #24) name classes and references alike.
        def by_class(heap):
            return [(g.key.name, g.objects, g.retained_size) for g in heap.retained_by("class")]
        assert by_class(ours) == by_class(theirs) and "HeapGen$Listener" in {row[0] for row in by_class(ours)}
        listeners = [obj.id for obj in ours.find_class("HeapGen$Listener").instances()]
        assert str(ours.merged_paths([ours.object(i) for i in listeners])) == \
            str(theirs.merged_paths([theirs.object(i) for i in listeners]))


def destroyed_activities(heap):
    """A leak finder in the app's own (clear) names: HeapGen's destroyed activities."""
    return [obj for obj in heap.find_class("HeapGen$Activity").instances() if obj["destroyed"]]


def fingerprints(path, mapping=None) -> set[str]:
    with hprofkit.open_heap(path, mapping=mapping) as heap:
        return {leak.fingerprint for leak in heap.find_leaks(finders=[destroyed_activities])}


def test_leak_fingerprints_group_across_releases(second_obfuscation):
    """One program, two releases with other names: a leak has one fingerprint
    in both, and in the clear program's dump, when each is read with its
    mapping."""
    first = fingerprints(OBF / DUMPS[0], MAPPING)
    second = fingerprints(second_obfuscation / "work" / "obf.hprof", second_obfuscation / "out" / "mapping.txt")
    clear = fingerprints(second_obfuscation / "work" / "clear.hprof")
    assert first and first == second == clear
    assert fingerprints(OBF / DUMPS[1], MAPPING) == first  # the ART-style dump too
    with hprofkit.open_heap(OBF / DUMPS[0]) as plain:  # without the mapping the names differ
        assert plain.find_class("HeapGen$Activity") is None


def test_paths_exclude_references_by_clear_names(mapped_heaps):
    heap = mapped_heaps[DUMPS[0]]
    activity = destroyed_activities(heap)[0]
    path = heap.path_to_root(activity)
    assert "HeapGen$Listener.owner" in str(path)
    avoided = heap.path_to_root(activity, exclude=[match.instance_field("HeapGen$Listener", "owner")])
    assert avoided is None or "HeapGen$Listener.owner" not in str(avoided)


def test_diff_of_two_releases_compares_clear_names(second_obfuscation):
    second_dump = second_obfuscation / "out" / "heapgen_s5_16mb_obf.hprof.gz"
    second_mapping = second_obfuscation / "out" / "mapping.txt"
    result = hprofkit.diff(OBF / DUMPS[0], second_dump, mapping=(MAPPING, second_mapping))
    rows = {r.name: r for r in result.rows}
    for clear in KEY["instances"]:
        assert clear not in rows or rows[clear].count_delta == 0  # the same program, budget and seed
    plain = {r.name for r in hprofkit.diff(OBF / DUMPS[0], second_dump).rows}
    assert {"a", "q"} <= plain  # read as they are, the releases' names differ


def test_heap_tables_have_the_clear_names(mapped_heaps):
    pytest.importorskip("pyarrow")
    tables = mapped_heaps[DUMPS[1]].tables(retained=False)
    names = set(tables["classes"].column("name").to_pylist())
    assert set(KEY["instances"]) <= names and not {"a", "b", "c"} & names
    references = set(tables["references"].column("name").to_pylist())
    assert {"owner", "payload", "next", "extras"} <= references


def test_open_heap_with_a_mapping_of_another_program_warns():
    with pytest.warns(hprofkit.MappingWarning, match="fits no class"):
        hprofkit.open_heap(DATA / "hprof" / "leakcanary__leak_service_binder.hprof", mapping=MAPPING).close()
    with pytest.raises(TypeError, match="mapping must be"):
        hprofkit.open_heap(OBF / DUMPS[1], mapping=42)


def test_cli_heap_commands_take_a_mapping(tmp_path):
    proc = run_cli("show", OBF / DUMPS[1], "HeapGen$Listener", "--mapping", MAPPING)
    assert proc.returncode == 0, proc.stderr
    assert "class HeapGen$Listener" in proc.stdout and "owner: object" in proc.stdout
    proc = run_cli("top", OBF / DUMPS[0], "--by", "class", "-n", "40", "--mapping", MAPPING, "--json")
    assert proc.returncode == 0, proc.stderr
    assert "HeapGen$Listener" in {row["class"] for row in json.loads(proc.stdout)}
    proc = run_cli("diff", OBF / DUMPS[0], OBF / DUMPS[1], "--mapping", MAPPING, "--json")
    assert proc.returncode == 0, proc.stderr
    assert "a" not in {row["class"] for row in json.loads(proc.stdout)["rows"]}
    proc = run_cli("dominators", OBF / DUMPS[0], "--group-by", "class", "-n", "1000", "--mapping", MAPPING, "--json")
    assert proc.returncode == 0, proc.stderr
    assert "HeapGen$Listener" in {row["class"] for row in json.loads(proc.stdout)["groups"]}
    proc = run_cli("leaks", OBF / DUMPS[1], "--mapping", MAPPING, "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["leaks"] == [], proc.stderr
    proc = run_cli("diff", OBF / DUMPS[0], OBF / DUMPS[1], "--mapping", MAPPING, "--mapping", MAPPING, "--mapping",
                   MAPPING)
    assert proc.returncode == 1 and "once for both dumps, or twice" in proc.stderr
    proc = run_cli("batch", "encode", OBF / DUMPS[0], "--mapping", MAPPING, "--jobs", "1")
    assert proc.returncode == 2 and "--mapping: the encode task reads no names" in proc.stderr, proc.stderr


# -- batches, the pytest plugin and [tool.hprofkit] ------------------------------------------------

import pickle  # noqa: E402


def test_a_mapping_pickles_as_its_text():
    mapping = hprofkit.Mapping.parse(R8_MAPPING, "r8.txt")
    copy = pickle.loads(pickle.dumps(mapping))
    assert isinstance(copy, hprofkit.Mapping) and copy.path == "r8.txt" and copy.version == "2.2"
    assert copy.frames("a.a", "a", None, 7) == mapping.frames("a.a", "a", None, 7)


def test_batch_over_two_releases_with_a_mapping_per_input(second_obfuscation):
    """One histogram of two releases: each dump read with its own mapping, so
    a class of the app is one row, counted in both."""
    first, second = OBF / DUMPS[0], second_obfuscation / "out" / "heapgen_s5_16mb_obf.hprof.gz"
    mappings = {str(first): MAPPING, str(second): second_obfuscation / "out" / "mapping.txt"}
    result = hprofkit.batch("histogram", [first, second], jobs=2, progress=False,
                            mapping=lambda dump: mappings[str(dump)])
    assert all(row.ok for row in result.rows), [row.error for row in result.rows]
    totals = {c.name: c for c in result.histogram}
    for clear, count in KEY["instances"].items():
        assert totals[clear].dumps == 2 and totals[clear].instances == 2 * count
    assert not {"a", "b", "c", "q", "r", "s"} & set(totals)
    one = hprofkit.batch("stats", [OBF / DUMPS[1]], jobs=1, progress=False, mapping=hprofkit.Mapping.read(MAPPING))
    assert {r["class"] for r in one.rows[0].value["histogram"]} >= set(KEY["instances"])
    with pytest.raises(ValueError, match="reads no names"):
        hprofkit.batch("encode", [OBF / DUMPS[1]], mapping=MAPPING)


def test_report_in_clear_names(tmp_path):
    """hprofkit.report, the report command and batch's report task read the dump through the
    mapping: the page names the app's classes as the source does."""
    dump = OBF / DUMPS[0]
    plain = Path(hprofkit.report(dump, tmp_path / "plain.html")).read_text()
    assert "HeapGen$Listener" not in plain
    clear = Path(hprofkit.report(dump, tmp_path / "clear.html", mapping=MAPPING)).read_text()
    assert "HeapGen$Listener" in clear and "HeapGen$Activity" in clear
    proc = run_cli("report", dump, "-o", tmp_path / "cli.html", "--mapping", MAPPING)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert "HeapGen$Listener" in (tmp_path / "cli.html").read_text()
    result = hprofkit.batch("report", [dump], jobs=1, progress=False, output_dir=tmp_path / "batch", mapping=MAPPING)
    assert all(row.ok for row in result.rows), [row.error for row in result.rows]
    assert "HeapGen$Listener" in Path(result.rows[0].value["output"]).read_text()


def test_pytest_fixture_and_hprof_check_take_a_mapping(pytester):
    """hprof_heap(dump, mapping=...) in a test, and [tool.hprofkit] mapping for
    --hprof-check: the checks name the app's classes by their clear names."""
    dumps = pytester.mkdir("dumps")
    (dumps / "release.hprof.gz").write_bytes((OBF / DUMPS[1]).read_bytes())
    (pytester.path / "mapping.txt").write_bytes(MAPPING.read_bytes())
    pytester.makepyfile(test_app="""
        def test_listeners(hprof_heap):
            heap = hprof_heap("dumps/release.hprof.gz", mapping="mapping.txt")
            assert heap.find_class("HeapGen$Listener").instance_count == 68
    """)
    pytester.makefile(".toml", pyproject="""
        [tool.hprofkit]
        defaults = "jdk"
        mapping = "mapping.txt"
        max_instances = { "HeapGen$Node" = 100, "HeapGen$Activity" = 1000 }
    """)
    result = pytester.runpytest("-p", "no:cacheprovider", ".", "--hprof-check", "dumps", "-rf")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*FAILED dumps/release.hprof.gz::hprof-check - 6,230 instances of HeapGen$Node*"])
