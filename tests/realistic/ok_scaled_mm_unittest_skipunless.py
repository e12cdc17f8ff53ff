"""unittest suite for the FP8 linear used by the inference server."""
import unittest

import torch

TEST_CUDA = torch.cuda.is_available()
SM89OrLater = TEST_CUDA and torch.cuda.get_device_capability() >= (8, 9)


def fp8_linear(x: torch.Tensor, w_fp8: torch.Tensor, w_scale: torch.Tensor) -> torch.Tensor:
    x_scale = x.abs().max().float() / 448.0
    x_fp8 = (x / x_scale).to(torch.float8_e4m3fn)
    return torch._scaled_mm(x_fp8, w_fp8.t(), scale_a=x_scale, scale_b=w_scale, out_dtype=x.dtype)


class TestFP8Linear(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(1234)

    @unittest.skipUnless(SM89OrLater, "FP8 GEMM needs sm_89 or later")
    def test_matches_bf16(self):
        x = torch.randn(32, 4096, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(11008, 4096, device="cuda", dtype=torch.bfloat16)
        w_scale = w.abs().max().float() / 448.0
        w_fp8 = (w / w_scale).to(torch.float8_e4m3fn)
        y = fp8_linear(x, w_fp8, w_scale)
        self.assertEqual(y.shape, (32, 11008))
        torch.testing.assert_close(y, x @ w.t(), atol=2.0, rtol=0.1)


if __name__ == "__main__":
    unittest.main()
