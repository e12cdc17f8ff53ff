"""FP8 settings of the run and the Transformer Engine recipe they select."""
from dataclasses import dataclass

from transformer_engine.common import recipe


@dataclass
class FP8Config:
    enabled: bool = True
    # block-scaled MXFP8 is the most accurate FP8 recipe
    recipe_name: str = "current"
    amax_history_len: int = 1024


def build_fp8_recipe(cfg: FP8Config):
    if cfg.recipe_name == "mxfp8":
        return recipe.MXFP8BlockScaling(fp8_format=recipe.Format.E4M3)
    if cfg.recipe_name == "current":
        return recipe.Float8CurrentScaling(fp8_format=recipe.Format.HYBRID)
    return recipe.DelayedScaling(
        fp8_format=recipe.Format.HYBRID, amax_history_len=cfg.amax_history_len, amax_compute_algo="max"
    )
