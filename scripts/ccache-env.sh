# Sourced by the build scripts: compile through ccache when it is installed (scripts/install-deps.sh
# installs it). Sets CCACHE_CMAKE_ARGS (an array of CMake launcher options, empty without ccache)
# and CCACHE_BASEDIR = the repository root, so that two clones or worktrees of the repository
# share cache entries (paths under the root are hashed relative to it). ATTNSPEC_NO_CCACHE=1
# turns it off. The cache lives where ccache keeps it (~/.cache/ccache): a machine that keeps its
# home between CI runs gets warm builds, a fresh one builds cold, with the same result.
CCACHE_CMAKE_ARGS=()
if [ "${ATTNSPEC_NO_CCACHE:-0}" != 1 ] && command -v ccache >/dev/null 2>&1; then
  CCACHE_CMAKE_ARGS=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
                     -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  CCACHE_BASEDIR=$(pwd -P)
  export CCACHE_BASEDIR
  # No working directory in the hash: -g line tables name sources relative to the build tree.
  export CCACHE_NOHASHDIR=1
fi
