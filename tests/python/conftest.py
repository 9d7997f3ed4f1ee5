"""pytest configuration of tests/python: the Python package's suite (test_package_*.py), run by
scripts/python-env.sh in the package's virtual environment (scripts/test.sh runs it).

test_render_figures.py tests scripts/render_figures.py with the system python3 (matplotlib, h5py
from Debian) and runs under ctest (label python): pytest leaves it alone here.
"""
import os

collect_ignore = ["test_render_figures.py"]

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
