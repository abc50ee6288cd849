// The grader's judge: decides, item by item, whether what a worker wrote for a plan is right
// (judge/protocol.hpp: who writes what, and why only the judge decides). The grader builds it
// from the course's own sources and runs it after every process of the submission is gone.
//
//   judge verify --exercise N --plan PLAN --data DATA [--key HEX] [--samples S] [--seed S]
//       one JSON object per plan item on stdout: {"item", "ok", "message", ...}
//   judge shapes awkward|squares     the course's shape lists, one "ROWS COLS" per line
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cpu_checks.hpp"
#include "host_data.hpp"
#include "problem.hpp"
#include "protocol.hpp"
#include "shapes.hpp"

namespace {

using grader::Item;
using grader::launcher_of;
using grader::Verdict;

struct Record {
  std::string tag;
  std::string payload;
};

struct Outcome {
  bool ok = false;
  bool todo = false;     // the submission's function says "not implemented yet"
  bool missing = false;  // no complete result for the item
  std::string message;
  std::string extra;     // more JSON fields, already formatted (",\"k\": v")
};

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c >= 0x7F) {  // keep the output ASCII whatever a record held
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

/// At most @p limit characters of text the submission wrote, printable.
std::string clip(const std::string& s, std::size_t limit = 600) {
  std::string t = s.substr(0, limit);
  for (char& c : t)
    if ((c < 0x20 && c != '\n') || c == 0x7F) c = '?';
  return s.size() > limit ? t + "..." : t;
}

bool parse_plan(const std::string& path, std::vector<Item>* items, std::string* why) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (!f) {
    *why = "cannot read the plan " + path;
    return false;
  }
  char buf[512];
  bool first = true;
  while (std::fgets(buf, sizeof buf, f)) {
    std::string line(buf);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (first) {
      first = false;
      if (line != "plan 1") {
        *why = "not a plan: " + line;
        std::fclose(f);
        return false;
      }
      continue;
    }
    Item it;
    if (!grader::parse_item(line, &it)) {
      *why = "unknown plan item: " + line;
      std::fclose(f);
      return false;
    }
    items->push_back(it);
  }
  std::fclose(f);
  return true;
}

/// Reads the data channel: every complete record, by item. Stops at the first malformed header
/// and says so in @p note.
std::map<long, std::vector<Record>> read_records(const std::string& path, std::size_t items,
                                                 const std::vector<std::uint64_t>& limits,
                                                 std::string* note) {
  std::map<long, std::vector<Record>> by_item;
  // At most what every item may need, twice over: a flood of small records stops here.
  std::uint64_t budget = 1 << 20;
  for (std::uint64_t l : limits) budget += 2 * l;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    *note = "the worker wrote no data";
    return by_item;
  }
  char header[128];
  while (std::fgets(header, sizeof header, f)) {
    long item = -1;
    char tag[32] = {0};
    unsigned long long bytes = 0;
    if (header[0] != '@' || std::strchr(header, '\n') == nullptr ||
        std::sscanf(header, "@%ld %31s %llu", &item, tag, &bytes) != 3 || item < 0 ||
        static_cast<std::size_t>(item) >= items || bytes > grader::kMaxRecordBytes) {
      *note = "the data channel holds something other than the worker's records (did the code "
              "write to it?); what came after was ignored";
      break;
    }
    Record r;
    r.tag = tag;
    if (bytes > limits[static_cast<std::size_t>(item)]) {
      // Larger than anything the item needs: skip it unread; the item then lacks its result.
      if (std::fseek(f, static_cast<long>(bytes), SEEK_CUR) != 0) break;
      r.tag = "oversized";
      by_item[item].push_back(r);
      continue;
    }
    if (bytes + 128 > budget) {
      *note = "the data channel holds more than the plan needs; the rest was ignored";
      break;
    }
    budget -= bytes + 128;
    r.payload.resize(static_cast<std::size_t>(bytes));
    if (bytes && std::fread(&r.payload[0], 1, r.payload.size(), f) != r.payload.size()) {
      *note = "the data channel ends in the middle of a record";
      break;
    }
    by_item[item].push_back(std::move(r));
  }
  std::fclose(f);
  return by_item;
}

const Record* find(const std::vector<Record>& recs, const std::string& tag) {
  for (const Record& r : recs)
    if (r.tag == tag) return &r;
  return nullptr;
}

std::string not_implemented(int exercise, const std::string& function) {
  return "not implemented yet: write ex0" + std::to_string(exercise) + "::" + function + " in " +
         grader::file_of(exercise, function);
}

/// A launcher's return code for a shape it should have run.
Outcome status_outcome(int exercise, const Record& rec, const std::string& where) {
  Outcome o;
  std::istringstream in(rec.payload);
  long long code = -1;
  in >> code;
  if (code == grader::kCudaErrorNotYetImplemented) {
    o.todo = true;
    o.message = not_implemented(exercise, exercise == 3 ? "transpose_inplace" : "transpose");
  } else {
    o.message = where + ": the launcher returned " + grader::cuda_code_name(code) +
                (code == grader::kCudaErrorInvalidValue ? " (it refused the shape)" : "");
  }
  return o;
}

/// An output region: guard, matrix, guard. @p expected holds the transposed input.
Outcome check_region(const course::Problem& p, const std::string& region,
                     const std::vector<std::uint8_t>& expected, const std::string& where) {
  Outcome o;
  const std::size_t n = p.bytes();
  if (region.size() != n + 2 * grader::kGuard) {
    o.message = where + ": the worker's output has the wrong size";
    return o;
  }
  const auto* got = reinterpret_cast<const std::uint8_t*>(region.data());
  for (std::size_t i = 0; i < grader::kGuard; ++i) {
    if (got[i] != grader::kPoison) {
      o.message = where + ": wrote " + std::to_string(grader::kGuard - i) +
                  " bytes before the start of the output";
      return o;
    }
  }
  for (std::size_t i = 0; i < grader::kGuard; ++i) {
    if (got[grader::kGuard + n + i] != grader::kPoison) {
      std::size_t last = i;
      for (std::size_t j = i; j < grader::kGuard; ++j)
        if (got[grader::kGuard + n + j] != grader::kPoison) last = j;
      o.message = where + ": wrote past the end of the output (up to byte " +
                  std::to_string(last + 1) + " after it)";
      return o;
    }
  }
  const course::VerifyResult r = course::verify_transpose(p, expected.data(), got + grader::kGuard);
  if (!r.ok) {
    o.message = where + ": " + r.message;
    return o;
  }
  o.ok = true;
  return o;
}

Outcome judge_matrix(int exercise, const Item& it, const std::vector<Record>& recs) {
  const bool in_place = it.kind == "inplace";
  const course::Problem p{course::ElemType::f32, it.rows, it.cols, 1};
  const std::string where = launcher_of(exercise) + " on " + p.describe() + " (seed " +
                            std::to_string(it.seed) + ")";
  if (const Record* s = find(recs, "status")) return status_outcome(exercise, *s, where);
  const Record* region = find(recs, "region");
  if (!region) {
    Outcome o;
    o.message = where + ": no output";
    return o;
  }
  std::vector<std::uint8_t> in(p.bytes()), expected(p.bytes());
  course::fill_pattern(p.type, in.data(), p.elements(), it.seed);
  course::cpu_transpose(p, in.data(), expected.data());
  (void)in_place;  // in place or not, the matrix must end up transposed
  return check_region(p, region->payload, expected, where);
}

/// Replays recorded answers to the checks, in the order the checks ask for them.
struct Replay {
  std::string data;
  std::size_t pos = 0;
  std::int64_t prev = 0;
  long answered = 0;
  bool ran_out = false;

  std::int64_t next() {
    std::int64_t v = 0;
    if (ran_out || !grader::get_value(data, pos, v, prev)) {
      ran_out = true;
      return grader::checks::kOutside;
    }
    ++answered;
    return v;
  }
};

grader::Functions replaying(Replay& r) {
  grader::Functions f;
  f.blocks_for = [&r](std::int64_t, std::int64_t) { return r.next(); };
  f.input_index = [&r](std::int64_t, std::int64_t, std::int64_t, int, int) { return r.next(); };
  f.output_index = f.input_index;
  f.launch = [&r](std::int64_t, std::int64_t) { return r.next(); };
  f.swizzle = [&r](int, int) { return r.next(); };
  f.blocks_for_square = [&r](std::int64_t) { return r.next(); };
  f.pair_of_block = [&r](std::int64_t, std::int64_t) {
    const std::int64_t row = r.next();
    return grader::checks::Pair{row, r.next()};
  };
  f.element_index = [&r](std::int64_t, std::int64_t, std::int64_t, int, int) { return r.next(); };
  f.launch_square = [&r](std::int64_t) { return r.next(); };
  return f;
}

Outcome judge_check(int exercise, const Item& it, const std::vector<Record>& recs) {
  Outcome o;
  Replay r;
  for (const Record& rec : recs)
    if (rec.tag == "values") r.data += rec.payload;
  bool known = false;
  const Verdict v = grader::run_check(exercise, it.name, replaying(r), &known);
  if (!known) {
    o.message = "the grader has no check named " + it.name + " (a course error: tell the "
                "instructor)";
    return o;
  }
  if (r.ran_out) {
    o.message = "the recording of the answers ends after " + std::to_string(r.answered) +
                " of them: the worker stopped during this check";
    o.missing = true;
    return o;
  }
  if (!v.ok) {
    o.todo = !v.todo.empty();
    o.message = o.todo ? not_implemented(exercise, v.todo) : v.message;
    return o;
  }
  if (r.pos != r.data.size()) {
    o.message = "the recording holds more answers than the check asks for: it is not the "
                "worker's";
    return o;
  }
  o.ok = true;
  return o;
}

std::vector<std::int32_t> int32s(const std::string& payload) {
  std::vector<std::int32_t> v(payload.size() / 4);
  if (!v.empty()) std::memcpy(v.data(), payload.data(), v.size() * 4);
  return v;
}

Outcome judge_swizzle(const std::vector<Record>& recs) {
  Outcome o;
  const Record* host = find(recs, "swizzle_host");
  const Record* dev = find(recs, "swizzle_device");
  if (!host || !dev || host->payload.size() != 4096 || dev->payload.size() != 4096) {
    o.message = "the worker did not report the swizzle on both sides";
    return o;
  }
  const std::vector<std::int32_t> h = int32s(host->payload), d = int32s(dev->payload);
  for (int k = 0; k < 1024; ++k) {
    if (h[k] != d[k]) {
      o.message = "swizzle(" + std::to_string(k / 32) + ", " + std::to_string(k % 32) + ") is " +
                  std::to_string(h[k]) + " on the host (what the CPU tests check) but " +
                  std::to_string(d[k]) + " on the device (what the kernel uses): they must be "
                  "one function, with no #ifdef __CUDA_ARCH__ branch";
      return o;
    }
  }
  o.ok = true;
  return o;
}

/// The value the timed run's final matrix must hold at @p pos: follow the element back through
/// the REPS calls (each a transpose, then a mask) to the input.
std::uint32_t traced_value(const Item& it, bool in_place, std::uint64_t key, std::int64_t pos) {
  // Shapes: call k transposes an R_k x C_k matrix; R_0 = rows, C_0 = cols, then they swap.
  std::uint32_t mask = 0;
  for (std::int64_t k = it.reps - 1; k >= 0; --k) {
    const bool swapped = !in_place && (k % 2 == 1);
    const std::int64_t R = swapped ? it.cols : it.rows, C = swapped ? it.rows : it.cols;
    mask ^= grader::mask_of(grader::step_key(key, static_cast<std::uint32_t>(k)),
                            static_cast<std::uint64_t>(pos));
    // The output of call k is C x R: its element (r, c) came from the input's (c, r).
    const std::int64_t r = pos / R, c = pos % R;
    pos = c * C + r;
  }
  std::uint8_t bits[4];
  course::fill_pattern(course::ElemType::f32, bits, 1, it.seed + static_cast<std::uint64_t>(pos));
  std::uint32_t v;
  std::memcpy(&v, bits, 4);
  return v ^ mask;
}

Outcome judge_speed(int exercise, const Item& it, const std::vector<Record>& recs,
                    std::uint64_t key, int samples, std::uint64_t sample_seed) {
  Outcome o;
  const std::string where = launcher_of(exercise) + " called " + std::to_string(it.reps) +
                            " times on " + std::to_string(it.rows) + " x " +
                            std::to_string(it.cols);
  if (const Record* t = find(recs, "timing")) o.extra += ",\"timing\": " + json_string(t->payload);
  if (const Record* s = find(recs, "status")) {
    Outcome so = status_outcome(exercise, *s, where);
    so.extra = o.extra;
    return so;
  }
  const Record* region = find(recs, "region");
  const std::int64_t n = it.rows * it.cols;
  if (!region || region->payload.size() != static_cast<std::size_t>(n) * 4) {
    o.message = where + ": no final matrix";
    return o;
  }
  const bool in_place = exercise == 3;
  std::mt19937_64 rng(sample_seed);
  std::uniform_int_distribution<std::int64_t> any(0, n - 1);
  for (int s = 0; s < samples; ++s) {
    const std::int64_t pos = s == 0 ? 0 : s == 1 ? n - 1 : any(rng);
    std::uint32_t got;
    std::memcpy(&got, region->payload.data() + pos * 4, 4);
    const std::uint32_t want = traced_value(it, in_place, key, pos);
    if (got != want) {
      const std::int64_t out_cols = (in_place || it.reps % 2 == 0) ? it.cols : it.rows;
      char buf[64];
      std::snprintf(buf, sizeof buf, "0x%08x, got 0x%08x", want, got);
      o.message = where + " (each call's output masked before the next): the final matrix is "
                  "wrong at (row " + std::to_string(pos / out_cols) + ", col " +
                  std::to_string(pos % out_cols) + "): expected " + buf +
                  ". (The grader's kernel that masks each output runs on the stream the launcher "
                  "is given: a launcher must launch there.)";
      return o;
    }
  }
  o.ok = true;
  return o;
}

int verify(int argc, char** argv) {
  int exercise = 0, samples = 4096;
  std::string plan_path, data_path;
  std::uint64_t key = 0, sample_seed = course::fresh_seed();
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--exercise") exercise = std::atoi(v.c_str());
    else if (a == "--plan") plan_path = v;
    else if (a == "--data") data_path = v;
    else if (a == "--key") key = std::strtoull(v.c_str(), nullptr, 16);
    else if (a == "--samples") samples = std::max(2, std::atoi(v.c_str()));
    else if (a == "--seed") sample_seed = std::strtoull(v.c_str(), nullptr, 10);
  }
  std::vector<Item> items;
  std::string why;
  if (exercise < 1 || exercise > 3 || !parse_plan(plan_path, &items, &why)) {
    std::cerr << "judge: " << (why.empty() ? "bad arguments" : why) << "\n";
    return 2;
  }
  // The most bytes each item's records may need: its matrix and guards, or the check's answers.
  std::vector<std::uint64_t> limits;
  for (const Item& it : items) {
    const bool matrix = it.kind == "transpose" || it.kind == "inplace" || it.kind == "speed";
    limits.push_back(matrix ? static_cast<std::uint64_t>(it.rows * it.cols) * 4 + 2 * grader::kGuard
                            : std::uint64_t{1} << 28);
  }
  std::string note;
  const auto records = read_records(data_path, items.size(), limits, &note);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    const auto found = records.find(static_cast<long>(i));
    static const std::vector<Record> none;
    const std::vector<Record>& recs = found == records.end() ? none : found->second;
    Outcome o;
    const Record* cuda = find(recs, "cuda");
    const Record* err = find(recs, "error");
    if (const Record* nodev = find(recs, "nodev")) {
      // Only the grader's own probe decides whether there is a GPU: the grader runs GPU items
      // only where it found one, so a worker that reports none has failed the item.
      o.message = "the worker reported \"" + clip(nodev->payload, 200) +
                  "\" instead of the item's data: only the grader's own probe decides whether "
                  "there is a GPU, and it runs an item that needs one only where it found one";
    } else if (cuda || err) {
      const std::string where =
          it.kind == "check" ? "check " + it.name
                             : launcher_of(exercise) + " on " + std::to_string(it.rows) + " x " +
                                   std::to_string(it.cols) + " (seed " + std::to_string(it.seed) +
                                   ")";
      o.message = where + ": " + clip(cuda ? cuda->payload : err->payload);
    } else if (!find(recs, "done")) {
      o.missing = true;
      o.message = "no result: the worker stopped before it finished \"" + it.line + "\"";
    } else if (it.kind == "transpose" || it.kind == "inplace") {
      o = judge_matrix(exercise, it, recs);
    } else if (it.kind == "check") {
      o = judge_check(exercise, it, recs);
    } else if (it.kind == "swizzle") {
      o = judge_swizzle(recs);
    } else if (it.kind == "speed") {
      o = judge_speed(exercise, it, recs, key, samples, sample_seed);
    } else if (it.kind == "devices") {
      const Record* d = find(recs, "devices");
      o.ok = d != nullptr;
      o.message = d ? clip(d->payload, 200) : "no answer";
    }
    // Every "launches" record of the item, not the first: the worker's process could write a
    // clean one before the watch's own, and the grader must see the launches it hides.
    std::string launches;
    for (const Record& r : recs) {
      if (r.tag == "launches") launches += (launches.empty() ? "" : ";") + r.payload;
    }
    // Past the limit the list ends in a field that is no launch, so the check fails.
    if (launches.size() > 20000) launches = launches.substr(0, 20000) + ";truncated";
    if (!launches.empty()) o.extra += ",\"launches\": " + json_string(launches);
    std::cout << "{\"item\": " << i << ", \"ok\": " << (o.ok ? "true" : "false")
              << ", \"todo\": " << (o.todo ? "true" : "false")
              << ", \"missing\": " << (o.missing ? "true" : "false")
              << ", \"message\": " << json_string(o.message) << o.extra << "}\n";
  }
  if (!note.empty()) std::cout << "{\"note\": " << json_string(note) << "}\n";
  return 0;
}

int shapes(const std::string& which) {
  if (which == "awkward") {
    for (const course::Shape& s : course::awkward_shapes()) {
      std::cout << s.rows << " " << s.cols << "\n";
    }
  } else if (which == "squares") {
    for (std::int64_t n : course::awkward_square_sizes()) std::cout << n << " " << n << "\n";
  } else {
    std::cerr << "judge: unknown shape list " << which << "\n";
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  try {
    if (cmd == "verify") return verify(argc, argv);
    if (cmd == "shapes" && argc > 2) return shapes(argv[2]);
  } catch (const std::exception& e) {
    std::cerr << "judge: " << e.what() << "\n";
    return 3;
  }
  std::cerr << "usage: judge verify --exercise N --plan PLAN --data DATA [--key HEX] | "
               "judge shapes awkward|squares\n";
  return 2;
}
