"""Mixed-precision evaluator; the autocast context is built once and reused."""
import torch


class Evaluator:
    def __init__(self, model: torch.nn.Module, dtype=torch.bfloat16):
        self.model = model.eval()
        self.autocast = torch.amp.autocast("cuda", dtype=dtype)

    @torch.no_grad()
    def evaluate(self, loader):
        correct = total = 0
        for x, y in loader:
            with self.autocast:
                logits = self.model(x.cuda(non_blocking=True))
            correct += (logits.argmax(-1) == y.cuda()).sum().item()
            total += y.numel()
        return correct / max(total, 1)
