"""hprofkit serve's page latency over HTTP, on a HeapGen dump, after the index
(the issue's target: a page in 100 ms or less).

    python benchmarks/bench_serve.py [--dump FILE] [--mb 1000] [--runs 5]

Without --dump it writes a fresh HeapGen dump (seed 7) into a temporary
folder (and deletes it).  Opens the heap, computes its dominators, serves
it on 127.0.0.1 (port 0), and prints for each kind of page the first
visit (which computes and keeps a whole-heap result: histogram, class tree,
threads, waste, leaks), then the median and worst of --runs further visits,
in milliseconds, each a full HTTP request from this process."""

from __future__ import annotations

import argparse
import http.client
import statistics
import time
from urllib.parse import quote

import hprofkit

from _common import dump_options, measured_dump, timed


def pages(heap) -> list[tuple[str, str]]:
    """(label, path) of every kind of page, over the heap's biggest objects."""
    top = [obj for obj, _ in heap.top_retainers(50)]
    instance = next(o for o in top if o.kind == "instance")
    array = next((o for o in top if o.kind == "object_array"), top[0])
    root = heap.dominator_roots(1)[0]
    string = heap.find_class("java.lang.String")
    return [
        ("overview", "/"),
        ("object (instance)", f"/object/0x{instance.id:x}"),
        ("object (array, page 10)", f"/object/0x{array.id:x}?page=10"),
        ("object (a String)", f"/object/0x{next(string.instances()).id:x}" if string else "/"),
        ("class (biggest's, by retained)", "/class/" + quote(instance.class_name, safe="")),
        ("class java.lang.String", "/class/java.lang.String"),
        ("dominator tree roots", "/dominators"),
        ("dominator tree node", f"/dominators/0x{root.id:x}"),
        ("class tree root", "/classtree"),
        ("histogram page 3", "/histogram?page=3"),
        ("threads", "/threads"),
        ("waste", "/waste"),
        ("leaks", "/leaks"),
        ("search (class name, String text)", "/search?q=HashMap"),
        ("search (text of no String)", "/search?q=" + quote("no String holds this")),
    ]


def get(server, path: str) -> float:
    """Milliseconds of one GET (answer read to its end)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
    start = time.perf_counter()
    conn.request("GET", path + ("&" if "?" in path else "?") + "token=" + server.token,
                 headers={"Host": f"127.0.0.1:{server.port}"})
    answer = conn.getresponse()
    answer.read()
    elapsed = (time.perf_counter() - start) * 1000
    conn.close()
    if answer.status != 200:
        raise SystemExit(f"{path}: HTTP {answer.status}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    dump_options(parser, 1000)
    parser.add_argument("--runs", type=int, default=5, help="visits of each page after the first (default 5)")
    args = parser.parse_args()
    with measured_dump(args) as path:
        heap, wall, _ = timed(lambda: hprofkit.open_heap(path))
        print(f"{heap.object_count:,} objects, {heap.class_count:,} classes; open_heap {wall:.2f} s")
        _, wall, _ = timed(heap.compute_retained)
        print(f"compute_retained {wall:.2f} s\n")
        server = hprofkit.serve(heap).server
        try:
            print(f"{'page':<34}{'first ms':>10}{'median ms':>11}{'worst ms':>10}")
            for label, path_ in pages(heap):
                first = get(server, path_)
                again = [get(server, path_) for _ in range(args.runs)]
                print(f"{label:<34}{first:>10.1f}{statistics.median(again):>11.1f}{max(again):>10.1f}")
        finally:
            server.close()
            heap.close()


if __name__ == "__main__":
    main()
