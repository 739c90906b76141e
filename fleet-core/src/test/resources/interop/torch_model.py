"""The PyTorch side of TorchInteropTest: the same model as the Java test, weights in and out as safetensors.

    torch_model.py export DIR   writes DIR/torch.safetensors (a state_dict), DIR/inputs.safetensors and
                                DIR/expected.safetensors (the logits in float32 and float64)
    torch_model.py check DIR    loads DIR/fleet.safetensors (a state_dict written by Fleet4J) strictly, runs it on
                                DIR/inputs.safetensors and prints how far DIR/fleet_logits.safetensors is from its
                                float64 logits, next to how far its own float32 logits are

safetensors files are read and written by safetensors_io.py beside this script.
"""
import sys

import torch

from safetensors_io import read, write


class Model(torch.nn.Module):
    """ids [N] and x [N, 8] -> logits [N, 4]; the Java test builds the same layers in the same order."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 4)
        self.fc1 = torch.nn.Linear(12, 16)
        self.bn = torch.nn.BatchNorm1d(16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, ids, x):
        h = torch.relu(self.fc1(torch.cat([self.emb(ids), x], dim=1)))
        return self.fc2(self.bn(h))


def logits(model, inputs, dtype):
    m = Model().to(dtype)
    m.load_state_dict({k: (v.to(dtype) if v.is_floating_point() else v) for k, v in model.state_dict().items()})
    m.eval()
    with torch.no_grad():
        return m(inputs["ids"], inputs["x"].to(dtype))


def export(d):
    torch.manual_seed(7)
    model = Model()
    with torch.no_grad():
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2.0)
        model.bn.weight.uniform_(0.5, 1.5)
        model.bn.bias.uniform_(-0.5, 0.5)
    inputs = {"ids": torch.randint(0, 10, (32,)), "x": torch.randn(32, 8)}
    write(d + "/torch.safetensors", model.state_dict())
    write(d + "/inputs.safetensors", inputs)
    write(d + "/expected.safetensors", {"logits32": logits(model, inputs, torch.float32),
                                        "logits64": logits(model, inputs, torch.float64)})


def check(d):
    model = Model()
    model.load_state_dict(read(d + "/fleet.safetensors"), strict=True)
    inputs = read(d + "/inputs.safetensors")
    fleet = read(d + "/fleet_logits.safetensors")["logits"].double()
    l64 = logits(model, inputs, torch.float64)
    l32 = logits(model, inputs, torch.float32).double()
    print("fleet_vs_float64 %.3e torch_float32_vs_float64 %.3e max_abs_logit %.3e"
          % ((fleet - l64).abs().max().item(), (l32 - l64).abs().max().item(), l64.abs().max().item()))


if __name__ == "__main__":
    {"export": export, "check": check}[sys.argv[1]](sys.argv[2])
