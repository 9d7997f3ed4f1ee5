// check-kernel's report, JUnit XML and reproducer (check_kernel_files.hpp).
#include "check_kernel_files.hpp"

#include "attnspec/base/errors.hpp"
#include "attnspec/io/kernel_reproducer.hpp"
#include "attnspec/io/report_writer.hpp"
#include "attnspec/report/kernel_check_junit.hpp"
#include "attnspec/report/kernel_check_report.hpp"

namespace attnspec::cli {

void check_kernel_targets(const CheckKernelFiles& f, const std::vector<std::string>& inputs) {
    check_output_target(f.report, inputs);
    std::vector<std::string> others = inputs;
    if (!f.report.empty()) others.push_back(f.report);
    check_output_target(f.junit, others);
}

std::vector<std::string> write_check_kernel_files(kernels::KernelCheckRun& run,
                                                  const std::vector<NamedArray>& arrays,
                                                  const CheckKernelFiles& f, const Invocation& inv,
                                                  bool quiet) {
    std::vector<std::string> written;
    if (run.verdict != kernels::KernelVerdict::pass) {
        const std::string path = reproducer_path(f.report.empty() ? run.output : f.report);
        if (path == run.inputs || path == run.output) {
            run.reproducer = path;  // replaying a reproducer: it stays as it is
        } else {
            try {
                write_kernel_reproducer(path, run, arrays);
                run.reproducer = path;
                written.push_back(path);
                if (!quiet) log("reproducer written to " + path);
            } catch (const Error& e) {
                if (!f.report.empty()) throw;
                log("warning: no reproducer written: " + std::string(e.what()));
            }
        }
    }
    if (!f.report.empty()) {
        ReportWriter w(f.report, provenance(inv, 0));
        write_kernel_check_section(w.root(), run);
        w.commit();
        written.push_back(w.target());
        if (!quiet) log("report written to " + w.target());
    }
    if (!f.junit.empty()) {
        write_text_file_atomically(f.junit, kernel_check_junit(run));
        written.push_back(f.junit);
        if (!quiet) log("JUnit XML written to " + f.junit);
    }
    return written;
}

}  // namespace attnspec::cli
