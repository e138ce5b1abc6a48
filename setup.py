"""Package discovery and native extensions; metadata lives in pyproject.toml.

Folders follow DESIGN.md's layout (some names have hyphens), so each import name is mapped to
its folder in pyproject's [tool.setuptools.package-dir]; subpackages are found here, so adding
one needs no edit elsewhere.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import Extension, setup

ROOT = Path(__file__).parent
PACKAGE_DIR: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"][
    "setuptools"
]["package-dir"]


def discover_packages() -> list[str]:
    packages = []
    for name, folder in PACKAGE_DIR.items():
        base = ROOT / folder
        for init in sorted(base.rglob("__init__.py")):
            rel = init.parent.relative_to(base)
            if any(part.startswith((".", "_")) or part == "tests" for part in rel.parts):
                continue
            packages.append(".".join((name, *rel.parts)) if rel.parts else name)
    return packages


# Each component appends its own CPython extensions to this list.
ext_modules: list[Extension] = [
    Extension(
        "rib_analysis._mrt",
        sources=[
            f"rib-analysis/native/{n}.c" for n in ("module", "decompress", "mrt_decode", "rib_table")
        ],
        depends=[f"rib-analysis/native/{n}.h" for n in ("decompress", "mrt_decode", "rib_table")],
        libraries=["bz2", "z"],
        extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror"],
    ),
]

setup(packages=discover_packages(), ext_modules=ext_modules)
