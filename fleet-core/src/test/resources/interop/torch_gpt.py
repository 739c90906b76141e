"""nanoGPT's GPT in PyTorch, and the PyTorch side of the gpt program's step-by-step comparison (GptTorchParityIT).

    torch_gpt.py DIR

DIR/config.json: {"vocab_size", "block_size", "n_layer", "n_head", "n_embd", "seed", "runs": [{"name", "optimizer"
("adamw" or "momentum"), "weight_decay", "betas", "eps", "momentum", "clip" (0: none), "mistakes": [...]}]};
DIR/train.safetensors: "train", the training text's character ids (int64); DIR/windows.txt: a line per step of the
global batch's window starts (the file the gpt program reads with --windows); DIR/lr.safetensors: "RUN.lr", the
learning rate of every step as Fleet4J's lr_schedule computes it (float32 values).

Writes DIR/init.safetensors, the initial state_dict (nanoGPT's initialisation, float32, seeded), and
DIR/expected.safetensors with, for each run and each of float32 ("f32"), float64 ("f64") and every planted mistake
(float64): "RUN.TAG.loss", the loss of every step (float64), and "RUN.TAG.NAME", every parameter after the last step.
The mistakes: "wrong_transpose" (the values' heads read from the wrong layout, as a reshape instead of a transpose),
"mask_off" (no causal mask), "clip_before_allreduce" (each half of the global batch, one rank's share on two ranks,
clipped on its own before the two are averaged).

Clipping scales the gradients by clip / norm when their global norm exceeds clip, as Paddle's ClipGradByGlobalNorm and
Fleet4J do (PyTorch's clip_grad_norm_ divides by norm + 1e-6). AdamW decays the 2-D weights (embeddings included)
and not the biases and layer norms: nanoGPT's configure_optimizers, Fleet4J's AdamW.notBiasOrNorm.

safetensors files are read and written by safetensors_io.py beside this script.
"""
import json
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from safetensors_io import read, write  # noqa: E402


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, mistake=None):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head
        self.n_embd = n_embd
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))
        self.mistake = mistake

    def forward(self, x):
        b, t, c = x.size()
        h = self.n_head
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(b, t, h, c // h).transpose(1, 2)
        q = q.view(b, t, h, c // h).transpose(1, 2)
        if self.mistake == "wrong_transpose":
            v = v.reshape(b, h, t, c // h)
        else:
            v = v.view(b, t, h, c // h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        if self.mistake != "mask_off":
            att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size, mistake=None):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size, mistake)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(n_embd, 4 * n_embd), c_proj=nn.Linear(4 * n_embd, n_embd)))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp.c_proj(F.gelu(self.mlp.c_fc(self.ln_2(x))))


class GPT(nn.Module):
    """nanoGPT's GPT without dropout: its module names, lm_head tied to wte, its initialisation."""

    def __init__(self, vocab_size, block_size, n_layer, n_head, n_embd, mistake=None):
        super().__init__()
        self.block_size = block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd),
            wpe=nn.Embedding(block_size, n_embd),
            h=nn.ModuleList([Block(n_embd, n_head, block_size, mistake) for _ in range(n_layer)]),
            ln_f=nn.LayerNorm(n_embd)))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets):
        t = idx.size(1)
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def decayed(name):
    """nanoGPT's rule (the 2-D weights), which is Fleet4J's AdamW.notBiasOrNorm for these names."""
    return not (name.endswith(".bias") or ".ln_" in name or name.startswith("transformer.ln_f"))


def batches(train, windows, block_size):
    for starts in windows:
        idx = torch.stack([train[s:s + block_size] for s in starts])
        tgt = torch.stack([train[s + 1:s + 1 + block_size] for s in starts])
        yield idx, tgt


def clip_(grads, clip):
    norm = torch.sqrt(sum((g * g).sum() for g in grads))
    if norm > clip:
        for g in grads:
            g.mul_(clip / norm)


def train(cfg, run, init, train_ids, windows, lrs, dtype, mistake=None):
    model = GPT(cfg["vocab_size"], cfg["block_size"], cfg["n_layer"], cfg["n_head"], cfg["n_embd"], mistake)
    model.load_state_dict(init)
    model = model.to(dtype)
    params = dict(model.named_parameters())
    if run["optimizer"] == "adamw":
        groups = [{"params": [p for n, p in params.items() if decayed(n)], "weight_decay": run["weight_decay"]},
                  {"params": [p for n, p in params.items() if not decayed(n)], "weight_decay": 0.0}]
        opt = torch.optim.AdamW(groups, lr=lrs[0], betas=tuple(run["betas"]), eps=run["eps"])
    else:
        opt = torch.optim.SGD(list(params.values()), lr=lrs[0], momentum=run["momentum"])
    losses = []
    for step, (idx, tgt) in enumerate(batches(train_ids, windows, cfg["block_size"])):
        for g in opt.param_groups:
            g["lr"] = lrs[step]
        opt.zero_grad(set_to_none=True)
        if mistake == "clip_before_allreduce":
            half = idx.size(0) // 2
            shares = []
            for part in (slice(0, half), slice(half, None)):
                for p in params.values():
                    p.grad = None
                model(idx[part], tgt[part]).backward()
                share = [p.grad.clone() for p in params.values()]
                clip_(share, run["clip"])
                shares.append(share)
            for p, a, b in zip(params.values(), shares[0], shares[1]):
                p.grad = (a + b) / 2
            with torch.no_grad():
                loss = model(idx, tgt)
        else:
            loss = model(idx, tgt)
            loss.backward()
            if run["clip"] > 0:
                clip_([p.grad for p in params.values()], run["clip"])
        opt.step()
        losses.append(loss.item())
    return losses, {n: p.detach().to(torch.float64) for n, p in params.items()}


def main():
    d = sys.argv[1]
    with open(d + "/config.json") as f:
        cfg = json.load(f)
    train_ids = read(d + "/train.safetensors")["train"]
    with open(d + "/windows.txt") as f:
        windows = [[int(s) for s in line.split()] for line in f if line.strip()]
    rates = read(d + "/lr.safetensors")
    torch.manual_seed(cfg["seed"])
    init = GPT(cfg["vocab_size"], cfg["block_size"], cfg["n_layer"], cfg["n_head"], cfg["n_embd"]).state_dict()
    write(d + "/init.safetensors", init)
    out = {}
    for run in cfg["runs"]:
        lrs = rates[run["name"] + ".lr"].tolist()
        tags = [("f32", torch.float32, None), ("f64", torch.float64, None)]
        tags += [(m, torch.float64, m) for m in run["mistakes"]]
        for tag, dtype, mistake in tags:
            losses, params = train(cfg, run, init, train_ids, windows, lrs, dtype, mistake)
            out["%s.%s.loss" % (run["name"], tag)] = torch.tensor(losses, dtype=torch.float64)
            for n, p in params.items():
                out["%s.%s.%s" % (run["name"], tag, n)] = p
    write(d + "/expected.safetensors", out)


if __name__ == "__main__":
    main()
