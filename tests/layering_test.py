#!/usr/bin/env python3
"""The layering rule of HACKING.md, checked on the source tree.

core <- index, probe, resolver, lock (siblings: never include each other) <- app <- cli.
sys (files, processes, environment) sits beside core and depends on it alone: index, probe,
lock, app and cli may include it; core and resolver may not (core does no I/O, the resolver is
pure).
Third-party headers (curl, simdjson, libzip, OpenSSL, toml++, dlfcn) appear only in files under
src/ of the module that owns them, never in a public header. dlfcn belongs to probe (it dlopens
CUDA, cuDNN and NVML by soname) and to index (it dlopens its own network plugin
libgpulock-net.so, which holds libcurl, libzip and libcrypto, so a warm run loads none of them).

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
    "probe": {"core", "sys", "probe"},
    "resolver": {"core", "resolver"},
    "lock": {"core", "sys", "lock"},
    "app": {"core", "sys", "index", "probe", "resolver", "lock", "app"},
    "cli": {"core", "sys", "index", "probe", "resolver", "lock", "app"},
}

# third-party header pattern -> modules whose src/ may include it.
THIRD_PARTY = {
    r"curl/": {"index"},
    r"simdjson": {"index"},
    r"zip\.h": {"index"},
    r"openssl/": {"index"},
    r"toml\+\+/": {"lock"},
    r"dlfcn\.h": {"probe", "index"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
SOURCE_EXT = (".h", ".hpp", ".cpp", ".cc")


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
        problems = check(tmp)
        expected = ["resolver/src/solver.cpp:1", "core/include/gpulock/core/x.h:1",
                    "index/include/gpulock/index/http.h:1", "probe/src/bad.cpp:1",
                    "lock/src/dl.cpp:1", "index/include/gpulock/index/dl.h:1",
                    "core/src/spawn.cpp:1", "resolver/src/io.cpp:1", "sys/src/up.cpp:1"]
        found = all(any(p.startswith(e) for p in problems) for e in expected)
        clean = not any(p.startswith(("lock/src/ok.cpp", "index/src/plugin.cpp",
                                      "probe/src/ok_sys.cpp"))
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
