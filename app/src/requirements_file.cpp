#include "gpulock/app/requirements_file.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "gpulock/core/text.h"

namespace gpulock::app {
namespace {

namespace fs = std::filesystem;
using core::ErrorCode;

constexpr std::uintmax_t kMaxFileBytes = 16u << 20;

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

// pip's whitespace within a line (no \n: lines are already split).
constexpr std::string_view kLineSpace = " \t\r\f\v";

// pip's COMMENT_RE `(^|\s+)#.*$`: the offset where a comment starts, or npos.
std::size_t comment_start(std::string_view line) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '#') continue;
    if (i == 0 || is_space(line[i - 1])) {
      std::size_t j = i;
      while (j > 0 && is_space(line[j - 1]))
        --j;
      return j;
    }
  }
  return std::string_view::npos;
}

struct LogicalLine {
  std::size_t number;  // 1-based number of the first physical line
  std::string text;
};

// pip's join_lines: a line ending in `\` continues on the next; comment lines never continue.
std::vector<LogicalLine> join_lines(std::string_view text) {
  std::vector<LogicalLine> out;
  std::string pending;
  std::size_t pending_number = 0;
  bool continuing = false;
  std::size_t number = 0;
  while (!text.empty() || continuing) {
    if (text.empty()) {
      out.push_back({pending_number, pending});
      break;
    }
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    bool is_comment = comment_start(line) == 0 && !core::trim(line, kLineSpace).empty() &&
                      core::trim(line, kLineSpace).front() == '#';
    bool continues = !line.empty() && line.back() == '\\' && !is_comment;
    if (continues) {
      if (!continuing) pending_number = number;
      continuing = true;
      pending.append(line.substr(0, line.size() - 1));
      continue;
    }
    if (continuing) {
      pending.append(line);
      out.push_back({pending_number, pending});
      pending.clear();
      continuing = false;
    } else {
      out.push_back({number, std::string(line)});
    }
  }
  return out;
}

bool is_env_name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// pip expands only `${NAME}` with NAME in [A-Z0-9_]+, and only when the variable is set.
std::string expand_env(std::string_view line, const EnvLookup& env) {
  std::string out;
  std::size_t i = 0;
  while (i < line.size()) {
    if (line.compare(i, 2, "${") == 0) {
      std::size_t j = i + 2;
      while (j < line.size() && is_env_name_char(line[j]))
        ++j;
      if (j > i + 2 && j < line.size() && line[j] == '}') {
        auto value = env(line.substr(i + 2, j - i - 2));
        if (value && !value->empty()) {
          out += *value;
          i = j + 1;
          continue;
        }
      }
    }
    out += line[i++];
  }
  return out;
}

struct Token {
  std::string text;
  std::size_t column;  // 1-based
};

std::vector<Token> split_tokens(std::string_view line) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i]))
      ++i;
    if (i >= line.size()) break;
    std::size_t start = i;
    while (i < line.size() && !is_space(line[i]))
      ++i;
    tokens.push_back({std::string(line.substr(start, i - start)), start + 1});
  }
  return tokens;
}

bool looks_like_path_or_url(std::string_view req) {
  if (req.starts_with(".") || req.starts_with("/") || req.starts_with("~")) return true;
  bool has_at = req.find('@') != std::string_view::npos;
  if (!has_at && req.find("://") != std::string_view::npos) return true;
  for (std::string_view ext : {".whl", ".tar.gz", ".zip", ".tar.bz2", ".tgz"}) {
    if (!has_at && req.ends_with(ext)) return true;
  }
  return false;
}

class Parser {
 public:
  Parser(RequirementsInput& into, const RequirementsFileOptions& options)
      : into_(into), options_(options) {
    if (!options_.reader) options_.reader = read_text_file;
    if (!options_.env) {
      options_.env = [](std::string_view name) -> std::optional<std::string> {
        const char* v = std::getenv(std::string(name).c_str());
        if (v == nullptr) return std::nullopt;
        return std::string(v);
      };
    }
  }

  core::Status read_file(const std::string& path, bool constraints, const std::string& from_file,
                         std::size_t from_line) {
    std::string key = canonical_key(path);
    for (const auto& open : stack_) {
      if (open == key) {
        // The chain as the files name each other (not canonical paths), ending where it loops.
        std::string chain;
        for (const auto& s : shown_)
          chain += s + " -> ";
        chain += path;
        return core::fail_at(
            ErrorCode::InvalidInput,
            fmt::format("requirements files include each other in a loop: {}", chain), from_file,
            from_line);
      }
    }
    auto content = options_.reader(path);
    if (!content) {
      core::Error e = content.error();
      if (!from_file.empty()) {
        e.context.push_back(fmt::format("included from {}:{}", from_file, from_line));
      }
      return std::unexpected(e);
    }
    into_.files.push_back({path, constraints ? "constraints" : "requirements", *content});
    stack_.push_back(key);
    shown_.push_back(path);
    auto status = parse_text(*content, path, constraints);
    stack_.pop_back();
    shown_.pop_back();
    return status;
  }

  core::Status parse_text(std::string_view text, const std::string& path, bool constraints) {
    for (auto& logical : join_lines(text)) {
      std::string_view raw = logical.text;
      std::size_t cut = comment_start(raw);
      if (cut != std::string_view::npos) raw = raw.substr(0, cut);
      std::string line = expand_env(raw, options_.env);
      if (core::trim(line, kLineSpace).empty()) continue;
      auto status = parse_line(line, path, logical.number, constraints);
      if (!status) return status;
    }
    return {};
  }

 private:
  static std::string canonical_key(const std::string& path) {
    std::error_code ec;
    auto p = fs::weakly_canonical(fs::path(path), ec);
    return ec ? path : p.string();
  }

  static std::string join_relative(const std::string& base_file, const std::string& target) {
    fs::path t(target);
    if (t.is_absolute() || base_file.empty()) return target;
    fs::path dir = fs::path(base_file).parent_path();
    return (dir / t).lexically_normal().string();
  }

  core::Status invalid(std::string message, const std::string& path, std::size_t line,
                       std::size_t column) {
    return core::fail_at(ErrorCode::InvalidInput, std::move(message), path, line, column);
  }

  // `--opt=value`, `--opt value`, `-ovalue`, `-o value`: the value, advancing `i` past it.
  std::optional<std::string> option_value(const std::vector<Token>& tokens, std::size_t& i,
                                          std::string_view long_name, std::string_view short_name) {
    const std::string& t = tokens[i].text;
    if (!long_name.empty() && t.starts_with(long_name)) {
      if (t.size() > long_name.size() && t[long_name.size()] == '=') {
        return t.substr(long_name.size() + 1);
      }
      if (t.size() == long_name.size()) {
        if (i + 1 >= tokens.size()) return std::nullopt;
        return tokens[++i].text;
      }
    }
    if (!short_name.empty() && t.starts_with(short_name)) {
      if (t.size() > short_name.size()) return t.substr(short_name.size());
      if (i + 1 >= tokens.size()) return std::nullopt;
      return tokens[++i].text;
    }
    return std::nullopt;
  }

  static bool option_is(const std::string& token, std::string_view long_name,
                        std::string_view short_name = {}) {
    auto matches_long = [&](std::string_view n) {
      return !n.empty() && (token == n || (token.starts_with(n) && token.size() > n.size() &&
                                           token[n.size()] == '='));
    };
    if (matches_long(long_name)) return true;
    return !short_name.empty() && token.starts_with(short_name) &&
           !(token.size() > 1 && token[1] == '-');
  }

  core::Status parse_line(const std::string& line, const std::string& path, std::size_t number,
                          bool constraints) {
    auto tokens = split_tokens(line);
    // pip's break_args_options: the requirement is every token before the first option.
    std::size_t first_option = 0;
    while (first_option < tokens.size() && !tokens[first_option].text.starts_with("-"))
      ++first_option;

    std::vector<std::string> hashes;
    for (std::size_t i = first_option; i < tokens.size(); ++i) {
      const Token& tok = tokens[i];
      const std::string& t = tok.text;
      auto need = [&](std::string_view long_name,
                      std::string_view short_name) -> core::Result<std::string> {
        auto v = option_value(tokens, i, long_name, short_name);
        if (!v || v->empty()) {
          return core::fail_at(ErrorCode::InvalidInput, fmt::format("option '{}' needs a value", t),
                               path, number, tok.column);
        }
        return *v;
      };
      if (option_is(t, "--requirement", "-r") || option_is(t, "--constraint", "-c")) {
        bool nested_constraints = option_is(t, "--constraint", "-c");
        auto target = nested_constraints ? need("--constraint", "-c") : need("--requirement", "-r");
        if (!target) return std::unexpected(target.error());
        auto status = read_file(join_relative(path, *target), constraints || nested_constraints,
                                path, number);
        if (!status) return status;
      } else if (option_is(t, "--index-url", "-i")) {
        auto v = need("--index-url", "-i");
        if (!v) return std::unexpected(v.error());
        into_.index_url = *v;
      } else if (option_is(t, "--extra-index-url")) {
        auto v = need("--extra-index-url", "");
        if (!v) return std::unexpected(v.error());
        into_.extra_index_urls.push_back(*v);
      } else if (option_is(t, "--find-links", "-f")) {
        auto v = need("--find-links", "-f");
        if (!v) return std::unexpected(v.error());
        into_.find_links.push_back(*v);
      } else if (t == "--no-index") {
        into_.no_index = true;
      } else if (t == "--pre") {
        into_.pre = true;
      } else if (option_is(t, "--hash")) {
        auto v = need("--hash", "");
        if (!v) return std::unexpected(v.error());
        if (v->find(':') == std::string::npos) {
          return invalid(fmt::format("--hash needs the form algorithm:hex, got {}",
                                     core::quote_for_message(*v)),
                         path, number, tok.column);
        }
        hashes.push_back(*v);
      } else if (option_is(t, "--editable", "-e")) {
        return invalid(
            "editable requirements (-e) are not supported: gpulock locks wheels from indexes", path,
            number, tok.column);
      } else if (t == "--prefer-binary" || t == "--require-hashes") {
        // accepted and ignored: gpulock only ever uses wheels, always with hashes
      } else if (option_is(t, "--only-binary") || option_is(t, "--no-binary") ||
                 option_is(t, "--trusted-host") || option_is(t, "--use-feature") ||
                 option_is(t, "--global-option") || option_is(t, "--config-settings")) {
        std::string long_name = t.substr(0, t.find('='));
        auto v = need(long_name, "");
        if (!v) return std::unexpected(v.error());
      } else {
        return invalid(
            fmt::format("unknown option {} in a requirements file", core::quote_for_message(t)),
            path, number, tok.column);
      }
    }
    if (first_option == 0) {
      if (!hashes.empty()) {
        return invalid("--hash applies to a requirement on the same line", path, number,
                       tokens.front().column);
      }
      return {};
    }

    std::string text;
    for (std::size_t i = 0; i < first_option; ++i) {
      if (i) text += ' ';
      text += tokens[i].text;
    }
    std::size_t column = tokens.front().column;
    if (looks_like_path_or_url(text)) {
      return invalid(
          fmt::format(
              "{} is a local path or a bare URL; gpulock locks packages from indexes (write "
              "'name @ URL' for a direct URL)",
              core::quote_for_message(text)),
          path, number, column);
    }
    auto req = core::Requirement::parse(text);
    if (!req) {
      core::Error e = req.error();
      std::size_t col = e.column == 0 ? column : column + e.column - 1;
      e.where = path;
      e.line = number;
      e.column = col;
      // expand_env leaves unset variables as written, which then fail to parse.
      if (auto open = text.find("${"); open != std::string::npos) {
        auto close = text.find('}', open);
        if (close != std::string::npos) {
          e.hints.push_back(fmt::format("the environment variable {} is not set",
                                        text.substr(open + 2, close - open - 2)));
        }
      }
      return std::unexpected(e);
    }
    RequirementEntry entry{*req, {path, number}, std::move(hashes)};
    (constraints ? into_.constraints : into_.requirements).push_back(std::move(entry));
    return {};
  }

  RequirementsInput& into_;
  RequirementsFileOptions options_;
  std::vector<std::string> stack_;
  std::vector<std::string>
      shown_;  // the same files as named (joined onto the including file's dir)
};

}  // namespace

core::Result<std::string> read_text_file(const std::string& path) {
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec) {
    return core::fail_at(ErrorCode::Io, fmt::format("cannot read file: {}", ec.message()), path);
  }
  if (size > kMaxFileBytes) {
    return core::fail_at(
        ErrorCode::InvalidInput,
        fmt::format("file is {} bytes; input files over {} bytes are refused", size, kMaxFileBytes),
        path);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::fail_at(ErrorCode::Io, "cannot open file", path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return core::fail_at(ErrorCode::Io, "read error", path);
  return std::move(buffer).str();
}

core::Status read_requirements_file(const std::string& path, bool constraints,
                                    RequirementsInput& into,
                                    const RequirementsFileOptions& options) {
  Parser parser(into, options);
  return parser.read_file(path, constraints, "", 0);
}

core::Status parse_requirements_text(std::string_view text, const std::string& path,
                                     bool constraints, RequirementsInput& into,
                                     const RequirementsFileOptions& options) {
  Parser parser(into, options);
  return parser.parse_text(text, path, constraints);
}

}  // namespace gpulock::app
