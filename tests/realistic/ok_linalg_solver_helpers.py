"""Linear-algebra helpers of a small physics-fitting package, ported to torch.linalg:
least-squares fits, a symmetric eigensolver for the covariance and a rank check."""

from dataclasses import dataclass

import torch


@dataclass
class FitConfig:
    ridge: float = 1e-6
    top_k: int = 3


def _regularize(gram: torch.Tensor, ridge: float) -> torch.Tensor:
    eye = torch.eye(gram.shape[-1], dtype=gram.dtype, device=gram.device)
    return gram + ridge * eye


def principal_axes(samples: torch.Tensor, cfg: FitConfig) -> torch.Tensor:
    centered = samples - samples.mean(dim=0, keepdim=True)
    cov = centered.T @ centered / (samples.shape[0] - 1)
    evals, evecs = torch.linalg.eigh(_regularize(cov, cfg.ridge), UPLO="U")
    order = evals.argsort(descending=True)[: cfg.top_k]
    return evecs[:, order]


def solve_normal_equations(design: torch.Tensor, target: torch.Tensor, cfg: FitConfig) -> torch.Tensor:
    gram = _regularize(design.T @ design, cfg.ridge)
    rhs = design.T @ target
    solution = torch.linalg.solve(gram, rhs)
    return solution


def is_full_rank(design: torch.Tensor) -> bool:
    return int(torch.linalg.matrix_rank(design)) == min(design.shape)


class Fitter:
    def __init__(self, cfg: FitConfig | None = None) -> None:
        self.cfg = cfg or FitConfig()

    def fit(self, design: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        if not is_full_rank(design):
            raise ValueError("design matrix is rank deficient")
        return solve_normal_equations(design, target, self.cfg)
