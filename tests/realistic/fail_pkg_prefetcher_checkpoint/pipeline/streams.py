"""Host-to-device prefetching on a side CUDA stream."""
import torch
from torch.utils.data import DataLoader


class CUDAPrefetcher:
    def __init__(self, loader: DataLoader, device: str = "cuda"):
        self.loader = loader
        self.device = device
        self.stream = torch.cuda.Stream()
        self.batches_seen = 0
        self._iter = None
        self._next = None

    def __iter__(self):
        self._iter = iter(self.loader)
        self._preload()
        return self

    def _preload(self):
        try:
            batch = next(self._iter)
        except StopIteration:
            self._next = None
            return
        with torch.cuda.stream(self.stream):
            self._next = [t.to(self.device, non_blocking=True) for t in batch]

    def __next__(self):
        torch.cuda.current_stream().wait_stream(self.stream)
        batch = self._next
        if batch is None:
            raise StopIteration
        self.batches_seen += 1
        self._preload()
        return batch
