// cuDNN facts (probe/cudnn.h): version encodings, status names against the toolkit's header,
// the sub-library table per version, and the child protocol's escaping.
#include "gpulock/probe/cudnn.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "load_child.h"

using namespace gpulock::probe;

namespace {

std::vector<std::string> names(const std::vector<CudnnSublibrary>& subs) {
  std::vector<std::string> out;
  for (const auto& s : subs)
    out.push_back(s.name);
  return out;
}

const CudnnSublibrary& find(const std::vector<CudnnSublibrary>& subs, const std::string& name) {
  for (const auto& s : subs) {
    if (s.name == name) return s;
  }
  FAIL("no sub-library " << name);
  throw;
}

}  // namespace

TEST_CASE("cuDNN version encodings", "[envprobe][cudnn]") {
  CHECK(CudnnVersion::from_runtime(90100)->to_string() == "9.1.0");
  CHECK(CudnnVersion::from_runtime(91900)->to_string() == "9.19.0");
  CHECK(CudnnVersion::from_runtime(92200)->to_string() == "9.22.0");
  CHECK(CudnnVersion::from_runtime(8902)->to_string() == "8.9.2");
  CHECK(CudnnVersion::from_runtime(8600)->to_string() == "8.6.0");
  CHECK_FALSE(CudnnVersion::from_runtime(0).has_value());
  CHECK(CudnnVersion::from_text("9.1.0.70")->to_string() == "9.1.0");
  CHECK(CudnnVersion::from_text("9.20")->to_string() == "9.20.0");
  CHECK_FALSE(CudnnVersion::from_text("9").has_value());
  CHECK_FALSE(CudnnVersion::from_text("x").has_value());
  const unsigned char v[4] = {0, 19, 9, 0};
  CHECK(CudnnVersion::from_symbol_bytes(v)->to_string() == "9.19.0");
  const unsigned char junk[4] = {0x25, 0x73, 0x2c, 0x20};
  CHECK_FALSE(CudnnVersion::from_symbol_bytes(junk).has_value());
  CHECK(*CudnnVersion::from_text("9.10.2") > *CudnnVersion::from_text("9.9.0"));
}

TEST_CASE("status names match cudnn_graph.h", "[envprobe][cudnn]") {
  std::ifstream in("/usr/local/cuda/include/cudnn_graph.h");
  REQUIRE(in);
  std::regex re(R"(^\s*(CUDNN_STATUS_[A-Z_]+)\s*=\s*(\d+))");
  std::string line;
  int seen = 0;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, re)) continue;
    INFO(line);
    CHECK(cudnn_status_name(std::stoi(m[2])) == m[1].str());
    ++seen;
  }
  CHECK(seen >= 45);
  CHECK(cudnn_status_name(77) == "CUDNN_STATUS_77");
}

TEST_CASE("sub-libraries per cuDNN version", "[envprobe][cudnn]") {
  const std::vector<std::string> none;
  auto v91 = cudnn_sublibraries({9, 1, 0}, none);
  CHECK(names(v91) == std::vector<std::string>{"graph", "engines_precompiled",
                                               "engines_runtime_compiled", "heuristic", "ops",
                                               "cnn", "adv"});
  CHECK(find(v91, "ops").loaded_by == "libcudnn.so.9");
  CHECK(find(v91, "heuristic").loaded_by == "libcudnn_graph.so.9");
  CHECK(find(v91, "ops").soname == "libcudnn_ops.so.9");
  // 9.20 looks for engines_tensor_ir without shipping it; 9.21 ships it; 9.22 adds ext
  // (gpu/data/cudnn_files.txt, shared/data/wheel-contents.md §1.2).
  auto v920 = cudnn_sublibraries({9, 20, 0}, none);
  CHECK_FALSE(find(v920, "engines_tensor_ir").required);
  CHECK(find(v920, "engines_tensor_ir").shipped_since == "9.21");
  CHECK(find(v920, "engines_tensor_ir").source.find("188892") != std::string::npos);
  CHECK(find(v920, "ops").shipped_since == "9.0");
  CHECK(names(cudnn_sublibraries({9, 19, 0}, none)) == names(v91));
  CHECK(find(cudnn_sublibraries({9, 21, 0}, none), "engines_tensor_ir").required);
  CHECK(cudnn_sublibraries({9, 21, 0}, none).size() == 8);
  auto v922 = cudnn_sublibraries({9, 22, 0}, none);
  CHECK(find(v922, "ext").required);
  CHECK(v922.size() == 9);
  CHECK(cudnn_sublibraries({9, 25, 1}, none).size() == 9);
  // The wheel's RECORD adds what the table lacks, and makes a looked-up library required.
  std::vector<std::string> record = {"libcudnn.so.9",
                                     "libcudnn_graph.so.9",
                                     "libcudnn_engines_tensor_ir.so.9",
                                     "libcudnn_engines_new.so.9",
                                     "libcudnn_magic.so.9",
                                     "libcudnn_ops.so.8"};
  auto with_record = cudnn_sublibraries({9, 20, 0}, record);
  CHECK(find(with_record, "engines_tensor_ir").required);
  CHECK(find(with_record, "engines_new").loaded_by == "libcudnn_graph.so.9");
  CHECK(find(with_record, "magic").loaded_by == "libcudnn.so.9");
  CHECK(find(with_record, "magic").source == "the wheel's RECORD");
  // Files in the directory itself are listed too, but a file the version does not ship stays
  // not required when only the directory has it (a copy no RECORD lists).
  const std::vector<std::string> dir = {"libcudnn_engines_tensor_ir.so.9", "libcudnn_extra.so.9"};
  auto with_dir = cudnn_sublibraries({9, 20, 0}, none, dir);
  CHECK_FALSE(find(with_dir, "engines_tensor_ir").required);
  CHECK(find(with_dir, "extra").source == "the directory");
  // cuDNN 8: six libraries loaded by libcudnn.so.8; an unknown major: only the RECORD.
  auto v8 = cudnn_sublibraries({8, 9, 2}, none);
  CHECK(v8.size() == 6);
  CHECK(find(v8, "cnn_infer").soname == "libcudnn_cnn_infer.so.8");
  CHECK(cudnn_sublibraries({10, 0, 0}, none).empty());
  CHECK(cudnn_version_check_functions(9).size() == 4);
  CHECK(cudnn_version_check_functions(8).front() == "cudnnOpsInferVersionCheck");
  CHECK(cudnn_version_symbols("ops") ==
        std::vector<std::string>{"cudnn_ops_version", "cudnn_ops_infer_version"});
}

TEST_CASE("the cuDNN file table: the compiled-in rows, and rows that do not parse",
          "[envprobe][cudnn]") {
  auto table = CudnnFileTable::parse(cudnn_files_text());
  REQUIRE(table);
  CHECK(table->rows.size() == cudnn_file_table().rows.size());
  CHECK(table->rows.size() >= 15);
  for (const auto& row : table->rows) {
    INFO(row.name);
    CHECK(!row.sources.empty());  // every row cites its sources, each defined by a source row
  }
  const auto& tir = *std::find_if(table->rows.begin(), table->rows.end(),
                                  [](const auto& r) { return r.name == "engines_tensor_ir"; });
  CHECK(tir.loaded_by == "cudnn_graph");
  CHECK(tir.ships_text == ">=9.21");
  CHECK(tir.looked_up_text == "==9.20.*");

  auto bad = [](const std::string& text) {
    auto t = CudnnFileTable::parse(text);
    REQUIRE_FALSE(t);
    return t.error().message;
  };
  CHECK(bad("sublibrary 9 ops cudnn >=9.0 - K\n") ==
        "cudnn_files.txt line 1: source K has no `source` row");
  CHECK(bad("source K x\nsublibrary 9 ops shim >=9.0 - K\n").find("line 2: LOADED_BY") !=
        std::string::npos);
  CHECK(bad("sublibrary 9 ops cudnn >=9..0 - K\nsource K x\n").find("line 1: SHIPS") !=
        std::string::npos);
  CHECK(bad("sublibrary 9 ops cudnn\n").find("line 1: expected") != std::string::npos);
}

TEST_CASE("child protocol fields survive tabs, newlines and backslashes", "[envprobe][cudnn]") {
  using namespace gpulock::probe::detail;
  const std::string tricky = "a\tb\nc\\d\\t";
  std::string line = "tag\t" + escape_field(tricky) + "\t" + escape_field("");
  auto fields = split_fields(line);
  REQUIRE(fields.size() == 3);
  CHECK(fields[1] == tricky);
  CHECK(fields[2].empty());
  CHECK(is_reported_mapping("/x/libcudnn_ops.so.9"));
  CHECK(is_reported_mapping("/x/libcublasLt.so.12"));
  CHECK(is_reported_mapping("/x/libnccl.so.2"));
  CHECK(is_reported_mapping("/x/libcudart.so.12.4.127"));
  CHECK_FALSE(is_reported_mapping("/x/libc.so.6"));
  CHECK_FALSE(is_reported_mapping("/x/libcudnn_notes.txt"));
}
