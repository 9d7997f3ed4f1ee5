// Private helpers of the HDF5 layer (lib/src/io/*.cpp): error mapping, HDF5's own error printing
// switched off, the UTF-8 string type and object-time-free property lists.
#pragma once
#include <hdf5.h>

#include <string>

#include "attnspec/base/errors.hpp"
#include "attnspec/io/h5.hpp"

namespace attnspec::io_detail {

[[noreturn]] inline void io_fail(const std::string& what) { throw Error(ExitCode::IoError, what); }

// Per thread: in a thread-safe HDF5 (Debian's is) each thread has its own error stack and
// printing setting, and verify --threads reads model heads from its workers.
inline void silence_hdf5() {
    thread_local bool silenced = false;
    if (!silenced) H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr), silenced = true;
}

inline H5Id utf8_vlen_type() {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return H5Id(t, H5Tclose);
}

inline H5Id no_times(hid_t cls) {
    hid_t p = H5Pcreate(cls);
    H5Pset_obj_track_times(p, 0);
    return H5Id(p, H5Pclose);
}

}  // namespace attnspec::io_detail
