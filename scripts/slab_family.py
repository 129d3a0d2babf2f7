#!/usr/bin/env python3
"""Writes the hostile slab family of SECURITY.md ("Superlinear paths and their bounds") as a
placement manifest: one int8 tensor, every fragment on rank 0, pairwise disjoint boxes
arranged so that every pair of axes sees many overlapping pairs.

    scripts/slab_family.py --ndim 3 --fragments 10000 -o family.json
    scripts/slab_family.py --ndim 5 --m 8            # to standard output

N = 4. For k in 0..m there is one box per axis j ("kind j"), one element thick on axis j
and overlapping every other box of its kind on the other axes. The i-th other axis gets
bit i of k: offset bit, shape N - bit. Kinds sit side by side along axis 0: kind j >= 1
in [(ndim-1-j)*N, (ndim-j)*N), kind 0 (thin on axis 0) at (ndim-1)*N + k. In 3-D this is
exactly the family of issue 23: (a, b, k) shape (N-a, N-b, 1); (N+a, k, b) shape
(N-a, 1, N-b); (2N+k, a, b) shape (1, N-a, N-b), with a = k mod 2, b = (k div 2) mod 2.
The tensor is (ndim-1)*N + m on axis 0 and max(N, m) on the others; shard_dims is every
axis. --fragments F picks m = ceil(F / ndim).
"""

import argparse
import sys

N = 4


def boxes(ndim, m):
    for k in range(m):
        for j in range(ndim):
            offset, shape, bit = [], [], 0
            for axis in range(ndim):
                if axis == j:
                    offset.append((ndim - 1) * N + k if j == 0 else k)
                    shape.append(1)
                    continue
                b = (k >> bit) & 1
                bit += 1
                block = (ndim - 1 - j) * N if axis == 0 else 0
                offset.append(block + b)
                shape.append(N - b)
            yield offset, shape


def write(out, ndim, m):
    wide = max(N, m)
    global_shape = [(ndim - 1) * N + m] + [wide] * (ndim - 1)
    out.write('{"fragments":[')
    for i, (offset, shape) in enumerate(boxes(ndim, m)):
        nbytes = 1
        for s in shape:
            nbytes *= s
        out.write(
            '%s{"aliases":[],"global_offset":[%s],"local_shape":[%s],"nbytes":%d,'
            '"placement_fragment_id":"f%08d","rank":{"dp":0,"ep":0,"pp":0,"tp":0},'
            '"tensor_id":"w"}'
            % (
                "," if i else "",
                ",".join(map(str, offset)),
                ",".join(map(str, shape)),
                nbytes,
                i,
            )
        )
    out.write(
        '],"model_id":"slabs","placement_id":null,"revision":"r","tensors":[{"dtype":"int8",'
        '"expert_id":null,"global_shape":[%s],"itemsize":1,"layer_id":null,'
        '"layout_fingerprint":"fp","partition_dim":null,"shard_dims":[%s],"tensor_id":"w"}]}'
        % (",".join(map(str, global_shape)), ",".join(map(str, range(ndim))))
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ndim", type=int, default=3)
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--m", type=int, help="boxes per kind")
    size.add_argument("--fragments", type=int, help="about this many fragments in all")
    parser.add_argument("-o", "--output", help="output file (default: standard output)")
    args = parser.parse_args()
    if args.ndim < 2:
        parser.error("--ndim must be at least 2")
    if args.m is not None:
        m = args.m
    elif args.fragments is not None:
        m = -(-args.fragments // args.ndim)
    else:
        m = 8
    if args.output:
        with open(args.output, "w", buffering=1 << 20) as out:
            write(out, args.ndim, m)
    else:
        write(sys.stdout, args.ndim, m)


if __name__ == "__main__":
    main()
