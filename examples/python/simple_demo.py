"""The basic synchronous call: the function runs as a kinetic job, its prints stream here and
its return value comes back. A tiny gradient-descent fit (standard library only, CPU).

    KINETIC_BIN=build/kinetic python3 examples/python/simple_demo.py   # local backend
"""

import random

import kinetic


@kinetic.run(accelerator="cpu")
def fit_line(steps: int = 300, lr: float = 0.05) -> float:
    # Fit y = 3x + 1 from noisy samples; returns the final mean squared error.
    rng = random.Random(0)
    xs = [rng.uniform(-1, 1) for _ in range(200)]
    ys = [3 * x + 1 + rng.gauss(0, 0.05) for x in xs]
    w = b = 0.0
    for step in range(steps):
        gw = sum(2 * (w * x + b - y) * x for x, y in zip(xs, ys)) / len(xs)
        gb = sum(2 * (w * x + b - y) for x, y in zip(xs, ys)) / len(xs)
        w, b = w - lr * gw, b - lr * gb
        if step % 100 == 0:
            print(f"step {step}: w={w:.3f} b={b:.3f}", flush=True)
    return sum((w * x + b - y) ** 2 for x, y in zip(xs, ys)) / len(xs)


if __name__ == "__main__":
    loss = fit_line()
    print(f"final loss: {loss:.5f}")
