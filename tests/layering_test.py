#!/usr/bin/env python3
"""The layering rule of HACKING.md, checked on the source tree.

core <- resolver <- gpu; core (+ gpu) <- index, probe, lock (siblings: never include each
other) <- install <- app <- cli. catalog (the candidate catalog over package indexes and the
resolver's provider) sits on core, index, resolver and gpu, below app and cli; never on probe,
lock or sys. install (the installers) sits on index, probe and lock, never on app or cli. gpu
(CUDA, driver and compute-capability types, the GPU policy, the fit
rule) is pure, on core and resolver: probe, lock, app and cli may include it.
sys (files, processes, environment) sits beside core and depends on it alone: index, probe,
lock, app and cli may include it; core, resolver and gpu may not (core does no I/O, the
resolver and the GPU model are pure). Every module uses std::filesystem through its std::error_code overloads only.
Third-party headers (curl, simdjson, libzip, OpenSSL, zlib, brotli, toml++, dlfcn) appear only in files under
src/ of the module that owns them, never in a public header. dlfcn belongs to probe (it dlopens
CUDA, cuDNN and NVML by soname) and to index (it dlopens its own network plugin
libgpulock-net.so, which holds libcurl, libzip, libcrypto, zlib and brotli, so a warm run loads none of them).

Usage: layering_test.py SOURCE_DIR      exit 0 when the tree follows the rule, 1 otherwise.
       layering_test.py --self-test     builds a tree with violations and checks they are found.
"""
import os
import re
import sys
import tempfile

# module -> the gpulock modules it may include (itself included).
ALLOWED = {
    "core": {"core"},
    "sys": {"core", "sys"},
    "index": {"core", "sys", "index"},
    "probe": {"core", "sys", "gpu", "resolver", "probe"},
    "resolver": {"core", "resolver"},
    "gpu": {"core", "resolver", "gpu"},
    "lock": {"core", "sys", "gpu", "resolver", "lock"},
    "catalog": {"core", "index", "resolver", "gpu", "catalog"},
    "install": {"core", "sys", "index", "probe", "lock", "install"},
    "app": {"core", "sys", "index", "catalog", "gpu", "probe", "resolver", "lock", "install",
            "app"},
    "cli": {"core", "sys", "index", "catalog", "gpu", "probe", "resolver", "lock", "install",
            "app"},
}

# third-party header pattern -> modules whose src/ may include it.
THIRD_PARTY = {
    r"curl/": {"index"},
    r"simdjson": {"index"},
    r"zip\.h": {"index"},
    r"openssl/": {"index"},
    r"zlib\.h": {"index"},
    r"brotli/": {"index"},
    r"toml\+\+/": {"lock"},
    r"dlfcn\.h": {"probe", "index"},
}

# std::filesystem calls that throw filesystem_error unless given a std::error_code (which the
# libraries must pass: a permission problem is an error value, not an "internal error").
FS_CALL = re.compile(
    r"\b(?:fs|std::filesystem)::(absolute|canonical|weakly_canonical|relative|proximate|"
    r"current_path|temp_directory_path|exists|status|symlink_status|is_directory|"
    r"is_regular_file|is_symlink|is_empty|file_size|last_write_time|equivalent|"
    r"create_directory|create_directories|remove|remove_all|rename|copy|copy_file|"
    r"permissions|read_symlink|resize_file|space|hard_link_count|create_symlink|"
    r"directory_iterator|recursive_directory_iterator)\s*\(")
# The file_status predicates (`fs::exists(st)`) are noexcept.
FS_STATUS_ARG = re.compile(r"^(st|\w*status\w*|\w*_st)$")
# A range-for over a directory iterator: its operator++ throws.
FS_RANGE_FOR = re.compile(r"for\s*\([^;)]*:\s*(?:fs|std::filesystem)::\w*directory_iterator\b")

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
SOURCE_EXT = (".h", ".hpp", ".cpp", ".cc")


def call_args(text, open_paren):
    depth = 0
    for i in range(open_paren, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[open_paren + 1:i]
    return ""


def split_args(args):
    parts, depth, cur = [], 0, ""
    for ch in args:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def throwing_fs_calls(text):
    """(line, call) of each std::filesystem call that can throw."""
    found = []
    for m in FS_CALL.finditer(text):
        args = split_args(call_args(text, m.end() - 1))
        line = text.count("\n", 0, m.start()) + 1
        if args and re.search(r"(\bec\w*|_ec\w*|\berr\w*)$", args[-1]):
            continue
        if len(args) == 1 and FS_STATUS_ARG.match(args[0]):
            continue
        found.append((line, m.group(0).rstrip("(")))
    for m in FS_RANGE_FOR.finditer(text):
        found.append((text.count("\n", 0, m.start()) + 1, "range-for over a directory_iterator"))
    return found


# One way to build an Error (core::make_error, issue 21): never declared empty and filled field
# by field, never a positional Error{...}, never its code assigned (with_code makes a copy).
ERROR_BUILDS = [
    (re.compile(r"\b(?:core::)?Error\s+\w+\s*(?:;|\{\s*\})"), "an Error declared empty"),
    (re.compile(r"\b(?:core::)?Error\s*\{\s*[^}\s]"), "a positional Error{...}"),
    (re.compile(r"\.code\s*=\s*(?:core::)?ErrorCode::"), "an Error's code assigned"),
]
ERROR_HOME = (os.path.join("core", "include", "gpulock", "core", "error.h"), os.path.join("core", "src", "error.cpp"))


def error_builds(rel, text):
    """(line, what) of each Error built another way than core::make_error."""
    if rel in ERROR_HOME:
        return []
    found = []
    for pattern, what in ERROR_BUILDS:
        for m in pattern.finditer(text):
            found.append((text.count("\n", 0, m.start()) + 1, what))
    return found


def check(root):
    problems = []
    for module, allowed in ALLOWED.items():
        mdir = os.path.join(root, module)
        if not os.path.isdir(mdir):
            continue
        for dirpath, _, files in os.walk(mdir):
            for f in files:
                if not f.endswith(SOURCE_EXT):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                public = os.sep + "include" + os.sep in os.sep + os.path.relpath(path, mdir) + os.sep \
                    or rel.startswith(os.path.join(module, "include"))
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                for line, what in error_builds(rel, text):
                    problems.append(f"{rel}:{line}: {what}; build it with core::make_error")
                for line, call in throwing_fs_calls(text):
                    problems.append(f"{rel}:{line}: '{call}' can throw filesystem_error; use the "
                                    f"std::error_code overload")
                for m in INCLUDE.finditer(text):
                    inc = m.group(1)
                    line = text.count("\n", 0, m.start()) + 1
                    g = re.match(r"gpulock/([a-z]+)/", inc)
                    if g and g.group(1) not in allowed:
                        problems.append(f"{rel}:{line}: module '{module}' includes '{inc}' "
                                        f"(allowed: {', '.join(sorted(allowed))})")
                    for pattern, owners in THIRD_PARTY.items():
                        if re.match(pattern, inc):
                            if module not in owners:
                                problems.append(f"{rel}:{line}: '{inc}' belongs to "
                                                f"{'/'.join(sorted(owners))}, not '{module}'")
                            elif public:
                                problems.append(f"{rel}:{line}: public header includes "
                                                f"third-party '{inc}'; keep it in src/")
    return problems


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        def write(rel, text):
            p = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as fh:
                fh.write(text)
        write("resolver/src/solver.cpp", '#include "gpulock/index/client.h"\n')
        write("core/include/gpulock/core/x.h", '#include "gpulock/lock/lock.h"\n')
        write("index/include/gpulock/index/http.h", "#include <curl/curl.h>\n")
        write("lock/src/ok.cpp", '#include "gpulock/core/version.h"\n#include <toml++/toml.hpp>\n')
        write("probe/src/bad.cpp", "#include <simdjson.h>\n")
        # dlfcn: allowed in index/src and probe/src, nowhere else, never in a public header.
        write("index/src/plugin.cpp", "#include <dlfcn.h>\n")
        write("lock/src/dl.cpp", "#include <dlfcn.h>\n")
        write("index/include/gpulock/index/dl.h", "#include <dlfcn.h>\n")
        # sys: below index, probe, lock and app; never in core or resolver; above core only.
        write("core/src/spawn.cpp", '#include "gpulock/sys/process.h"\n')
        write("resolver/src/io.cpp", '#include "gpulock/sys/atomic_file.h"\n')
        write("sys/src/up.cpp", '#include "gpulock/index/url.h"\n')
        write("probe/src/ok_sys.cpp", '#include "gpulock/sys/process.h"\n')
        # gpu: pure (no sys), below probe, lock and app (never includes them).
        write("gpu/src/io.cpp", '#include "gpulock/sys/atomic_file.h"\n')
        write("gpu/src/up.cpp", '#include "gpulock/probe/machine.h"\n')
        write("lock/src/ok_gpu.cpp", '#include "gpulock/gpu/cuda_versions.h"\n')
        # catalog: on index and gpu, below app (never includes it, nor lock); app includes it.
        write("catalog/src/up.cpp", '#include "gpulock/app/resolve.h"\n')
        write("catalog/src/side.cpp", '#include "gpulock/lock/lock.h"\n')
        write("catalog/src/ok.cpp", '#include "gpulock/index/client.h"\n#include "gpulock/gpu/fit.h"\n')
        write("app/src/ok_catalog.cpp", '#include "gpulock/catalog/index_provider.h"\n')
        # install: on index, probe and lock; never on app (workflows) or cli; app may include it.
        write("install/src/up.cpp", '#include "gpulock/app/install.h"\n')
        write("install/src/ok_lock.cpp",
              '#include "gpulock/lock/lock.h"\n#include "gpulock/probe/environment.h"\n')
        write("app/src/ok_install.cpp", '#include "gpulock/install/installer.h"\n')
        # std::filesystem: the throwing overloads are found, the error_code ones pass.
        write("app/src/fs_bad.cpp", "bool f() { return fs::exists(\"pylock.toml\"); }\n")
        write("lock/src/fs_loop.cpp",
              "void g(std::error_code& ec) {\n"
              "  for (auto& e : std::filesystem::directory_iterator(d, ec)) {}\n}\n")
        write("index/src/fs_ok.cpp",
              "void h() {\n  std::error_code ec;\n  fs::create_directories(\n      dir, ec);\n"
              "  auto st = fs::status(p, ec);\n  if (fs::exists(st)) {}\n}\n")
        # Errors: built with make_error only.
        write("app/src/err_bad.cpp", "void f() {\n  core::Error e;\n  e.code = ErrorCode::Usage;\n}\n")
        write("cli/err_ok.cpp", "auto e = core::make_error(core::ErrorCode::Usage, \"x\").with_code(c);\n")
        problems = check(tmp)
        expected = ["app/src/err_bad.cpp:2", "app/src/err_bad.cpp:3","resolver/src/solver.cpp:1", "core/include/gpulock/core/x.h:1",
                    "index/include/gpulock/index/http.h:1", "probe/src/bad.cpp:1",
                    "lock/src/dl.cpp:1", "index/include/gpulock/index/dl.h:1",
                    "core/src/spawn.cpp:1", "resolver/src/io.cpp:1", "sys/src/up.cpp:1",
                    "gpu/src/io.cpp:1", "gpu/src/up.cpp:1", "catalog/src/up.cpp:1",
                    "catalog/src/side.cpp:1", "app/src/fs_bad.cpp:1", "lock/src/fs_loop.cpp:2",
                    "install/src/up.cpp:1"]
        found = all(any(p.startswith(e) for p in problems) for e in expected)
        clean = not any(p.startswith(("lock/src/ok.cpp", "index/src/plugin.cpp",
                                      "probe/src/ok_sys.cpp", "index/src/fs_ok.cpp", "lock/src/ok_gpu.cpp",
                                      "catalog/src/ok.cpp", "app/src/ok_catalog.cpp",
                                      "cli/err_ok.cpp", "install/src/ok_lock.cpp",
                                      "app/src/ok_install.cpp"))
                        for p in problems)
        if found and clean and len(problems) == len(expected):
            print(f"self-test: {len(problems)} planted violations found, clean file passed")
            return 0
        print("self-test failed; problems found:\n  " + "\n  ".join(problems))
        return 1


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    problems = check(sys.argv[1])
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} layering violation(s)")
        return 1
    print("layering: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
