"""Training run settings."""
from dataclasses import dataclass


@dataclass
class TrainConfig:
    lr: float = 3e-4
    weight_decay: float = 0.1
    batch_size: int = 32
    max_steps: int = 10_000
    grad_clip: float = 1.0
    compile: bool = True
    # CUDA graphs cut the launch overhead of the small decoder blocks
    compile_mode: str = "reduce-overhead"
    log_every: int = 50
