"""safetensors read and written with json and struct (Debian packages no python3-safetensors), for the PyTorch sides
of the interop tests (torch_model.py, op_reference.py)."""
import json
import struct

import numpy as np
import torch

CODES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32, "F16": np.float16, "BOOL": np.bool_}
NAMES = {v: k for k, v in CODES.items()}


def read(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, d in header.items():
        if name == "__metadata__":
            continue
        begin, end = d["data_offsets"]
        a = np.frombuffer(data[begin:end], dtype=CODES[d["dtype"]]).reshape(d["shape"])
        out[name] = torch.from_numpy(a.copy())
    return out


def write(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        a = np.ascontiguousarray(t.detach().cpu().numpy())
        b = a.astype(a.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": NAMES[a.dtype.type], "shape": list(a.shape), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
