"""The PyTorch peer of TransformerOpsBench: forward and backward of one nanoGPT transformer block on one thread.

    torch_gpt_block.py [BATCH 64] [SEQ 64] [N_EMBD 128] [N_HEAD 4]

Reads commands from standard input, one a line, as TransformerOpsBench does: "warmup N" (answers "warm N"),
"measure N" (answers "ms MEDIAN P10 P90 tokens_per_s TPS cpu_ms MEDIAN", the last this thread's CPU time), "profile N" (the torch profiler's ops by self time, as
"op NAME MS_PER_STEP" lines, then "end") and "quit". The block is nanoGPT's (model.py: CausalSelfAttention without
flash attention, which PyTorch 1.13 lacks; MLP with exact GELU; dropout 0), the loss the mean of its output, and a step
computes every parameter's gradient (set to None before each step, as zero_grad does), no update."""
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from mlp_peer import set_threads  # noqa: E402


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head
        self.n_embd = n_embd
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
        q = q.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
        v = v.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(b, t, c)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x))))


def main():
    batch, seq, width, heads = ([int(a) for a in sys.argv[1:5]] + [64, 64, 128, 4][len(sys.argv) - 1:])[:4]
    blas_threads = set_threads(1)
    torch.manual_seed(1)
    model = Block(width, heads, seq)
    x = torch.rand(batch, seq, width) * 2 - 1
    tokens = batch * seq

    def step():
        for p in model.parameters():
            p.grad = None
        model(x).mean().backward()

    print("ready torch %s, %d thread(s), OpenBLAS threads %s" % (torch.__version__, torch.get_num_threads(),
                                                                blas_threads), flush=True)
    for line in sys.stdin:
        cmd = line.split()
        n = int(cmd[1]) if len(cmd) > 1 else 0
        if cmd[0] == "warmup":
            for _ in range(n):
                step()
            print("warm %d" % n)
        elif cmd[0] == "measure":
            ms = []
            cpu = []
            for _ in range(n):
                c0 = time.thread_time()
                t0 = time.perf_counter()
                step()
                ms.append((time.perf_counter() - t0) * 1e3)
                cpu.append((time.thread_time() - c0) * 1e3)
            ms.sort()
            cpu.sort()
            median = ms[n // 2]
            print("ms %.3f %.3f %.3f tokens_per_s %.0f cpu_ms %.3f" % (median, ms[n // 10], ms[n * 9 // 10],
                                                                     tokens / (median / 1e3), cpu[n // 2]))
        elif cmd[0] == "profile":
            with torch.profiler.profile() as prof:
                for _ in range(n):
                    step()
            for e in sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:25]:
                print("op %s %.3f" % (e.key, e.self_cpu_time_total / 1e3 / n))
            print("end")
        elif cmd[0] == "quit":
            return
        else:
            print("error: unknown command '%s' (warmup N, measure N, profile N, quit)" % line.strip())
        sys.stdout.flush()


if __name__ == "__main__":
    main()
