// bankmap: the shared-memory bank model on the CPU, no GPU needed.
//
// Prints, for the plain, padded and swizzled layouts of an n x n tile of 4-byte words, the bank
// of every element and how many ways a warp conflicts when it reads a tile row and a tile column
// (the two shared-memory accesses of a tiled transpose). Everything is computed, nothing measured.
//
//   make bankmap && ./bankmap                       all three layouts of a 32 x 32 tile
//   ./bankmap --layout padded --tile 64             one layout, one tile size
//   ./bankmap --csv > banks.csv                     layout,tile,row,col,word,bank for all of them
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bank_model.hpp"
#include "errors.hpp"

namespace {

const std::vector<std::string> kLayouts = {"plain", "padded", "swizzled"};
const std::vector<int> kTiles = {16, 32, 64};

struct Args {
  std::vector<std::string> layouts = kLayouts;
  std::vector<int> tiles = {32};
  bool tile_given = false;
  bool csv = false;
  bool help = false;
};

const char* kUsage =
    "usage: bankmap [--layout plain|padded|swizzled|all] [--tile 16|32|64] [--csv] [--help]\n"
    "\n"
    "The shared-memory bank of every element of an n x n tile of 4-byte words, in three layouts:\n"
    "  plain     float tile[n][n]        word row*n + col\n"
    "  padded    float tile[n][n + 1]    word row*(n+1) + col\n"
    "  swizzled  float tile[n][n]        word row*n + (col ^ (row % 32))\n"
    "and the conflict degree of a warp reading one tile row and one tile column (32 threads, or\n"
    "n of them when n < 32): the most different words it asks of any one bank (1 = conflict-free,\n"
    "32 = serialized).\n"
    "\n"
    "  --layout L   the layout to show (default all)\n"
    "  --tile N     the tile size, 16, 32 or 64 (default 32)\n"
    "  --csv        print layout,tile,row,col,word,bank for every element instead; all layouts\n"
    "               and tiles 16, 32, 64 unless --layout or --tile narrows it\n"
    "  --help       this text\n"
    "\n"
    "Exit codes: 0 success, 2 a bad argument.\n";

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string opt = argv[i], value;
    const std::size_t eq = opt.find('=');
    const bool inline_value = opt.rfind("--", 0) == 0 && eq != std::string::npos;
    if (inline_value) {
      value = opt.substr(eq + 1);
      opt = opt.substr(0, eq);
    }
    auto take_value = [&]() {
      if (inline_value) return value;
      if (i + 1 >= argc) throw course::UsageError(opt + ": needs a value (see --help)");
      return std::string(argv[++i]);
    };
    auto no_value = [&]() {
      if (inline_value) throw course::UsageError(opt + ": takes no value");
    };
    if (opt == "--help" || opt == "-h") {
      no_value();
      a.help = true;
    } else if (opt == "--csv") {
      no_value();
      a.csv = true;
    } else if (opt == "--layout") {
      const std::string v = take_value();
      if (v == "all") {
        a.layouts = kLayouts;
      } else if (v == "plain" || v == "padded" || v == "swizzled") {
        a.layouts = {v};
      } else {
        throw course::UsageError("--layout: '" + v + "' is not one of plain, padded, swizzled, all");
      }
    } else if (opt == "--tile") {
      const std::string v = take_value();
      if (v != "16" && v != "32" && v != "64") {
        throw course::UsageError("--tile: '" + v + "' is not one of 16, 32, 64");
      }
      a.tiles = {std::stoi(v)};
      a.tile_given = true;
    } else {
      throw course::UsageError(opt + ": unknown option (see --help)");
    }
  }
  if (a.csv && !a.tile_given) a.tiles = kTiles;
  return a;
}

course::TileLayout layout_named(const std::string& name, int n) {
  if (name == "plain") return course::plain_layout(n);
  if (name == "padded") return course::padded_layout(n);
  return course::swizzled_layout(n);
}

// Words of shared memory the layout occupies: n rows of n (plain, swizzled) or n + 1 (padded).
std::int64_t words_of(const std::string& name, int n) {
  return static_cast<std::int64_t>(n) * (name == "padded" ? n + 1 : n);
}

// True when the bank of (row, col) only depends on (row % 32, col % 32), so that the first 32 x 32
// elements that bank_map() shows stand for the whole tile.
bool repeats_every_32(const course::TileLayout& layout, int n) {
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c)
      if (course::bank_of(layout(r, c)) != course::bank_of(layout(r % 32, c % 32))) return false;
  return true;
}

void print_csv(const Args& a) {
  std::cout << "layout,tile,row,col,word,bank\n";
  for (const std::string& name : a.layouts) {
    for (int n : a.tiles) {
      const course::TileLayout layout = layout_named(name, n);
      for (int r = 0; r < n; ++r) {
        for (int c = 0; c < n; ++c) {
          const std::int64_t w = layout(r, c);
          std::cout << name << ',' << n << ',' << r << ',' << c << ',' << w << ','
                    << course::bank_of(w) << '\n';
        }
      }
    }
  }
}

void print_maps(const Args& a) {
  std::ostringstream summary;
  summary << "layout    tile  shared memory           warp reads a row  warp reads a column\n";
  for (int n : a.tiles) {
    for (const std::string& name : a.layouts) {
      const course::TileLayout layout = layout_named(name, n);
      std::cout << course::bank_map(layout, n, name);
      if (n > 32) {
        std::cout << "(rows and columns past 31 "
                  << (repeats_every_32(layout, n) ? "repeat these banks" : "are not shown")
                  << "; --csv lists every element)\n";
      }
      std::cout << "\n";
      const std::int64_t words = words_of(name, n), base = static_cast<std::int64_t>(n) * n;
      std::ostringstream mem;
      mem << words * 4 << " bytes";
      if (words != base) {
        mem << " (+" << std::fixed << std::setprecision(1) << 100.0 * (words - base) / base
            << "%)";
      }
      summary << std::left << std::setw(10) << name << std::setw(6) << n << std::setw(24)
              << mem.str() << std::setw(18)
              << (std::to_string(course::worst_row_degree(layout, n)) + "-way")
              << course::worst_column_degree(layout, n) << "-way\n";
    }
  }
  std::cout << "Summary (4-byte words, 32 banks; the worst row and the worst column of the tile):\n"
            << summary.str();
}

}  // namespace

int main(int argc, char** argv) {
  // A bad argument: one line and exit 2, as every binary of the course.
  return course::exit_code_of("bankmap", [&] {
    const Args a = parse(argc, argv);
    if (a.help) {
      std::cout << kUsage;
    } else if (a.csv) {
      print_csv(a);
    } else {
      print_maps(a);
    }
    return 0;
  });
}
