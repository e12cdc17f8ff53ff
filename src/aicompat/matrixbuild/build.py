"""``aicompat matrix build PACKAGE``: regenerate ``version_matrix/api/PACKAGE.toml``.

Downloads each release with ``pip download --no-deps`` (torch: the macOS
arm64 wheels, small and holding the same Python sources and ``.pyi`` stubs;
flash-attn: its sdists, whose metadata step needs torch installed in the
running Python), reads the configured modules statically (matrixbuild/apiscan.py, never
importing them) and writes the table (matrix/api_tables.py). Archives already in
``--archives DIR`` are used as they are; the table lists each one with its
sha256, so the same archives always give the same bytes.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import Version

from ..base.data import data_dir
from ..matrix.api_tables import encode
from . import introspection
from .apiscan import ApiReader, Feeder


@dataclass
class PackageSpec:
    dist: str  # PyPI name
    roots: tuple[str, ...]  # top-level import packages to read
    modules: list[str]  # modules whose namespaces are recorded
    expand: list[str] = field(default_factory=list)  # packages whose every child module is recorded too
    feeders: dict[str, list[Feeder]] = field(default_factory=dict)
    sdist: bool = False
    note: str = ""
    # Reading a git checkout instead of archives: tag for a version, and
    # path prefixes to map (FA3's ``hopper/flash_attn_interface.py`` is the
    # module ``flash_attn_interface`` once installed).
    git_tag: str = "v{version}"
    git_paths: dict[str, str] = field(default_factory=dict)
    # For a package without releases: versions are git refs, labelled
    # ``<__version__ read from this file>+<ref>`` (a PEP 440 local version).
    version_file: str | None = None
    # The tag of a release when ``git_tag`` cannot spell it (Transformer Engine: v2.9 for 2.9.0);
    # None: the release has no tag and is read from its wheel.
    tag_of: Callable[[str], str | None] | None = None
    # Classes whose members are recorded as a namespace of their own (an enum's: Format.HYBRID).
    classes: list[str] = field(default_factory=list)
    # The PyPI names whose wheels carry the package's Python, tried in order, and the platform
    # and Python asked for (a package with no macOS wheels: Transformer Engine's manylinux ones).
    wheels: tuple[str, ...] = ()
    platforms: tuple[tuple[str, str], ...] = (("macosx_11_0_arm64", "3.11"), ("macosx_14_0_arm64", "3.12"))


def _te_tag(version: str) -> str | None:
    """Transformer Engine tags a final release vMAJOR.MINOR (v2.9 for 2.9.0), a patch release in
    full (v2.14.1); a post release (2.6.0.post1) has no tag."""
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", version)
    if m is None:
        return None
    return f"v{m[1]}.{m[2]}" if m[3] == "0" else f"v{version}"


PACKAGES: dict[str, PackageSpec] = {
    "torch": PackageSpec(
        dist="torch",
        roots=("torch",),
        modules=[
            "torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.attention",
            "torch.nn.attention.flex_attention", "torch.nn.attention.bias", "torch.cuda", "torch.cuda.amp",
            "torch.cpu", "torch.cpu.amp", "torch.amp", "torch.backends", "torch.utils.cpp_extension",
            "torch.utils.checkpoint", "torch.distributed", "torch.export", "torch.compiler", "torch.library",
            "torch.testing", "torch.nn.utils", "torch.nn.utils.parametrizations",
            # modules real code calls members of (device-agnostic helpers, linear algebra, data loading)
            "torch.accelerator", "torch.linalg", "torch.fft", "torch.autograd", "torch.optim",
            "torch.optim.lr_scheduler", "torch.utils.data", "torch.xpu", "torch.mps", "torch.cuda.memory",
            "torch.profiler",
        ],
        expand=["torch.backends"],
        # torch/__init__.py copies these in at import time:
        # `for __name in dir(_C): if __name[0] != '_' and not __name.endswith('Base'): ...`
        # and `for __name in dir(_C._VariableFunctions): ... globals()[__name] = __obj`.
        feeders={"torch": [Feeder("torch._C", public_only=True, exclude_suffix="Base"),
                           Feeder("torch._C._VariableFunctions", exclude_listed_in="PRIVATE_OPS")]},
        note="one macOS arm64 wheel per release: the same Python sources and .pyi stubs as every platform",
    ),
    "flash-attn": PackageSpec(
        dist="flash-attn",
        roots=("flash_attn",),
        modules=["flash_attn", "flash_attn.flash_attn_interface", "flash_attn.bert_padding",
                 "flash_attn.layers.rotary", "flash_attn.modules.mha"],
        sdist=True,
        note="sdists (flash-attn publishes no wheels on PyPI), or the release tags of Dao-AILab/flash-attention "
             "(--git): old sdists cannot even produce metadata without a CUDA build, the tags hold the same files",
    ),
    # FlashAttention 3 has no PyPI release: hopper/setup.py builds the package
    # flash_attn_3, importable as flash_attn_interface. Read at repository tags.
    "flash-attn-3": PackageSpec(
        dist="flash-attn-3",
        roots=("flash_attn_interface",),
        modules=["flash_attn_interface"],
        git_paths={"hopper/flash_attn_interface.py": "flash_attn_interface.py"},
        git_tag="{version}",
        version_file="hopper/__init__.py",
        note="hopper/flash_attn_interface.py at tags of Dao-AILab/flash-attention (no PyPI release); "
             "'releases' here are those repository tags",
    ),
    # Transformer Engine: its PyTorch modules and recipes. TE imports only where its CUDA build
    # loads (a GPU machine), so every release is read from its source: the release tag of
    # NVIDIA/TransformerEngine (v2.9 for 2.9.0), else the wheel that carries its Python.
    "transformer-engine": PackageSpec(
        dist="transformer-engine",
        roots=("transformer_engine",),
        modules=[
            "transformer_engine", "transformer_engine.common", "transformer_engine.common.recipe",
            "transformer_engine.pytorch", "transformer_engine.pytorch.fp8", "transformer_engine.pytorch.quantization",
            "transformer_engine.pytorch.distributed", "transformer_engine.pytorch.attention",
            "transformer_engine.pytorch.module", "transformer_engine.pytorch.optimizers",
            "transformer_engine.pytorch.transformer", "transformer_engine.pytorch.utils",
        ],
        classes=["transformer_engine.common.recipe.Format"],
        tag_of=_te_tag,
        wheels=("transformer_engine_cu12", "transformer-engine"),
        platforms=(("manylinux_2_28_x86_64", "3.12"),),
        note="read statically from the release's source (TE needs a GPU build to import): the release tag of "
             "NVIDIA/TransformerEngine (v2.9 for 2.9.0), or, for a release without one, the PyPI wheel that "
             "carries its Python (transformer_engine_cu12; 1.9.0.post1: the transformer-engine wheel itself)",
    ),
    # Triton publishes Linux wheels only; every release 2.0.0-3.9.0 has one for CPython 3.11, the
    # wheel tools/triton_introspect.py imports (the runtime decides every name and signature).
    "triton": PackageSpec(
        dist="triton",
        roots=("triton",),
        modules=[
            "triton", "triton.language", "triton.language.math", "triton.language.libdevice",
            "triton.language.extra", "triton.language.extra.cuda", "triton.language.extra.cuda.libdevice",
            "triton.language.extra.libdevice", "triton.testing", "triton.runtime",
        ],
        platforms=(("manylinux_2_28_x86_64", "3.11"), ("manylinux2014_x86_64", "3.11")),  # 3.3.0 on; before
        note="one CPython 3.11 manylinux x86_64 wheel per release (Triton has no macOS wheels); every release "
             "imported in a throwaway environment (tools/triton_introspect.py), whose names and signatures "
             "the table holds",
    ),
}


def archive_files(path: Path, roots: tuple[str, ...]) -> dict[str, str]:
    """``{path inside the package: text}`` for the .py/.pyi files under ``roots``."""
    out: dict[str, str] = {}

    def keep(name: str) -> str | None:
        if not name.endswith((".py", ".pyi")):
            return None
        parts = name.split("/")
        for cut in (0, 1):  # wheels: torch/...; sdists: flash_attn-2.5.9/flash_attn/...
            if len(parts) > cut and parts[cut] in roots:
                return "/".join(parts[cut:])
        return None

    if path.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(path) as z:
            for name in sorted(z.namelist()):
                rel = keep(name)
                if rel and rel not in out:
                    out[rel] = z.read(name).decode("utf-8", "replace")
    else:
        with tarfile.open(path) as t:
            for member in sorted(t.getmembers(), key=lambda m: m.name):
                rel = keep(member.name) if member.isfile() else None
                if rel and rel not in out:
                    fh = t.extractfile(member)
                    out[rel] = fh.read().decode("utf-8", "replace") if fh else ""
    return out


def git_files(repo: Path, ref: str, spec: PackageSpec) -> tuple[dict[str, str], str] | None:
    """Files of ``spec`` at ``ref`` in a git repository, and the commit; None if the ref is missing."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout

    try:
        commit = git("rev-parse", f"{ref}^{{commit}}").strip()
    except subprocess.CalledProcessError:
        return None
    wanted = {}
    for path in sorted(git("ls-tree", "-r", "--name-only", commit).splitlines()):
        rel = spec.git_paths.get(path)
        if rel is None and path.split("/")[0] in spec.roots and path.endswith((".py", ".pyi")):
            rel = path
        if rel is not None:
            wanted[path] = rel
    # one `git cat-file --batch` for every file: "<sha> blob <size>\n<bytes>\n" each
    data = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch"], check=True, capture_output=True,
                          input="".join(f"{commit}:{path}\n" for path in wanted).encode()).stdout
    out, pos = {}, 0
    for path, rel in wanted.items():
        head_end = data.index(b"\n", pos)
        size = int(data[pos:head_end].split()[2])
        out[rel] = data[head_end + 1:head_end + 1 + size].decode("utf-8", "replace")
        pos = head_end + 1 + size + 1
    return out, commit


def _version_at(repo: Path, commit: str, path: str) -> str:
    text = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], capture_output=True, text=True).stdout
    m = re.search(r"__version__\s*=\s*[\"']([^\"']+)", text)
    return str(Version(m.group(1))) if m else "0"


def snapshot(files: dict[str, str], spec: PackageSpec) -> tuple[dict, dict[str, str]]:
    """Namespaces of the spec's modules in one release (None for a module it lacks)."""
    reader = ApiReader(files, spec.feeders)
    modules = list(spec.modules)
    for pkg in spec.expand:
        modules += [f"{pkg}.{sub}" for sub in reader.submodules(pkg) if not sub.startswith("_")]
    snap = {}
    for mod in modules:
        snap[mod] = reader.namespace(mod) if reader.has_module(mod) else None
    for cls in spec.classes:
        snap[cls] = reader.class_namespace(cls)
    return snap, dict(reader.why_open)


def find_archive(directory: Path, dist: str, version: str) -> Path | None:
    stem = dist.replace("-", "_")
    for pattern in (f"{stem}-{version}-*.whl", f"{stem}-{version}.tar.gz", f"{dist}-{version}.tar.gz"):
        hits = sorted(directory.glob(pattern))
        if hits:
            return hits[0]
    return None


def download(spec: PackageSpec, version: str, directory: Path) -> Path:
    for dist in spec.wheels or (spec.dist,):
        found = find_archive(directory, dist, version)
        if found:
            return found
    if spec.sdist:
        # `pip download` of an sdist prepares its metadata, which runs the package's setup.py
        # (in this interpreter, with --no-build-isolation): take the file from PyPI instead and
        # check it against the digest PyPI publishes. Nothing of the package is run.
        return _pypi_sdist(spec.dist, version, directory)
    env = dict(os.environ, PIP_CONFIG_FILE=os.devnull)
    errors = []
    for dist in spec.wheels or (spec.dist,):
        base = [sys.executable, "-m", "pip", "download", f"{dist}=={version}", "--no-deps", "-q", "-d", str(directory)]
        for plat, py in spec.platforms:
            cmd = base + ["--only-binary=:all:", "--platform", plat, "--python-version", py]
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
            found = find_archive(directory, dist, version)
            if found:
                return found
            errors.append(proc.stderr.strip().splitlines()[-1:] or ["?"])
    raise RuntimeError(f"could not download {spec.dist}=={version}: {errors}")


PYPI_JSON = "https://pypi.org/pypi/{dist}/{version}/json"


def _pypi_sdist(dist: str, version: str, directory: Path) -> Path:
    """The release's sdist, downloaded from the URL PyPI's JSON API lists and checked against
    its sha256 there; written under a plain file name only (no path from the index is trusted)."""
    import json
    import urllib.request

    with urllib.request.urlopen(PYPI_JSON.format(dist=dist, version=version), timeout=60) as r:
        meta = json.load(r)
    for u in meta.get("urls", []):
        name = str(u.get("filename", ""))
        if u.get("packagetype") != "sdist" or not name.endswith(".tar.gz") or Path(name).name != name:
            continue
        want = str(u.get("digests", {}).get("sha256", ""))
        tmp = directory / (name + ".part")
        h = hashlib.sha256()
        with urllib.request.urlopen(u["url"], timeout=300) as r, open(tmp, "wb") as out:
            for chunk in iter(lambda: r.read(1 << 20), b""):
                h.update(chunk)
                out.write(chunk)
        if not want or h.hexdigest() != want:
            tmp.unlink()
            raise RuntimeError(f"{name}: sha256 {h.hexdigest()} is not the {want or 'missing'} PyPI lists")
        tmp.replace(directory / name)
        return directory / name
    raise RuntimeError(f"PyPI lists no sdist for {dist}=={version}")


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def build(package: str, versions: list[str], archives: Path, out: Path, git: Path | None = None,
          log=print, spec: PackageSpec | None = None, runtime_dir: Path | None = None) -> Path:
    """Read each release statically; where ``runtime_dir`` holds an introspection of a release
    (tools/torch_introspect.py), the runtime decides and every difference it settles is logged."""
    spec = spec or PACKAGES[package]
    archives.mkdir(parents=True, exist_ok=True)
    snaps, files, labels, runtime = [], [], [], []
    statics, intros = [], []  # per release: the static reading before the runtime's, the introspection
    for v in versions:
        found, tag = None, None
        # A .postN on PyPI that has no tag of its own: the tag of its base release.
        tags = [spec.git_tag.format(version=v), spec.git_tag.format(version=v.split(".post")[0])]
        if spec.tag_of is not None:
            tags = [t for t in [spec.tag_of(v)] if t]
        for tag in dict.fromkeys(tags):
            found = git_files(git, tag, spec) if git else None
            if found is not None:
                break
        if found is not None:
            sources, commit = found
            if spec.version_file:
                ref = f"g{commit[:9]}" if v == "HEAD" else re.sub("[^A-Za-z0-9.]", ".", v)
                label = f"{_version_at(git, commit, spec.version_file)}+{ref}"
                labels.append(label)
            files.append(f"{labels[-1] if spec.version_file else v}: git {tag} {commit}")
        else:
            path = download(spec, v, archives)
            sources = archive_files(path, spec.roots)
            files.append(f"{path.name} sha256:{sha256(path)}")
        snap, why_open = snapshot(sources, spec)
        intro = introspection.find(runtime_dir, package, v) if runtime_dir else None
        statics.append(snap)
        intros.append(intro)
        if intro is None:
            added = introspection.add_cxx_names(snap, package, v, data_dir("version_matrix") / "cxx_names.toml")
            if added:
                log(f"{v}: read statically; {added} names torch creates in C++ added from cxx_names.toml")
        if intro is not None:
            snap, settled = introspection.merge(snap, intro)
            runtime.append(f"{v}: {intro.provenance}")
            log(f"{v}: run time decides ({intro.provenance}); {len(settled)} differences settled:")
            for line in settled:
                log(f"  {v} {line}")
        snaps.append(snap)
        opened = {m: why_open[m] for m in snap if snap[m] is not None and snap[m].open and m in why_open}
        log(f"{v}: {sum(1 for m in snap.values() if m)} modules" + (f"; open: {opened}" if opened else ""))
    seen = introspection.static_names(statics)
    for i, v in enumerate(versions):
        added, dropped = introspection.between(i, snaps, statics, intros, seen)
        if added or dropped:
            log(f"{v}: read statically, between releases seen at run time: {added} names both showed added, "
                f"{dropped} names both refuted dropped")
    command = f"aicompat matrix build {package} --versions " + ",".join(versions) + (" --git REPO" if git else "")
    text = encode(package, labels if spec.version_file else versions, snaps, files, command, spec.note,
                  runtime=runtime)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    write_index(out.parent, package, spec)
    return out


def write_index(directory: Path, package: str, spec: PackageSpec) -> None:
    """``index.toml``: which import roots each table covers, so a run loads only the tables it needs."""
    from ..base.toml_compat import tomllib

    path = directory / "index.toml"
    entries = {}
    if path.is_file():
        entries = tomllib.loads(path.read_text()).get("package", {})
    entries[package] = {"import": list(spec.roots)}
    lines = ["# Import roots of each generated API table; maintained by `aicompat matrix build`.", ""]
    for name in sorted(entries):
        roots = ", ".join(f'"{r}"' for r in entries[name]["import"])
        lines += [f'[package."{name}"]', f"import = [{roots}]", ""]
    path.write_text("\n".join(lines))


def main(args) -> int:
    from ..matrix import default_matrix

    if args.package not in PACKAGES:
        print(f"aicompat: error: no builder for {args.package!r} (known: {', '.join(PACKAGES)})", file=sys.stderr)
        return 2
    if args.versions:
        versions = [v.strip() for v in args.versions.split(",") if v.strip()]
    else:  # every release the matrix lists (releases.toml, from PyPI)
        versions = [str(v) for v in default_matrix().releases(PACKAGES[args.package].dist)]
        if not versions:
            print(f"aicompat: error: no releases of {args.package} in releases.toml; pass --versions", file=sys.stderr)
            return 2
    out = Path(args.out) if args.out else Path("version_matrix") / "api" / f"{args.package}.toml"
    runtime_dir = Path(args.introspect) if getattr(args, "introspect", None) else out.parent.parent / "introspect"
    build(args.package, versions, Path(args.archives), out, git=Path(args.git) if args.git else None,
          runtime_dir=runtime_dir)
    print(f"wrote {out}")
    return 0

