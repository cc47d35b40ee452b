#include "gpulock/core/metadata.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

using namespace gpulock::core;

namespace {

CoreMetadata parse_ok(std::string_view text) {
  auto m = CoreMetadata::parse(text);
  INFO((m ? std::string() : m.error().message));
  REQUIRE(m.has_value());
  return *m;
}

Error parse_error(std::string_view text) {
  auto m = CoreMetadata::parse(text);
  REQUIRE_FALSE(m.has_value());
  CHECK(m.error().code == ErrorCode::InvalidMetadata);
  CHECK(m.error().message.size() < 600);
  return m.error();
}

// The shape of torch 2.7.1's METADATA (PyPI, manylinux_2_28_x86_64): many Requires-Dist with
// markers, extras, and a long description after the blank line.
const char* const kTorchMetadata =
    "Metadata-Version: 2.1\r\n"
    "Name: torch\r\n"
    "Version: 2.7.1\r\n"
    "Summary: Tensors and Dynamic neural networks in Python with strong GPU acceleration\r\n"
    "Home-page: https://pytorch.org/\r\n"
    "Download-URL: https://github.com/pytorch/pytorch/tags\r\n"
    "Author: PyTorch Team\r\n"
    "Author-email: packages@pytorch.org\r\n"
    "License: BSD-3-Clause\r\n"
    "Keywords: pytorch,machine learning\r\n"
    "Classifier: Development Status :: 5 - Production/Stable\r\n"
    "Classifier: Programming Language :: Python :: 3.13\r\n"
    "Requires-Python: >=3.9.0\r\n"
    "Description-Content-Type: text/markdown\r\n"
    "License-File: LICENSE\r\n"
    "License-File: NOTICE\r\n"
    "Requires-Dist: filelock\r\n"
    "Requires-Dist: typing-extensions>=4.10.0\r\n"
    "Requires-Dist: setuptools; python_version >= \"3.12\"\r\n"
    "Requires-Dist: sympy>=1.13.3\r\n"
    "Requires-Dist: networkx\r\n"
    "Requires-Dist: jinja2\r\n"
    "Requires-Dist: fsspec\r\n"
    "Requires-Dist: nvidia-cuda-nvrtc-cu12==12.6.77; platform_system == \"Linux\" and "
    "platform_machine == \"x86_64\"\r\n"
    "Requires-Dist: nvidia-cuda-runtime-cu12==12.6.77; platform_system == \"Linux\" and "
    "platform_machine == \"x86_64\"\r\n"
    "Requires-Dist: nvidia-cuda-cupti-cu12==12.6.80; platform_system == \"Linux\" and "
    "platform_machine == \"x86_64\"\r\n"
    "Requires-Dist: nvidia-cudnn-cu12==9.5.1.17; platform_system == \"Linux\" and "
    "platform_machine == \"x86_64\"\r\n"
    "Requires-Dist: nvidia-cublas-cu12==12.6.4.1; platform_system == \"Linux\" and "
    "platform_machine == \"x86_64\"\r\n"
    "Requires-Dist: nvidia-cufft-cu12==11.3.0.4; platform_system == \"Linux\" and "
    "platform_machine == \"x86_64\"\r\n"
    "Requires-Dist: nvidia-curand-cu12==10.3.7.77; platform_system == \"Linux\" and "
    "platform_machine == \"x86_64\"\r\n"
    "Requires-Dist: nvidia-cusolver-cu12==11.7.1.2; platform_system == \"Linux\" and "
    "platform_machine == \"x86_64\"\r\n"
    "Requires-Dist: nvidia-cusparse-cu12==12.5.4.2; platform_system == \"Linux\" and "
    "platform_machine == \"x86_64\"\r\n"
    "Requires-Dist: nvidia-cusparselt-cu12==0.6.3; platform_system == \"Linux\" and "
    "platform_machine == \"x86_64\"\r\n"
    "Requires-Dist: nvidia-nccl-cu12==2.26.2; platform_system == \"Linux\" and "
    "platform_machine == \"x86_64\"\r\n"
    "Requires-Dist: nvidia-nvtx-cu12==12.6.77; platform_system == \"Linux\" and "
    "platform_machine == \"x86_64\"\r\n"
    "Requires-Dist: nvidia-nvjitlink-cu12==12.6.85; platform_system == \"Linux\" and "
    "platform_machine == \"x86_64\"\r\n"
    "Requires-Dist: nvidia-cufile-cu12==1.11.1.6; platform_system == \"Linux\" and "
    "platform_machine == \"x86_64\"\r\n"
    "Requires-Dist: triton==3.3.1; platform_system == \"Linux\" and platform_machine == "
    "\"x86_64\"\r\n"
    "Provides-Extra: opt-einsum\r\n"
    "Requires-Dist: opt-einsum>=3.3; extra == \"opt-einsum\"\r\n"
    "Provides-Extra: optree\r\n"
    "Requires-Dist: optree>=0.13.0; extra == \"optree\"\r\n"
    "\r\n"
    "![PyTorch Logo](https://github.com/pytorch/pytorch/raw/main/docs/source/_static/img/"
    "pytorch-logo-dark.png)\r\n"
    "\r\n"
    "Requires-Dist: not-a-dependency\r\n"
    "Name: not-the-name\r\n";

}  // namespace

TEST_CASE("a torch METADATA: Requires-Dist with markers, extras, body ignored",
          "[core][metadata]") {
  const auto m = parse_ok(kTorchMetadata);
  CHECK(m.metadata_version == "2.1");
  CHECK(m.name == "torch");
  CHECK(m.version.to_string() == "2.7.1");
  REQUIRE(m.requires_python.has_value());
  CHECK(m.requires_python->contains(*Version::parse("3.12")));
  CHECK_FALSE(m.requires_python->contains(*Version::parse("3.8")));
  REQUIRE(m.requires_dist.size() == 24);
  CHECK(m.requires_dist[0].name == "filelock");
  CHECK(m.requires_dist[0].marker.empty());
  CHECK(m.requires_dist[2].name == "setuptools");
  CHECK_FALSE(m.requires_dist[2].marker.empty());
  CHECK(m.requires_dist[7].name == "nvidia-cuda-nvrtc-cu12");
  CHECK(m.requires_dist[7].specifier.to_string() == "==12.6.77");
  CHECK_FALSE(m.requires_dist[7].marker.empty());
  CHECK(m.requires_dist[21].name == "triton");
  CHECK(m.requires_dist[22].name == "opt-einsum");
  CHECK(m.requires_dist[22].marker.mentions_extra());
  CHECK(m.requires_dist[23].name == "optree");
  CHECK(m.provides_extra == std::vector<std::string>{"opt-einsum", "optree"});
  CHECK(m.warnings.empty());
  for (const auto& r : m.requires_dist)
    CHECK(r.name != "not-a-dependency");
}

TEST_CASE("continuation lines are unfolded and other fields may span lines", "[core][metadata]") {
  const auto m = parse_ok(
      "Metadata-Version: 2.1\n"
      "Name: foo\n"
      "License: Copyright (c) 2024\n"
      "        |\n"
      "        | Permission is hereby granted: free of charge\n"
      "        |Requires-Dist: inside-the-license\n"
      "Requires-Dist: bar\n"
      "  >=1.0\n"
      "   ; python_version >= \"3.8\"\n"
      "Version:\n"
      "\t1.0\n"
      "Description: long\n"
      "       text\n");
  CHECK(m.version.to_string() == "1.0");
  REQUIRE(m.requires_dist.size() == 1);
  CHECK(m.requires_dist[0].name == "bar");
  CHECK(m.requires_dist[0].specifier.to_string() == ">=1.0");
  CHECK_FALSE(m.requires_dist[0].marker.empty());
}

TEST_CASE("repeated fields keep file order and field names are case-insensitive",
          "[core][metadata]") {
  const auto m = parse_ok(
      "metadata-version: 2.3\n"
      "NAME: Foo.Bar\n"
      "version: 2.0\n"
      "Provides-Extra: cuda\n"
      "requires-dist: a\n"
      "Requires-Dist: b[x]>=1; extra == \"cuda\"\n"
      "REQUIRES-DIST: c\n"
      "Provides-Extra: Docs_Extra\n"
      "Provides-Extra: docs-extra\n"
      "Provides-Extra: -bad-\n");
  CHECK(m.name == "Foo.Bar");  // as written
  REQUIRE(m.requires_dist.size() == 3);
  CHECK(m.requires_dist[0].name == "a");
  CHECK(m.requires_dist[1].name == "b");
  CHECK(m.requires_dist[1].extras == std::vector<std::string>{"x"});
  CHECK(m.requires_dist[2].name == "c");
  // Normalized (PEP 685), deduplicated, the invalid one ignored with a warning naming its line.
  CHECK(m.provides_extra == std::vector<std::string>{"cuda", "docs-extra"});
  REQUIRE(m.warnings.size() == 1);
  CHECK(m.warnings[0].find("line 10") != std::string::npos);
  CHECK_FALSE(m.requires_python.has_value());
}

TEST_CASE("Metadata-Version: 1.0 to 2.6 accepted, newer minor warns, newer major fails",
          "[core][metadata]") {
  for (const char* v : {"1.0", "1.1", "1.2", "2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6"}) {
    INFO(v);
    const auto m = parse_ok(std::string("Metadata-Version: ") + v + "\nName: a\nVersion: 1\n");
    CHECK(m.metadata_version == v);
    CHECK(m.warnings.empty());
  }
  const auto newer = parse_ok("Name: a\nVersion: 1\nMetadata-Version: 2.7\n");
  REQUIRE(newer.warnings.size() == 1);
  CHECK(newer.warnings[0].find("2.7") != std::string::npos);
  CHECK(newer.warnings[0].find("line 3") != std::string::npos);

  const auto major = parse_error("Name: a\nVersion: 1\nMetadata-Version: 3.0\n");
  CHECK(major.line == 3);
  CHECK(major.column == 19);
  CHECK(major.message.find("3.0") != std::string::npos);
  CHECK(parse_error("Metadata-Version: 10.1\nName: a\nVersion: 1\n").line == 1);
  CHECK(parse_error("Metadata-Version: 0.9\nName: a\nVersion: 1\n").line == 1);

  const auto junk = parse_error("Name: a\nMetadata-Version: two\nVersion: 1\n");
  CHECK(junk.line == 2);
  CHECK(junk.column == 19);
  CHECK(parse_error("Metadata-Version: 2\nName: a\nVersion: 1\n").line == 1);
  CHECK(parse_error("Metadata-Version: 2.1.0\nName: a\nVersion: 1\n").line == 1);
  CHECK(parse_error("Metadata-Version: 99999999999.1\nName: a\nVersion: 1\n").line == 1);
}

TEST_CASE("missing required fields are errors", "[core][metadata]") {
  CHECK(parse_error("Name: a\nVersion: 1\n").message.find("Metadata-Version") != std::string::npos);
  CHECK(parse_error("Metadata-Version: 2.1\nVersion: 1\n").message.find("Name") !=
        std::string::npos);
  CHECK(parse_error("Metadata-Version: 2.1\nName: a\n").message.find("Version") !=
        std::string::npos);
  // Fields after the blank line are the description, not headers.
  CHECK(parse_error("Metadata-Version: 2.1\nName: a\n\nVersion: 1\n").message.find("Version") !=
        std::string::npos);
}

TEST_CASE("more than kMaxRequiresDist Requires-Dist fields are refused, naming the count",
          "[core][metadata]") {
  std::string text = "Metadata-Version: 2.1\nName: flood\nVersion: 1\n";
  for (std::size_t i = 0; i < kMaxRequiresDist; ++i)
    text += "Requires-Dist: dep-" + std::to_string(i) + "\n";
  CHECK(parse_ok(text).requires_dist.size() == kMaxRequiresDist);
  for (std::size_t i = 0; i < 5; ++i)
    text += "Requires-Dist: more-" + std::to_string(i) + "\n";
  const auto e = parse_error(text);
  CHECK(e.message == "10005 Requires-Dist fields, over the limit of 10000 a distribution may have");
  CHECK(e.line == 3 + kMaxRequiresDist + 1);  // the first one over
}

TEST_CASE("an invalid Requires-Dist is an error at its line, keeping the nested message",
          "[core][metadata]") {
  const std::string bad_req = "torch >=";
  const auto nested = Requirement::parse(bad_req);
  REQUIRE_FALSE(nested.has_value());
  const auto e = parse_error(
      "Metadata-Version: 2.1\n"
      "Name: a\n"
      "Version: 1\n"
      "Requires-Dist: ok\n"
      "Requires-Dist: " +
      bad_req +
      "\n"
      "Requires-Dist: also-ok\n");
  CHECK(e.line == 5);
  CHECK(e.message.find("Requires-Dist") != std::string::npos);
  CHECK(e.message.find(nested.error().message) != std::string::npos);
  if (nested.error().column != 0) CHECK(e.column == 15 + nested.error().column);

  // The same for Version and Requires-Python.
  const auto bad_version = Version::parse("1.0.x");
  REQUIRE_FALSE(bad_version.has_value());
  const auto ev = parse_error("Metadata-Version: 2.1\nName: a\nVersion: 1.0.x\n");
  CHECK(ev.line == 3);
  CHECK(ev.message.find(bad_version.error().message) != std::string::npos);
  const auto ep =
      parse_error("Metadata-Version: 2.1\nName: a\nVersion: 1\nRequires-Python: >=3.x\n");
  CHECK(ep.line == 4);
  CHECK(ep.message.find("Requires-Python") != std::string::npos);

  const auto en = parse_error("Metadata-Version: 2.1\nName: -bad\nVersion: 1\n");
  CHECK(en.line == 2);
  CHECK(en.column == 7);
}

TEST_CASE("a repeated single-use field is an error", "[core][metadata]") {
  const auto e = parse_error("Metadata-Version: 2.1\nName: a\nVersion: 1\nName: b\n");
  CHECK(e.line == 4);
  CHECK(e.message.find("line 2") != std::string::npos);
}

TEST_CASE("a line that is not a header ends the headers, as Python's email parser does",
          "[core][metadata]") {
  const auto m = parse_ok(
      "Metadata-Version: 2.1\nName: a\nVersion: 1\nRequires-Dist: x\nthis is not a header\n"
      "Requires-Dist: y\n");
  REQUIRE(m.requires_dist.size() == 1);
  REQUIRE(m.warnings.size() == 1);
  CHECK(m.warnings[0].find("line 5") != std::string::npos);
  // A continuation line before any field is ignored with a warning.
  const auto lead = parse_ok("  stray\nMetadata-Version: 2.1\nName: a\nVersion: 1\n");
  CHECK(lead.warnings.size() == 1);
  // A UTF-8 byte-order mark is skipped.
  CHECK(parse_ok("\xEF\xBB\xBFMetadata-Version: 2.1\nName: a\nVersion: 1\n").name == "a");
}

TEST_CASE("hostile METADATA never crashes", "[core][metadata]") {
  parse_error("");
  parse_error("\n");
  parse_error("\r\n\r\n");
  parse_error(std::string(1000, '\0'));
  parse_error(std::string("Metadata-Version: 2.1\0\nName: a\nVersion: 1\n", 42));
  parse_error("Metadata-Version: 2.1\nName: \xff\xfe\nVersion: 1\n");
  parse_error(std::string(10'000'000, 'x'));
  parse_error(std::string(10'000'000, '\n'));
  parse_error(std::string(10'000'000, ':'));
  parse_error("Metadata-Version: 2.1\nName: a\nVersion: 1\nRequires-Dist: " +
              std::string(1'000'000, '(') + "\n");

  // Invalid UTF-8 and NUL bytes in fields we do not read are fine.
  const std::string base = "Metadata-Version: 2.1\nName: a\nVersion: 1\n";
  CHECK(parse_ok(base + "Summary: \xc3\x28 \xff\n").name == "a");
  CHECK(parse_ok(base + std::string("Summary: a\0b\n", 13)).name == "a");

  // Big inputs stay linear: a 10 MB description, a 10 MB folded header, 10k Requires-Dist (the
  // limit: more are refused, counted but not kept), 100k Provides-Extra.
  CHECK(parse_ok(base + "\n" + std::string(10'000'000, 'd')).name == "a");
  std::string folded = base + "License: x\n";
  for (int i = 0; i < 1'000'000; ++i)
    folded += "        |\n";
  CHECK(parse_ok(folded).name == "a");
  std::string many = base;
  for (std::size_t i = 0; i < kMaxRequiresDist; ++i)
    many += "Requires-Dist: dep" + std::to_string(i) + ">=1.0\n";
  for (int i = 0; i < 100'000; ++i)
    many += "Provides-Extra: e" + std::to_string(i) + "\n";
  const auto m = parse_ok(many);
  CHECK(m.requires_dist.size() == kMaxRequiresDist);
  CHECK(m.provides_extra.size() == 100'000);
  for (int i = 0; i < 100'000; ++i)
    many += "Requires-Dist: more" + std::to_string(i) + ">=1.0\n";
  CHECK(parse_error(many).message.starts_with("110000 Requires-Dist fields"));
}

TEST_CASE("scan_metadata_headers splits fields, folded lines and the end of the headers",
          "[core][metadata]") {
  using Kind = MetadataHeaderLine::Kind;
  struct Seen {
    Kind kind;
    std::size_t line;
    std::string name, value;
    std::size_t column0;
  };
  auto scan = [](std::string_view text, std::size_t stop_after = 100) {
    std::vector<Seen> seen;
    scan_metadata_headers(text, [&](const MetadataHeaderLine& h) {
      seen.push_back({h.kind, h.line, std::string(h.name), std::string(h.value), h.column0});
      return seen.size() < stop_after;
    });
    return seen;
  };
  auto seen = scan("\xEF\xBB\xBFName:  x\r\n\tmore\nVersion:1\nnot a header\nSummary: after\n");
  REQUIRE(seen.size() == 4);
  CHECK(seen[0].kind == Kind::Field);
  CHECK(seen[0].name == "Name");
  CHECK(seen[0].value == "x");
  CHECK(seen[0].column0 == 7);
  CHECK(seen[1].kind == Kind::Continuation);
  CHECK(seen[1].value == "\tmore");
  CHECK(seen[2].name == "Version");
  CHECK(seen[2].value == "1");
  CHECK(seen[3].kind == Kind::NotHeader);
  CHECK(seen[3].line == 4);
  CHECK(seen[3].value == "not a header");

  CHECK(scan("Name: x\n\nVersion: 1\n").size() == 1);  // the blank line ends the headers
  CHECK(scan("Name: x\r\n\r\nVersion: 1\n").size() == 1);
  CHECK(scan("Name: x\nVersion: 1\n", 1).size() == 1);  // the visitor stops the scan
  CHECK(scan("").empty());
}
