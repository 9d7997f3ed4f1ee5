"""Tables of results: a pandas DataFrame when pandas is installed, else a dict of numpy arrays
(one per column, in column order). Numbers stay float64 (NaN where a value does not apply), text
columns are numpy str arrays, seeds uint64."""

import numpy as np


def table(columns, dtypes=None):
    """``columns`` (an ordered mapping name -> sequence, all of one length) as a DataFrame when
    pandas imports, else as a dict of numpy arrays. ``dtypes`` maps a column to its numpy dtype
    (default: what numpy infers)."""
    dtypes = dtypes or {}
    arrays = {}
    for name, values in columns.items():
        dt = dtypes.get(name)
        if dt is None:
            a = np.asarray(values)
            if a.size == 0:
                a = np.asarray(values, dtype=np.float64)
        else:
            a = np.asarray(values, dtype=dt)
        arrays[name] = a
    try:
        import pandas
    except ImportError:
        return arrays
    return pandas.DataFrame(arrays)
