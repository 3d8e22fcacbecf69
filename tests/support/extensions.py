"""Real CPython extension modules built with gcc against this interpreter's headers."""

from __future__ import annotations

import importlib.machinery
import sysconfig
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.support.elfbuild import compile_shared, find_tool

__all__ = ["EXTENSION_SUFFIX", "OTHER_PYTHON_SUFFIX", "build_extension_module"]

# What setuptools names an extension module for this interpreter: ".cpython-311-x86_64-linux-gnu.so".
EXTENSION_SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]
# The same, for a CPython this one is not (so it cannot import it).
OTHER_PYTHON_SUFFIX = (
    ".cpython-39-x86_64-linux-gnu.so" if "-39-" not in EXTENSION_SUFFIX else ".cpython-38-x86_64-linux-gnu.so"
)

_MODULE_C = """\
#define PY_SSIZE_T_CLEAN
#include <Python.h>
extern int cudssGetProperty(int type, int *value);

static PyObject *cudss_major(PyObject *self, PyObject *args) {
    int major = -1;
    (void)self; (void)args;
    cudssGetProperty(0, &major);
    return PyLong_FromLong(major);
}

static PyMethodDef methods[] = {
    {"cudss_major", cudss_major, METH_NOARGS, "cuDSS's major version"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "MODULE", NULL, -1, methods};

PyMODINIT_FUNC PyInit_MODULE(void) { return PyModule_Create(&module); }
"""


def build_extension_module(
    output: Path, name: str, *, link: Sequence[Path], rpath: str | None, rpath_link: Sequence[Path] = ()
) -> Path:
    """A working extension module ``name`` at ``output`` whose one function calls cuDSS (``link``: the
    libcudss to link against, which it then needs). Skips the test where Python.h is not installed."""
    include = Path(sysconfig.get_paths()["include"])
    if not (include / "Python.h").is_file() or find_tool("gcc") is None:
        pytest.skip(f"building an extension module needs gcc and {include / 'Python.h'}")
    return compile_shared(
        output,
        {f"{name}.c": _MODULE_C.replace("MODULE", name)},
        link=link,
        rpath=rpath,
        rpath_link=rpath_link,
        flags=(f"-I{include}",),
    )
