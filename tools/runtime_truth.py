"""Run the hardware and runtime facts of version_matrix/ on a real machine and record
what happened, as data the matrix can cite ("observed on sm_90, torch 2.11.0+cu130").

    python tools/runtime_truth.py [--out bench/truth] [--only NAME,...] [--timeout 60]

Each fact is a tiny program run in its own interpreter (``python -c``) with a time limit,
so a crash, a hang or a CUDA error in one cannot disturb the others; the whole run
stays under five minutes. A fact that needs what the machine lacks (a CUDA device,
flash-attn, Transformer Engine) is recorded as skipped with the reason, never guessed.
Results go to ``<out>/<device>-torch<release>.toml``: per fact the outcome ("ok",
"error", "skipped", "timeout"), the exception's type and first line, and what the matrix
says should happen, so a disagreement is visible at a glance.

Not run in CI (CI has no GPU). Run it on a GPU machine, commit its output, and cite it in
the matrix entry it confirms or corrects.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# name -> (needs, expected per the matrix, program). ``needs``: "cuda", a module name, or "".
# The program prints one JSON object on its last line: {"value": ...} or raises.
FACTS: dict[str, tuple[str, str, str]] = {
    "device": ("cuda", "capability and name of device 0", """
        import torch
        p = torch.cuda.get_device_properties(0)
        print(json.dumps({"value": [p.major, p.minor, p.name]}))
    """),
    "fp8_scaled_mm": ("cuda", "fp8.toml op._scaled_mm: runs from compute capability 8.9", """
        import torch
        a = torch.randn(32, 32, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(32, 32, device="cuda").to(torch.float8_e4m3fn).t()
        one = torch.ones((), device="cuda")
        out = torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        print(json.dumps({"value": list(out.shape)}))
    """),
    "fp8_scaled_mm_e5m2_pair": ("cuda", "issue 12: e5m2 x e5m2 is refused", """
        import torch
        a = torch.randn(32, 32, device="cuda").to(torch.float8_e5m2)
        b = torch.randn(32, 32, device="cuda").to(torch.float8_e5m2).t()
        one = torch.ones((), device="cuda")
        out = torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        print(json.dumps({"value": list(out.shape)}))
    """),
    "fp8_scaled_mm_nvfp4": ("cuda", "fp8.toml operands.nvfp4: FP4 operands fail below 10.0", """
        import torch
        a = torch.zeros(128, 64, dtype=torch.uint8, device="cuda").view(torch.float4_e2m1fn_x2)
        b = torch.zeros(128, 64, dtype=torch.uint8, device="cuda").view(torch.float4_e2m1fn_x2).t()
        s = torch.ones(128 * 8, device="cuda").to(torch.float8_e4m3fn)  # 1x16 blocks, swizzled size
        out = torch._scaled_mm(a, b, s, s, out_dtype=torch.bfloat16)
        print(json.dumps({"value": list(out.shape)}))
    """),
    "fp8_scaled_mm_mx_scales": ("cuda", "fp8.toml operands.mx_scales: e8m0 block scales fail below 10.0", """
        import torch
        a = torch.randn(128, 128, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(128, 128, device="cuda").to(torch.float8_e4m3fn).t()
        s = torch.ones(128 * 4, device="cuda").to(torch.float8_e8m0fnu)  # 1x32 blocks, swizzled size
        out = torch._scaled_mm(a, b, s, s, out_dtype=torch.bfloat16)
        print(json.dumps({"value": list(out.shape)}))
    """),
    "fp8_scaled_mm_fnuz": ("cuda", "fp8.toml operands.fnuz: the ROCm fnuz dtypes fail on every NVIDIA GPU", """
        import torch
        a = torch.randn(32, 32, device="cuda").to(torch.float8_e4m3fnuz)
        b = torch.randn(32, 32, device="cuda").to(torch.float8_e4m3fnuz).t()
        one = torch.ones((), device="cuda")
        out = torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        print(json.dumps({"value": list(out.shape)}))
    """),
    "sdpa_flash_head_dim_512": ("cuda", "attention.toml vhead.sdpa: the flash backend takes head dims up to 256", """
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
        q = torch.randn(1, 4, 64, 512, device="cuda", dtype=torch.bfloat16)
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            out = torch.nn.functional.scaled_dot_product_attention(q, q, q)
        print(json.dumps({"value": list(out.shape)}))
    """),
    "sdpa_flash_v_head_dim_differs": ("cuda", "attention.toml vhead.sdpa: flash needs equal q/k/v head dims", """
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
        q = torch.randn(1, 4, 64, 192, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(1, 4, 64, 128, device="cuda", dtype=torch.bfloat16)
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            out = torch.nn.functional.scaled_dot_product_attention(q, q, v)
        print(json.dumps({"value": list(out.shape)}))
    """),
    "sdpa_cudnn_head_dim_160": ("cuda", "attention.toml limit.sdpa_cudnn_head_dim: cuDNN alone refuses head dim 160 "
                                "(max 128 off sm_90/sm_10x; 256 there from torch 2.8 with the pinned cuDNN)", """
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
        q = torch.randn(1, 4, 64, 160, device="cuda", dtype=torch.bfloat16)
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            out = torch.nn.functional.scaled_dot_product_attention(q, q, q)
        print(json.dumps({"value": list(out.shape)}))
    """),
    "sdpa_cudnn_head_dim_160_backward": ("cuda", "attention.toml limit.sdpa_cudnn_head_dim training: torch 2.14+ on "
                                         "sm_90/sm_10x trains only d <= 128, 192/128 or 256/256", """
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
        q = torch.randn(1, 4, 64, 160, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            out = torch.nn.functional.scaled_dot_product_attention(q, q, q)
        out.sum().backward()
        print(json.dumps({"value": list(q.grad.shape)}))
    """),
    "pickle_cuda_stream": ("cuda", "pickle.toml unpicklable torch.cuda.Stream: TypeError", """
        import pickle, torch
        pickle.dumps(torch.cuda.Stream())
        print(json.dumps({"value": "pickled"}))
    """),
    "pickle_cuda_event": ("cuda", "pickle.toml unpicklable torch.cuda.Event: TypeError", """
        import pickle, torch
        pickle.dumps(torch.cuda.Event())
        print(json.dumps({"value": "pickled"}))
    """),
    "bf16_supported": ("cuda", "probes.toml torch_bf16: true from sm_80", """
        import torch
        print(json.dumps({"value": torch.cuda.is_bf16_supported()}))
    """),
    "load_weights_only_namespace": ("", "pickle.toml weights_only: refused from torch 2.6", """
        import argparse, io, torch
        buf = io.BytesIO()
        torch.save({"args": argparse.Namespace(lr=1.0)}, buf)
        buf.seek(0)
        torch.load(buf)
        print(json.dumps({"value": "loaded"}))
    """),
    "load_weights_only_state_dict": ("", "pickle.toml weights_only: state_dict()s load", """
        import io, torch
        buf = io.BytesIO()
        torch.save({"model": torch.nn.Linear(2, 2).state_dict(), "step": 3}, buf)
        buf.seek(0)
        torch.load(buf)
        print(json.dumps({"value": "loaded"}))
    """),
    "compile_unknown_backend": ("", "compile.toml invalid_backend_error", """
        import torch
        torch.compile(lambda x: x + 1, backend="inductr")
        print(json.dumps({"value": "accepted"}))
    """),
    "flash_attn_head_dim_320": ("flash_attn", "attention.toml limit.fa2_head_dim: at most 256", """
        import torch
        from flash_attn import flash_attn_func
        q = torch.randn(1, 64, 4, 320, device="cuda", dtype=torch.bfloat16)
        out = flash_attn_func(q, q, q)
        print(json.dumps({"value": list(out.shape)}))
    """),
    "te_fp8_autocast": ("transformer_engine", "fp8.toml te_recipe.DelayedScaling: compute capability 8.9+", """
        import torch
        import transformer_engine.pytorch as te
        layer = te.Linear(64, 64).cuda()
        with te.fp8_autocast(enabled=True):
            out = layer(torch.randn(16, 64, device="cuda"))
        print(json.dumps({"value": list(out.shape)}))
    """),
}

_PRELUDE = "import json\n"
_NEEDS_PROBE = {
    "cuda": "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 3)",
}


def _available(need: str, timeout: float) -> tuple[bool, str]:
    if not need:
        return True, ""
    code = _NEEDS_PROBE.get(need, f"import importlib.util, sys; sys.exit(0 if importlib.util.find_spec({need!r}) else 3)")
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"checking for {need} timed out"
    if r.returncode == 0:
        return True, ""
    return False, "no CUDA device" if need == "cuda" else f"{need} is not installed"


def run_fact(program: str, timeout: float) -> dict:
    code = _PRELUDE + textwrap.dedent(program)
    t0 = time.monotonic()
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"outcome": "timeout", "seconds": round(time.monotonic() - t0, 1)}
    out = {"seconds": round(time.monotonic() - t0, 1)}
    if r.returncode == 0:
        last = (r.stdout.strip().splitlines() or ["{}"])[-1]
        try:
            out.update(outcome="ok", value=json.loads(last).get("value"))
        except json.JSONDecodeError:
            out.update(outcome="ok", value=last[:200])
        return out
    lines = [ln for ln in r.stderr.strip().splitlines() if ln.strip()]
    # The exception line: the first unindented line after the traceback's last frame
    # ("_pickle.UnpicklingError: Weights only load failed..."), whose message may go on.
    frames = [i for i, ln in enumerate(lines) if ln.startswith("  ")]
    rest = lines[frames[-1] + 1:] if frames else lines
    exc = next((ln for ln in rest if not ln.startswith(" ")), lines[-1] if lines else "")
    exc = re.sub(r"\x1b\[[0-9;]*m", "", exc)  # torch bolds part of its message
    out.update(outcome="error", error=exc[:400], returncode=r.returncode)
    return out


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return json.dumps(str(v))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "truth"))
    ap.add_argument("--only", help="comma-separated fact names")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per fact")
    args = ap.parse_args(argv)
    names = [n for n in (args.only.split(",") if args.only else FACTS) if n in FACTS]
    env = run_fact("import torch, platform\nprint(json.dumps({'value': [torch.__version__, "
                   "torch.version.cuda, platform.python_version()]}))", args.timeout)
    torch_v, cuda_v, py_v = env.get("value") or ["?", None, "?"]
    have: dict[str, tuple[bool, str]] = {}
    results = {}
    for name in names:
        need, expected, program = FACTS[name]
        if need not in have:
            have[need] = _available(need, args.timeout)
        ok, why = have[need]
        results[name] = run_fact(program, args.timeout) if ok else {"outcome": "skipped", "reason": why}
        results[name]["expected"] = expected
        print(f"{name}: {results[name]['outcome']} {results[name].get('error', results[name].get('reason', ''))}",
              flush=True)
    dev = results.get("device", {})
    device = (f"sm_{dev['value'][0]}{dev['value'][1]}" if dev.get("outcome") == "ok" else "cpu")
    label = f"{device}-torch{torch_v.split('+')[0]}"
    lines = [f"# tools/runtime_truth.py on {datetime.date.today().isoformat()}: {device}"
             f"{' (' + dev['value'][2] + ')' if dev.get('outcome') == 'ok' else ''}, torch {torch_v}, "
             f"CUDA {cuda_v}, Python {py_v}. Cite as: observed on {device}, torch {torch_v}.", ""]
    for name, r in results.items():
        lines.append(f"[fact.{name}]")
        for k in ("outcome", "value", "error", "reason", "returncode", "seconds", "expected"):
            if k in r and r[k] is not None:
                lines.append(f"{k} = {_toml_value(r[k])}")
        lines.append("")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{label}.toml").write_text("\n".join(lines))
    print(f"wrote {out / (label + '.toml')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
