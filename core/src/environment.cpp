#include "gpulock/core/environment.h"

namespace gpulock::core {

Environment Environment::linux_cpython(std::string_view python_version, std::string_view machine,
                                       std::string_view full_version) {
  Environment env;
  env.python_version = std::string(python_version);
  env.python_full_version =
      full_version.empty() ? std::string(python_version) + ".0" : std::string(full_version);
  env.implementation_version = env.python_full_version;
  env.implementation_name = "cpython";
  env.platform_python_implementation = "CPython";
  env.os_name = "posix";
  env.sys_platform = "linux";
  env.platform_system = "Linux";
  env.platform_machine = std::string(machine);
  return env;
}

std::optional<std::string_view> Environment::get(std::string_view variable) const noexcept {
  if (variable == "implementation_name") return implementation_name;
  if (variable == "implementation_version") return implementation_version;
  if (variable == "os_name") return os_name;
  if (variable == "platform_machine") return platform_machine;
  if (variable == "platform_python_implementation") return platform_python_implementation;
  if (variable == "platform_release") return platform_release;
  if (variable == "platform_system") return platform_system;
  if (variable == "platform_version") return platform_version;
  if (variable == "python_full_version") return python_full_version;
  if (variable == "python_version") return python_version;
  if (variable == "sys_platform") return sys_platform;
  if (variable == "variant_label") return variant_label;
  return std::nullopt;
}

std::string pep440_python_full_version(std::string_view value) {
  std::string out(value);
  if (!out.empty() && out.back() == '+') out += "local";
  return out;
}

}  // namespace gpulock::core
