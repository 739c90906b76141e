"""TensorBoard event files read and written with the standard library alone, apart from Fleet4J's Java writer, for
its tests (TensorBoard and TensorFlow cannot be installed where they run).

  python3 tfevents.py read FILE     prints one JSON object per record: {"wall_time", "step", "file_version"} or
                                    {"wall_time", "step", "tag", "value"}; a bad CRC or a cut record is an error
  python3 tfevents.py encode JSON   prints, in hex, the framed records of a JSON list of such objects

Records: uint64 length, masked CRC32C of the length, data, masked CRC32C of the data (little-endian). Data: an Event
protobuf: wall_time = 1 (double), step = 2 (int64), file_version = 3 (string), summary = 5 (Summary: value = 1,
repeated Value: tag = 1 (string), simple_value = 2 (float)).
"""
import json
import struct
import sys

_TABLE = []
for _n in range(256):
    _c = _n
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = (crc >> 8) ^ _TABLE[(crc ^ b) & 0xFF]
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


# CRC-32C's check value (RFC 3720): the reader is not trusted unless it computes this
assert crc32c(b"123456789") == 0xE3069283


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number, wire, payload):
    return varint(number << 3 | wire) + payload


def length_delimited(number, data):
    return field(number, 2, varint(len(data)) + data)


def encode_event(e):
    # proto3 leaves fields at their default value out; a oneof member is always written
    out = b""
    if e.get("wall_time", 0.0) != 0.0:
        out += field(1, 1, struct.pack("<d", e["wall_time"]))
    if e.get("step", 0) != 0:
        out += field(2, 0, varint(e["step"]))
    if "file_version" in e:
        out += length_delimited(3, e["file_version"].encode("utf-8"))
    else:
        value = length_delimited(1, e["tag"].encode("utf-8")) + field(2, 5, struct.pack("<f", e["value"]))
        out += length_delimited(5, length_delimited(1, value))
    return out


def frame(data):
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", masked_crc(header)) + data + struct.pack("<I", masked_crc(data))


def parse_fields(data):
    """(field number, wire type, value) of every field: ints for varints, bytes for the others."""
    pos = 0
    fields = []
    while pos < len(data):
        key, pos = read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = read_varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            length, pos = read_varint(data, pos)
            value, pos = data[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError("wire type %d of field %d is not one an Event uses" % (wire, number))
        if pos > len(data):
            raise ValueError("field %d runs past the end of its message" % number)
        fields.append((number, wire, value))
    return fields


def read_varint(data, pos):
    result = 0
    shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("a varint runs past the end of its message")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return result, pos


def decode_event(data):
    wall_time, step, file_version, values = 0.0, 0, None, []
    for number, wire, value in parse_fields(data):
        if number == 1 and wire == 1:
            wall_time = struct.unpack("<d", value)[0]
        elif number == 2 and wire == 0:
            step = value - (1 << 64) if value >= 1 << 63 else value
        elif number == 3 and wire == 2:
            file_version = value.decode("utf-8")
        elif number == 5 and wire == 2:
            for n, w, v in parse_fields(value):
                if n == 1 and w == 2:
                    tag, simple = None, None
                    for vn, vw, vv in parse_fields(v):
                        if vn == 1 and vw == 2:
                            tag = vv.decode("utf-8")
                        elif vn == 2 and vw == 5:
                            simple = struct.unpack("<f", vv)[0]
                    values.append((tag, simple))
    if file_version is not None:
        return [{"wall_time": wall_time, "step": step, "file_version": file_version}]
    return [{"wall_time": wall_time, "step": step, "tag": t, "value": v} for t, v in values]


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos < len(data):
        if pos + 12 > len(data):
            raise ValueError("%s: the record at byte %d is cut short in its header" % (path, pos))
        header = data[pos:pos + 8]
        length = struct.unpack("<Q", header)[0]
        if struct.unpack("<I", data[pos + 8:pos + 12])[0] != masked_crc(header):
            raise ValueError("%s: the record at byte %d has a bad length CRC" % (path, pos))
        end = pos + 12 + length
        if end + 4 > len(data):
            raise ValueError("%s: the record at byte %d is cut short" % (path, pos))
        body = data[pos + 12:end]
        if struct.unpack("<I", data[end:end + 4])[0] != masked_crc(body):
            raise ValueError("%s: the record at byte %d has a bad data CRC" % (path, pos))
        for event in decode_event(body):
            yield event
        pos = end + 4


def main(argv):
    if len(argv) == 3 and argv[1] == "read":
        for event in read(argv[2]):
            print(json.dumps(event))
    elif len(argv) == 3 and argv[1] == "encode":
        print(b"".join(frame(encode_event(e)) for e in json.loads(argv[2])).hex())
    else:
        sys.exit("usage: tfevents.py read FILE | encode JSON")


if __name__ == "__main__":
    main(sys.argv)
