#pragma once
/// @file
/// The values of PEP 508 marker variables for a *target* environment (not necessarily the
/// host): what `gpulock resolve --python-version 3.11 --platform manylinux_2_28_x86_64`
/// resolves for.

#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace gpulock::core {

struct Environment {
  std::string implementation_name = "cpython";
  std::string implementation_version = "3.11.0";
  std::string os_name = "posix";
  std::string platform_machine = "x86_64";
  std::string platform_python_implementation = "CPython";
  std::string platform_release;
  std::string platform_system = "Linux";
  std::string platform_version;
  std::string python_full_version = "3.11.0";
  std::string python_version = "3.11";
  std::string sys_platform = "linux";

  /// PEP 751 set-valued variables, usable only as `'x' in extras` in lock-file markers.
  std::set<std::string> extras;
  std::set<std::string> dependency_groups;

  /// PEP 825 (Draft) variant markers, set for the dependencies of the variant wheel chosen:
  /// `variant_label` ("" for a wheel without a label, "null" for the null variant) and the
  /// chosen wheel's properties narrowed to those the target supports (`ns :: feature :: value`),
  /// their `ns :: feature` and their `ns`.
  std::string variant_label;
  std::set<std::string> variant_properties;
  std::set<std::string> variant_features;
  std::set<std::string> variant_namespaces;

  /// A CPython on Linux for `python_version` "X.Y" (full version "X.Y.0" unless `full` is
  /// given) and machine ("x86_64", "aarch64").
  [[nodiscard]] static Environment linux_cpython(std::string_view python_version,
                                                 std::string_view machine,
                                                 std::string_view full_version = {});

  /// The value of a string/version variable by its PEP 508 name (`python_version`, ...);
  /// nullopt for unknown names and for the set variables `extras`/`dependency_groups`.
  [[nodiscard]] std::optional<std::string_view> get(std::string_view variable) const noexcept;
};

/// The PEP 440 reading of a `python_full_version` value: an untagged CPython source build
/// reports "3.11.1+" (platform.python_version()), which packaging 26.3 reads as
/// "3.11.1+local"; any other text is returned unchanged.
[[nodiscard]] std::string pep440_python_full_version(std::string_view value);

}  // namespace gpulock::core
