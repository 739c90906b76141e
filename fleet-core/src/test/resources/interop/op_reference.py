"""The PyTorch side of TorchOpCheck: each case's op computed by PyTorch in float32 and in float64.

    op_reference.py DIR

DIR/cases.json lists the cases: {"name", "code", "checked": [slot, ...], "outputs": [slot, ...]}. DIR/NAME.in.safetensors
holds the inputs ("SLOT.J") and the loss weights ("w.SLOT") of case NAME. `code` is a Python expression (or statements
that set `out`) over the input slots (a slot given one tensor is that tensor, a slot given several a list), `torch` and
`F` (torch.nn.functional), giving the outputs of "outputs" in order (one tensor, or a tuple). For float32 and float64
the script takes L = sum(w * out) over the outputs, its gradient with respect to every tensor of the checked slots,
and writes DIR/NAME.out.safetensors: "out.SLOT.f32", "out.SLOT.f64", "grad.SLOT.J.f32", "grad.SLOT.J.f64".
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

from safetensors_io import read, write


def run_case(case, tensors, dtype, tag):
    env = {"torch": torch, "F": F}
    leaves = {}
    slots = {}
    for key, t in tensors.items():
        if key.startswith("w."):
            continue
        slot, j = key.rsplit(".", 1)
        slots.setdefault(slot, {})[int(j)] = t
    for slot, by_pos in slots.items():
        values = []
        for j in sorted(by_pos):
            t = by_pos[j]
            if t.is_floating_point():
                t = t.to(dtype)
                if slot in case["checked"]:
                    t = t.clone().requires_grad_(True)
                    leaves[(slot, j)] = t
            values.append(t)
        env[slot] = values[0] if len(values) == 1 else values
    code = case["code"]
    try:
        out = eval(compile(code, case["name"], "eval"), env)
    except SyntaxError:
        exec(compile(code, case["name"], "exec"), env)
        out = env["out"]
    outs = out if isinstance(out, (tuple, list)) else (out,)
    if len(outs) != len(case["outputs"]):
        raise SystemExit("case %s: code gave %d outputs, expected %d (%s)"
                         % (case["name"], len(outs), len(case["outputs"]), case["outputs"]))
    loss = 0
    result = {}
    for slot, o in zip(case["outputs"], outs):
        w = tensors["w." + slot].to(torch.float64)
        loss = loss + (o.to(torch.float64) * w).sum()
        result["out.%s.%s" % (slot, tag)] = o.detach()
    if leaves:
        grads = torch.autograd.grad(loss, list(leaves.values()), allow_unused=True)
        for (slot, j), leaf, g in zip(leaves.keys(), leaves.values(), grads):
            result["grad.%s.%d.%s" % (slot, j, tag)] = torch.zeros_like(leaf) if g is None else g.detach()
    return result


def main():
    folder = sys.argv[1]
    with open(os.path.join(folder, "cases.json")) as f:
        cases = json.load(f)
    for case in cases:
        tensors = read(os.path.join(folder, case["name"] + ".in.safetensors"))
        result = {}
        for dtype, tag in ((torch.float32, "f32"), (torch.float64, "f64")):
            result.update(run_case(case, tensors, dtype, tag))
        write(os.path.join(folder, case["name"] + ".out.safetensors"), result)


if __name__ == "__main__":
    main()
