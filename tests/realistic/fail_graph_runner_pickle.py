"""Decode-step runner that keeps one captured CUDA graph per batch size (vLLM-style)."""
import pickle

import torch


class GraphRunner:
    def __init__(self, model: torch.nn.Module, batch_sizes=(1, 2, 4, 8)):
        self.model = model
        self.batch_sizes = list(batch_sizes)
        self.graphs = {}
        self.inputs = {}
        self.outputs = {}

    @torch.no_grad()
    def capture(self, dim: int):
        for bs in self.batch_sizes:
            x = torch.zeros(bs, dim, device="cuda")
            self.model(x)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                y = self.model(x)
            self.graphs[bs] = g
            self.inputs[bs] = x
            self.outputs[bs] = y

    def run(self, x: torch.Tensor) -> torch.Tensor:
        bs = x.shape[0]
        self.inputs[bs].copy_(x)
        self.graphs[bs].replay()
        return self.outputs[bs]


if __name__ == "__main__":
    runner = GraphRunner(torch.nn.Linear(256, 256).cuda().eval())
    runner.capture(256)
    blob = pickle.dumps(runner)
