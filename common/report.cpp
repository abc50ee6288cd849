#include "report.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "errors.hpp"

namespace course {

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1 << 30));
  return buf;
}

void fill_rates(const Report& report, ResultRow* row) {
  row->gbps = row->median_ms > 0 ? report.problem.bytes_moved() / (row->median_ms * 1e-3) / 1e9 : 0;
  row->pct_copy = report.copy_gbps > 0 ? 100.0 * row->gbps / report.copy_gbps : 0;
  row->pct_peak = report.device.peak_gbps > 0 ? 100.0 * row->gbps / report.device.peak_gbps : 0;
}

std::string l2_note(double bytes_moved, std::int64_t l2_bytes) {
  if (l2_bytes <= 0 || bytes_moved >= 2.0 * static_cast<double>(l2_bytes)) return "";
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << "note: " << bytes_moved / 1e6
    << " MB moved is less than twice the " << l2_bytes / (1 << 20)
    << " MiB L2: repetitions can find much of it in the cache, so these times are not the"
       " memory's alone (a larger shape measures memory)";
  return s.str();
}

void print_table(std::ostream& os, const Report& r) {
  os << r.step << " - " << r.title << "\n"
     << r.problem.describe() << ", " << std::fixed << std::setprecision(1)
     << r.problem.bytes_moved() / 1e6 << " MB moved per transpose\n"
     << r.device.name << ", driver " << r.device.driver << ", CUDA " << r.device.cuda << ", "
     << r.device.sms << " SMs, " << r.device.l2_bytes / (1 << 20) << " MiB L2, peak "
     << std::setprecision(0) << r.device.peak_gbps << " GB/s, copy ceiling " << r.copy_gbps
     << " GB/s\n";
  const std::string note = l2_note(r.problem.bytes_moved(), r.device.l2_bytes);
  if (!note.empty()) os << note << "\n";
  os << "\n";
  print_rows(os, r.rows);
}

void print_rows(std::ostream& os, const std::vector<ResultRow>& rows, const Columns& names) {
  // The text columns are as wide as their longest cell (and a gap of two), so a long kernel
  // name pushes the columns right instead of running into them.
  std::size_t kernel_w = std::string("kernel").size(), block_w = names.block.size(),
              tile_w = names.tile.size();
  for (const ResultRow& row : rows) {
    kernel_w = std::max(kernel_w, row.kernel.size());
    block_w = std::max(block_w, row.block.size());
    tile_w = std::max(tile_w, row.tile.size());
  }
  // No block column where it has no name (step 10's table).
  const int kw = static_cast<int>(kernel_w + 2), bw = names.block.empty() ? 0 : static_cast<int>(block_w + 2),
            tw = static_cast<int>(tile_w + 2), gw = std::max(9, static_cast<int>(names.gbps.size()) + 2);
  const int numbers_w = 11 + 10 + gw + 8 + 8;  // median ms, min ms, GB/s, % copy, % peak
  os << std::left << std::setw(kw) << "kernel" << std::setw(bw) << names.block << std::setw(tw)
     << names.tile << std::right << std::setw(11) << "median ms" << std::setw(10) << "min ms"
     << std::setw(gw) << names.gbps << std::setw(8) << names.pct_copy << std::setw(8)
     << names.pct_peak << "  verified\n";
  os << std::string(static_cast<std::size_t>(kw + bw + tw + numbers_w) + 10, '-') << "\n";
  for (const ResultRow& row : rows) {
    os << std::left << std::setw(kw) << row.kernel << std::setw(bw) << (bw ? row.block : "")
       << std::setw(tw) << row.tile << std::right;
    if (row.verified == "refused") {
      os << std::setw(11) << "-" << std::setw(10) << "-" << std::setw(gw) << "-" << std::setw(8)
         << "-" << std::setw(8) << "-";
    } else {
      os << std::setprecision(4) << std::setw(11) << row.median_ms << std::setw(10) << row.min_ms
         << std::setprecision(0) << std::setw(gw) << row.gbps << std::setprecision(1)
         << std::setw(8) << row.pct_copy << std::setw(8) << row.pct_peak;
    }
    os << "  " << row.verified << "\n";
  }
  os.unsetf(std::ios::floatfield);
}

std::string csv_header() {
  return "step,id,kernel,block,tile,type,rows,cols,batch,median_ms,min_ms,gbps,pct_copy,pct_peak,"
         "verified,device,driver,cuda,date";
}

namespace {
std::string quoted(const std::string& field) {
  if (field.find_first_of(",\"\n") == std::string::npos) return field;
  std::string q = "\"";
  for (char c : field) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}
}  // namespace

std::string csv_rows(const Report& r) {
  std::ostringstream s;
  for (const ResultRow& row : r.rows) {
    s << quoted(r.step) << ',' << quoted(row.id) << ',' << quoted(row.kernel) << ','
      << quoted(row.block) << ','
      << quoted(row.tile) << ',' << elem_name(r.problem.type) << ',' << r.problem.rows << ','
      << r.problem.cols << ',' << r.problem.batch << ',' << std::setprecision(6)
      << row.median_ms << ',' << row.min_ms << ',' << std::fixed << std::setprecision(1)
      << row.gbps << ',' << row.pct_copy << ',' << row.pct_peak << ',' << row.verified << ','
      << quoted(r.device.name) << ',' << quoted(r.device.driver) << ',' << r.device.cuda << ','
      << r.device.date << '\n';
    s.unsetf(std::ios::floatfield);
  }
  return s.str();
}

void check_csv(const std::string& path) {
  if (path.empty()) return;
  const bool existed = static_cast<bool>(std::ifstream(path));
  const bool writable = static_cast<bool>(std::ofstream(path, std::ios::app));
  if (writable && !existed) std::remove(path.c_str());
  if (!writable) throw UsageError("--csv: cannot write '" + path + "'");
}

void append_csv(const std::string& path, const Report& report) {
  bool empty = true;
  {
    std::ifstream probe(path);
    empty = !probe || probe.peek() == std::ifstream::traits_type::eof();
  }
  std::ofstream out(path, std::ios::app);
  if (!out) throw UsageError("--csv: cannot write '" + path + "'");
  if (empty) out << csv_header() << '\n';
  out << csv_rows(report);
  if (!out) throw UsageError("--csv: cannot write '" + path + "'");
}

}  // namespace course
