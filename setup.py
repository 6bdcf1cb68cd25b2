"""Only the C extension lives here; metadata is in pyproject.toml.

hprofkit builds on Linux (POSIX: mmap, pthreads, SIGBUS, O_TMPFILE) with GCC
or Clang.  Environment toggles: HPROF_DEBUG=1 (-O0 -g), HPROF_SANITIZE=1
(ASan+UBSan), HPROF_WERROR=1 (-Werror)."""
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from glob import glob

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

if os.name != "posix":
    sys.exit("hprofkit builds on Linux (POSIX) only: its core maps files, uses pthreads and guards SIGBUS")

# Warnings some compilers do not know (Clang before 13 lacks cast-function-type).
OPTIONAL_FLAGS = ["-Wno-missing-field-initializers", "-Wno-cast-function-type"]


def flags():
    cflags = ["-std=c99", "-Wall", "-Wextra", "-fvisibility=hidden", "-pthread"]
    ldflags = ["-pthread"]  # the graph layer's second worker (src/core/hp_parallel.c)
    if os.environ.get("HPROF_DEBUG"):
        cflags += ["-O0", "-g", "-UNDEBUG"]
    elif os.environ.get("HPROF_SANITIZE"):
        cflags += ["-O1", "-g"]  # as tests/c builds the core: instrumented -O3 took twice as long to compile
    else:
        cflags += ["-O3"]
    if os.environ.get("HPROF_SANITIZE"):
        san = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]
        cflags += san
        ldflags += san
    if os.environ.get("HPROF_WERROR"):
        cflags.append("-Werror")
    return cflags, ldflags


def accepts(compiler, flag: str) -> bool:
    """Whether the compiler takes `flag` without a word (an unknown warning
    option is only a warning for Clang: -Werror makes it count)."""
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "probe.c")
        with open(source, "w") as f:
            f.write("int main(void) { return 0; }\n")
        stderr, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)  # the probe's complaint is no error of the build
        try:
            compiler.compile([source], output_dir=tmp, extra_postargs=[flag, "-Werror"])
        except Exception:  # CompileError, from setuptools' or distutils' own module
            return False
        finally:
            os.dup2(stderr, 2)
            os.close(stderr)
            os.close(devnull)
    return True


class BuildExt(build_ext):
    """Adds the optional flags the compiler takes, and compiles the sources
    on every core (build_ext alone compiles one extension's sources one by
    one; the core is some 50 files)."""

    def build_extensions(self):
        known = [flag for flag in OPTIONAL_FLAGS if accepts(self.compiler, flag)]
        for ext in self.extensions:
            ext.extra_compile_args += known
        compile_all = self.compiler.compile

        def compile_each(sources, *args, **kwargs):
            with ThreadPoolExecutor(len(os.sched_getaffinity(0))) as pool:
                objects = pool.map(lambda source: compile_all([source], *args, **kwargs), sources)
                return [obj for one in objects for obj in one]

        self.compiler.compile = compile_each
        super().build_extensions()


cflags, ldflags = flags()
setup(
    ext_modules=[
        Extension(
            "hprofkit._hprof",
            sources=sorted(glob("src/_hprof*.c")) + sorted(glob("src/core/*.c")),
            depends=sorted(glob("src/*.h")) + sorted(glob("src/core/*.h")),
            include_dirs=["src"],
            libraries=["z"],
            extra_link_args=ldflags,
            extra_compile_args=cflags,
        )
    ],
    cmdclass={"build_ext": BuildExt},
)
