// CPU tests of the shared option parser: the command-line contract of every step.
#include <gtest/gtest.h>

#include "errors.hpp"
#include "options.hpp"

namespace course {
namespace {

StepInfo demo_step() {
  StepInfo s;
  s.binary = "stepXX";
  s.title = "demo";
  s.types = {ElemType::f32, ElemType::f64};
  s.extras = {{"mode", {"inplace", "batched"}, "what to run"}};
  return s;
}

Options parse(std::vector<std::string> args, StepInfo s = demo_step()) {
  return parse_options(s, args);
}

// The message of the UsageError that parsing @p args throws ("" if none is thrown).
std::string error_of(std::vector<std::string> args, StepInfo s = demo_step()) {
  try {
    parse_options(s, args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(CpuOptions, DefaultsAre8192SquareFloat32) {
  const Options o = parse({});
  EXPECT_EQ(o.problem.rows, 8192);
  EXPECT_EQ(o.problem.cols, 8192);
  EXPECT_EQ(o.problem.batch, 1);
  EXPECT_EQ(o.problem.type, ElemType::f32);
  EXPECT_EQ(o.reps, 50);
  EXPECT_EQ(o.warmup, 5);
  EXPECT_TRUE(o.verify);
  EXPECT_FALSE(o.help);
  EXPECT_EQ(o.get("mode"), "inplace");
}

TEST(CpuOptions, ReadsEveryOptionInBothForms) {
  const Options o = parse({"--rows", "33", "--cols=7", "--type", "f64", "--reps", "3",
                           "--warmup=0", "--csv", "out.csv", "--no-verify", "--only", "naive",
                           "--seed", "42", "--mode", "batched"});
  EXPECT_EQ(o.problem.rows, 33);
  EXPECT_EQ(o.problem.cols, 7);
  EXPECT_EQ(o.problem.type, ElemType::f64);
  EXPECT_EQ(o.reps, 3);
  EXPECT_EQ(o.warmup, 0);
  EXPECT_EQ(o.csv, "out.csv");
  EXPECT_FALSE(o.verify);
  EXPECT_EQ(o.only, "naive");
  EXPECT_TRUE(o.seed_given);
  EXPECT_EQ(o.seed, 42u);
  EXPECT_EQ(o.get("mode"), "batched");
  EXPECT_TRUE(parse({"--help"}).help);
  EXPECT_TRUE(parse({"-h"}).help);
}

TEST(CpuOptions, RefusesZeroNegativeAndNonNumericSizes) {
  EXPECT_EQ(error_of({"--rows", "0"}), "--rows: 0 must be at least 1");
  EXPECT_EQ(error_of({"--cols", "-5"}), "--cols: -5 must be at least 1");
  EXPECT_EQ(error_of({"--rows", "abc"}), "--rows: 'abc' is not a whole number");
  EXPECT_EQ(error_of({"--rows", "12x"}), "--rows: '12x' is not a whole number");
  EXPECT_EQ(error_of({"--rows", "1.5"}), "--rows: '1.5' is not a whole number");
  EXPECT_EQ(error_of({"--rows="}), "--rows: '' is not a whole number");
  EXPECT_EQ(error_of({"--reps", "0"}), "--reps: 0 must be at least 1");
  EXPECT_EQ(error_of({"--warmup", "-1"}), "--warmup: -1 must be at least 0");
}

TEST(CpuOptions, RefusesSizesTooLargeOrWhoseProductOverflows) {
  EXPECT_NE(error_of({"--rows", "99999999999999999999"}).find("--rows: "), std::string::npos);
  EXPECT_NE(error_of({"--rows", "99999999999999999999"}).find("too large"), std::string::npos);
  const std::string e = error_of({"--rows", "1099511627776", "--cols", "1099511627776"});
  EXPECT_NE(e.find("overflows"), std::string::npos) << e;
  // 2^31 x 2^31 floats is 2^64 bytes: the product overflows though each factor is fine.
  EXPECT_NE(error_of({"--rows", "2147483648", "--cols", "2147483648"}).find("overflows"),
            std::string::npos);
  EXPECT_EQ(error_of({"--rows", "2147483648", "--cols", "2"}), "");
}

TEST(CpuOptions, RefusesUnknownOptionsAndMissingValues) {
  EXPECT_EQ(error_of({"--bogus"}), "--bogus: unknown option for stepXX (see --help)");
  EXPECT_EQ(error_of({"rows"}), "rows: unknown option for stepXX (see --help)");
  EXPECT_EQ(error_of({"--rows"}), "--rows: missing value");
  EXPECT_EQ(error_of({"--csv"}), "--csv: missing value");
  EXPECT_EQ(error_of({"--no-verify=1"}), "--no-verify: takes no value");
}

TEST(CpuOptions, RefusesTypesAndOptionsTheStepDoesNotSupport) {
  EXPECT_EQ(error_of({"--type", "i8"}),
            "--type: stepXX does not support 'i8' (supported: f32|f64)");
  EXPECT_EQ(error_of({"--type", "float"}),
            "--type: stepXX does not support 'float' (supported: f32|f64)");
  EXPECT_EQ(error_of({"--batch", "4"}),
            "--batch: stepXX transposes one matrix; batches are step 09");
  EXPECT_EQ(error_of({"--mode", "sideways"}), "--mode: 'sideways' is not one of inplace|batched");
  StepInfo batched = demo_step();
  batched.supports_batch = true;
  EXPECT_EQ(parse({"--batch", "4"}, batched).problem.batch, 4);
}

TEST(CpuOptions, HelpDocumentsEveryOption) {
  const std::string text = usage(demo_step());
  for (const char* opt : {"--rows", "--cols", "--type", "--reps", "--warmup", "--csv", "--only",
                          "--list", "--seed", "--no-verify", "--help", "--mode", "f32|f64",
                          "exit codes"}) {
    EXPECT_NE(text.find(opt), std::string::npos) << opt;
  }
  EXPECT_EQ(text.find("--batch"), std::string::npos) << "a step without batches hides --batch";
}

// A binary with a table of its own (run_main) has no kernel list and verifies nothing: the
// options about kernels and verification are refused by name and left out of its help.
TEST(CpuOptions, ABinaryWithoutKernelsRefusesTheirOptions) {
  StepInfo tool = demo_step();
  tool.verifies_kernels = false;
  EXPECT_EQ(error_of({"--only", "naive"}, tool), "--only: unknown option for stepXX (see --help)");
  EXPECT_EQ(error_of({"--seed", "1"}, tool), "--seed: unknown option for stepXX (see --help)");
  EXPECT_EQ(error_of({"--no-verify"}, tool), "--no-verify: unknown option for stepXX (see --help)");
  EXPECT_EQ(error_of({"--list"}, tool), "--list: unknown option for stepXX (see --help)");
  EXPECT_EQ(parse({"--csv", "x.csv", "--reps", "2"}, tool).reps, 2);
  EXPECT_TRUE(parse({"--list"}).list);
  EXPECT_EQ(error_of({"--list=yes"}), "--list: takes no value");
  const std::string text = usage(tool);
  for (const char* gone : {"--only", "--list", "--seed", "--no-verify", "checked bit for bit",
                           "1 verif"}) {
    EXPECT_EQ(text.find(gone), std::string::npos) << gone;
  }
  for (const char* kept : {"--rows", "--csv", "--reps", "exit codes"}) {
    EXPECT_NE(text.find(kept), std::string::npos) << kept;
  }
}

}  // namespace
}  // namespace course
