"""Peak memory and time of the codecs on hostile and extreme inputs (issue 9).

    python benchmarks/bench_hostile.py [--only NAME ...] [--no-interrupt]

Builds each input of tests/hostile.py full size in a temporary directory,
runs the command line on it in a child process and prints the child's peak
RSS (ru_maxrss), its wall time and how it ended; then, unless
--no-interrupt, runs it again and sends SIGINT after 1 s, printing how long
the command took to stop.  Last, the pack encoder's time on dumps whose
classes are all dumped twice (20k, 40k, 80k classes).  Target: at most
300 MB peak RSS for every input, Ctrl-C obeyed within 0.5 s; a restore
declaring more than its limit (#30) refused, the BMD before writing."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import hprofkit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import hostile  # noqa: E402

GB = 1 << 30


def build(tmp: Path) -> dict[str, tuple[list[str], object]]:
    """name -> (command-line arguments, stdin: a path, a chunk iterator factory, or None)."""
    print("building inputs ...", file=sys.stderr)
    bomb = tmp / "bomb.hpk"
    bomb.write_bytes(hostile.pack_bomb(1 * GB))
    mini = tmp / "roots.mini"
    mini.write_bytes(hostile.mini_of_roots(240_000_000))
    zeros = tmp / "zeros.hpk"
    encoder = hprofkit.Encoder(strip="none")
    with open(zeros, "wb") as f:
        for chunk in hostile.zero_arrays_dump(1500, 1 << 20):
            f.write(encoder.feed(chunk))
        f.write(encoder.flush())
    app = tmp / "app.hpk"
    encoder = hprofkit.Encoder(strip="none", app_only=True)
    with open(app, "wb") as f:
        for chunk in hostile.app_heap_dump(1000, 1 << 20):
            f.write(encoder.feed(chunk))
        f.write(encoder.flush())
    placeholders = tmp / "placeholders.bmd"  # #30: ten long[0x1FFFFFFD], 100 bytes declaring 40 GB
    placeholders.write_bytes(b"\x01\x12JAVA PROFILE 1.0.3" + bytes(
        b for k in range(10) for b in (7, 100 + k, 7, 0xFD, 0xFF, 0xFF, 0xFF, 0x01)))
    arrays = tmp / "arrays.mini"  # #30: three byte[0xF0000000], 50 bytes declaring 11 GiB
    arrays.write_bytes(hostile.mini_of_byte_arrays(3, 0xF000_0000))
    out = str(tmp / "out.hprof")
    return {
        f"BMD of placeholders ({placeholders.stat().st_size} B, 40 GB declared) -> file":
            (["decode", "-i", str(placeholders), "-o", out], None),
        f"mini of byte[] heads ({arrays.stat().st_size} B, 11 GiB declared) -> file":
            (["decode", "-i", str(arrays), "-o", out], None),
        f"crafted pack ({bomb.stat().st_size / 1e6:.1f} MB) -> file": (["decode", "-i", str(bomb), "-o", out], None),
        f"Tailor mini of empty roots ({mini.stat().st_size / 1e6:.1f} MB) -> file":
            (["decode", "-i", str(mini), "-o", out], None),
        f"Tailor mini of empty roots ({mini.stat().st_size / 1e6:.1f} MB) -> pipe":
            (["decode", "-i", str(mini), "-o", "-"], None),
        f"keep-all pack, 1,500 zeroed 1 MiB byte[] ({zeros.stat().st_size / 1e6:.2f} MB) -> file":
            (["decode", "-i", str(zeros), "-o", out], None),
        "convert, one 1.5 GB sub-record, pipe -> file":
            (["convert", "-i", "-", "-o", out], lambda: hostile.one_array_dump(1_500_000_000)),
        "convert, one 1.5 GB sub-record, pipe -> pipe":
            (["convert", "-i", "-", "-o", "-"], lambda: hostile.one_array_dump(1_500_000_000)),
        f"app-only pack holding a 1 GB record ({app.stat().st_size / 1e6:.2f} MB) -> file":
            (["decode", "-i", str(app), "-o", out], None),
    }


def run(args: list[str], stdin, interrupt_after: float | None) -> tuple[int, float, int, float | None, str]:
    """(peak RSS kB, seconds, exit status, seconds from SIGINT to exit, last stderr line) of one child."""
    child = subprocess.Popen([sys.executable, "-m", "hprofkit", *args], stdin=subprocess.PIPE if stdin else None,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    start = time.perf_counter()
    err: list[bytes] = []
    drains = [threading.Thread(target=lambda: [None for _ in iter(lambda: child.stdout.read(1 << 20), b"")]),
              threading.Thread(target=lambda: err.append(child.stderr.read()))]
    if stdin:
        def feed() -> None:
            try:
                for chunk in stdin():
                    child.stdin.write(chunk)
                child.stdin.close()
            except (BrokenPipeError, ValueError):
                pass
        drains.append(threading.Thread(target=feed))
    for t in drains:
        t.daemon = True
        t.start()
    signalled = None
    pid = 0  # wait4, not poll(): poll() would reap the child and lose its rusage
    if interrupt_after is not None:
        while time.perf_counter() - start < interrupt_after:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            time.sleep(0.01)
        if not pid:
            signalled = time.perf_counter()
            child.send_signal(signal.SIGINT)
    if not pid:
        _, status, usage = os.wait4(child.pid, 0)
    end = time.perf_counter()
    child.returncode = os.waitstatus_to_exitcode(status)
    for t in drains[:2]:
        t.join()
    lines = b"".join(err).decode(errors="replace").strip().splitlines()
    return (usage.ru_maxrss, end - start, child.returncode, None if signalled is None else end - signalled,
            lines[-1][:90] if lines else "")


def classes_twice() -> None:
    print("\npack encoder, classes dumped twice (time)")
    for n in (20_000, 40_000, 80_000):
        data = hostile.classes_twice_dump(n)
        start = time.perf_counter()
        encoder = hprofkit.Encoder(strip="none", threads=1)
        blob = encoder.feed(data) + encoder.flush()
        t_enc = time.perf_counter() - start
        start = time.perf_counter()
        decoder = hprofkit.Decoder(threads=1)
        same = decoder.feed(blob) + decoder.flush() == data
        t_dec = time.perf_counter() - start
        print(f"  {n:>7,} classes: encode {t_enc:6.2f} s, decode {t_dec:6.2f} s, round trip {'ok' if same else 'WRONG'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", help="run the inputs whose name contains one of these words")
    parser.add_argument("--no-interrupt", action="store_true", help="skip the Ctrl-C runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hprofkit-hostile-") as tmp:
        cases = build(Path(tmp))
        print(f"{'input':<72}{'peak RSS':>10}{'time':>8}  result")
        for name, (argv, stdin) in cases.items():
            if args.only and not any(word in name for word in args.only):
                continue
            kb, seconds, status, _, last = run(argv, stdin, None)
            result = "ok" if status == 0 else f"exit {status}: {last}"
            print(f"{name:<72}{kb / 1024:>7,.0f} MB{seconds:>7.1f}s  {result}", flush=True)
            if not args.no_interrupt:
                kb, seconds, status, stop, last = run(argv, stdin, 1.0)
                if stop is None:
                    print(f"{'  Ctrl-C after 1 s':<72}{'':>10}{'':>8}  finished before", flush=True)
                else:
                    print(f"{'  Ctrl-C after 1 s':<72}{kb / 1024:>7,.0f} MB{seconds:>7.1f}s  stopped {stop:.2f} s "
                          f"after SIGINT (exit {status})", flush=True)
            Path(tmp, "out.hprof").unlink(missing_ok=True)
    classes_twice()


if __name__ == "__main__":
    main()
