"""Build the compiled parts: the Karbon walk (`exactdice/karbon/_walk.pyx`), the certified
float bounds (`exactdice/markov/_interval.pyx`), the exact passes' loops over acyclic
states (`exactdice/markov/_exact_pass.pyx`), their small linear systems
(`exactdice/markov/_exact_systems.pyx`) and GMP's loops chosen for the CPU
(`exactdice/markov/_gmp_cpu.pyx`), typed Cython in C++ mode.

Everything else is declared in pyproject.toml. The extension is optional: where it cannot
be built (no C++ compiler), the install goes on without it and exactdice explores with the
Python walk, saying so once (`exactdice.karbon.compiled`).
"""

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """Build the extension if the machine can; otherwise install without it."""

    def run(self):
        try:
            super().run()
        except Exception as error:  # noqa: BLE001 - any build failure leaves the Python walk
            self.warn(f"the compiled Karbon walk was not built ({error}); exactdice will use the Python walk")

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as error:  # noqa: BLE001
            self.warn(f"the compiled Karbon walk was not built ({error}); exactdice will use the Python walk")


def extensions():
    try:
        from Cython.Build import cythonize
    except ImportError:
        return []
    # _mapped.h (the edge arrays' storage) sits beside _graph.pxd, which the others cimport
    headers = ["exactdice/markov"]
    walk = Extension(
        "exactdice.karbon._walk",
        ["exactdice/karbon/_walk.pyx"],
        language="c++",
        include_dirs=headers,
        extra_compile_args=["-O3", "-std=c++17"],
    )
    # -frounding-math: the certified bounds switch the rounding mode, so the compiler must not
    # fold or move floating-point operations across those switches
    interval = Extension(
        "exactdice.markov._interval",
        ["exactdice/markov/_interval.pyx"],
        language="c++",
        include_dirs=headers,
        extra_compile_args=["-O2", "-std=c++17", "-frounding-math", "-fno-fast-math"],
    )
    graph = Extension(
        "exactdice.markov._graph",
        ["exactdice/markov/_graph.pyx"],
        language="c++",
        include_dirs=headers,
        extra_compile_args=["-O2", "-std=c++17"],
    )
    exact_pass = Extension(
        "exactdice.markov._exact_pass",
        ["exactdice/markov/_exact_pass.pyx"],
        language="c++",
        extra_compile_args=["-O2", "-std=c++17"],
    )
    exact_systems = Extension(
        "exactdice.markov._exact_systems",
        ["exactdice/markov/_exact_systems.pyx"],
        language="c++",
        extra_compile_args=["-O2", "-std=c++17"],
    )
    gmp_cpu = Extension(
        "exactdice.markov._gmp_cpu",
        ["exactdice/markov/_gmp_cpu.pyx"],
        language="c++",
        extra_compile_args=["-O2", "-std=c++17"],
    )
    return cythonize(
        [graph, walk, interval, exact_pass, exact_systems, gmp_cpu],
        compiler_directives={"language_level": 3},
        quiet=True,
    )


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
