#pragma once
/// @file
/// The GPU stacks table (issue 23): per package, how gpulock reads a wheel's CUDA need, its arch
/// list, the library directory it installs, the import package it provides and the torch build
/// its label names. Data, not code: `gpu/data/gpu_stacks.txt` is compiled in (its header says
/// the row forms; shared/data/gpu-stacks.md has the facts and sources). Pure: no I/O.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulock/core/error.h"
#include "gpulock/core/specifier.h"
#include "gpulock/core/version.h"
#include "gpulock/gpu/cuda_versions.h"

namespace gpulock::gpu {

struct GpuStacks {
  struct NeedByName {
    std::string package;
    std::uint32_t major = 0;
  };
  struct NeedByRelease {
    std::string package;
    core::SpecifierSet versions;
    std::uint32_t major = 0;
    std::string versions_text;  ///< as the row writes it (">=1.19,<1.27")
  };
  struct Archs {
    std::string package;
    core::SpecifierSet versions;
    std::optional<std::uint32_t> major;  ///< nullopt: any CUDA major
    std::string list;                    ///< "8.0;9.0;12.0+PTX;PTX:12.0"
    std::string source;
  };
  struct ArchFloor {
    std::uint32_t major = 0;
    gpu::ComputeCapability floor;
    std::string source;
  };
  struct Provides {
    std::string import_name;
    std::vector<std::string> packages;
  };
  struct SharedDir {
    std::string dir;
    std::vector<std::string> packages;
  };
  struct Coupled {
    std::string form;  ///< "cu{M}torch{X.Y}", "pt{X}{Y}cu{NNN}", "cu{NNN}"
    std::vector<std::string> packages;
  };
  struct MajorFix {
    std::string cuda12, cuda13;  ///< requirement forms: "jax[cuda12]", "cupy-cuda12x"
  };
  /// A find-links page of wheels built for one torch build: the end of its URL, with `{V}`
  /// torch's public version (2.11.0), `{XY}` its X.Y and `{L}` its label (cu128, cpu).
  struct FindLinks {
    std::string form;  ///< "torch-{V}+{L}.html", "{L}/torch{XY}/index.html"
    std::string source;
  };
  std::vector<NeedByName> need_by_name;
  std::vector<NeedByRelease> need_by_release;
  std::vector<Archs> archs;
  std::vector<ArchFloor> arch_floors;
  std::vector<Provides> provides;
  std::vector<SharedDir> shared_dirs;
  std::vector<std::string> cuda13_names;
  std::vector<Coupled> coupled;
  std::vector<MajorFix> major_fixes;
  std::vector<FindLinks> find_links;

  /// Parses the table's text (the format of gpu/data/gpu_stacks.txt). Errors: InvalidInput,
  /// naming the line.
  [[nodiscard]] static core::Result<GpuStacks> parse(std::string_view text);

  /// The CUDA major a package's name says (cupy-cuda12x, jax-cuda13-plugin, tensorrt-cu12).
  [[nodiscard]] std::optional<std::uint32_t> major_by_name(std::string_view package) const;
  /// The CUDA major of a release of a project whose releases change major (onnxruntime-gpu).
  [[nodiscard]] std::optional<std::uint32_t> major_by_release(std::string_view package,
                                                              const core::Version& version) const;
  /// The arch row of a package's release for CUDA `major`, or nullptr.
  [[nodiscard]] const Archs* archs_of(std::string_view package, const core::Version& version,
                                      std::uint32_t major) const;
  /// The lowest architecture CUDA `major` builds carry by default (CUDA 13: 7.5).
  [[nodiscard]] std::optional<gpu::ComputeCapability> arch_floor(std::uint32_t major) const;
  /// The import package `package` installs when other packages install it too ("cupy").
  [[nodiscard]] const Provides* provides_of(std::string_view package) const;
  /// The shared library directory `package` installs ("nvidia/cudnn/lib"), or nullptr.
  [[nodiscard]] const SharedDir* shared_dir_of(std::string_view package) const;
  /// Whether `package` is one of CUDA 13's unsuffixed library names (`nvidia-cublas`).
  [[nodiscard]] bool is_cuda13_name(std::string_view package) const;
  /// The coupled-label form of `package`, or nullptr.
  [[nodiscard]] const Coupled* coupled_of(std::string_view package) const;
  /// A find-links URL of a `find-links` row's form built for another torch build than `torch`
  /// (`2.11.0+cu130`): the same URL for `torch`'s build. nullopt when no form matches the URL
  /// or it already names that build.
  [[nodiscard]] std::optional<std::string> follow_find_links(std::string_view url,
                                                             std::string_view torch) const;
};

/// The compiled-in table (gpu/data/gpu_stacks.txt), parsed once. A table that does not parse is
/// a build defect: the unit tests parse it; here an empty table is used.
[[nodiscard]] const GpuStacks& gpu_stacks();
/// The compiled-in text of gpu/data/gpu_stacks.txt.
[[nodiscard]] std::string_view gpu_stacks_text();

/// What a coupled local label names (flash-attn `+cu12torch2.8cxx11abiTRUE`: torch 2.8, CUDA 12;
/// PyG `+pt211cu128`: torch 2.11, CUDA 12.8; vLLM `+cu129`: CUDA 12.9).
struct CoupledBuild {
  std::optional<core::Version> torch_release;  ///< X.Y
  std::uint32_t cuda_major = 0;
  std::optional<gpu::CudaVersion> cuda;  ///< when the label has the minor
};
[[nodiscard]] std::optional<CoupledBuild> parse_coupled_label(std::string_view form,
                                                              const core::Version& version);

}  // namespace gpulock::gpu
