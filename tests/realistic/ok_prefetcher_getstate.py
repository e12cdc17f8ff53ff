"""Resumable GPU data feeder: its position is checkpointed together with the model."""
import torch


class DeviceFeeder:
    def __init__(self, dataset: torch.Tensor, batch_size: int):
        self.dataset = dataset
        self.batch_size = batch_size
        self.position = 0
        self.stream = torch.cuda.Stream()

    def __getstate__(self):
        # a CUDA stream cannot be pickled; it is recreated on load
        state = self.__dict__.copy()
        del state["stream"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.stream = torch.cuda.Stream()

    def next_batch(self) -> torch.Tensor:
        start = self.position
        self.position = (self.position + self.batch_size) % len(self.dataset)
        with torch.cuda.stream(self.stream):
            batch = self.dataset[start : start + self.batch_size].cuda(non_blocking=True)
        torch.cuda.current_stream().wait_stream(self.stream)
        return batch


def checkpoint(model, feeder: DeviceFeeder, step: int, path: str):
    torch.save({"model": model.state_dict(), "feeder": feeder, "step": step}, path)


if __name__ == "__main__":
    model = torch.nn.Linear(64, 64).cuda()
    feeder = DeviceFeeder(torch.randn(10_000, 64).pin_memory(), batch_size=128)
    for step in range(100):
        model(feeder.next_batch()).sum().backward()
    checkpoint(model, feeder, 100, "ckpt.pt")
