#!/usr/bin/python3
"""Reference parses of distribution filenames by pypa/packaging, for filename_test.cpp.

Reads one filename per line on stdin and prints one line per filename:
    wheel:  OK <normalized name> <str(version)> <build number or -> <build rest or -> <tags>
    sdist:  OK <normalized name> <str(version)>
    error:  ERR
where <tags> are the expanded tags sorted and joined by ",". Lines starting with "sdist:" are
parsed as sdists. Run with /usr/bin/python3 (Debian's interpreter with python3-packaging).
"""

import sys

from packaging.utils import parse_sdist_filename, parse_wheel_filename


def main():
    for line in sys.stdin:
        text = line.rstrip("\n")
        try:
            if text.startswith("sdist:"):
                name, version = parse_sdist_filename(text[len("sdist:"):])
                print(f"OK {name} {version}")
            else:
                name, version, build, tags = parse_wheel_filename(text)
                number, rest = (str(build[0]), build[1] or "-") if build else ("-", "-")
                joined = ",".join(sorted(str(t) for t in tags))
                print(f"OK {name} {version} {number} {rest} {joined}")
        except Exception:  # InvalidWheelFilename, InvalidSdistFilename, InvalidVersion
            print("ERR")


if __name__ == "__main__":
    main()
