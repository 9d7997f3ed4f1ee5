"""pytest configuration of tests/python: the Python package's suite (test_package_*.py), run by
scripts/python-env.sh in the package's virtual environment (scripts/test.sh runs it). The `cli`
fixture is the attnspec executable the parity tests compare with (cli_support.py).

test_render_figures.py tests scripts/render_figures.py with the system python3 (matplotlib, h5py
from Debian) and runs under ctest (label python): pytest leaves it alone here.
"""
import os

import pytest

from cli_support import cli_path

collect_ignore = ["test_render_figures.py"]

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(scope="session")
def cli():
    return cli_path()
