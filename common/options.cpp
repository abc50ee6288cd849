#include "options.hpp"

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "errors.hpp"

namespace course {

namespace {

// Largest size accepted for one dimension or the batch; far beyond any GPU, small enough that
// products can be checked without overflowing first.
constexpr std::int64_t kMaxDim = std::int64_t{1} << 40;

std::int64_t parse_count(const std::string& option, const std::string& value, std::int64_t min,
                         std::int64_t max) {
  if (value.empty() || value[0] == '+' || value[0] == ' ') {
    throw UsageError(option + ": '" + value + "' is not a whole number");
  }
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(value.c_str(), &end, 10);
  if (*end != '\0') throw UsageError(option + ": '" + value + "' is not a whole number");
  if (errno == ERANGE || v > max) {
    throw UsageError(option + ": " + value + " is too large (at most " + std::to_string(max) + ")");
  }
  if (v < min) {
    throw UsageError(option + ": " + value + " must be at least " + std::to_string(min));
  }
  return v;
}

std::string type_list(const StepInfo& step) {
  std::string s;
  for (ElemType t : step.types) s += (s.empty() ? "" : "|") + std::string(elem_name(t));
  return s;
}

const ExtraOption* find_extra(const StepInfo& step, const std::string& name) {
  for (const ExtraOption& e : step.extras)
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace

Options parse_options(const StepInfo& step, const std::vector<std::string>& args) {
  Options o;
  o.problem.type = step.types.front();
  o.problem.rows = step.default_rows;
  o.problem.cols = step.default_cols;
  for (const ExtraOption& e : step.extras) o.extra[e.name] = e.choices.front();

  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string opt = args[i], value;
    bool has_value = false;
    if (const auto eq = opt.find('='); opt.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = opt.substr(eq + 1);
      opt = opt.substr(0, eq);
      has_value = true;
    }
    auto take_value = [&]() -> const std::string& {
      if (!has_value) {
        if (i + 1 >= args.size()) throw UsageError(opt + ": missing value");
        value = args[++i];
      }
      return value;
    };
    auto no_value = [&]() {
      if (has_value) throw UsageError(opt + ": takes no value");
    };

    if (opt == "--help" || opt == "-h") {
      no_value();
      o.help = true;
    } else if (opt == "--rows") {
      o.problem.rows = parse_count(opt, take_value(), 1, kMaxDim);
    } else if (opt == "--cols") {
      o.problem.cols = parse_count(opt, take_value(), 1, kMaxDim);
    } else if (opt == "--batch") {
      const std::int64_t b = parse_count(opt, take_value(), 1, kMaxDim);
      if (!step.supports_batch && b != 1) {
        throw UsageError("--batch: " + step.binary + " transposes one matrix; batches are step 09");
      }
      o.problem.batch = b;
    } else if (opt == "--type") {
      const std::string& name = take_value();
      ElemType t;
      bool supported = parse_elem_type(name, &t);
      if (supported) {
        supported = false;
        for (ElemType s : step.types) supported = supported || s == t;
      }
      if (!supported) {
        throw UsageError("--type: " + step.binary + " does not support '" + name +
                         "' (supported: " + type_list(step) + ")");
      }
      o.problem.type = t;
    } else if (opt == "--reps") {
      o.reps = static_cast<int>(parse_count(opt, take_value(), 1, 100000));
    } else if (opt == "--warmup") {
      o.warmup = static_cast<int>(parse_count(opt, take_value(), 0, 100000));
    } else if (opt == "--csv") {
      o.csv = take_value();
      if (o.csv.empty()) throw UsageError("--csv: missing file name");
    } else if (opt == "--only" && step.verifies_kernels) {
      o.only = take_value();
    } else if (opt == "--list" && step.verifies_kernels) {
      no_value();
      o.list = true;
    } else if (opt == "--seed" && step.verifies_kernels) {
      o.seed = static_cast<std::uint64_t>(
          parse_count(opt, take_value(), 0, std::numeric_limits<std::int64_t>::max()));
      o.seed_given = true;
    } else if (opt == "--no-verify" && step.verifies_kernels) {
      no_value();
      o.verify = false;
    } else if (opt.rfind("--", 0) == 0 && find_extra(step, opt.substr(2))) {
      const ExtraOption& e = *find_extra(step, opt.substr(2));
      const std::string& v = take_value();
      bool ok = false;
      std::string choices;
      for (const std::string& c : e.choices) {
        ok = ok || c == v;
        choices += (choices.empty() ? "" : "|") + c;
      }
      if (!ok) throw UsageError(opt + ": '" + v + "' is not one of " + choices);
      o.extra[e.name] = v;
    } else {
      throw UsageError(opt + ": unknown option for " + step.binary + " (see --help)");
    }
  }

  // rows x cols x batch x element size must fit in 63 bits; each factor is below 2^40, so
  // checking one product at a time against the limit cannot itself overflow.
  const std::int64_t limit = std::numeric_limits<std::int64_t>::max();
  const std::int64_t p = o.problem.rows;
  if (o.problem.cols > limit / p || o.problem.batch > limit / (p * o.problem.cols) ||
      static_cast<std::int64_t>(elem_size(o.problem.type)) >
          limit / (p * o.problem.cols * o.problem.batch)) {
    throw UsageError("--rows x --cols: " + o.problem.describe() + " overflows a 64-bit size");
  }
  return o;
}

std::string list_types(const StepInfo& step) {
  std::ostringstream s;
  for (ElemType t : all_elem_types()) {
    bool takes = false;
    for (ElemType supported : step.types) takes = takes || supported == t;
    s << "type\t" << elem_name(t) << '\t' << elem_size(t) << '\t'
      << (t == step.types.front() ? "default" : takes ? "yes" : "no") << '\n';
  }
  return s.str();
}

std::string usage(const StepInfo& step) {
  std::ostringstream s;
  s << step.binary << ": " << step.title << "\n\n";
  if (!step.description.empty()) s << step.description << "\n\n";
  s << "usage: ./" << step.binary << " [options]\n\n"
    << "  --rows R        rows of the input matrix (default " << step.default_rows << ")\n"
    << "  --cols C        columns of the input matrix (default " << step.default_cols << ")\n";
  if (step.supports_batch) {
    s << "  --batch B       number of matrices stored back to back (default 1)\n";
  }
  s << "  --type T        element type: " << type_list(step) << " (default "
    << elem_name(step.types.front()) << ")\n";
  for (const ExtraOption& e : step.extras) {
    std::string choices;
    for (const std::string& c : e.choices) choices += (choices.empty() ? "" : "|") + c;
    s << "  --" << e.name << " " << choices << "\n      " << e.help << " (default "
      << e.choices.front() << ")\n";
  }
  s << "  --reps N        timed repetitions per kernel; median and min are reported (default 50)\n"
    << "  --warmup N      untimed runs before timing (default 5)\n"
    << "  --csv FILE      also append the results to FILE as CSV (header written if new)\n";
  if (step.verifies_kernels) {
    s << "  --only TEXT     run only the kernel whose id is TEXT, or those whose name contains it\n"
      << "  --list          print the element types (all, and which this binary takes) and\n"
      << "                  the kernels for these options (id, name), and exit\n"
      << "  --seed N        seed of the input bit patterns (default: fresh each run)\n"
      << "  --no-verify     skip the bitwise check against the CPU reference\n";
  }
  s << "  --help, -h      this text\n"
    << "A value may also follow its option after '=': --rows=4096.\n\n";
  if (step.verifies_kernels) {
    s << "Every kernel is first checked bit for bit against a CPU transpose of fresh random\n"
      << "inputs, on an output filled with a poison pattern, then timed with CUDA events.\n"
      << "GB/s counts 2 x rows x cols x element size bytes per matrix (1 GB = 1e9 bytes);\n"
      << "% copy compares with the faster of cudaMemcpy and a float4 copy kernel, measured in\n"
      << "the same run; % peak with the memory's theoretical bandwidth.\n\n";
  }
  s << "exit codes: 0 success, " << (step.verifies_kernels ? "1 verification failed, " : "")
    << "2 bad argument or size that does not fit,\n"
    << "            3 no usable CUDA device or a CUDA error\n";
  return s.str();
}

}  // namespace course
