#pragma once
// The forked child of the load probe: it loads libraries and calls into cuDNN, writing one
// line per event to a pipe as it goes, so that the parent knows how far it got when it crashes
// or hangs. Lines are `tag \t field \t field ...\n`; fields escape '\\', '\t' and '\n'.
//
//   step   KEY  TEXT            before anything that may crash or hang ("preload:0", ...)
//   preload INDEX ok|error MESSAGE
//   call   FUNCTION ok|absent VALUE
//   check  FUNCTION ok|absent STATUS
//   create STATUS MESSAGE       cudnnCreate's status and cudnnGetLastErrorString
//   kstep  NAME CODE TEXT       a kernel-check step (cuDNN status or CUDA error code, name)
//   kresult ok|wrong VALUE
//   map    DEV INODE PATH       a cuDNN/CUDA file in /proc/self/maps
//   lib    INDEX ok|error MESSAGE
//   libver INDEX VERSION SYMBOL
//   done
//
// Every step has a key; the parent re-runs the child with the keys of steps that crashed or
// hung in `skip`.

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace gpulock::probe::detail {

struct ChildSublibrary {
  std::string path;                          ///< absolute; empty: not found, not loaded
  std::vector<std::string> version_symbols;  ///< data symbols holding its version
};

struct ChildPlan {
  std::vector<std::string> preloads;  ///< absolute paths, in torch's order
  int cudnn_index = -1;               ///< which preload is libcudnn.so.N
  std::vector<std::string> version_functions;
  std::vector<std::string> check_functions;
  bool run_kernels = false;
  std::string cudart;  ///< libcudart for the kernel check's buffers
  std::vector<ChildSublibrary> sublibraries;
  std::set<std::string> skip;  ///< step keys not to run
};

/// The child's body: runs the plan, reporting on `fd`. Only returns when done.
void run_child(const ChildPlan& plan, int fd);

/// Escapes a protocol field.
[[nodiscard]] std::string escape_field(std::string_view text);
/// Splits a protocol line into unescaped fields.
[[nodiscard]] std::vector<std::string> split_fields(std::string_view line);

/// True for the files the probe reports from /proc/self/maps: libcudnn*, libcudart*,
/// libcublas* (also libcublasLt), libnccl*.
[[nodiscard]] bool is_reported_mapping(std::string_view path);

}  // namespace gpulock::probe::detail
