"""Exact mode on a hostile tree, under strace (issue 25): what aicompat and the compilers it
starts execute, open and create.

Builds a repository that tries every hole of the audit at once (-D values with shell syntax
through load_inline, setup.py and CMake; #includes of an outside secret by absolute path,
'..', '.git/config', a file link, a folder link, a macro, a digraph and a splice; a
__has_include and a '#pragma GCC dependency' of outside paths; links committed in the
cache's cuda-verify folder) beside one clean kernel, runs

    strace -f aicompat lint --cuda-verify --gpu A100 --gpu H100 --jobs 1 .

from the repository, and reports:
- every program aicompat's own process executed, with its arguments' shape, and every
  program those ran in turn;
- whether any executed command line holds the payloads' text;
- every file opened, by where it lies (the tree, the toolkit, the system, Python, the cache,
  the compilers' private folder, the user's cache secret), and any other;
- every attempt, successful or not, on the outside secret, .git/config or a link target;
- what the sandbox refused (opens that failed with EACCES in the compilers);
- whether a payload's marker file exists afterwards.

    python3 bench/exact_mode_trace.py [--keep DIR]

Needs strace and nvcc; prints Markdown (bench/RESULTS.md keeps a run).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections import Counter
from pathlib import Path

SECRET = "AICOMPAT_SECRET_7f3a"
ROOT = Path(__file__).resolve().parent.parent

KERNEL_BODY = """\
__global__ void k(float* o) {
  o[threadIdx.x] = 1.f +
INCLUDE
  ;
}
"""


def build_tree(base: Path) -> dict:
    outside = base / "outside"
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_text(SECRET + "\n")
    victim_dir = base / "victim_dir"
    victim_dir.mkdir()
    repo = base / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text("AICOMPAT_GITSECRET_91c2\n")
    (repo / "csrc" / "inc").mkdir(parents=True)
    (repo / "csrc" / "inc" / "common.cuh").write_text("#pragma once\nconstexpr int kTile = 64;\n")
    (repo / "csrc" / "inc" / "link.cuh").symlink_to(secret)
    (repo / "csrc" / "out").symlink_to(outside)
    marks = []

    def mark(name: str) -> str:
        marks.append(base / f"pwned-{name}")
        return str(marks[-1])

    includes = {
        "absolute": f'#include "{secret}"', "dotdot": '#include "../../outside/secret.txt"',
        "git": '#include "../.git/config"', "filelink": '#include "inc/link.cuh"',
        "folderlink": '#include "out/secret.txt"', "computed": f'#define P "{secret}"\n#include P',
        "digraph": f'%:include "{secret}"', "splice": f'#inc\\\nlude "{secret}"',
        "has_include": f'#if __has_include("{secret}")\n1\n#else\n0\n#endif',
        "pasted_has": f'#define CAT(a, b) a##b\n#if CAT(__has_, include)("{secret}")\n1\n#else\n0\n#endif',
        "pragma": f'#pragma GCC dependency "{secret}"\n0',
    }
    for name, inc in includes.items():
        (repo / "csrc" / f"leak_{name}.cu").write_text(KERNEL_BODY.replace("INCLUDE", inc))
    (repo / "csrc" / "ok.cu").write_text('#include "inc/common.cuh"\n#include <cuda_fp16.h>\n\n'
                                         "__global__ void k(float* o) { o[threadIdx.x] = kTile; }\n")
    payloads = {"dollar": "$(touch${IFS}MARK)", "tick": "`touch MARK`", "semi": "1;touch MARK",
                "quote": '1"; touch MARK; echo "', "newline": "1\ntouch MARK"}
    flags = [f"-DX_{k}=" + v.replace("MARK", mark(f"load_inline-{k}")) for k, v in payloads.items()]
    (repo / "ext.py").write_text(
        "from torch.utils.cpp_extension import load_inline\n\n"
        'SRC = r"""\n__global__ void k(float* o) { o[threadIdx.x] = 1.f; }\n"""\n\n'
        f'ext = load_inline(name="k", cpp_sources="", cuda_sources=SRC, extra_cuda_cflags={flags!r})\n')
    nvcc = [f"-DY_{k}=" + v.replace("MARK", mark(f"setup-{k}")) for k, v in payloads.items()]
    (repo / "setup.py").write_text(
        "from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
        'setup(name="k", ext_modules=[CUDAExtension(name="k._C", sources=["csrc/ok.cu"],\n'
        f'      extra_compile_args={{"cxx": [], "nvcc": {nvcc!r} + ["-gencode", "arch=compute_80,code=sm_80"]}})],\n'
        '      cmdclass={"build_ext": BuildExtension})\n')
    cm = mark("cmake")
    (repo / "csrc" / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.26)\nproject(k LANGUAGES CXX CUDA)\nset(CMAKE_CUDA_ARCHITECTURES 80 90)\n"
        f'add_compile_definitions("Z_DOLLAR=\\$(touch {cm})" "Z_TICK=`touch {cm}`")\n'
        "add_library(k2 MODULE leak_absolute.cu)\n")
    cache = repo / ".aicompat_cache"
    cache.mkdir()
    (cache / "cuda-verify").symlink_to(victim_dir)
    return {"repo": repo, "secret": secret, "git_config": repo / ".git" / "config", "marks": marks,
            "victim_dir": victim_dir, "outside": outside}


_LINE = re.compile(r"^(\w+)\((.*)\)\s+=\s+(-?\d+|\?)(?:\s+(\w+))?")
_STR = re.compile(r'"((?:[^"\\]|\\.)*)"')


def parse(prefix: Path, root: int, root_image: str):
    """strace -ff writes one file per process: walk them from aicompat's own, each process
    starting with the image of its parent at the clone. Returns execs as (image of the process
    that ran execve, program, argv) and events as (image, call, path, return, errno)."""
    execs, events = [], []

    def walk(pid: int, image: str) -> None:
        try:
            text = Path(f"{prefix}.{pid}").read_text(errors="replace")
        except OSError:
            return
        for line in text.splitlines():
            m = _LINE.match(line)
            if not m:
                continue
            call, args, ret, err = m.groups()
            if call in ("clone", "clone3", "fork", "vfork") and ret not in ("?", "-1"):
                walk(int(ret), image)
                continue
            strs = [bytes(x, "utf-8").decode("unicode_escape") for x in _STR.findall(args)]
            if call == "execve":
                if image == root_image and strs and os.path.realpath(strs[0]) == os.path.realpath(sys.executable):
                    continue  # strace starting aicompat itself
                if ret == "0" and strs:
                    execs.append((image, strs[0], strs[1:]))
                    image = strs[0]
                continue
            if strs:
                events.append((image, call, strs[0], ret, err))

    walk(root, root_image)
    return execs, events


def classify(path: str, places: dict) -> str:
    p = os.path.normpath(path)
    for name, prefixes in places.items():
        if any(p == x or p.startswith(x.rstrip("/") + "/") for x in prefixes):
            return name
    return "other"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", help="build the tree here and keep it (default: a temporary folder)")
    args = ap.parse_args()
    if not shutil.which("strace") or not shutil.which("nvcc"):
        print("needs strace and nvcc", file=sys.stderr)
        return 2
    base = Path(args.keep or tempfile.mkdtemp(prefix="aicompat-trace-")).resolve()
    base.mkdir(parents=True, exist_ok=True)
    t = build_tree(base)
    home = base / "home"
    home.mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), XDG_CACHE_HOME=str(home), AICOMPAT_CACHE_DIR="")
    trace_file = base / "trace.txt"
    cmd = ["strace", "-ff", "-qq", "-s", "4096", "-o", str(trace_file),
           "-e", "trace=execve,clone,clone3,fork,vfork,open,openat,creat,mkdir,mkdirat,symlink,symlinkat,rename,"
                 "renameat2,link,linkat,unlink,unlinkat",
           sys.executable, "-m", "aicompat", "lint", "--cuda-verify", "--gpu", "A100", "--gpu", "H100",
           "--jobs", "1", "."]
    r = subprocess.run(cmd, cwd=t["repo"], env=env, capture_output=True, text=True, timeout=1800)
    root = min(int(f.name.rsplit(".", 1)[1]) for f in base.glob("trace.txt.*"))
    execs, opens = parse(trace_file, root, "aicompat (python)")
    direct, nested = Counter(), Counter()
    bad_argv = []
    for who, prog, argv in execs:
        shape = os.path.basename(prog) + " " + " ".join(sorted({re.sub(r"=.*", "=…", a) if a.startswith("-") else "FILE"
                                                                 for a in argv[1:]}))
        (direct if who == "aicompat (python)" else nested)[shape.strip()] += 1
        if any(x in " ".join(argv) for x in ("touch", "$(", "`", "pwned")):
            bad_argv.append((prog, argv))

    tk = [os.path.realpath(os.path.dirname(os.path.dirname(shutil.which("nvcc"))))]
    sys.path.insert(0, str(ROOT / "src"))
    from aicompat.cuda.exact import verify  # noqa: E402  (for the toolkit's folders)

    tool = verify.probe()[0]
    tk += [os.path.realpath(d) for d in getattr(tool, "dirs", ())]
    try:
        from aicompat.cuda.exact.sandbox import abi
    except ImportError:  # a tree from before the sandbox
        def abi():
            return 0
    places = {
        "the linted tree": [str(t["repo"])],
        "the toolkit": tk,
        "the system (headers, libraries, programs)": ["/usr", "/lib", "/lib64", "/bin", "/etc/ld.so.cache",
                                                      "/etc/localtime", "/etc/alternatives", "/etc/ld.so.conf",
                                                      "/etc/ld.so.conf.d"],
        "Python and aicompat": [sys.prefix, sys.base_prefix, sysconfig.get_paths()["purelib"], str(ROOT)],
        "the compilers' private folder": [tempfile.gettempdir() + "/aicompat-nvcc-"],
        "the user's cache secret": [str(home)],
        "/dev, /proc": ["/dev", "/proc", "/sys"],
    }
    # What a bare Python start-up opens on this machine (its site configuration) is Python's.
    bare = base / "bare.txt"
    subprocess.run(["strace", "-f", "-qq", "-e", "trace=open,openat", "-o", str(bare), sys.executable, "-c", "pass"],
                   env=env, capture_output=True, timeout=120)
    places["Python and aicompat"] += [m.group(1) for m in re.finditer(r'open(?:at)?\([^"]*"([^"]+)"[^=]*= \d',
                                                                         bare.read_text(errors="replace"))]
    by_place = Counter()
    others = set()
    touched = []
    denied = Counter()
    watched = {str(t["secret"]), str(t["git_config"]), str(t["victim_dir"]), str(t["outside"])}
    for who, call, path, ret, err in opens:
        full = path if path.startswith("/") else os.path.join(str(t["repo"]), path)
        if any(full == w or full.startswith(w + "/") for w in watched) or "pwned" in full:
            touched.append((who, call, path, ret, err))
        if ret == "-1" and err == "EACCES":
            denied[classify(full, places) if not full.startswith(tempfile.gettempdir() + "/aicompat-nvcc-")
                   else "private"] += 1
        if ret == "-1":
            continue
        place = classify(full if not full.startswith(tempfile.gettempdir() + "/aicompat-nvcc-") else
                         tempfile.gettempdir() + "/aicompat-nvcc-/", places)
        if full.startswith(tempfile.gettempdir() + "/aicompat-nvcc-"):
            place = "the compilers' private folder"
        by_place[place] += 1
        if place == "other":
            others.add(f"{full} (by {os.path.basename(who)})")

    print("## Exact mode on a hostile tree, under strace\n")
    print(f"`aicompat lint --cuda-verify --gpu A100 --gpu H100 --jobs 1 .` on {len(list(t['repo'].rglob('*.cu')))} CUDA files, `ext.py` and `setup.py`;"
          f" aicompat exit {r.returncode}; Landlock ABI {abi()} (0: none, or a tree without the sandbox).\n")
    print("Programs aicompat's own process executed (arguments: flags with their values elided, FILE for paths):\n")
    for shape, n in sorted(direct.items()):
        print(f"- {n} x `{shape}`")
    print("\nPrograms those ran in turn:\n")
    progs = Counter()
    for shape, n in nested.items():
        progs[shape.split()[0]] += n
    for prog, n in progs.most_common():
        print(f"- {n} x {prog}")
    print(f"\nCommand lines holding a payload's text: {len(bad_argv)}")
    for prog, argv in bad_argv[:5]:
        print(f"  - {prog} {argv}")
    print("\nFiles opened, by where they lie:\n")
    for place, n in by_place.most_common():
        print(f"- {place}: {n}")
    for p in sorted(others)[:20]:
        print(f"  - other: {p}")
    print(f"\nAttempts on the outside secret, .git/config, the cache link's target or a marker: {len(touched)}")
    for who, call, path, ret, err in touched[:10]:
        print(f"  - {os.path.basename(who)} {call} {path} = {ret} {err or ''}")
    print(f"\nOpens the sandbox refused (EACCES): {dict(denied) or 0}")
    made = [str(m) for m in t["marks"] if m.exists()]
    print(f"Marker files created by a payload: {len(made)} of {len(t['marks'])} payloads")
    print(f"Files created in the cache link's target: {len(list(t['victim_dir'].iterdir()))}")
    out = r.stdout + r.stderr
    print(f"The secret in aicompat's output: {'yes' if SECRET in out else 'no'}")
    return 0 if not made and not bad_argv and SECRET not in out else 1


if __name__ == "__main__":
    sys.exit(main())
