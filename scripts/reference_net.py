#!/usr/bin/env python3
"""The NinjaZero policy/value network in plain PyTorch.

Two uses:
  parity  -- load a Rust checkpoint (safetensors + JSON sidecar), run the inputs stored in an
             io file written by the Rust side, and compare with the Rust outputs.
  bench   -- time forward passes of the same network (from a sidecar) for several batch
             sizes, the reference `ninjazero bench nn` compares itself against.

Parameter names mirror model/src/net.rs exactly.
"""
import argparse
import json
import sys
import time

import torch
import torch.nn as nn
from safetensors.torch import load_file

MOVE_KINDS = 133


class ConvBn(nn.Module):
    def __init__(self, inputs, outputs, kernel):
        super().__init__()
        self.conv = nn.Conv2d(inputs, outputs, kernel, padding=kernel // 2, bias=False)
        self.bn = nn.BatchNorm2d(outputs)

    def forward(self, x, relu=True):
        x = self.bn(self.conv(x))
        return torch.relu(x) if relu else x


class Block(nn.Module):
    def __init__(self, channels, se):
        super().__init__()
        self.conv1 = ConvBn(channels, channels, 3)
        self.conv2 = ConvBn(channels, channels, 3)
        self.se = se
        if se:
            self.se_reduce = nn.Linear(channels, channels // 4)
            self.se_expand = nn.Linear(channels // 4, channels)

    def forward(self, x):
        out = self.conv2(self.conv1(x), relu=False)
        if self.se:
            gate = torch.sigmoid(self.se_expand(torch.relu(self.se_reduce(out.mean(dim=(2, 3))))))
            out = out * gate[:, :, None, None]
        return torch.relu(out + x)


class Head(nn.Module):
    pass


class Net(nn.Module):
    def __init__(self, meta):
        """The network a checkpoint sidecar describes (input planes from the sidecar too, so
        that a change of the encoding needs no change here)."""
        super().__init__()
        arch, height, width = meta["architecture"], meta["board_height"], meta["board_width"]
        self.input_planes = meta["input_planes"]
        c, v = arch["channels"], arch["value_channels"]
        self.input = ConvBn(self.input_planes, c, 3)
        self.blocks = nn.ModuleList(Block(c, arch["squeeze_excitation"]) for _ in range(arch["blocks"]))
        self.policy = Head()
        self.policy.hidden = ConvBn(c, c, 1)
        self.policy.out = nn.Conv2d(c, MOVE_KINDS, 1)
        self.value = Head()
        self.value.hidden = ConvBn(c, v, 1)
        self.value.fc = nn.Linear(v * height * width, arch["value_hidden"])
        self.value.out = nn.Linear(arch["value_hidden"], 3)

    def use_channels_last(self):
        """Convolution weights in channels-last order, as model/src/net.rs stores them."""
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    m.weight.data = m.weight.data.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
        return self

    def forward(self, x):
        x = self.input(x)
        for block in self.blocks:
            x = block(x)
        policy = self.policy.out(self.policy.hidden(x)).permute(0, 2, 3, 1).flatten(1)
        value = self.value.out(torch.relu(self.value.fc(self.value.hidden(x).flatten(1))))
        return policy, value


def build(sidecar_path):
    with open(sidecar_path) as f:
        meta = json.load(f)
    return Net(meta).use_channels_last().eval(), meta["board_height"], meta["board_width"]


def parity(args):
    net, _, _ = build(args.checkpoint.rsplit(".", 1)[0] + ".json")
    missing, unexpected = net.load_state_dict(load_file(args.checkpoint), strict=False)
    missing = [k for k in missing if not k.endswith("num_batches_tracked")]
    if missing or unexpected:
        sys.exit(f"parameter names differ: missing {missing}, unexpected {unexpected}")
    io = load_file(args.io)
    with torch.no_grad():
        policy, value = net(io["input"])
    diff = max((policy - io["policy"]).abs().max().item(), (value - io["wdl"]).abs().max().item())
    print(f"max abs difference: {diff:.3g} over {io['input'].shape[0]} positions")
    if diff > args.tolerance:
        sys.exit(f"outputs differ by {diff} > {args.tolerance}")


def bench(args):
    """Reads "BATCH SECONDS" lines on stdin and answers each with a JSON line, so that the
    caller can interleave these measurements with its own."""
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    net, height, width = build(args.sidecar)
    net = net.to(device)
    # CUDA runs asynchronously: a timing ends when the device has finished.
    finish = torch.cuda.synchronize if device.type == "cuda" else lambda: None
    print("ready", flush=True)
    for line in sys.stdin:
        batch, seconds = int(line.split()[0]), float(line.split()[1])
        x = torch.rand(batch, net.input_planes, height, width, device=device)
        with torch.no_grad():
            net(x)  # warm-up
            finish()
            runs, start = 0, time.perf_counter()
            while runs == 0 or time.perf_counter() - start < seconds:
                net(x)
                finish()
                runs += 1
            elapsed = time.perf_counter() - start
        print(json.dumps({"batch": batch, "positions_per_s": batch * runs / elapsed}), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("parity", help="compare a checkpoint's outputs with the Rust ones")
    p.add_argument("--checkpoint", required=True, help="NAME.safetensors (NAME.json beside it)")
    p.add_argument("--io", required=True, help="safetensors file with input, policy and wdl")
    p.add_argument("--tolerance", type=float, default=1e-5)
    b = sub.add_parser("bench", help="positions/s of the network described by a sidecar, "
                       "for each 'BATCH SECONDS' line read from stdin")
    b.add_argument("--sidecar", required=True)
    b.add_argument("--threads", type=int, default=2)
    b.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    args = parser.parse_args()
    parity(args) if args.command == "parity" else bench(args)


if __name__ == "__main__":
    main()
