"""Android bitmaps (issue #20): heap.bitmaps(), heap.duplicate_bitmaps(), the PNGs and the
bitmaps command, on the shared Android dumps (checked against VisualVM's heap library and
the dump's bytes as the stream parser reads them) and on real dumps extended with the
layouts the shared dumps lack (tests/android_bitmaps.py): RGB_565, ALPHA_8, mutable and
unpremultiplied buffers, hostile sizes, Android 8+'s Bitmap.dumpData.  Every PNG is read
back by the tests' own decoder (tests/pngkit.py)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import hprofkit
from hprofkit import _bitmaps
from hprofkit.cli import main

import android_bitmaps
import pngkit
from conftest import dump_path, raw_bytes
from hostile import traced_peak
from test_cli_bad_inputs import CORPUS, check_one_line_error

LEAKCANARY = "leakcanary__leak_service_binder.hprof"
DIALER = "platform_tools_base__dialer.android-hprof"
SHARED = [LEAKCANARY, DIALER]
SKIA_SCALE = [0] + [((255 << 24) + (a >> 1)) // a for a in range(1, 256)]


# ---- the conversions, as documented, written again here -------------------------------

def expected_rgba(raw: bytes, config: str, premultiplied: bool, width: int, height: int, step: int = 1) -> bytes:
    """The RGBA pixels of raw rows, every step-th pixel of every step-th row: ARGB_8888
    un-premultiplied with Skia's table, RGB_565 widened by bit replication, ALPHA_8 black."""
    size = {"ARGB_8888": 4, "RGB_565": 2, "ALPHA_8": 1}[config]
    out = bytearray()
    for y in range(0, height, step):
        for x in range(0, width, step):
            p = raw[(y * width + x) * size:(y * width + x + 1) * size]
            if config == "ARGB_8888":
                r, g, b, a = p
                if premultiplied and 0 < a < 255:
                    r, g, b = (min(255, (c * SKIA_SCALE[a] + (1 << 23)) >> 24) for c in (r, g, b))
                out += bytes((r, g, b, a))
            elif config == "RGB_565":
                v = p[0] | p[1] << 8
                r5, g6, b5 = v >> 11, (v >> 5) & 63, v & 31
                out += bytes((r5 << 3 | r5 >> 2, g6 << 2 | g6 >> 4, b5 << 3 | b5 >> 2, 255))
            else:
                out += bytes((0, 0, 0, p[0]))
    return bytes(out)


def arrays_of(data: bytes) -> dict[int, bytes]:
    """The payload of every primitive byte array, by id, as the stream parser reads them
    (not the heap index hprofkit's bitmaps read through)."""
    return {sub.id: bytes(sub.data) for sub in hprofkit.iter_subrecords(data)
            if sub.tag == 0x23 and sub.elem_type == 8}


def check_png(bmp: hprofkit.Bitmap, raw: bytes, step: int = 1, png: bytes | None = None) -> None:
    image = pngkit.decode(bmp.png_bytes(max_side=None if step == 1 else -(-max(bmp.width, bmp.height) // step))
                          if png is None else png)
    assert (image.width, image.height, image.colour_type) == (-(-bmp.width // step), -(-bmp.height // step), 6)
    assert image.pixels == expected_rgba(raw, bmp.config, bmp.premultiplied, bmp.width, bmp.height, step)


@pytest.fixture(scope="module")
def legacy_dump(tmp_path_factory) -> tuple[Path, list[android_bitmaps.Added]]:
    """LeakCanary's dump with bitmaps of every Android 2.3-7.1 layout and hostile ones added."""
    data, added = android_bitmaps.legacy_bitmaps(raw_bytes(LEAKCANARY))
    path = tmp_path_factory.mktemp("bitmaps") / "legacy.hprof"
    path.write_bytes(data)
    return path, added


# ---- the shared Android dumps ---------------------------------------------------------

@pytest.mark.parametrize("name", SHARED)
def test_bitmaps_are_the_dumps_bitmap_objects_with_their_fields(name, graph_oracle):
    """Every android.graphics.Bitmap, its mWidth and mHeight, and whether the dump holds its
    pixels, as VisualVM's heap library reads the objects."""
    peer_classes = graph_oracle.run(dump_path(name), "classes")
    expected_count = sum(c["instances"] for c in peer_classes if c["name"] == "android.graphics.Bitmap")
    bitmaps = hprofkit.open_heap(dump_path(name)).bitmaps()
    assert len(bitmaps) == expected_count > 20
    ids = [b.object.id for b in bitmaps] + [b._buffer.id for b in bitmaps if b._buffer is not None]
    peers = {o["id"]: o for o in graph_oracle.run(dump_path(name), "object", *map(str, ids))}
    for bmp in bitmaps:
        assert peers[bmp.object.id]["class"] == "android.graphics.Bitmap"
        peer = {f["name"]: f["value"] for f in peers[bmp.object.id]["fields"]}
        assert (bmp.width, bmp.height) == (int(peer["mWidth"]), int(peer["mHeight"]))
        buffer = peers.get(int(peer["mBuffer"] or 0))
        assert buffer is None or (buffer["class"] == "byte[]" and buffer["id"] == bmp._buffer.id)
        length = buffer and buffer["length"]
        assert bmp.has_pixels == (length == 4 * bmp.width * bmp.height)
        assert (bmp.config, bmp.format, bmp.byte_size) == ("ARGB_8888", "ARGB_8888", length)
        assert bmp.premultiplied == (peer["mIsPremultiplied"] == "true")


@pytest.mark.parametrize("name", SHARED)
def test_every_png_decodes_to_the_dumps_pixels(name):
    """pixels() are the mBuffer's bytes; the PNG decodes (the tests' decoder) to them,
    un-premultiplied as documented."""
    data = raw_bytes(name)
    arrays = arrays_of(data)
    bitmaps = hprofkit.Heap(data).bitmaps()
    assert all(b.has_pixels for b in bitmaps)
    for bmp in bitmaps:
        raw = arrays[bmp.object["mBuffer"].id]
        assert bmp.pixels() == raw[:bmp.width * bmp.height * 4]
        check_png(bmp, raw)
    # The conversion matters: these icons' edges are translucent.
    assert any(0 < a < 255 for b in bitmaps for a in b.pixels()[3::4])


@pytest.mark.parametrize("name", SHARED)
def test_thumbnails_take_every_kth_pixel_of_every_kth_row(name):
    bmp = max(hprofkit.open_heap(dump_path(name)).bitmaps(), key=lambda b: b.width * b.height)
    raw = bmp.pixels()
    for max_side in (1, 5, 10, 17, 32, max(bmp.width, bmp.height) - 1):
        step = -(-max(bmp.width, bmp.height) // max_side)
        image = pngkit.decode(bmp.png_bytes(max_side=max_side))
        assert max(image.width, image.height) <= max_side
        check_png(bmp, raw, step, png=bmp.png_bytes(max_side=max_side))
    assert bmp.png_bytes(max_side=max(bmp.width, bmp.height)) == bmp.png_bytes()
    for bad in (0, -1, 2.5, "9"):
        with pytest.raises(ValueError, match="max_side"):
            bmp.png_bytes(max_side=bad)


def test_a_png_of_many_bands_and_idat_chunks(legacy_dump, monkeypatch):
    """Rows converted a band at a time and IDAT chunks cut at IDAT_BYTES make the PNG one
    band makes (a 640x480 bitmap of noise: zlib's output is as large as its input)."""
    bmp = next(b for b in hprofkit.open_heap(legacy_dump[0]).bitmaps() if b.width == 640)
    whole = bmp.png_bytes()
    monkeypatch.setattr(_bitmaps, "BAND_BYTES", 1000)
    monkeypatch.setattr(_bitmaps, "IDAT_BYTES", 30000)
    banded = bmp.png_bytes()
    assert pngkit.decode(banded).pixels == pngkit.decode(whole).pixels
    assert pngkit.decode(banded).chunks.count(b"IDAT") > 20 > pngkit.decode(whole).chunks.count(b"IDAT")
    assert bmp.pixels() == b"".join(bmp._pixel_pieces()) and len(list(bmp._pixel_pieces())) == 640 * 480 * 4 // 1000 + 1
    check_png(bmp, bmp.pixels(), png=banded)


def test_the_test_decoder_undoes_every_filter_type():
    """pngkit itself: an image written with each of PNG's five filter types (and all mixed)
    decodes to its pixels, so the checks above rest on a decoder that is right."""
    rng = random.Random(3)
    for width, height in ((1, 1), (3, 7), (16, 5)):
        rgba = bytes(rng.randrange(256) for _ in range(width * height * 4))
        for filters in ([0], [1], [2], [3], [4], [4, 3, 2, 1, 0]):
            assert pngkit.decode(pngkit.encode(width, height, rgba, filters)).pixels == rgba
    broken = bytearray(pngkit.encode(2, 2, bytes(16)))
    broken[-5] ^= 1
    with pytest.raises(AssertionError, match="CRC"):
        pngkit.decode(bytes(broken))


# ---- layouts the shared dumps lack ----------------------------------------------------

def check_added(heap: hprofkit.Heap, added: list[android_bitmaps.Added]) -> dict[int, hprofkit.Bitmap]:
    bitmaps = {b.object.id: b for b in heap.bitmaps()}
    for want in added:
        bmp = bitmaps[want.id]
        assert (bmp.width, bmp.height, bmp.config, bmp.format, bmp.byte_size, bmp.premultiplied) == \
            (want.width, want.height, want.config, want.format, want.byte_size, want.premultiplied), bmp
        assert bmp.pixels() == want.pixels and bmp.has_pixels == (want.pixels is not None)
        if want.reason is None:
            assert bmp.no_pixels_reason is None
        else:
            assert want.reason in bmp.no_pixels_reason and want.reason in repr(bmp)
    return bitmaps


@pytest.mark.sanitize
def test_every_android_7_layout(legacy_dump, graph_oracle):
    """RGB_565, ALPHA_8, mutable buffers larger than their pixels, unpremultiplied pixels,
    two bitmaps on one buffer: configs, sizes, pixels and PNGs; VisualVM reads the dump
    extended by tests/android_bitmaps.py with the same fields."""
    path, added = legacy_dump
    heap = hprofkit.open_heap(path)
    bitmaps = check_added(heap, added)
    configs = {b.config for b in bitmaps.values() if b.has_pixels}
    assert configs == {"ARGB_8888", "RGB_565", "ALPHA_8"}
    for want in added:
        if want.pixels is not None:
            check_png(bitmaps[want.id], want.pixels)
            check_png(bitmaps[want.id], want.pixels, step=2)
    peers = graph_oracle.run(path, "object", *(str(a.id) for a in added))
    assert {p["id"]: (int(f["mWidth"]), int(f["mHeight"])) for p in peers
            for f in [{x["name"]: x["value"] for x in p["fields"]}]} == {a.id: (a.width, a.height) for a in added}


def test_an_unpremultiplied_bitmap_keeps_its_colours(legacy_dump):
    path, added = legacy_dump
    bmp = next(b for b in hprofkit.open_heap(path).bitmaps() if b.premultiplied is False and b.width == 4)
    assert pngkit.decode(bmp.png_bytes()).pixels == bmp.pixels()
    assert any(max(bmp.pixels()[i:i + 3]) > bmp.pixels()[i + 3] for i in range(0, 64, 4))


@pytest.mark.parametrize("compress_format, sizes", [(1, True), (1, False), (0, True), (2, False), (4, True),
                                                     (None, True)])
def test_android_8_dump_data(compress_format, sizes, android_heapgen_dump, tmp_path):
    """Android 8+: pixels only through Bitmap.dumpData, compressed, keyed by mNativePtr; a
    PNG copy is the bitmap's PNG, JPEG and WEBP copies are saved as they are; a bitmap
    without a copy (or a dump without dumpData) has no pixels and says why."""
    data, added = android_bitmaps.dump_data_bitmaps(android_heapgen_dump.read_bytes(), compress_format, sizes=sizes)
    heap = hprofkit.Heap(data)
    bitmaps = check_added(heap, added)
    with_copy = [a for a in added if a.pixels is not None]
    assert len(with_copy) == (0 if compress_format is None else 3)
    for want in with_copy:
        bmp = bitmaps[want.id]
        assert bmp.config is None and bmp.compressed and bmp.image_bytes() == want.pixels
        bmp.save(tmp_path / f"x{bmp.extension}")
        assert (tmp_path / f"x{bmp.extension}").read_bytes() == want.pixels
        if compress_format == 1:
            assert bmp.extension == ".png" and bmp.png_bytes() == want.pixels == bmp._repr_png_()
            assert pngkit.decode(bmp.png_bytes()).width == bmp.width
        else:
            assert bmp.extension == (".jpg" if compress_format == 0 else ".webp") and bmp._repr_png_() is None
            with pytest.raises(hprofkit.UnsupportedError, match=bmp.format):
                bmp.png_bytes()
            assert not (tmp_path / "y.png").exists()
            with pytest.raises(hprofkit.UnsupportedError):
                bmp.to_png(tmp_path / "y.png")
            assert not (tmp_path / "y.png").exists()
    groups = heap.duplicate_bitmaps()
    assert [[b.object.id for b in g.bitmaps] for g in groups] == ([] if compress_format is None
                                                                  else [[added[0].id, added[1].id]])
    assert [g.wasted_bytes for g in groups] == ([] if compress_format is None else [added[0].byte_size])


# ---- duplicates ------------------------------------------------------------------------

def brute_force_groups(data: bytes, heap: hprofkit.Heap) -> dict[frozenset[int], int | None]:
    """{ids of a group: wasted bytes}, by a hash of each bitmap's pixels read from the
    stream parser's arrays and the sizes reckoned here."""
    arrays = arrays_of(data)
    groups: dict[tuple, list] = {}
    for bmp in heap.bitmaps():
        if bmp.has_pixels:
            buffer = bmp._buffer
            payload = arrays[buffer.id]
            pixels = payload if bmp.compressed else payload[:bmp.width * bmp.height * {"ARGB_8888": 4,
                                                                                     "RGB_565": 2, "ALPHA_8": 1}[bmp.config]]
            key = (bmp.format, bmp.width, bmp.height, hashlib.sha256(pixels).digest())
            groups.setdefault(key, []).append((bmp.object.id, buffer.id, bmp.byte_size))
    out = {}
    for members in groups.values():
        if len(members) > 1:
            sizes = {buffer: size for _, buffer, size in members}
            out[frozenset(i for i, _, _ in members)] = (None if None in sizes.values()
                                                         else sum(sizes.values()) - max(sizes.values()))
    return out


@pytest.mark.parametrize("name", SHARED + ["legacy", "dump data"])
def test_duplicates_are_the_groups_a_brute_force_hash_finds(name, legacy_dump, android_heapgen_dump):
    if name == "legacy":
        data = legacy_dump[0].read_bytes()
    elif name == "dump data":
        data = android_bitmaps.dump_data_bitmaps(android_heapgen_dump.read_bytes(), 1)[0]
    else:
        data = raw_bytes(name)
    heap = hprofkit.Heap(data)
    groups = heap.duplicate_bitmaps()
    assert {frozenset(b.object.id for b in g.bitmaps): g.wasted_bytes for g in groups} == brute_force_groups(data, heap)
    wastes = [g.wasted_bytes or 0 for g in groups]
    assert wastes == sorted(wastes, reverse=True)
    if name == LEAKCANARY:   # LeakCanary's icon, decoded twice in the app heap
        assert [(len(g.bitmaps), g.wasted_bytes, g.bitmaps[0].width) for g in groups] == [(2, 36864, 96)]
    if name == "legacy":     # two bitmaps on one buffer are a group that wastes nothing
        assert 0 in wastes and len(groups) == 3
    app = [b for b in heap.bitmaps() if b.object.heap_name == "app"]
    assert all(b.object.heap_name == "app" for g in heap.duplicate_bitmaps(app) for b in g.bitmaps)


# ---- hostile input, files, threads -----------------------------------------------------

@pytest.mark.sanitize
def test_hostile_sizes_have_no_pixels_and_allocate_nothing_big(legacy_dump):
    """Widths and heights of 2^31 - 1, negative, zero, buffers too small or of another
    type: has_pixels False with the reason, clear errors for the images, and no allocation
    of the sizes they claim."""
    path, added = legacy_dump
    heap = hprofkit.open_heap(path)
    hostile = [b for b in heap.bitmaps() if b.object.id in {a.id for a in added if a.reason}]
    assert len(hostile) == 10

    def use_all():
        for bmp in hostile:
            assert bmp.pixels() is None and bmp._repr_png_() is None and bmp.extension is None
            assert "no pixels" in bmp._repr_html_()
            for call in (bmp.png_bytes, bmp.image_bytes, lambda: bmp.png_bytes(max_side=3)):
                with pytest.raises(ValueError, match="has no pixels in the dump"):
                    call()
        return heap.duplicate_bitmaps(hostile)
    use_all()  # once untraced: the first _repr_html_ imports the notebook views' module (~2 MB)
    groups, peak = traced_peak(use_all)
    assert groups == [] and peak < 1 << 20


@pytest.mark.sanitize
def test_the_pixel_readers_refuse_what_lies_outside_the_array(legacy_dump):
    """The private C readers check every range against the array, whatever Python asks."""
    heap = hprofkit.open_heap(legacy_dump[0])
    array = next(b for b in heap.bitmaps() if b.config == "RGB_565")._buffer
    n = len(array)
    assert array._payload(0, n) == bytes(array.values()) and array._payload(n, 0) == b""
    for offset, length in ((0, n + 1), (n + 1, 0), (1, n), (2**63, 2**63), (2**64 - 1, 1)):
        with pytest.raises(ValueError, match="not in the array"):
            array._payload(offset, length)
    for args, kwargs in [((2, 7, 5), {"offset": 1}), ((2, 2**31, 2**31), {}), ((2, 1, 2), {"stride": 2**63}),
                         ((2, 1, 2**32), {}), ((2, 0, 1), {}), ((2, 1, 1), {"step": 0}), ((9, 1, 1), {}),
                         ((1, 5, 5), {"stride": 2**64 - 1})]:
        with pytest.raises(ValueError):
            array._png_rows(*args, **kwargs)
    with pytest.raises(TypeError, match="primitive arrays"):
        next(iter(heap.bitmaps())).object._payload(0, 1)


def test_images_go_through_the_output_path(tmp_path):
    bmp = hprofkit.open_heap(dump_path(LEAKCANARY)).bitmaps()[0]
    png = bmp.png_bytes()
    bmp.to_png(tmp_path / "a.png")
    bmp.to_png(str(tmp_path / "b.png"))
    buffer = io.BytesIO()
    bmp.to_png(buffer)
    target = tmp_path / "target.png"
    target.write_bytes(b"old")
    os.symlink(target, tmp_path / "link.png")
    bmp.save(tmp_path / "link.png")
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes() == buffer.getvalue() == png
    assert target.read_bytes() == png and (tmp_path / "link.png").is_symlink()
    with pytest.raises(IsADirectoryError):
        bmp.to_png(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png", "b.png", "link.png", "target.png"]


@pytest.mark.sanitize
def test_a_dump_truncated_under_its_bitmaps_raises_file_changed(tmp_path):
    """pixels(), the PNG and the duplicates read the mapping under the SIGBUS guard: a dump
    truncated after the heap was opened gives FileChangedError, never kills the process."""
    path = tmp_path / "d.hprof"
    path.write_bytes(raw_bytes(LEAKCANARY))
    for call in ("bitmaps[-1].pixels()", "bitmaps[-1].png_bytes()", "heap.duplicate_bitmaps(bitmaps)",
                 "bitmaps[0].png_bytes(max_side=4)"):
        job = textwrap.dedent(f"""
            import os, sys, hprofkit
            heap = hprofkit.open_heap(sys.argv[1])
            bitmaps = heap.bitmaps()
            os.truncate(sys.argv[1], 0)
            try:
                {call}
            except hprofkit.FileChangedError as exc:
                print(exc.offset)
                sys.exit(3)
            """)
        proc = subprocess.run([sys.executable, "-c", job, str(path)], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 3, (call, proc.returncode, proc.stderr[-2000:])
        assert 0 < int(proc.stdout) < len(raw_bytes(LEAKCANARY))
        path.write_bytes(raw_bytes(LEAKCANARY))


def test_bitmaps_in_notebooks(legacy_dump):
    """_repr_png_ is the PNG; _repr_html_ an <img> of it scaled down to HTML_MAX_SIDE over
    its description, where what came from the dump is escaped."""
    heap = hprofkit.open_heap(legacy_dump[0])
    bmp = next(b for b in heap.bitmaps() if b.has_pixels)
    assert bmp._repr_png_() == bmp.png_bytes()
    page = bmp._repr_html_()
    assert page.startswith("<figure><img src=\"data:image/png;base64,") and "&lt;Bitmap" in page
    assert "<Bitmap" not in page
    assert bmp._repr_jpeg_() is None


def test_a_copy_too_big_to_embed_is_described_and_a_bogus_size_is_unknown(android_heapgen_dump):
    """#30: a 160 KB PNG copy was embedded whole in the notebook's HTML (a 3 MB one gave a 4 MB
    string) while the report cut at 48 KiB: one cap for both (EMBED_MAX), the image then
    described, not embedded.  Its sizes entry, 2 GiB for 200x200 pixels, is no allocation of
    that bitmap: its byte_size is unknown, not "2.0 GiB"."""
    from hprofkit._bitmaps import EMBED_MAX
    from hprofkit._report.images import thumbnail
    data, added = android_bitmaps.dump_data_bitmaps(android_heapgen_dump.read_bytes(), 1, big=True)
    heap = hprofkit.Heap(data)
    check_added(heap, added)
    big = next(b for b in heap.bitmaps() if b.width == 200)
    assert len(big.image_bytes()) > EMBED_MAX and big.byte_size is None and "2,147,483,647" not in repr(big)
    page = big._repr_html_()
    assert "<img" not in page and f"too big to show here (over {EMBED_MAX >> 10} KiB)" in page and len(page) < 1024
    uri, why = thumbnail(big)
    assert uri is None and why == "its PNG image is too big to embed (over 48.0 KiB)"
    small = next(b for b in heap.bitmaps() if b.width == 17)
    assert small._repr_html_().startswith('<figure><img src="data:image/png;base64,')


@pytest.mark.sanitize
def test_threads_share_a_heaps_bitmaps():
    import concurrent.futures
    heap = hprofkit.open_heap(dump_path(LEAKCANARY))
    bitmaps = heap.bitmaps()
    expected = [b.png_bytes() for b in bitmaps]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            assert list(pool.map(lambda b: b.png_bytes(), bitmaps)) == expected
            assert len(list(pool.map(lambda _: heap.duplicate_bitmaps(bitmaps), range(4)))) == 4


def test_a_heap_without_bitmaps():
    assert hprofkit.open_heap(dump_path("mat__oracle_jdk7_21_x64.hprof")).bitmaps() == []
    assert hprofkit.open_heap(dump_path("mat__oracle_jdk7_21_x64.hprof")).duplicate_bitmaps() == []


# ---- the command line -------------------------------------------------------------------

def test_the_bitmaps_command_lists_and_writes_images(legacy_dump, tmp_path, capsys):
    path, added = legacy_dump
    out_dir = tmp_path / "images"
    assert main(["bitmaps", str(path), "--out-dir", str(out_dir), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    heap = hprofkit.open_heap(path)
    bitmaps = {b.object.id: b for b in heap.bitmaps()}
    assert doc["count"] == len(bitmaps) == len(doc["bitmaps"])
    sizes = [row["byte_size"] for row in doc["bitmaps"] if row["byte_size"] is not None]
    assert sizes == sorted(sizes, reverse=True)
    files = sorted(p.name for p in out_dir.iterdir())
    assert files == sorted(row["file"] for row in doc["bitmaps"] if row["has_pixels"]) and doc["written"] == len(files)
    for row in doc["bitmaps"]:
        bmp = bitmaps[row["id"]]
        assert (row["width"], row["height"], row["config"], row["has_pixels"]) == \
            (bmp.width, bmp.height, bmp.config, bmp.has_pixels)
        if row["file"]:
            assert (out_dir / row["file"]).read_bytes() == bmp.png_bytes()
    assert [set(g["ids"]) for g in doc["duplicates"]] == [{b.object.id for b in g.bitmaps}
                                                          for g in heap.duplicate_bitmaps()]
    # -n rows in text, and a second --out-dir into the same place refused before any work
    assert main(["bitmaps", str(path), "-n", "3"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"{len(bitmaps)} bitmaps, ") and f"... {len(bitmaps) - 3} more" in text
    assert "#1: 2 identical 96x96 ARGB_8888, 36.0 KiB wasted" in text
    assert main(["bitmaps", str(path), "--out-dir", str(out_dir)]) == 1
    assert "exists" in capsys.readouterr().err and sorted(p.name for p in out_dir.iterdir()) == files


@pytest.mark.parametrize("argv, message", [(["-n", "0"], "-n/--top"), (["--heap-dump", "x"], "--heap-dump")])
def test_the_bitmaps_command_refuses_bad_arguments(argv, message, capsys):
    with pytest.raises(SystemExit) as exit:
        main(["bitmaps", str(dump_path(LEAKCANARY)), *argv])
    assert exit.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.sanitize
def test_the_bitmaps_command_over_bad_inputs(tmp_path, capsys):
    """Bad input: exit 1, one line, and no directory of images left behind."""
    src, out_dir = tmp_path / "input", tmp_path / "images"
    for name, (data, must_fail) in CORPUS.items():
        src.write_bytes(data)
        code = main(["bitmaps", str(src), "--out-dir", str(out_dir)])
        err = capsys.readouterr().err
        if code == 0:
            assert not must_fail, name
            out_dir.rmdir()  # the sample dumps hold no bitmaps: an empty directory
        else:
            check_one_line_error(code, err, f"bitmaps on {name}")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["input"], name
