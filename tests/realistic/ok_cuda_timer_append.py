"""Per-step GPU timing with CUDA events; the timer is dumped with the run's metrics."""
import pickle

import torch


class CudaTimer:
    def __init__(self):
        self.records = []

    def start(self):
        self.records.append(torch.cuda.Event(enable_timing=True))
        self.records[-1].record()

    def stop(self):
        self.records.append(torch.cuda.Event(enable_timing=True))
        self.records[-1].record()

    def elapsed_ms(self) -> list[float]:
        torch.cuda.synchronize()
        return [s.elapsed_time(e) for s, e in zip(self.records[::2], self.records[1::2])]


def run(model, batches):
    timer = CudaTimer()
    for x in batches:
        timer.start()
        model(x)
        timer.stop()
    return timer


if __name__ == "__main__":
    model = torch.nn.Linear(1024, 1024).cuda()
    timer = run(model, [torch.randn(256, 1024, device="cuda") for _ in range(20)])
    with open("timings.pkl", "wb") as f:
        pickle.dump({"step_ms": timer.elapsed_ms()}, f)
