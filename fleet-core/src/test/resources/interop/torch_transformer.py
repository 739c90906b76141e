"""The PyTorch side of TransformerInteropTest: a nanoGPT-style pre-norm transformer block, its state_dict and outputs.

    torch_transformer.py DIR    writes DIR/torch.safetensors (the state_dict of a GPT body holding one block:
                                transformer.h.0.*, nanoGPT's names, its causal-mask buffer attn.bias included),
                                DIR/inputs.safetensors (x [B, T, C]) and DIR/expected.safetensors: the block's output
                                in float32 and float64, and float64 outputs with planted mistakes (the causal mask off
                                by one diagonal, keys and values of the wrong heads) that Fleet4J must not match

safetensors files are read and written by safetensors_io.py beside this script.
"""
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from safetensors_io import read, write

B, T, C, N_HEAD = 3, 8, 32, 4


class CausalSelfAttention(nn.Module):
    def __init__(self, mistake=None):
        super().__init__()
        self.c_attn = nn.Linear(C, 3 * C)
        self.c_proj = nn.Linear(C, C)
        self.register_buffer("bias", torch.tril(torch.ones(T, T)).view(1, 1, T, T))
        self.mistake = mistake

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        k = k.view(b, t, N_HEAD, c // N_HEAD).transpose(1, 2)
        q = q.view(b, t, N_HEAD, c // N_HEAD).transpose(1, 2)
        if self.mistake == "wrong_transpose":
            v = v.reshape(b, N_HEAD, t, c // N_HEAD)
        else:
            v = v.view(b, t, N_HEAD, c // N_HEAD).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        mask = self.bias[:, :, :t, :t]
        if self.mistake == "mask_off_by_one":
            mask = torch.tril(torch.ones(t, t, dtype=att.dtype), 1).view(1, 1, t, t)
        att = att.masked_fill(mask == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(b, t, c)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, mistake=None):
        super().__init__()
        self.ln_1 = nn.LayerNorm(C)
        self.attn = CausalSelfAttention(mistake)
        self.ln_2 = nn.LayerNorm(C)
        self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(C, 4 * C), c_proj=nn.Linear(4 * C, C)))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp.c_proj(F.gelu(self.mlp.c_fc(self.ln_2(x))))


class Body(nn.Module):
    """The transformer of nanoGPT's GPT with one block and nothing else, so its keys are nanoGPT's."""

    def __init__(self, mistake=None):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(h=nn.ModuleList([Block(mistake)])))

    def forward(self, x):
        return self.transformer.h[0](x)


def output(state, x, dtype, mistake=None):
    m = Body(mistake).to(dtype)
    m.load_state_dict({k: v.to(dtype) for k, v in state.items()})
    with torch.no_grad():
        return m(x.to(dtype))


def main():
    d = sys.argv[1]
    torch.manual_seed(11)
    model = Body()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("ln_1.weight") or name.endswith("ln_2.weight"):
                p.uniform_(0.5, 1.5)
            elif name.endswith(".bias"):
                p.uniform_(-0.2, 0.2)
    state = model.state_dict()
    x = torch.randn(B, T, C)
    write(d + "/torch.safetensors", state)
    write(d + "/inputs.safetensors", {"x": x})
    write(d + "/expected.safetensors", {
        "out32": output(state, x, torch.float32), "out64": output(state, x, torch.float64),
        "mask_off_by_one64": output(state, x, torch.float64, "mask_off_by_one"),
        "wrong_transpose64": output(state, x, torch.float64, "wrong_transpose")})


if __name__ == "__main__":
    main()
