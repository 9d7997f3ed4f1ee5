// The spectral engine's progress (EngineProgress, spectral/operator_spectrum.hpp) drawn on stderr
// with the CLI's Progress bar: one bar per stage, "[kappa head 0: Lanczos] 120/300 products, ~4 s
// left", redrawn at most every 0.2 s on a TTY (a line per tenth otherwise); fallback notices as
// log lines. Silent when disabled (--quiet, --json).
#pragma once
#include <chrono>
#include <memory>
#include <string>

#include "attnspec/spectral/operator_spectrum.hpp"
#include "cli.hpp"

namespace attnspec::cli {

class EngineProgressView {
  public:
    explicit EngineProgressView(bool enabled) : enabled_(enabled) {}
    // Callbacks for LargeSvdOptions::progress / ::notice, labelled with `label` ("kappa head 0").
    // They refer to this view: keep it alive while the engine runs.
    EngineProgressFn progress(const std::string& label);
    EngineNoticeFn notice();
    void end();  // finishes the open bar (a newline on a TTY)

  private:
    void draw(const std::string& label, const EngineProgress& p);
    bool enabled_;
    std::string stage_;  // label + stage of the open bar
    std::unique_ptr<Progress> bar_;
    std::chrono::steady_clock::time_point last_{};
};

}  // namespace attnspec::cli
