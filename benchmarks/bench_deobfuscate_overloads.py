"""Fields of one obfuscated name (issue 31, point 5): how many fields of an
-overloadaggressively build are read with a wrong or obfuscated name, by the
type rule alone (before) and by hprofkit now (after).

    python benchmarks/bench_deobfuscate_overloads.py [--mb 1] [--seed 5] [--keep DIR]

HeapGen is obfuscated by ProGuard with heapgen.pro's rules and
-overloadaggressively (../shared/tools/obfuscate/make.sh; needs java and
proguard); make.sh's answer key holds the clear names of every static and
field of the program's classes.  For the HotSpot dump and its ART-style
rewrite, every such field is counted:

- before: the name the type rule gives (hprofkit.Mapping.field_name with the
  field's basic type: what the heap and deobfuscate() applied before, and
  what Mapping.field_name still does without the dump), the obfuscated one
  where it gives none;
- after: the name open_heap(mapping=) shows, and the name deobfuscate()
  writes.

A field counts as wrong when its name is not the key's.  The time of
open_heap with the mapping (best of 3) is printed beside the figures."""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import hprofkit
from _common import SHARED


def build(out: Path, megabytes: int, seed: int) -> Path:
    """make.sh's output folder for the -overloadaggressively build."""
    tools = SHARED / "tools" / "obfuscate"
    rules = out / "rules.pro"
    out.mkdir(parents=True, exist_ok=True)
    rules.write_text((tools / "heapgen.pro").read_text() + "-overloadaggressively\n")
    subprocess.run(["bash", str(tools / "make.sh"), str(out / "out"), str(megabytes), str(seed), str(rules)],
                   check=True, capture_output=True)
    return out / "out"


def written_names(path: Path) -> dict[str, list[str]]:
    """{class: its statics' then its fields' names} of a dump, record by record."""
    with hprofkit.open(path) as dump:
        fmt = ">Q" if dump.id_size == 8 else ">I"
        strings, classes, out = {}, {}, {}
        for record in dump.records():
            body = bytes(record.body) if record.tag in (1, 2) else b""
            if record.tag == 1:
                strings[struct.unpack_from(fmt, body)[0]] = body[dump.id_size:].decode("utf-8", "replace")
            elif record.tag == 2:
                classes[struct.unpack_from(fmt, body, 4)[0]] = struct.unpack_from(fmt, body, 8 + dump.id_size)[0]
        for sub in dump.subrecords():
            if sub.tag == 0x20:
                out[strings[classes[sub.id]].replace("/", ".")] = [strings[n] for n, _, _ in sub.statics] + \
                    [strings[n] for n, _ in sub.fields]
    return out


def count(key: dict, names: dict[str, list[str]]) -> tuple[int, int]:
    """(wrong, total) fields of the key's classes."""
    wrong = total = 0
    for clear, entry in key["classes"].items():
        want = [r[0] for r in entry["static_fields"] + entry["instance_fields"]]
        have = names.get(clear, [])
        total += len(want)
        wrong += sum(w != h for w, h in zip(want, have)) + abs(len(want) - len(have))
    return wrong, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=1)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="build into this folder and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = build(args.keep or Path(tmp), args.mb, args.seed)
        key = json.loads((out / f"heapgen_s{args.seed}_{args.mb}mb_clear_histogram.json").read_text())
        mapping = hprofkit.Mapping.read(out / "mapping.txt")
        shared = 0
        for entry in key["classes"].values():
            names = [r[1] for r in entry["static_fields"] + entry["instance_fields"]]
            shared += sum(names.count(n) > 1 for n in names)
        print(f"-overloadaggressively HeapGen ({args.mb} MB, seed {args.seed}): {len(key['classes'])} classes, "
              f"{shared} fields share their obfuscated name with another of their class")
        for kind in ("obf", "obf_android"):
            dump = out / f"heapgen_s{args.seed}_{args.mb}mb_{kind}.hprof.gz"
            plain = hprofkit.open_heap(dump)
            before = {}
            for clear, entry in key["classes"].items():
                cls = plain.find_class(entry["obfuscated"])
                before[clear] = [mapping.field_name(entry["obfuscated"], f.name, f.type) or f.name
                                 for f in cls.statics() + cls.fields()]
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                times = []
                for _ in range(3):
                    start = time.perf_counter()
                    heap = hprofkit.open_heap(dump, mapping=mapping)
                    times.append(time.perf_counter() - start)
                target = Path(tmp) / f"{kind}.hprof"
                hprofkit.deobfuscate(dump, target, mapping=mapping)
            after = {c: [f.name for f in heap.find_class(c).statics() + heap.find_class(c).fields()]
                     for c in key["classes"] if heap.find_class(c)}
            (b, total), (a, _), (w, _) = count(key, before), count(key, after), count(key, written_names(target))
            print(f"  {dump.name}: {total} fields; wrong or obfuscated: before {b}, after {a} (heap) / {w} "
                  f"(deobfuscate); open_heap with the mapping {min(times):.3f} s; {len(caught)} warnings")
            os.unlink(target)


if __name__ == "__main__":
    main()
