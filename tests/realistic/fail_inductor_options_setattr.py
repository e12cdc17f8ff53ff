"""Compile the model with tuned inductor settings read from the experiment config."""
import torch
import torch._inductor.config as inductor_config

EXPERIMENT = {
    "compile": True,
    "inductor": {
        "coordinate_descent_tuning": True,
        "epilogue_fusion": True,
        "max_autotune_gemm_search_space": "EXHAUSTIVE",
    },
}


def apply_inductor_settings(settings):
    for name, value in settings.items():
        setattr(inductor_config, name, value)


def build(model):
    if EXPERIMENT["compile"]:
        apply_inductor_settings(EXPERIMENT["inductor"])
        model = torch.compile(model, mode="max-autotune")
    return model
