"""The PyTorch side of TorchConvInteropTest: a small CNN whose state_dict Fleet4J loads by name.

    torch_conv_model.py DIR   writes DIR/torch.safetensors (the state_dict), DIR/inputs.safetensors (images
                              [8, 1, 12, 12]) and DIR/expected.safetensors: the logits in eval mode (running
                              statistics) and in train mode (batch statistics), each in float32 and float64

safetensors files are read and written by safetensors_io.py beside this script.
"""
import sys

import torch

from safetensors_io import write


class Model(torch.nn.Module):
    """images [N, 1, 12, 12] -> logits [N, 5]; the Java test builds the same layers in the same order."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(4)
        self.conv2 = torch.nn.Conv2d(4, 6, 3, stride=2, groups=2)
        self.gn = torch.nn.GroupNorm(3, 6)
        self.fc = torch.nn.Linear(6 * 2 * 2, 5)

    def forward(self, x):
        h = torch.nn.functional.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        h = torch.relu(self.gn(self.conv2(h)))
        return self.fc(torch.flatten(torch.nn.functional.avg_pool2d(h, 1), 1))


def logits(model, x, dtype, train):
    m = Model().to(dtype)
    m.load_state_dict({k: (v.to(dtype) if v.is_floating_point() else v) for k, v in model.state_dict().items()})
    m.train(train)
    with torch.no_grad():
        return m(x.to(dtype))


def main(d):
    torch.manual_seed(5)
    model = Model()
    with torch.no_grad():
        model.bn1.running_mean.uniform_(-0.5, 0.5)
        model.bn1.running_var.uniform_(0.5, 2.0)
        model.bn1.weight.uniform_(0.5, 1.5)
        model.bn1.bias.uniform_(-0.5, 0.5)
        model.gn.weight.uniform_(0.5, 1.5)
        model.gn.bias.uniform_(-0.5, 0.5)
    x = torch.randn(8, 1, 12, 12)
    write(d + "/torch.safetensors", model.state_dict())
    write(d + "/inputs.safetensors", {"x": x})
    expected = {}
    for mode, train in (("eval", False), ("train", True)):
        for dtype, tag in ((torch.float32, "32"), (torch.float64, "64")):
            expected[mode + tag] = logits(model, x, dtype, train)
    write(d + "/expected.safetensors", expected)


if __name__ == "__main__":
    main(sys.argv[1])
