# request: save a whole fine-tuned model object to disk and load it back for inference ; fleet: A10G ; pins: torch==2.6.0
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, n_in=768, n_out=10):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, 256), nn.ReLU(), nn.Linear(256, n_out))

    def forward(self, x):
        return self.net(x)


def export(model, path="classifier.pt"):
    torch.save(model, path)


def load(path="classifier.pt", device="cuda"):
    model = torch.load(path, map_location=device)
    model.eval()
    return model


if __name__ == "__main__":
    m = Classifier().cuda()
    export(m)
    m2 = load()
    print(m2(torch.randn(4, 768, device="cuda")).argmax(-1))
