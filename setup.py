"""Only the C extension lives here; metadata is in pyproject.toml.

Environment toggles: HPROF_DEBUG=1 (-O0 -g), HPROF_SANITIZE=1 (ASan+UBSan),
HPROF_WERROR=1 (-Werror)."""
import os
from glob import glob

from setuptools import Extension, setup


def flags():
    cflags = ["-std=c99", "-Wall", "-Wextra", "-Wno-missing-field-initializers",
              "-Wno-cast-function-type", "-fvisibility=hidden", "-pthread"]
    ldflags = ["-pthread"]  # the graph layer's second worker (src/core/hp_parallel.c)
    if os.environ.get("HPROF_DEBUG"):
        cflags += ["-O0", "-g", "-UNDEBUG"]
    else:
        cflags += ["-O3"]
    if os.environ.get("HPROF_SANITIZE"):
        san = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]
        cflags += san
        ldflags += san
    if os.environ.get("HPROF_WERROR"):
        cflags.append("-Werror")
    return cflags, ldflags


cflags, ldflags = flags()
setup(
    ext_modules=[
        Extension(
            "hprofkit._hprof",
            sources=sorted(glob("src/_hprof*.c")) + sorted(glob("src/core/*.c")),
            depends=sorted(glob("src/*.h")) + sorted(glob("src/core/*.h")),
            include_dirs=["src"],
            libraries=["z"],
            extra_link_args=ldflags + ["-pthread"],
            extra_compile_args=cflags + ["-pthread"],
        )
    ],
)
