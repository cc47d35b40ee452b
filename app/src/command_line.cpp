#include "gpulock/app/command_line.h"

namespace gpulock::app {

std::vector<FlagEdit> for_this_machine() {
  return {{"--driver", "auto"},
          {"--cuda-ceiling", "X", FlagEdit::Op::Remove},
          {"--gpu-arch", "X", FlagEdit::Op::Remove}};
}

std::string relock_here(std::string_view lock_command) {
  if (lock_command.empty()) {
    return "your resolve command with `--driver auto` and no `--cuda-ceiling` or `--gpu-arch`, run "
           "here";
  }
  auto edits = for_this_machine();
  // A target's lock was made by `--all-targets` or `--target NAME`, which take no machine flags
  // (each target declares its machine; `--driver` with them is exit 2): re-locking for this
  // machine is the same command without them (it writes pylock.toml).
  edits.push_back({"--all-targets", "", FlagEdit::Op::Remove});
  edits.push_back({"--target", "X", FlagEdit::Op::Remove});
  edits.push_back({"--independent-targets", "", FlagEdit::Op::Remove});
  // A CUDA variant named for the other machine is one of its facts too: here, the newest this
  // driver runs.
  auto words = split_command(lock_command);
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string_view value;
    if (words[i] == "--torch-backend" && i + 1 < words.size()) value = words[i + 1];
    if (words[i].starts_with("--torch-backend=")) value = std::string_view(words[i]).substr(16);
    if (value.starts_with("cu")) {
      edits.push_back({"--torch-backend", "auto"});
      break;
    }
  }
  return "`" + command_with(lock_command, edits) + "`";
}

std::string relock_all_targets(std::string_view lock_command) {
  if (lock_command.empty()) return "`gpulock resolve --all-targets`";
  const std::vector<FlagEdit> edits = {{"--target", "X", FlagEdit::Op::Remove},
                                       {"--all-targets", "", FlagEdit::Op::Set}};
  return "`" + command_with(lock_command, edits) + "`";
}

}  // namespace gpulock::app
