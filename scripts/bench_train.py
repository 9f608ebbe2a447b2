#!/usr/bin/env python3
"""Training speed of the NinjaZero network in plain PyTorch: the reference that
`ninjazero bench train` compares itself against.

Builds the network described by a checkpoint sidecar (reference_net.Net, the exact twin
of the Rust network, convolution weights channels-last as the Rust side keeps them) and
runs the same training step as the Rust trainer on one synthetic batch: forward in train
mode, masked policy cross-entropy plus WDL cross-entropy, backward, gradient clipping by
global norm, SGD (momentum, L2 weight decay) or AdamW (decoupled weight decay), with weight
decay on convolution and linear weights only, and the same per-step statistics copied to
the host. Prints one JSON line: {"samples_per_s": ...}.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_net import MOVE_KINDS, Net  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sidecar", required=True, help="NAME.json of a checkpoint (architecture, board)")
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--optimizer", choices=["sgd", "adamw"], default="sgd")
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--beta1", type=float, default=0.9)
    p.add_argument("--beta2", type=float, default=0.999)
    p.add_argument("--weight-decay", type=float, default=1e-4)
    p.add_argument("--grad-clip", type=float, default=5.0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--device", default="cpu")
    args = p.parse_args()

    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    with open(args.sidecar) as f:
        meta = json.load(f)
    height, width = meta["board_height"], meta["board_width"]
    net = Net(meta).use_channels_last().to(device).train()

    decay = [q for q in net.parameters() if q.dim() >= 2]
    no_decay = [q for q in net.parameters() if q.dim() < 2]
    groups = [
        {"params": decay, "weight_decay": args.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    if args.optimizer == "sgd":
        opt = torch.optim.SGD(groups, lr=args.lr, momentum=args.momentum)
    else:
        opt = torch.optim.AdamW(groups, lr=args.lr, betas=(args.beta1, args.beta2), eps=1e-8)

    b = args.batch
    policy_len = MOVE_KINDS * height * width
    x = torch.rand(b, net.input_planes, height, width, device=device)
    index = torch.randint(policy_len, (b, 8), device=device)
    policy = torch.zeros(b, policy_len, device=device).scatter_(1, index, 0.125)
    mask = (torch.rand(b, device=device) < 0.5).float()
    wdl = torch.randint(3, (b,), device=device)

    def step():
        policy_logits, wdl_logits = net(x)
        row_loss = -(policy * F.log_softmax(policy_logits, -1)).sum(-1)
        rows = mask.sum()
        denominator = rows.clamp(min=1.0)
        policy_loss = (row_loss * mask).sum() / denominator
        value_loss = F.cross_entropy(wdl_logits, wdl)
        loss = policy_loss + value_loss
        opt.zero_grad()
        loss.backward()
        if args.grad_clip > 0:
            grad_norm = torch.nn.utils.clip_grad_norm_(net.parameters(), args.grad_clip)
        else:
            grad_norm = torch.linalg.vector_norm(
                torch.stack([q.grad.norm() for q in net.parameters() if q.grad is not None]))
        opt.step()
        with torch.no_grad():
            hits = (policy_logits.argmax(-1) == policy.argmax(-1)).float()
            accuracy = (hits * mask).sum() / denominator
            probs = wdl_logits.softmax(-1)
            expected = probs[:, 0] + 0.5 * probs[:, 1]
            mse = ((expected - (1.0 - 0.5 * wdl.float())) ** 2).mean()
            stats = torch.stack([policy_loss.detach(), value_loss.detach(), accuracy, mse, rows,
                                 grad_norm.float()]).double().cpu()
        return stats

    for _ in range(3):  # warm-up
        step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    steps, start = 0, time.perf_counter()
    while steps < 2 or time.perf_counter() - start < args.seconds:
        step()
        steps += 1
    if device.type == "cuda":
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    print(json.dumps({"batch": b, "steps": steps, "samples_per_s": b * steps / elapsed}), flush=True)


if __name__ == "__main__":
    main()
