// app/command_line.h: complete commands for hints (issue 16 item 8).
#include "gpulock/app/command_line.h"

#include <catch2/catch.hpp>

using gpulock::app::command_with;
using gpulock::app::FlagEdit;
using gpulock::app::relock_here;
using gpulock::app::shell_quote;
using gpulock::app::split_command;

TEST_CASE("shell_quote leaves plain words alone and single-quotes the rest",
          "[app][command_line]") {
  CHECK(shell_quote("torch==2.5.1+cu124") == "torch==2.5.1+cu124");
  CHECK(shell_quote("nvidia-cudnn-cu12>=9.11") == "'nvidia-cudnn-cu12>=9.11'");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("a b") == "'a b'");
}

TEST_CASE("split_command reads back what shell_quote wrote", "[app][command_line]") {
  std::vector<std::string> words{"gpulock", "resolve", "a b", "it's", "", "x>=1", "--flag=v"};
  std::string line;
  for (const auto& w : words)
    line += (line.empty() ? "" : " ") + shell_quote(w);
  CHECK(split_command(line) == words);
  CHECK(split_command("  gpulock   resolve  ") == std::vector<std::string>{"gpulock", "resolve"});
}

TEST_CASE("command_with sets, adds and removes flags", "[app][command_line]") {
  const std::string line =
      "gpulock resolve torch --torch-backend cu130 --driver=595.45.04 -o pylock.toml";
  std::vector<FlagEdit> set{{"--torch-backend", "cu126"}};
  CHECK(command_with(line, set) ==
        "gpulock resolve torch --driver=595.45.04 -o pylock.toml --torch-backend cu126");
  std::vector<FlagEdit> set_eq{{"--driver", "none"}};
  CHECK(command_with(line, set_eq) ==
        "gpulock resolve torch --torch-backend cu130 -o pylock.toml --driver none");
  std::vector<FlagEdit> add{{"--index", "other=http://h/simple/", FlagEdit::Op::Add},
                            {"--index-for", "setuptools=other", FlagEdit::Op::Add}};
  CHECK(command_with("gpulock resolve x --index a=http://a/", add) ==
        "gpulock resolve x --index a=http://a/ --index other=http://h/simple/ --index-for "
        "setuptools=other");
  std::vector<FlagEdit> remove{{"--gpu-arch", "X", FlagEdit::Op::Remove}};
  CHECK(command_with("gpulock resolve x --gpu-arch sm_61 -o -", remove) ==
        "gpulock resolve x -o -");
  // Values that need quoting stay quoted.
  CHECK(command_with("gpulock resolve 'x>=1'", set) ==
        "gpulock resolve 'x>=1' --torch-backend cu126");
  // Without a command line: the edits alone.
  CHECK(command_with("", set) == "--torch-backend cu126");
}

TEST_CASE("relock_here makes a lock's command one for this machine", "[app][command_line]") {
  CHECK(
      relock_here("gpulock resolve torch --torch-backend cu124 --driver 550.54.14 --gpu-arch sm_90 "
                  "--cuda-ceiling 12.4 -o pylock.toml") ==
      "`gpulock resolve torch -o pylock.toml --driver auto --torch-backend auto`");
  CHECK(relock_here("gpulock resolve torch --torch-backend cpu") ==
        "`gpulock resolve torch --torch-backend cpu --driver auto`");
  CHECK(relock_here("").find("--driver auto") != std::string::npos);
  // A target's lock: its command takes no machine flags (--driver with --all-targets or
  // --target is exit 2), so re-locking here drops the target flags (was: kept them).
  CHECK(relock_here("gpulock resolve -r requirements.txt --all-targets --independent-targets") ==
        "`gpulock resolve -r requirements.txt --driver auto`");
  CHECK(relock_here("gpulock resolve -r requirements.txt --target rtx4090 --target=p100") ==
        "`gpulock resolve -r requirements.txt --driver auto`");
}
