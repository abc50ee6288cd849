#include "harness.cuh"

#include <algorithm>
#include <iostream>
#include <memory>
#include <new>

#include "check.cuh"
#include "device_buffer.cuh"
#include "device_info.hpp"
#include "host_data.hpp"
#include "peers.cuh"
#include "references.cuh"
#include "report.hpp"
#include "timer.cuh"

namespace course {

std::string Variant::id_from_name(const std::string& name) {
  std::string id;
  for (char c : name) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    const char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    if (keep || lower != c) {
      id += lower;
    } else if (!id.empty() && id.back() != '-') {
      id += '-';
    }
  }
  while (!id.empty() && id.back() == '-') id.pop_back();
  return id;
}

cudaError_t run_poisoned(const Variant& v, const Problem& p, const void* in, void* out,
                         std::size_t out_bytes, std::size_t offset) {
  CUDA_CHECK(cudaMemset(out, kPoisonByte, out_bytes));
  char* matrix = static_cast<char*>(out) + offset;
  if (v.in_place) {
    CUDA_CHECK(cudaMemcpy(matrix, in, p.bytes(), cudaMemcpyDeviceToDevice));
  }
  const cudaError_t status = v.launch(p, v.in_place ? matrix : in, matrix, nullptr);
  if (status == cudaErrorInvalidValue) {
    cudaGetLastError();  // a refused shape: nothing was launched
    return status;
  }
  CUDA_CHECK(status);
  CUDA_CHECK(cudaDeviceSynchronize());
  return cudaSuccess;
}

namespace {

// What every binary checks before it allocates anything, once its arguments are known to be
// good: a device this build's kernels run on (else CudaError), and room for an input and an
// output buffer (else UsageError).
void check_device(const StepInfo& step, const Options& opt) {
  const Problem& p = opt.problem;
  std::string why;
  if (!cuda_device_available(&why)) throw CudaError("no usable CUDA device: " + why);
  // The make target that rebuilds it: a step's, a lab's or a tool's own name, else `all`.
  const std::string target = step.binary.rfind("step", 0) == 0 ? step.binary : "all";
  if (!kernels_run_here(target, &why)) throw CudaError(why);
  // Refuse what cannot fit before allocating anything: an input and an output buffer.
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t needed = 2 * p.bytes();
  if (needed > free_bytes) {
    throw UsageError("--rows x --cols: " + p.describe() + " needs " + gib(needed) +
                     " of device memory, " + gib(free_bytes) + " is free");
  }
}

// The step's kernels for these options, narrowed by --only: the kernel with that id, else the
// kernels whose name contains it. Building the list runs the step's own checks of its options
// (step 09's --mode against the shape); nothing here touches the GPU.
std::vector<Variant> select_variants(const StepInfo& step, const Options& opt,
                                     const VariantList& make_variants) {
  std::vector<Variant> all = make_variants(opt), variants;
  bool by_id = false;
  for (const Variant& v : all) by_id = by_id || v.id == opt.only;
  for (Variant& v : all) {
    const bool named = by_id ? v.id == opt.only : v.name.find(opt.only) != std::string::npos;
    if (opt.only.empty() || named) {
      variants.push_back(std::move(v));
    }
  }
  if (variants.empty()) {
    throw UsageError("--only: no kernel of " + step.binary + " matches '" + opt.only + "'");
  }
  return variants;
}

// parse, --help, the arguments' checks (@p check, which throws UsageError, then a writable
// --csv), the device, @p body; the errors become exit codes with a one-line message.
int run_frame(int argc, char** argv, const StepInfo& step, const ArgumentCheck& check,
              const StepBody& body, const StepBody& list = nullptr) {
  return exit_code_of(step.binary, [&] {
    const Options opt = parse_options(step, std::vector<std::string>(argv + 1, argv + argc));
    if (opt.help) {
      std::cout << usage(step);
      return int{kExitOk};
    }
    if (check) check(opt);
    if (opt.list && list) return list(opt);
    check_csv(opt.csv);
    check_device(step, opt);
    return body(opt);
  });
}

int run(const StepInfo& step, const Options& opt, std::vector<Variant> variants) {
  const Problem& p = opt.problem;
  Report report;
  report.step = step.binary;
  report.title = step.title;
  report.problem = p;
  report.device = query_device();

  // Inputs: fresh bit patterns, and the CPU's answer to compare with.
  const std::uint64_t seed = opt.seed_given ? opt.seed : fresh_seed();
  std::cerr << "preparing " << p.describe() << " (seed " << seed << ")...\n";
  auto h_in = host_bytes(p.bytes());
  fill_pattern(p.type, h_in.get(), p.elements(), seed);
  std::unique_ptr<std::uint8_t[]> h_ref, h_out;
  if (opt.verify) {
    h_ref = host_bytes(p.bytes());
    h_out = host_bytes(p.bytes());
    cpu_transpose(p, h_in.get(), h_ref.get());
  }
  DeviceBuffer d_in(p.bytes()), d_out(p.bytes());
  CUDA_CHECK(cudaMemcpy(d_in.get(), h_in.get(), p.bytes(), cudaMemcpyHostToDevice));
  h_in.reset();

  auto timed_row = [&](const std::string& id, const std::string& kernel,
                       const std::string& block, const std::string& tile,
                       const std::function<void(cudaStream_t)>& fn) {
    ResultRow row{id, kernel, block, tile};
    const Timing t = time_runs(fn, opt.warmup, opt.reps);
    row.median_ms = t.median_ms;
    row.min_ms = t.min_ms;
    return row;
  };
  bool failed = false, any_ran = false;
  auto check = [&](ResultRow* row) {
    if (!opt.verify) {
      row->verified = "skipped";
      return;
    }
    CUDA_CHECK(cudaMemcpy(h_out.get(), d_out.get(), p.bytes(), cudaMemcpyDeviceToHost));
    const VerifyResult v = verify_transpose(p, h_ref.get(), h_out.get());
    row->verified = v.ok ? "yes" : "FAILED";
    if (!v.ok) {
      std::cerr << step.binary << ": " << row->kernel << ": " << v.message << "\n";
      failed = true;
    }
  };

  // Poison, run once, compare; then time. In place, each timed run transposes the buffer again,
  // which is a valid transpose because in-place kernels take square matrices.
  auto measure = [&](const Variant& v) {
    ResultRow row{v.id, v.name, v.block, v.tile};
    if (run_poisoned(v, p, d_in.get(), d_out.get(), p.bytes(), 0) != cudaSuccess) {
      row.verified = "refused";
      return row;
    }
    check(&row);
    const void* src = v.in_place ? d_out.get() : d_in.get();
    const Timing t = time_runs(
        [&](cudaStream_t s) { CUDA_CHECK(v.launch(p, src, d_out.get(), s)); }, opt.warmup, opt.reps);
    row.median_ms = t.median_ms;
    row.min_ms = t.min_ms;
    return row;
  };

  // The copy ceiling: the faster of the two copies, measured here, on these buffers.
  const std::size_t n = p.bytes();
  std::cerr << "timing the copy ceiling...\n";
  std::vector<ResultRow> refs;
  refs.push_back(timed_row("copy-memcpy", "copy: cudaMemcpy device to device", "-", "-",
                           [&](cudaStream_t s) {
                             CUDA_CHECK(launch_memcpy(d_in.get(), d_out.get(), n, s));
                           }));
  refs.push_back(timed_row("copy-float4", "copy: float4 kernel", "256", "-", [&](cudaStream_t s) {
    CUDA_CHECK(launch_copy_kernel(d_in.get(), d_out.get(), n, s));
  }));
  for (ResultRow& r : refs) r.verified = "-";
  const double best_copy_ms = std::min(refs[0].median_ms, refs[1].median_ms);
  report.copy_gbps = p.bytes_moved() / (best_copy_ms * 1e-3) / 1e9;

  // The libraries' transposes (peers.cuh), verified and timed like the kernels.
  // geam has no batched form: on a batch, cuBLASLt's one strided-batch call is the peer, not a
  // geam per matrix.
  if (step.cublas_reference && cublas_has_type(p.type) && p.batch == 1 && p.rows <= 0x7FFFFFFF &&
      p.cols <= 0x7FFFFFFF) {
    std::cerr << "timing cuBLAS geam...\n";
    CublasTranspose cublas;
    const Variant geam{"cublas",
                       std::string("cuBLAS ") + (p.type == ElemType::f32 ? "Sgeam" : "Dgeam"),
                       "-", "-", [&](const Problem& q, const void* in, void* out, cudaStream_t s) {
                         cublas.run(q, in, out, s);
                         return cudaGetLastError();
                       }};
    refs.push_back(measure(geam));
  }
  // Not under --only (a profile of one kernel): ncu must not meet cuBLASLt's kernels first.
  if (step.cublas_reference && cublaslt_has_type(p.type) && opt.only.empty()) {
    // int8 takes a float or an int32 scale, and they run at different speeds: the fastest of
    // the scale types that run counts.
    std::vector<ResultRow> tried;
    for (cudaDataType_t scale : cublaslt_scales(p.type)) {
      std::cerr << "timing cuBLASLt's transform...\n";
      try {
        CublasLtTranspose lt(p, scale);
        const Variant transform{"cublaslt", lt.name(), "-", "-",
                                [&](const Problem&, const void* in, void* out, cudaStream_t s) {
                                  return lt.run(in, out, s);
                                }};
        tried.push_back(measure(transform));
      } catch (const CudaError& e) {  // a shape or type this cuBLASLt refuses: no row
        std::cerr << step.binary << ": " << e.what() << " (no cuBLASLt row)\n";
      }
    }
    if (!tried.empty()) {
      refs.push_back(*std::min_element(tried.begin(), tried.end(), [](const ResultRow& a,
                                                                      const ResultRow& b) {
        return a.median_ms < b.median_ms;
      }));
    }
  }
  for (ResultRow& r : refs) {
    fill_rates(report, &r);
    report.rows.push_back(r);
  }

  std::vector<std::string> refused;
  for (const Variant& v : variants) {
    std::cerr << "verifying and timing " << v.name << "...\n";
    ResultRow row = measure(v);
    if (row.verified == "refused") {
      refused.push_back(v.name);
    } else {
      any_ran = true;
      fill_rates(report, &row);
    }
    report.rows.push_back(row);
  }

  std::cout << "\n";
  print_table(std::cout, report);
  for (const std::string& name : refused) {
    std::cout << "note: " << name << " does not support " << p.describe() << "\n";
  }
  if (!opt.csv.empty()) append_csv(opt.csv, report);
  if (failed) return kExitVerifyFailed;
  if (!any_ran) {
    throw UsageError("--rows x --cols: no kernel of " + step.binary + " supports " + p.describe());
  }
  return kExitOk;
}

}  // namespace

int run_main(int argc, char** argv, const StepInfo& step, const StepBody& body,
             const ArgumentCheck& check) {
  StepInfo own_table = step;
  own_table.verifies_kernels = false;
  return run_frame(argc, argv, own_table, check, body);
}

int run_step(int argc, char** argv, const StepInfo& step, const VariantList& make_variants) {
  std::vector<Variant> variants;
  return run_frame(
      argc, argv, step,
      [&](const Options& opt) { variants = select_variants(step, opt, make_variants); },
      [&](const Options& opt) { return run(step, opt, std::move(variants)); },
      [&](const Options&) {
        // --list: the element types (list_types), then the kernels for these options.
        std::cout << list_types(step);
        for (const Variant& v : variants) std::cout << "kernel\t" << v.id << '\t' << v.name << '\n';
        return kExitOk;
      });
}

}  // namespace course
