"""hprofkit.report() and `python -m hprofkit report`: the data the page
carries equals what the API says of the same heap, lists are cut with what
they leave out summed, the embedded JSON is inert whatever the dump's
strings hold, the page fetches nothing, and the file goes through the one
output path.  (What a person sees in a browser: test_report_browser.py.)"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

import hprofkit
from hprofkit._classnames import stable_name
from conftest import HPROF_DIR
from hprofkit._report import Limits, collect
from hprofkit._report.objects import DECODE_CHARS
from hprofkit._report.page import script_json, view_html
from hprofkit._report.source import opened
from hprofkit.heapdiff import class_histogram
from leaky_heap import android_app
from report_dumps import HOSTILE_TEXT, hostile_app

# Depends on how hprofkit is installed (package data, entry points, extras):
# .ci/run runs these tests against the wheel too.
pytestmark = pytest.mark.installed

SERVICE_BINDER = HPROF_DIR / "leakcanary__leak_service_binder.hprof"
DIALER = HPROF_DIR / "platform_tools_base__dialer.android-hprof"
JDK8 = HPROF_DIR / "mat__oracle_jdk8_05_x64.hprof"
JDK11_GZ = HPROF_DIR / "mat__openjdk_jdk11_04_x64.hprof.gz"
TWO_HEAP_DUMPS = HPROF_DIR / "mat__oracle_jdk7_21_hprofagent.hprof"


class _Page(HTMLParser):
    """The elements of a page with their attributes, and the text of each script and style."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.texts: dict[str, list[str]] = {"script": [], "style": []}
        self._open: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._open = tag if tag in self.texts else None
        if self._open:
            self.texts[tag].append("")

    def handle_endtag(self, tag):
        self._open = None

    def handle_data(self, data):
        if self._open:
            self.texts[self._open][-1] += data


def parse(page: bytes) -> _Page:
    parser = _Page()
    parser.feed(page.decode("utf-8"))
    return parser


def page_data(path: Path) -> dict:
    """The JSON document a report page embeds."""
    parsed = parse(path.read_bytes())
    (index,) = [i for i, (tag, attrs) in enumerate(t for t in parsed.tags if t[0] == "script")
                if attrs.get("type") == "application/json"]
    return json.loads(parsed.texts["script"][index])


@pytest.fixture(scope="module")
def hostile_dumps(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    ids = hostile_app(folder / "app.hprof", activities=3)
    hostile_app(folder / "base.hprof", activities=1)
    return folder / "app.hprof", folder / "base.hprof", ids


def top_level(heap, n):
    """The n largest retainers that no object dominates, from top_retainers of the whole heap."""
    ranked = heap.top_retainers(heap.object_count)
    return [(obj.id, size) for obj, size in ranked if size > 0 and heap.dominator(obj) is None][:n]


# ---- the embedded JSON --------------------------------------------------------

def test_script_json_is_inert_ascii_and_round_trips():
    data = {"text": HOSTILE_TEXT, "keys": ["</SCRIPT >", "<!--", "-->", "\u2028\u2029", "\udfff\ud800x", "a&b>c"],
            "n": [0, -1, 2 ** 62]}
    out = script_json(data)
    assert out.isascii()
    assert not set("<>&") & set(out)  # no tag, comment or entity can start in it
    assert json.loads(out) == data


def test_the_script_never_parses_markup_or_code():
    """Dump strings reach the page through textContent and text nodes only."""
    from hprofkit._report.page import asset
    script = asset("report.js")
    assert not re.findall(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|"
                          r"setAttribute\(\s*[\"']on|\.src\s*=|\.href\s*=", script)


def test_the_page_is_one_file_that_fetches_nothing(hostile_dumps, tmp_path):
    app, _, _ = hostile_dumps
    out = tmp_path / "report.html"
    hprofkit.report(app, out)
    page = parse(out.read_bytes())
    for tag, attrs in page.tags:
        assert "src" not in attrs, tag
        if tag == "link":
            assert attrs["href"].startswith("data:"), attrs
    (policy,) = [a["content"] for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert "default-src 'none'" in policy
    # The policy's hashes are those of the page's one script and one style: nothing else may run or style it.
    code = [text for text, (t, a) in zip(page.texts["script"], [x for x in page.tags if x[0] == "script"])
            if a.get("type") is None]
    assert len(code) == 1 and len(page.texts["style"]) == 1

    def sha(text):
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"
    assert f"script-src {sha(code[0])};" in policy and f"style-src {sha(page.texts['style'][0])};" in policy
    # Everything from the dump is in the JSON, none of it in the markup.
    raw = out.read_bytes()
    assert raw.count(b"</script") == 2 and b"<img" not in raw and b"<!--" not in raw
    assert page_data(out)["sections"]["leaks"]["groups"]


# ---- figures equal to the API's ------------------------------------------------------

@pytest.mark.parametrize("dump", [SERVICE_BINDER, DIALER, JDK8, JDK11_GZ], ids=lambda p: p.name)
def test_report_figures_equal_the_api(dump, tmp_path):
    data = page_data(Path(hprofkit.report(dump, tmp_path / "r.html")))
    objects = data["objects"]["rows"]
    sections = data["sections"]
    with hprofkit.open(dump) as d:
        stats = d.stats()
    with hprofkit.open_heap(dump) as heap:
        ov = sections["overview"]
        assert (ov["objects"], ov["classes"], ov["gc_roots"]) == (heap.object_count, heap.class_count,
                                                                   len(heap.gc_roots))
        # The reachable heap and the garbage: together, stats()' record-level totals.
        counted = heap.histogram()
        assert ov["counts"] == "reachable" and ov["total"] == sum(r.shallow_size for r in counted)
        assert ov["total"] + ov["unreachable"]["bytes"] == sum(t.bytes for t in stats.heap_totals.values())
        assert ov["instances_and_arrays"] + ov["unreachable"]["objects"] == sum(
            t.count for t in stats.heap_totals.values())
        heaps = list(stats.heaps) if len(stats.heaps) > 1 else []
        assert ov["heaps"] == ([[h, sum(r.per_heap[h][0] for r in counted if h in r.per_heap),
                                 sum(r.per_heap[h][1] for r in counted if h in r.per_heap)] for h in heaps]
                               if heaps else None)
        assert ov["file"]["format"] == d.magic and ov["file"]["timestamp_ms"] == d.timestamp
        # The biggest objects: the top-level dominators, largest first, with their retained sizes.
        shown = [(int(objects[row][0], 16), size) for row, size in ov["dominators"]["rows"]]
        assert shown == top_level(heap, Limits().dominators)
        assert ov["dominators"]["rest"] == ov["total"] - sum(size for _, size in shown)
        for row in objects:
            obj = heap.object(int(row[0], 16))
            assert row[1:6] == [obj.class_name if obj.kind != "class" else "java.lang.Class", obj.kind,
                                obj.shallow_size, heap.retained_size(obj), heap.retained_count(obj)]
        # The histogram: one row per class, its own name, retained as HeapClass.instances_retained_size;
        # summed by stable name (a lambda's without its run's counter), the counts of hprofkit.diff's
        # class_histogram.
        hist = sections["histogram"]
        assert hist["total_rows"] == len(hist["rows"]) and hist["rest"]["rows"] == 0
        by_name: dict[str, list[int]] = {}
        assert hist["heaps"] == heaps and hist["counts"] == "reachable"
        rows = {r.class_.class_id: r for r in counted}
        for name, class_id, count, shallow, retained, *split in hist["rows"]:
            cls = heap.object(int(class_id, 16))
            row = rows[cls.class_id]
            assert (cls.name, row.instances, row.shallow_size, cls.instances_retained_size) == (name, count, shallow,
                                                                                                 retained)
            # Android: instances and shallow bytes split by heap.
            assert split == ([[list(row.per_heap[h]) if h in row.per_heap and row.per_heap[h][0] else 0
                               for h in heaps]] if heaps else [])
            sums = by_name.setdefault(stable_name(name), [0, 0])
            sums[0] += count
            sums[1] += shallow
        assert {k: tuple(v) for k, v in by_name.items()} == class_histogram(heap)
        assert [r[4] for r in hist["rows"]] == sorted((r[4] for r in hist["rows"]), reverse=True)
        # Leak traces, folded by fingerprint.
        leaks = heap.find_leaks()
        groups = Counter(leak.fingerprint for leak in leaks)
        got = sections["leaks"]
        assert got["total"] == len(leaks) and got["fingerprints"] == len(groups)
        assert {g["fingerprint"]: g["count"] for g in got["groups"]} == groups
        for group in got["groups"]:
            first = next(leak for leak in leaks if leak.fingerprint == group["fingerprint"])
            assert [(int(objects[n["object"]][0], 16), n["status"]) for n in group["trace"]] == \
                [(node.object.id, node.status) for node in first.nodes]


def test_suspects_are_the_dominators_over_a_tenth_of_the_heap(hostile_dumps, tmp_path):
    app, _, ids = hostile_dumps
    data = page_data(Path(hprofkit.report(app, tmp_path / "r.html")))
    suspects = data["sections"]["suspects"]
    objects = data["objects"]["rows"]
    with hprofkit.open_heap(app) as heap:
        string = heap.object(ids["hostile_string"])
        assert suspects["total"] == data["sections"]["overview"]["total"]
        assert suspects["threshold"] == suspects["total"] // 10
        [item] = suspects["items"]  # the big String; the rest is far below 10%
        assert int(objects[item["object"]][0], 16) == string.id and item["retained"] == heap.retained_size(string)
        path = heap.path_to_root(string, exclude=())
        assert [(h[0], h[1], int(objects[h[2]][0], 16)) for h in item["path"]] == \
            [(hop.ref_type, hop.name or "", hop.target.id) for hop in path.hops]
        assert objects[item["object"]][6].startswith('"' + HOSTILE_TEXT[:50])
        # Its memory accumulates in its char[]: MAT's walk down the biggest dominated child.
        chars = string["value"]
        assert [(int(objects[row][0], 16), size) for row, size in item["chain"]] == \
            [(string.id, heap.retained_size(string)), (chars.id, heap.retained_size(chars))]
    # Nothing over 10%: no suspect.
    data = page_data(Path(hprofkit.report(JDK8, tmp_path / "jdk8.html")))
    biggest = data["sections"]["overview"]["dominators"]["rows"][0][1]
    assert (biggest > data["sections"]["suspects"]["threshold"]) == bool(data["sections"]["suspects"]["items"])


def test_class_suspects_and_accumulated_objects_by_class(tmp_path):
    """MAT's class suspect: 40 top-level Caches, none over 10% alone, together over it; and
    at the single suspect's accumulation point, the objects it dominates directly by class."""
    heap = android_app()
    heap.cls("com.example.Cache", fields=[("data", "object")])
    for i in range(40):
        heap.roots.append(("jni_global", heap.new("com.example.Cache", data=heap.string("c" * (200 + i)))))
    items = [heap.string("x" * 2000) for _ in range(30)] + [heap.new("com.example.Cache") for _ in range(5)]
    heap.roots.append(("jni_global", heap.array(items)))  # the single suspect: what it holds is spread
    heap.write(tmp_path / "cache.hprof")
    data = page_data(Path(hprofkit.report(tmp_path / "cache.hprof", tmp_path / "r.html")))
    suspects, objects = data["sections"]["suspects"], data["objects"]["rows"]
    with hprofkit.open_heap(tmp_path / "cache.hprof") as h:
        top = [o for o in h.objects() if h.dominator(o) is None and h.retained_size(o) > 0]
        caches = [o for o in top if o.kind == "instance" and o.class_name == "com.example.Cache"]
        singles = {o.id for o in top if h.retained_size(o) > suspects["threshold"]}
        assert len(caches) == 40 and not singles & {o.id for o in caches}
        [group] = [g for g in suspects["groups"] if g["class"] == "com.example.Cache"]
        assert (group["instances"], group["retained"]) == (40, sum(h.retained_size(o) for o in caches))
        assert group["retained"] > suspects["threshold"]
        assert [size for _, size in group["biggest"]] == sorted((h.retained_size(o) for o in caches),
                                                                  reverse=True)[:5]
        # Every class of top-level objects over the threshold together is a group, and only those.
        by_class: dict = {}
        for o in top:
            if o.id not in singles:
                name = "java.lang.Class" if o.kind == "class" else o.class_name
                by_class.setdefault(name, []).append(h.retained_size(o))
        assert sorted(g["class"] for g in suspects["groups"]) == sorted(
            name for name, sizes in by_class.items() if len(sizes) >= 2 and sum(sizes) > suspects["threshold"])
        # The single suspect (the array): its accumulation point's children by class.
        [item] = suspects["items"]
        point = h.object(int(objects[item["chain"][-1][0]][0], 16))
        assert point.kind == "object_array"
        kids = [o for o in h.objects() if h.dominator(o) == point]
        want: dict = {}
        for o in kids:
            row = want.setdefault(o.class_name if o.kind != "class" else "java.lang.Class", [0, 0, 0])
            row[0] += 1
            row[1] += o.shallow_size
            row[2] += h.retained_size(o)
        assert item["accumulated"]["objects"] == len(kids) == 35
        assert {r[0]: r[1:] for r in item["accumulated"]["rows"]} == {k: v for k, v in want.items()}


def children_by_dominator(heap) -> dict[int, list[tuple[int, int]]]:
    """{object id: [(child id, retained)] largest first}: the dominator tree, from heap.dominator()."""
    children: dict[int, list[tuple[int, int]]] = {}
    for obj in heap.objects():
        parent = heap.dominator(obj)
        if parent is not None:
            children.setdefault(parent.id, []).append((obj.id, heap.retained_size(obj)))
    for kids in children.values():
        kids.sort(key=lambda kid: (-kid[1], kid[0]))
    return children


@pytest.mark.parametrize("dump", [SERVICE_BINDER, DIALER], ids=lambda p: p.name)
def test_accumulation_points_follow_the_biggest_dominated_child(dump, tmp_path):
    data = page_data(Path(hprofkit.report(dump, tmp_path / "r.html")))
    objects = data["objects"]["rows"]
    suspects = data["sections"]["suspects"]
    assert suspects["items"]
    with hprofkit.open_heap(dump) as heap:
        children = children_by_dominator(heap)
        for item in suspects["items"]:
            chain = [(int(objects[row][0], 16), size) for row, size in item["chain"]]
            expected = [(int(objects[item["object"]][0], 16), item["retained"])]
            while children.get(expected[-1][0]) and children[expected[-1][0]][0][1] >= 0.7 * expected[-1][1]:
                expected.append(children[expected[-1][0]][0])
            assert chain == expected and not item["chain_stopped"]
            # A suspect's path is its own shortest, searched alone.
            obj = heap.object(expected[0][0])
            path = heap.path_to_root(obj, exclude=())
            assert [int(objects[hop[2]][0], 16) for hop in item["path"]] == [hop.target.id for hop in path.hops]


def test_a_heap_gives_the_report_a_path_gives(tmp_path):
    with opened(DIALER) as from_path:
        by_path = collect(from_path)
    with hprofkit.open_heap(DIALER) as heap, opened(heap) as from_heap:
        by_heap = collect(from_heap)
    for name in ("suspects", "leaks"):
        assert by_heap["sections"][name] == by_path["sections"][name], name
    # The same rows, split by heap alike (Android): the heap counts them.
    for name in ("histogram", "unreachable"):
        assert by_heap["sections"][name] == by_path["sections"][name], name
    assert by_path["sections"]["histogram"]["heaps"] == ["zygote", "app"]
    assert by_heap["objects"] == by_path["objects"]
    for name in ("dominators", "heaps", "total", "unreachable"):
        assert by_heap["sections"]["overview"][name] == by_path["sections"]["overview"][name], name
    assert "file" not in by_heap["sections"]["overview"]


def test_limits_cut_each_list_and_sum_what_they_leave_out(hostile_dumps):
    app, _, _ = hostile_dumps
    limits = Limits(dominators=2, histogram=3, leak_groups=1, leak_objects=1)
    with opened(app) as src:
        full_data, cut_data = collect(src), collect(src, limits=limits)
    full, cut = full_data["sections"], cut_data["sections"]
    rows = full["histogram"]["rows"]
    assert cut["histogram"]["rows"] == rows[:3] and cut["histogram"]["total_rows"] == len(rows)
    assert cut["histogram"]["rest"] == {"rows": len(rows) - 3, "instances": sum(r[2] for r in rows[3:]),
                                        "shallow_size": sum(r[3] for r in rows[3:])}
    assert len(cut["overview"]["dominators"]["rows"]) == 2
    assert cut["overview"]["dominators"]["rest"] == cut["overview"]["total"] - sum(
        size for _, size in cut["overview"]["dominators"]["rows"])
    groups, [first] = full["leaks"]["groups"], cut["leaks"]["groups"]
    assert len(groups) == 2 and first["fingerprint"] == groups[0]["fingerprint"]
    assert (first["count"], first["more"], len(first["objects"])) == (groups[0]["count"], groups[0]["count"] - 1, 1)

    def ids(data, group):  # the leaking objects by id (row numbers depend on what else the report lists)
        return [(data["objects"]["rows"][row][0], size, key) for row, size, key in group["objects"]]
    assert ids(cut_data, first) == ids(full_data, groups[0])[:1]
    assert cut["leaks"]["rest"] == {"groups": 1, "leaks": groups[1]["count"]}


def test_long_strings_traces_and_pages_are_cut(tmp_path):
    heap = android_app()
    long_name = "com.example." + "Very" * 1500
    heap.cls(long_name, statics={"sHead": ("object", None)})
    # A destroyed activity at the end of a 100-node chain hanging from that class.
    node = heap.new("com.example.MainActivity", mDestroyed=True)
    for _ in range(100):
        node = heap.new("com.example.Node", next=node)
    heap.set_static(long_name, "sHead", "object", node)
    for i in range(300):  # classes enough for the histogram to be cut
        heap.roots.append(("jni_global", heap.new(heap.cls(f"com.example.K{i}"))))
    huge = heap.string("x" * (DECODE_CHARS + 1))  # the biggest object: its text is not even decoded
    heap.roots.append(("jni_global", huge))
    heap.write(tmp_path / "long.hprof")
    data = page_data(Path(hprofkit.report(tmp_path / "long.hprof", tmp_path / "r.html")))
    [row, _] = data["sections"]["overview"]["dominators"]["rows"][0]
    assert data["objects"]["rows"][row][0] == f"{huge:x}"
    assert data["objects"]["rows"][row][6] == f"({DECODE_CHARS + 1:,}-long text, not shown)"
    [group] = data["sections"]["leaks"]["groups"]
    trace = group["trace"]
    # The root's class (named by its cut name), 12 nodes, the count left out, the 12 last.
    assert len(trace) == 25 and trace[12] == 102 - 24
    assert data["objects"]["rows"][trace[0]["object"]][6] == long_name[:300] + "…"
    assert data["objects"]["rows"][trace[-1]["object"]][1] == "com.example.MainActivity"
    # A page over its size limit is made again with every list halved, and says so.
    full = Path(hprofkit.report(tmp_path / "long.hprof", tmp_path / "full.html"))
    limit = os.path.getsize(full) - 1
    small = Path(hprofkit.report(tmp_path / "long.hprof", tmp_path / "small.html",
                                 limits=Limits(histogram=400, page_bytes=limit)))  # halved: 200 of the 304 rows
    assert os.path.getsize(small) <= limit
    shortened = page_data(small)
    assert shortened["shortened"] is True and "shortened" not in page_data(full)
    assert len(page_data(full)["sections"]["histogram"]["rows"]) == 304
    assert len(shortened["sections"]["histogram"]["rows"]) <= 200
    assert shortened["sections"]["histogram"]["total_rows"] == page_data(full)["sections"]["histogram"]["total_rows"]


@pytest.mark.parametrize("dump", [SERVICE_BINDER, DIALER], ids=lambda p: p.name)
def test_bitmaps_are_the_heaps_with_their_thumbnails_and_duplicates(dump, tmp_path):
    data = page_data(Path(hprofkit.report(dump, tmp_path / "r.html")))
    section, objects = data["sections"]["bitmaps"], data["objects"]["rows"]
    with hprofkit.open_heap(dump) as heap:
        found = heap.bitmaps()
        ranked = sorted(found, key=lambda b: (-(b.byte_size or 0), b.object.id))
        assert (section["count"], section["bytes"], section["with_pixels"]) == \
            (len(found), sum(b.byte_size or 0 for b in found), sum(b.has_pixels for b in found)) and found
        assert [(int(objects[i[0]][0], 16), i[1], i[2], i[3], i[4]) for i in section["items"]] == \
            [(b.object.id, b.width, b.height, b.config or b.format, b.byte_size) for b in ranked[:Limits().bitmaps]]
        for item, bmp in zip(section["items"], ranked):
            uri = data["images"].get(str(item[0]))
            if bmp.has_pixels:  # the thumbnail is the API's PNG at 96 pixels a side
                assert uri == "data:image/png;base64," + base64.b64encode(bmp.png_bytes(max_side=96)).decode()
                assert item[5] is None
            else:
                assert uri is None and item[5] == bmp.no_pixels_reason
        groups = heap.duplicate_bitmaps(found)
        assert [(g["count"], g["wasted"], g["digest"], [int(objects[r][0], 16) for r in g["bitmaps"]])
                for g in section["duplicates"]] == [(len(g.bitmaps), g.wasted_bytes, g.digest,
                                                     [b.object.id for b in g.bitmaps]) for g in groups]
    # A HotSpot heap has no such section.
    assert "bitmaps" not in page_data(Path(hprofkit.report(JDK8, tmp_path / "jdk8.html")))["sections"]


def test_diff_against_a_baseline_is_hprofkit_diff(hostile_dumps, tmp_path):
    app, base, _ = hostile_dumps
    data = page_data(Path(hprofkit.report(app, tmp_path / "r.html", baseline=base)))
    got = data["sections"]["diff"]
    expected = hprofkit.diff(base, app, retained=True, paths=True)
    assert (got["a"], got["b"]) == ("base.hprof", "app.hprof")
    assert got["rows"] == [[r.name, r.count_a, r.count_b, r.shallow_a, r.shallow_b, r.retained_a, r.retained_b]
                           for r in expected.rows]
    assert [(p["class"], tuple(p["path"]), p["instances_a"], p["instances_b"]) for p in got["paths"]] == \
        [(p.name, p.path, p.count_a, p.count_b) for p in expected.paths]
    assert got["rows"][0][:3] == ["com.example.MainActivity", 1, 3]
    assert "diff" not in page_data(Path(hprofkit.report(app, tmp_path / "alone.html")))["sections"]


def test_packs_minis_and_other_heap_dumps(tmp_path):
    plain = page_data(Path(hprofkit.report(SERVICE_BINDER, tmp_path / "plain.html")))
    hprofkit.encode(SERVICE_BINDER, tmp_path / "app.hpk", strip="none")
    packed = page_data(Path(hprofkit.report(tmp_path / "app.hpk", tmp_path / "pack.html")))
    with hprofkit.open(tmp_path / "app.hpk") as dump:
        assert packed["sections"]["overview"]["file"]["compression"] == dump.compression == "hprofkit pack"
    assert packed["sections"]["histogram"] == plain["sections"]["histogram"]
    assert packed["sections"]["leaks"] == plain["sections"]["leaks"]
    second = page_data(Path(hprofkit.report(TWO_HEAP_DUMPS, tmp_path / "second.html", heap_dump=1)))
    with hprofkit.open_heap(TWO_HEAP_DUMPS, heap_dump=1) as heap:
        assert second["sections"]["overview"]["objects"] == heap.object_count
    assert second["sections"]["overview"]["file"]["heap_dump"] == 1
    visualvm = page_data(Path(hprofkit.report(JDK8, tmp_path / "vv.html", semantics="visualvm")))
    assert visualvm["sections"]["overview"]["semantics"] == "visualvm"


def test_the_report_never_writes_over_its_input(hostile_dumps, tmp_path):
    app, base, _ = hostile_dumps
    copy = tmp_path / "app.hprof"
    copy.write_bytes(app.read_bytes())
    link = tmp_path / "link.html"
    link.symlink_to(copy)
    for out, baseline in ((copy, None), (link, None), (tmp_path / "b.hprof", None)):
        if out.name == "b.hprof":
            out.write_bytes(base.read_bytes())
            with pytest.raises(ValueError, match="is the input file"):
                hprofkit.report(copy, out, baseline=out)
        else:
            with pytest.raises(ValueError, match="is the input file"):
                hprofkit.report(copy, out, baseline=baseline)
    assert copy.read_bytes() == app.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.hprof", "b.hprof", "link.html"]


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "hprofkit", "report", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=600)


def test_cli_writes_the_report_and_fails_in_one_line(hostile_dumps, tmp_path):
    app, base, _ = hostile_dumps
    proc = _cli(app, "--baseline", base, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""
    assert re.fullmatch(r"wrote report\.html \([\d.]+ KiB\)\n", proc.stdout), proc.stdout
    assert page_data(tmp_path / "report.html")["sections"]["diff"]["rows"]
    proc = _cli(app, "-o", "-")
    assert proc.returncode == 0 and proc.stdout.startswith("<!DOCTYPE html>")
    assert proc.stderr == "wrote the report to standard output\n"
    for args, message in (((tmp_path / "missing.hprof",), "No such file"),
                          ((tmp_path / "report.html", "-o", "other.html"), "not an HPROF file"),
                          ((app, "--heap-dump", "3"), "heap dump"),
                          ((app, "-o", app), "is the input file")):
        proc = _cli(*args, cwd=tmp_path)
        assert proc.returncode == 1 and proc.stdout == "", args
        assert proc.stderr.startswith("hprofkit: error: ") and message in proc.stderr, proc.stderr
        assert proc.stderr.count("\n") == 1, proc.stderr
    proc = _cli(app, "-o", "j.html", "--json", cwd=tmp_path)
    assert proc.returncode == 0 and json.loads(proc.stdout) == {
        "output": "j.html", "size": (tmp_path / "j.html").stat().st_size, "shortened": False,
        "sections": ["overview", "suspects", "leaks", "histogram", "unreachable", "domtree", "flame", "threads", "waste"]}
    # A bad value is a usage error (exit 2, the usage line), as in every command.
    proc = _cli(app, "--heap-dump", "first", cwd=tmp_path)
    assert proc.returncode == 2 and "usage: hprofkit report" in proc.stderr and "--heap-dump" in proc.stderr
    # Standard input, the last heap dump counted from the end.
    with open(app, "rb") as f:
        proc = subprocess.run([sys.executable, "-m", "hprofkit", "report", "-", "-o", "stdin.html", "--heap-dump", "-1"],
                              stdin=f, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    from_stdin = page_data(tmp_path / "stdin.html")
    assert from_stdin["title"] == "<stdin>" and from_stdin["sections"]["overview"]["file"]["size"] == app.stat().st_size
    assert from_stdin["sections"]["histogram"] == page_data(tmp_path / "report.html")["sections"]["histogram"]


def test_a_view_embeds_alone_for_notebooks():
    data = {"columns": ["class"], "rows": [[HOSTILE_TEXT, None, 1, 16, 16]], "total_rows": 1,
            "rest": {"rows": 0, "instances": 0, "shallow_size": 0}}
    one, two = view_html("histogram", data), view_html("histogram", data)
    target = re.search(r'<div id="(hk-[0-9a-f]+)"', one).group(1)
    assert target not in two  # each output its own element
    page = parse(one.encode())
    script = [a for t, a in page.tags if t == "script" and a.get("type") == "application/json"][0]
    assert script["data-hprofkit-view"] == "histogram" and script["data-hprofkit-target"] == target
    assert json.loads(page.texts["script"][0]) == data and "<img" not in one


def test_the_default_limits_bound_a_heap_with_more_than_they_list(tmp_path):
    heap = android_app()
    classes, leaks = Limits().histogram + 100, Limits().leak_groups + 30
    for i in range(classes):
        name = heap.cls(f"com.example.C{i}", statics={"sSelf": ("object", None)})
        heap.set_static(name, "sSelf", "object", heap.new(name))
        if i < leaks:  # a destroyed activity kept by its own class: a fingerprint of its own
            heap.set_static(name, "sKept", "object", heap.new("com.example.MainActivity", mDestroyed=True))
    heap.write(tmp_path / "many.hprof")
    out = Path(hprofkit.report(tmp_path / "many.hprof", tmp_path / "r.html"))
    sections = page_data(out)["sections"]
    hist = sections["histogram"]
    assert len(hist["rows"]) == Limits().histogram and hist["rest"]["rows"] == hist["total_rows"] - Limits().histogram
    assert hist["total_rows"] > classes  # the app's own classes besides
    assert sections["leaks"]["fingerprints"] == leaks and len(sections["leaks"]["groups"]) == Limits().leak_groups
    assert sections["leaks"]["rest"] == {"groups": 30, "leaks": 30}
    assert os.path.getsize(out) < 10 << 20


# ---- the dominator tree, threads and waste (#21) -------------------------------------------

SMALL = Limits(tree_children=5, flame_frames=40, threads=3, thread_locals=2, duplicate_strings=10, collections=4,
               large_arrays=3, large_array_bytes=4096, waste_items=3, waste_holders=2)


def ids(objects, rows):
    return [int(objects[row][0], 16) for row in rows]


@pytest.mark.parametrize("dump", [SERVICE_BINDER, JDK8], ids=lambda p: p.name)
def test_tree_threads_and_waste_equal_the_api(dump):
    from hprofkit._report.objects import cut_ends
    with opened(dump) as src:
        data = collect(src, limits=SMALL)
    objects, sections, paths = data["objects"]["rows"], data["sections"], data["paths"]
    with hprofkit.open_heap(dump) as heap:
        # The explorer and the flame graph: the notebook views' documents, bounded by the report's Limits.
        tree = sections["domtree"]
        assert {k: v for k, v in tree.items() if k != "rows"} == heap.dominator_tree(children=SMALL.tree_children).data
        assert sections["flame"] == heap.flamegraph(frames=SMALL.flame_frames).data
        roots = heap.dominator_roots()
        assert [(int(n[1], 16), n[2]) for n in tree["nodes"] if n[4] == -1] == \
            [(obj.id, obj.retained_size) for obj in roots[:SMALL.tree_children]]
        assert tree["hidden"] == [len(roots) - SMALL.tree_children,
                                  sum(obj.retained_size for obj in roots[SMALL.tree_children:])]
        # Each node names its object's row, whose path from a GC root the page holds.
        assert ids(objects, tree["rows"]) == [int(n[1], 16) for n in tree["nodes"]]
        for row in tree["rows"][:SMALL.tree_children]:
            path = heap.path_to_root(heap.object(int(objects[row][0], 16)), exclude=())
            shown = paths[str(row)]
            assert path_data_ids(path) == (None if shown is None else
                                           [hop if isinstance(hop, int) else int(objects[hop[2]][0], 16) for hop in shown])
        # Threads, largest retained first, their frames as str(frame) with the objects each holds.
        threads = sorted(heap.threads(), key=lambda t: (-t.retained_size, t.serial))
        got = sections["threads"]
        assert got["total_rows"] == len(threads) and len(got["rows"]) == min(len(threads), SMALL.threads)
        assert got["rest"] == {"rows": len(threads[SMALL.threads:]),
                               "retained_size": sum(t.retained_size for t in threads[SMALL.threads:])}
        for row, thread in zip(got["rows"], threads):
            name, daemon, retained, obj_row, frame_count, frames, held, more_held, retains, more_retains = row
            assert (name, daemon, retained, frame_count) == (thread.name, thread.daemon, thread.retained_size,
                                                               len(thread.frames))
            assert ids(objects, [obj_row]) == [thread.object.id]
            expected_frames = cut_ends(thread.frames)
            assert len(frames) == len(expected_frames)
            for shown, frame in zip(frames, expected_frames):
                if isinstance(frame, int):
                    assert shown == frame
                    continue
                assert shown[0] == str(frame)
                assert ids(objects, shown[1]) == [o.id for o in frame.locals[:SMALL.thread_locals]]
                assert shown[2] == max(len(frame.locals) - SMALL.thread_locals, 0)
            assert ids(objects, held) == [o.id for o in thread.held[:SMALL.thread_locals]]
            assert more_held == max(len(thread.held) - SMALL.thread_locals, 0)
            # What it retains, its stack's objects among them: the objects its object dominates.
            kids = thread.object.dominated()
            assert ids(objects, retains) == [o.id for o in kids[:SMALL.thread_locals]]
            assert more_retains == max(len(kids) - SMALL.thread_locals, 0)
            assert retained == thread.object.shallow_size + sum(o.retained_size for o in kids)
        # Waste: every kind of heap.waste(), its largest objects and its holders, each cut at its limit.
        waste = sections["waste"]
        w = heap.waste()
        assert waste["total_bytes"] == w.total_bytes
        assert [(k["kind"], k["objects"], k["wasted_bytes"]) for k in waste["kinds"]] == \
            [(k.kind, k.objects, k.wasted_bytes) for k in w]
        for row, kind in zip(waste["kinds"], w):
            assert [[int(objects[r][0], 16), b] for r, b in row["items"]] == \
                [[i.object.id, i.wasted_bytes] for i in kind.items[:SMALL.waste_items]]
            assert row["holders"] == [[str(h), h.objects, h.wasted_bytes] for h in kind.holders(SMALL.waste_holders)]
        # MAT's duplicate Strings, collections and large arrays, each cut with what it leaves out.
        strings = heap.duplicate_strings()
        assert waste["strings"]["rows"] == [[s.text, s.count, s.wasted_bytes] for s in strings[:SMALL.duplicate_strings]]
        rest = strings[SMALL.duplicate_strings:]
        assert waste["strings"]["total_rows"] == len(strings)
        assert waste["strings"]["rest"] == {"rows": len(rest), **({"count": sum(s.count for s in rest),
                                                                   "wasted_bytes": sum(s.wasted_bytes for s in rest)}
                                                                  if rest else {})}
        collections = heap.collection_waste()
        assert waste["collections"]["rows"] == [
            [c.class_name, f"{c.class_.class_id:x}", c.instances, c.empty, c.mean_fill, c.wasted_bytes]
            for c in collections[:SMALL.collections]]
        assert waste["collections"]["rest"]["rows"] == max(len(collections) - SMALL.collections, 0)
        arrays = heap.large_arrays(SMALL.large_array_bytes)
        assert waste["arrays"]["min_bytes"] == SMALL.large_array_bytes
        assert [[int(objects[r][0], 16), size] for r, size in waste["arrays"]["rows"]] == \
            [[a.array.id, a.bytes] for a in arrays[:SMALL.large_arrays]]
        assert waste["arrays"]["rest"]["rows"] == max(len(arrays) - SMALL.large_arrays, 0)
        if dump == JDK8:  # a JDK dump: threads with stacks and locals, and more of each list than the limits
            assert len(threads) > SMALL.threads and any(row[4] for row in got["rows"])
            # main retains what only its frames hold, and lists it.
            (main,) = [(row, t) for row, t in zip(got["rows"], threads) if t.name == "main"]
            assert set(ids(objects, main[0][8])) & {o.id for f in main[1].frames for o in f.locals}
            assert len(strings) > SMALL.duplicate_strings and waste["strings"]["rest"]["wasted_bytes"] > 0


def path_data_ids(path):
    """A path's object ids as the report keeps them: cut at its ends, an int for the hops left out."""
    from hprofkit._report.objects import cut_ends
    return [hop if isinstance(hop, int) else hop.target.id for hop in cut_ends(path.hops)] if path else None


def test_halving_keeps_the_waste_threshold():
    halved = SMALL.halved()
    assert halved.large_array_bytes == SMALL.large_array_bytes and halved.page_bytes == SMALL.page_bytes
    assert (halved.threads, halved.tree_children, halved.duplicate_strings) == (1, 2, 5)
