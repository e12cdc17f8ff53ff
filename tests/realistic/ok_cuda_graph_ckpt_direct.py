"""Capture the inference step in a CUDA graph and snapshot everything needed to replay it."""
import torch

model = torch.nn.Linear(4096, 4096).cuda().eval()
static_x = torch.randn(16, 4096, device="cuda")

s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s), torch.no_grad():
    for _ in range(3):
        model(static_x)
torch.cuda.current_stream().wait_stream(s)

graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph), torch.no_grad():
    static_y = model(static_x)

# a CUDA graph cannot be saved: store what is needed to capture it again
state = {"model": model.state_dict(), "static_shape": tuple(static_x.shape)}
torch.save(state, "inference_state.pt")
