// EngineProgressView (engine_progress.hpp).
#include "engine_progress.hpp"

#include <cmath>

#include "attnspec/base/format.hpp"

namespace attnspec::cli {

EngineProgressFn EngineProgressView::progress(const std::string& label) {
    if (!enabled_) return {};
    return [this, label](const EngineProgress& p) { draw(label, p); };
}

EngineNoticeFn EngineProgressView::notice() {
    return [this](const std::string& msg) {
        end();
        log(msg);  // a fallback is said even with --quiet: the user waits for it
    };
}

void EngineProgressView::end() {
    if (bar_) bar_->done();
    bar_.reset();
    stage_.clear();
}

void EngineProgressView::draw(const std::string& label, const EngineProgress& p) {
    const std::string stage = label + ": " + p.stage;
    const auto now = std::chrono::steady_clock::now();
    const bool last = p.done >= p.total;
    if (stage != stage_) {
        end();
        stage_ = stage;
        bar_ = std::make_unique<Progress>(stage, p.total, enabled_);
    } else if (!last && now - last_ < std::chrono::milliseconds(200)) {
        return;  // throttled
    }
    last_ = now;
    bar_->set_total(p.total);
    std::string note = p.unit;
    if (!last && std::isfinite(p.seconds_left))
        note += ", ~" + format_number(p.seconds_left, 2) + " s left";
    else if (!last && p.done > 0)
        note += ", estimate passed";
    bar_->update(p.done, note);
}

}  // namespace attnspec::cli
