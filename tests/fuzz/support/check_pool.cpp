#include "check_pool.hpp"

#include <cstdio>

#include "attnspec/io/report_writer.hpp"
#include "attnspec/proofs/registry.hpp"
#include "attnspec/report/check_records.hpp"
#include "fuzz_support.hpp"

namespace attnspec::fuzz {

const std::vector<CheckRun>& check_pool() {
    static const std::vector<CheckRun> pool = [] {
        std::vector<CheckRun> runs;
        for (const auto& c : proofs::registry()) {
            proofs::RunOptions opt;
            // No time budgets: the base files must not depend on the machine's speed, or a
            // saved input would map onto other files on the next run (reproducers would rot).
            opt.trials = 1;
            opt.search_budget_s = 0;
            try {
                CheckRun run = c.run(opt);
                if (run.results.size() > 3) run.results.resize(3);
                run.summarize();
                runs.push_back(std::move(run));
            } catch (const std::exception& e) {
                std::fprintf(stderr, "attnspec fuzz: check %s skipped in the pool: %s\n",
                             c.name.c_str(), e.what());
            }
        }
        return runs;
    }();
    return pool;
}

const std::vector<std::string>& base_instance_files() {
    static const std::vector<std::string> files = [] {
        std::vector<std::string> out;
        Provenance prov;
        prov.command_line = "attnspec fuzz base";
        for (const auto& run : check_pool()) {
            const auto* c = proofs::find_check(run.check);
            if (!c || !c->replay) continue;
            for (const auto& r : run.results) {
                const std::string p =
                    temp_path("base-instance-" + std::to_string(out.size()) + ".h5");
                write_instance_file(p, r, prov);
                out.push_back(p);
            }
        }
        return out;
    }();
    return files;
}

const std::vector<std::string>& base_report_files() {
    static const std::vector<std::string> files = [] {
        std::vector<std::string> out;
        Provenance prov;
        prov.command_line = "attnspec fuzz base";
        const auto& runs = check_pool();
        for (std::size_t k = 0; k <= runs.size(); ++k) {
            const std::string p = temp_path("base-report-" + std::to_string(k) + ".h5");
            ReportWriter w(p, prov);
            if (k == 0)
                write_check_runs(w.root(), runs);
            else
                write_check_runs(w.root(), {runs[k - 1]});
            w.commit();
            out.push_back(p);
        }
        return out;
    }();
    return files;
}

}  // namespace attnspec::fuzz
