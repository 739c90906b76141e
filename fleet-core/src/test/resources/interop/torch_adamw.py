"""The PyTorch side of TransformerRecipeTorchTest: torch.optim.AdamW with gradient clipping and a warm-up + cosine
learning rate, on given gradients.

    torch_adamw.py DIR

DIR/inputs.safetensors holds the initial parameters ("w", "b", "ln"), the gradient of each at every step ("g.NAME.STEP")
and "config" ([steps, lr, warmup, total, min_lr, start_factor, weight_decay, beta1, beta2, eps, clip_norm, lr_steps]).
"w" is decayed and "b", "ln" are not (two parameter groups). Each step sets the gradients, clips them with
clip_grad_norm_, steps AdamW and then the scheduler, SequentialLR(LinearLR, CosineAnnealingLR). Writes
DIR/expected.safetensors: the parameters after every step in float32 and float64 ("NAME.f32", "NAME.f64", the last
step's) and the learning rate of each of lr_steps steps ("lr", float64)."""
import sys

import torch

from safetensors_io import read, write


def run(inputs, dtype):
    c = inputs["config"].tolist()
    steps, lr, warmup, total, min_lr, start, wd, b1, b2, eps, clip, lr_steps = c
    steps, warmup, total, lr_steps = int(steps), int(warmup), int(total), int(lr_steps)
    params = {n: torch.nn.Parameter(inputs[n].to(dtype).clone()) for n in ("w", "b", "ln")}
    opt = torch.optim.AdamW([{"params": [params["w"]], "weight_decay": wd},
                             {"params": [params["b"], params["ln"]], "weight_decay": 0.0}],
                            lr=lr, betas=(b1, b2), eps=eps)
    sched = torch.optim.lr_scheduler.SequentialLR(opt, [
        torch.optim.lr_scheduler.LinearLR(opt, start_factor=start, end_factor=1.0, total_iters=warmup),
        torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=total - warmup, eta_min=min_lr)], milestones=[warmup])
    rates = []
    for s in range(lr_steps):
        rates.append(opt.param_groups[0]["lr"])
        if s < steps:
            for n, p in params.items():
                p.grad = inputs["g.%s.%d" % (n, s)].to(dtype).clone()
            torch.nn.utils.clip_grad_norm_(list(params.values()), clip)
            opt.step()
        sched.step()
    return {n: p.detach() for n, p in params.items()}, rates


def main():
    d = sys.argv[1]
    inputs = read(d + "/inputs.safetensors")
    out = {}
    for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
        params, rates = run(inputs, dtype)
        for n, p in params.items():
            out["%s.%s" % (n, tag)] = p
    out["lr"] = torch.tensor(rates, dtype=torch.float64)
    write(d + "/expected.safetensors", out)


if __name__ == "__main__":
    main()
