// The command table: every `attnspec <command>` and the function that runs it, listed once here
// (cli.cpp: command_table). Each cmd_<name>.cpp defines its run_<name>.
#pragma once
#include "cli.hpp"

namespace attnspec::cli {

int run_check_kernel(const Invocation& inv);  // attnspec check-kernel
int run_cond(const Invocation& inv);          // attnspec cond
int run_dataset(const Invocation& inv);       // attnspec dataset
int run_fidelity(const Invocation& inv);      // attnspec fidelity
int run_gpu_check(const Invocation& inv);     // attnspec gpu-check
int run_import(const Invocation& inv);        // attnspec import
int run_info(const Invocation& inv);          // attnspec info
int run_jacobian(const Invocation& inv);      // attnspec jacobian
int run_neumann(const Invocation& inv);       // attnspec neumann
int run_report(const Invocation& inv);        // attnspec report
int run_verify(const Invocation& inv);        // attnspec verify

}  // namespace attnspec::cli
