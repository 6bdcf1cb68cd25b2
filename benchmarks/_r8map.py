"""A realistic R8 mapping.txt of any size, for the mapping benchmark.

What a large Android app's R8 (8.x, map version 2.2) writes: the header
comments, then per class its `orig -> obf:` line, a sourceFile comment,
fields, methods with minified and original line ranges, inline frames (the
same minified range repeated, innermost first, with a qualified holder),
catch-all 0:65535 ranges, synthesized classes and methods (external
synthetic lambdas), residual signatures, outlines and outline call sites.
Names are made from a seeded random generator, so two runs give the same
text."""

from __future__ import annotations

import random

WORDS = ("account cart order item price user session cache store view model adapter holder fragment activity "
         "service repository manager helper provider factory builder parser request response payment address "
         "image loader network client state event listener callback handler worker scheduler config feature "
         "search result filter sort page list detail header footer button text label dialog sheet menu").split()
TYPES = ("int", "long", "boolean", "float", "double", "java.lang.String", "java.util.List", "java.util.Map",
         "android.os.Bundle", "android.view.View", "kotlinx.coroutines.flow.MutableStateFlow",
         "kotlin.jvm.functions.Function1", "java.lang.Object", "android.content.Context")
HEADER = ("# compiler: R8\n# compiler_version: 8.2.42\n# min_api: 24\n# common_typos_disable\n"
          '# {"id":"com.android.tools.r8.mapping","version":"2.2"}\n# pg_map_id: 5b3e7d1\n'
          "# pg_map_hash: SHA-256 5b3e7d1f0c9a8e6b4d2c1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d\n")


def _obf_name(i: int) -> str:
    """R8's short names: a, b, ..., z, aa, ab, ..."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = letters[r] + out
    return out


def _camel(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    return words[0] + "".join(w.capitalize() for w in words[1:])


def r8_mapping(target_bytes: int, seed: int = 1) -> str:
    """An R8 mapping text of about target_bytes bytes."""
    rng = random.Random(seed)
    parts = [HEADER]
    size = len(HEADER)
    classes: list[str] = []
    n = 0
    while size < target_bytes:
        package = "com.example." + ".".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
        clear = f"{package}.{_camel(rng, 2).capitalize()}{n}"
        obf = f"{_obf_name(n // 400)}.{_obf_name(n % 400)}"
        lines = [f"{clear} -> {obf}:", f'# {{"id":"sourceFile","fileName":"{clear.rsplit(".", 1)[1]}.kt"}}']
        for f in range(rng.randint(0, 8)):
            lines.append(f"    {rng.choice(TYPES)} {_camel(rng, 2)} -> {_obf_name(f)}")
        line = rng.randint(10, 60)
        for m in range(rng.randint(2, 14)):
            name = "<init>" if m == 0 else _camel(rng, 2)
            ret = "void" if m == 0 else rng.choice(TYPES)
            args = ",".join(rng.choice(TYPES) for _ in range(rng.randint(0, 3)))
            obf_m = "<init>" if m == 0 else _obf_name(m - 1)
            kind = rng.random()
            if kind < 0.08:  # no line information kept
                lines.append(f"    {ret} {name}({args}) -> {obf_m}")
            elif kind < 0.15:  # a method with a single position
                lines.append(f"    0:65535:{ret} {name}({args}):{line}:{line} -> {obf_m}")
            else:
                lo = 1
                for _ in range(rng.randint(1, 6)):
                    span = rng.randint(1, 5)
                    if rng.random() < 0.25:  # inlined frames: innermost first, qualified holder
                        callee = rng.choice(classes) if classes else clear
                        lines.append(f"    {lo}:{lo + span - 1}:{rng.choice(TYPES)} {callee}.{_camel(rng, 2)}():"
                                     f"{rng.randint(10, 900)}:{rng.randint(10, 900) + span - 1} -> {obf_m}")
                        lines.append(f"    {lo}:{lo + span - 1}:{ret} {name}({args}):{line} -> {obf_m}")
                    else:
                        lines.append(f"    {lo}:{lo + span - 1}:{ret} {name}({args}):{line}:{line + span - 1}"
                                     f" -> {obf_m}")
                    lo += span
                    line += span + rng.randint(0, 3)
                if rng.random() < 0.05:
                    lines.append('    # {"id":"com.android.tools.r8.residualsignature","signature":"(I)V"}')
            line += rng.randint(2, 20)
        if rng.random() < 0.1:  # an external synthetic lambda of the class
            lines += [f"{clear}$$ExternalSyntheticLambda0 -> {obf}$$ExternalSyntheticLambda0:",
                      '# {"id":"sourceFile","fileName":"R8$$SyntheticClass"}',
                      '# {"id":"com.android.tools.r8.synthesized"}',
                      f"    {clear} f$0 -> a",
                      f"    void <init>({clear}) -> <init>",
                      '      # {"id":"com.android.tools.r8.synthesized"}',
                      "    1:1:void invoke(java.lang.Object):0:0 -> invoke",
                      '      # {"id":"com.android.tools.r8.synthesized"}']
        block = "\n".join(lines)
        parts.append(block)
        size += len(block) + 1
        classes.append(clear)
        n += 1
    parts.append("com.android.tools.r8.GeneratedOutlineSupport -> a.a:\n"
                 '# {"id":"sourceFile","fileName":"R8$$SyntheticClass"}\n'
                 '# {"id":"com.android.tools.r8.synthesized"}\n'
                 "    1:3:java.lang.String outline0(java.lang.String,java.lang.String):0:2 -> a\n"
                 '      # {"id":"com.android.tools.r8.outline"}\n')
    return "\n".join(parts)
