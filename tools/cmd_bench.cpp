// `smla bench`: GPU timing of decode problems (harness/bench.h).
#include <nlohmann/json.hpp>

#include "deployments/deployment.h"
#include "deployments/json_text.h"
#include "harness/bench.h"
#include "runtime/validate.h"
#include "tools/commands.h"
#include "tools/problem_options.h"

namespace smla::tools {

void add_bench_command(CLI::App& app, int* exit_code) {
  auto* c = app.add_subcommand(
      "bench", "time decode calls on the GPU (median us, GB/s, TFLOPS, % of ceilings)");
  auto problems = std::make_shared<ProblemOptions>();
  auto options = std::make_shared<BenchOptions>();
  auto json = std::make_shared<bool>(false);
  auto overheads = std::make_shared<bool>(false);
  problems->add_to(*c);
  add_list_option(*c, "--rows", &options->rows, "row counts", CLI::Range(1, kMaxRows));
  c->add_option("--iters", options->iterations, "graph replays per measurement")
      ->check(CLI::Range(1, 1000000));
  c->add_option("--repeats", options->repeats, "measurements (the median is reported)")
      ->check(CLI::Range(1, 1000000));
  c->add_option("--pool-gb", options->pool_gb,
                "KV pool per source in GB (random entries spread over it; filled on the host, "
                "seconds per GB)")
      ->check(kFinite & CLI::Range(0.01, 64.0));
  c->add_flag("--json", *json, "JSON output");
  c->add_flag("--overheads", *overheads,
              "also measure host us per warm call and ms to load from the cache");
  c->callback([=] {
    std::vector<std::pair<std::string, smla_problem>> selected;
    Status status = problems->resolve(&selected);
    nlohmann::json out = nlohmann::json::array();
    if (!*json && status) {
      fmt::print("{:<44} {:>5} {:>9} {:>8} {:>8} {:>7} {:>8} {:>6} {}\n", "problem", "rows", "us",
                 "+-us", "GB/s", "TFLOPS", "%gather", "%mma", "mode");
    }
    for (size_t i = 0; status && i < selected.size(); ++i) {
      std::vector<BenchRow> rows;
      status = bench_problem(selected[i].second, *options, &rows);
      // Once, after the first problem's rows (every problem runs on the same device).
      if (!*json && i == 0 && !rows.empty() && !is_ceilings_device(rows[0].device)) {
        fmt::print(
            "# note: %gather and %mma are of the H200's ceilings (docs/PERFORMANCE.md), not of "
            "this {}\n",
            rows[0].device);
      }
      for (const BenchRow& r : rows) {
        if (*json) {
          out.push_back({{"device", r.device},
                         {"problem", r.problem},
                         {"layer", selected[i].first},
                         {"rows", r.rows},
                         {"median_us", r.median_us},
                         {"spread_us", r.spread_us},
                         {"kv_bytes", r.kv_bytes},
                         {"gbps", r.gbps},
                         {"tflops", r.tflops},
                         {"gather_fraction", r.gather_fraction},
                         {"mma_fraction", r.mma_fraction},
                         {"split", r.split},
                         {"mode", r.mode}});
        } else {
          fmt::print("{:<44} {:>5} {:>9.2f} {:>8.2f} {:>8.0f} {:>7.1f} {:>7.1f}% {:>5.1f}% {}\n",
                     r.problem, r.rows, r.median_us, r.spread_us, r.gbps, r.tflops,
                     100 * r.gather_fraction, 100 * r.mma_fraction, r.mode);
        }
      }
      if (status && *overheads) {
        OverheadReport report;
        status = measure_overheads(selected[i].second, 10000, &report);
        if (status && *json) {
          out.push_back({{"problem", problem_text(selected[i].second)},
                         {"decode_host_us", report.decode_host_us},
                         {"prepare_from_cache_ms", report.prepare_from_cache_ms}});
        } else if (status) {
          fmt::print(
              "{}: warm smla_decode host time {:.2f} us (median of 10^4); prepare from the disk "
              "cache {:.2f} ms\n",
              problem_text(selected[i].second), report.decode_host_us,
              report.prepare_from_cache_ms);
        }
      }
    }
    if (!status) {
      *exit_code = report_failure("bench", status.message(), *json, out, exit_status_of(status));
      return;
    }
    if (*json) fmt::print("{}\n", json_text(out));
  });
}

}  // namespace smla::tools
