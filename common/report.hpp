/// @file report.hpp
/// @brief One report format for every step, the benchmark and the plots: a terminal table and
/// CSV rows with the same columns plus what identifies the run.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "device_info.hpp"
#include "problem.hpp"

namespace course {

/// One measured kernel (or reference) of a run.
struct ResultRow {
  std::string id;        ///< the kernel's stable id: "read-32x8", "copy-memcpy", "cublas"
  std::string kernel;    ///< "naive, coalesced read" or "copy: cudaMemcpy"
  std::string block;     ///< threads per block, "32x8"; "-" for references
  std::string tile;      ///< tile shape, "32x32"; "-" where there is none
  double median_ms = 0;  ///< the median of the timed runs
  double min_ms = 0;     ///< the fastest timed run
  double gbps = 0;       ///< bytes_moved / median, in 1e9 bytes per second
  double pct_copy = 0;   ///< 100 x gbps / the copy ceiling of the same run
  double pct_peak = 0;   ///< 100 x gbps / the theoretical peak
  std::string verified;  ///< "yes", "FAILED", "skipped" (--no-verify) or "refused" (shape)
};

/// A whole run of one binary.
struct Report {
  std::string step;  ///< "step01"
  std::string title;  ///< the step's one-line title
  Problem problem;    ///< what was transposed
  DeviceInfo device;  ///< where it ran
  double copy_gbps = 0;  ///< the copy ceiling this run measured
  std::vector<ResultRow> rows;  ///< the references (copies, cuBLAS), then the step's kernels
};

/// @p bytes in GiB with two decimals, for the messages that refuse a size: "1.50 GiB".
std::string gib(double bytes);

/// Fills gbps, pct_copy and pct_peak of @p row from its median time.
void fill_rates(const Report& report, ResultRow* row);

/// The line the table prints under the device line when the matrices are small enough for the
/// L2 to keep much of them between repetitions (bytes moved under twice the L2), so that the
/// times are not the memory's alone; "" otherwise, or when the L2's size is unknown (0).
std::string l2_note(double bytes_moved, std::int64_t l2_bytes);

/// The table the binaries print: a title line, the device line (and l2_note's line where it has
/// one) and one line per row.
void print_table(std::ostream& os, const Report& report);

/// The names of a table's columns where they differ between tables: the text columns after the
/// kernel's (block and tile; step 10 has no block, and its chunks in the tile's place) and the
/// last three numbers' (step 10: GB/s per GPU, % of the all-to-all, % of its bound).
struct Columns {
  std::string block = "block";     ///< the block's column
  std::string tile = "tile";       ///< the tile's column (step 10: its chunks)
  std::string gbps = "GB/s";       ///< GB/s (step 10: per GPU)
  std::string pct_copy = "% copy";  ///< % of the copy (step 10: of the all-to-all)
  std::string pct_peak = "% peak";  ///< % of the peak (step 10: of its bound)
};

/// The rows of the table: a header line, a line of dashes, one line per row (a refused row has
/// dashes for its numbers).
void print_rows(std::ostream& os, const std::vector<ResultRow>& rows, const Columns& names = {});

/// The CSV header: step,id,kernel,block,tile,type,rows,cols,batch,median_ms,min_ms,gbps,pct_copy,
/// pct_peak,verified,device,driver,cuda,date
std::string csv_header();

/// The CSV lines of @p report (no header), fields quoted where they hold a comma or a quote.
std::string csv_rows(const Report& report);

/// Throws UsageError, naming the option and the file, where @p path is given and cannot be
/// appended to. A file that does not exist yet is created to find out, then removed again, so that a run
/// stopped later (no device) leaves nothing behind.
void check_csv(const std::string& path);

/// Appends csv_rows to @p path, writing csv_header first when the file is new or empty.
/// Throws UsageError when the file cannot be written.
void append_csv(const std::string& path, const Report& report);

}  // namespace course
