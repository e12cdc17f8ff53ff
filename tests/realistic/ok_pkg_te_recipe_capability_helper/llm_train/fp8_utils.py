"""Transformer Engine FP8 recipe for the GPU this rank runs on."""
import torch
from transformer_engine.common.recipe import DelayedScaling, Format, MXFP8BlockScaling


def get_fp8_recipe():
    major, _ = torch.cuda.get_device_capability()
    # MXFP8 needs sm_100 ("Device compute capability 10.0 or higher required for MXFP8 execution.")
    if major == 10:
        return MXFP8BlockScaling(fp8_format=Format.E4M3)
    return DelayedScaling(fp8_format=Format.HYBRID, amax_history_len=16, amax_compute_algo="max")
