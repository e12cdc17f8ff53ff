"""python train.py --epochs 3 --out run/trainer.pt"""
import argparse

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from trainer import Trainer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--out", default="trainer.pt")
    args = parser.parse_args()
    data = TensorDataset(torch.randn(2048, 32), torch.randint(0, 4, (2048,)))
    trainer = Trainer(nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 4)))
    trainer.fit(DataLoader(data, batch_size=64, pin_memory=True), epochs=args.epochs)
    torch.save(trainer.state_dict(), args.out)


if __name__ == "__main__":
    main()
