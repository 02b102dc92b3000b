#!/usr/bin/python3
"""PyTorch (eager autograd, one thread) on the benchmark workloads W1-W5.

    /usr/bin/python3 bench/peers/torch_peer.py W1|W2|W3|W4|W5 [--size N] [--runs R]
                                               [--whole] [--scalar] [--grad FILE.npy]

W1, W2 and W4 use whole float64 tensors, as one writes them for PyTorch, and
W5 (ADBench's LSTM) vectors of 14 per cell and time step, as ADBench's own
PyTorch version of the objective does; W3
runs op for op on 0-dim tensors (one graph node per scalar operation, one
Python call per level, as the IR program does). --scalar runs W1 and W2 op
for op on 0-dim tensors as well: about 7 us per node each way, W1 takes
about 20 s and 1.5 GB, W2 at N = 10^6 about 9 GB. Each run builds the graph afresh:
"record" is the forward pass with requires_grad, leaves included; "backward"
is y.backward(). Prints one line of key=value pairs with the best (smallest)
time of each phase over the runs, in ms; --grad writes the gradient with
respect to all inputs (W4: W1, b1, W2, b2, W3, b3, flattened; W5: the main
and the extra parameters) as a 1-D .npy
file. --whole does one run, for timing the whole process.
"""
import argparse
import math
import pathlib
import sys
import time

import numpy
import torch

torch.set_num_threads(1)
F64 = torch.float64
DEFAULT_SIZE = {"W1": 1000000, "W2": 1000000, "W3": 30000, "W4": 64, "W5": 1024}


def powsum_vec(x, n):  # W1, vectorised over i
    return (x ** torch.arange(n, dtype=F64)).sum()


def powsum(x, n):  # W1: a while loop of x^i
    total = 0.0
    i = 0
    while i < n:
        total = total + x ** i
        i += 1
    return total


def rosenbrock_scalar(x):  # W2 on a list of 0-dim tensors
    total = 0.0
    for i in range(len(x) - 1):
        a = x[i + 1] - x[i] * x[i]
        b = 1.0 - x[i]
        total = total + 100.0 * (a * a) + b * b
    return total


def rosenbrock(x):  # W2, vectorised over i
    a = x[1:] - x[:-1] * x[:-1]
    b = 1.0 - x[:-1]
    return (100.0 * (a * a) + b * b).sum()


def recursion(x, d):  # W3: one Python call per level
    if d == 0:
        return torch.sin(x)
    return recursion(1.0001 * x + 0.5 * torch.cos(x), d - 1) + x


def mlp(x, w1, b1, w2, b2, w3, b3):  # W4
    h1 = torch.tanh(x @ w1 + b1)
    h2 = torch.tanh(h1 @ w2 + b2)
    return (h2 @ w3 + b3).sum()


def mlp_data():
    x = torch.sin(0.001 * (torch.arange(64 * 512, dtype=F64) + 1)).reshape(64, 512)
    params = []
    for layer, (rows, cols) in enumerate([(512, 512), (512, 512), (512, 10)], start=1):
        m = torch.arange(rows * cols, dtype=F64)
        params.append((0.05 * torch.cos(0.37 * m + layer)).reshape(rows, cols))
        params.append(0.01 * torch.sin(torch.arange(cols, dtype=F64) + layer))
    return x, params


def lstm_model(weight, bias, hidden, cell, x):  # W5: one layer's cell, diagonal weights
    b = hidden.shape[0]
    gates = torch.cat((x, hidden, x, hidden)) * weight + bias
    forget = torch.sigmoid(gates[:b])
    ingate = torch.sigmoid(gates[b:2 * b])
    outgate = torch.sigmoid(gates[2 * b:3 * b])
    change = torch.tanh(gates[3 * b:])
    cell = cell * forget + ingate * change
    return outgate * torch.tanh(cell), cell


def lstm(main, extra, state, seq):  # W5: ADBench's LSTM objective; seq is c x b
    c, b = seq.shape
    layers = main.reshape(-1, 2, 4 * b)  # per layer: weights, biases
    w_in, w_out, b_out = extra.reshape(3, b)
    hc = list(state.reshape(-1, 2, b))  # per layer: hidden, cell
    total = 0.0
    for t in range(c - 1):
        x = seq[t] * w_in
        for k in range(len(hc)):
            hc[k] = lstm_model(layers[k][0], layers[k][1], hc[k][0], hc[k][1], x)
            x = hc[k][0]
        y = x * w_out + b_out
        ynorm = y - torch.log(2.0 + torch.exp(y).sum())
        total = total + (seq[t + 1] * ynorm).sum()
    return -total / ((c - 1) * b)


def lstm_data(c):
    """W5's inputs, drawn as bench/grad_bench.py draws them."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
    import grad_bench
    return {k: torch.tensor(v, dtype=F64) for k, v in grad_bench.lstm_data(c).items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workload", choices=sorted(DEFAULT_SIZE))
    ap.add_argument("--size", type=int)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--whole", action="store_true")
    ap.add_argument("--scalar", action="store_true", help="W1 and W2 on 0-dim tensors")
    ap.add_argument("--grad")
    args = ap.parse_args()
    w = args.workload
    n = args.size or DEFAULT_SIZE[w]
    runs = 1 if args.whole else max(1, args.runs)
    if w == "W1":
        leaves = lambda: [torch.tensor(0.999999, dtype=F64, requires_grad=True)]
        forward = lambda xs: (powsum if args.scalar else powsum_vec)(xs[0], n)
    elif w == "W2" and args.scalar:
        x0 = [0.5 + 0.001 * (i % 100) for i in range(n)]
        leaves = lambda: [torch.tensor(v, dtype=F64, requires_grad=True) for v in x0]
        forward = rosenbrock_scalar
    elif w == "W2":
        x0 = 0.5 + 0.001 * (torch.arange(n) % 100).to(F64)
        leaves = lambda: [x0.clone().requires_grad_(True)]
        forward = lambda xs: rosenbrock(xs[0])
    elif w == "W3":
        sys.setrecursionlimit(2 * n + 1000)
        leaves = lambda: [torch.tensor(0.5, dtype=F64, requires_grad=True)]
        forward = lambda xs: recursion(xs[0], n)
    elif w == "W5":
        data = lstm_data(n)
        seq = data["seq"].reshape(n, -1)
        leaves = lambda: [data["main"].clone().requires_grad_(True),
                          data["extra"].clone().requires_grad_(True)]
        forward = lambda xs: lstm(xs[0], xs[1], data["state"], seq)
    else:
        x, params = mlp_data()
        leaves = lambda: [p.clone().requires_grad_(True) for p in params]
        forward = lambda xs: mlp(x, *xs)

    record_ms = backward_ms = math.inf
    for _ in range(runs):
        xs = y = None  # free the previous run's graph before timing this one
        t0 = time.perf_counter()
        xs = leaves()
        y = forward(xs)
        t1 = time.perf_counter()
        y.backward()
        t2 = time.perf_counter()
        record_ms = min(record_ms, (t1 - t0) * 1e3)
        backward_ms = min(backward_ms, (t2 - t1) * 1e3)
    grad = torch.cat([x.grad.reshape(-1) for x in xs])
    form = "scalar" if w == "W3" or (args.scalar and w != "W4") else (
        "vectors" if w == "W5" else "tensor")
    line = (f"peer=torch form={form} workload={w} size={n} runs={runs} value={float(y)!r} "
            f"record_ms={record_ms:.4f} gradient_ms={backward_ms:.4f} torch={torch.__version__}")
    if grad.numel() == 1:
        line += f" derivative={float(grad[0])!r}"
    print(line, flush=True)
    if args.grad:
        numpy.save(args.grad, grad.detach().numpy())


if __name__ == "__main__":
    main()
