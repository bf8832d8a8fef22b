"""Fits y = w x + b to prep's data by gradient descent; writes model.json to its outputs."""
import argparse
import json
import os

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=100)
parser.add_argument("--lr", type=float, default=0.1)
args = parser.parse_args()

inputs = os.environ["KINETIC_INPUT_DIR"]  # prep's outputs are in inputs/prep/
with open(os.path.join(inputs, "prep", "data.csv")) as f:
    points = [tuple(map(float, line.split(","))) for line in f if line.strip()]

w = b = 0.0
for _ in range(args.steps):
    gw = sum((w * x + b - y) * x for x, y in points) * 2 / len(points)
    gb = sum((w * x + b - y) for x, y in points) * 2 / len(points)
    w, b = w - args.lr * gw, b - args.lr * gb
loss = sum((w * x + b - y) ** 2 for x, y in points) / len(points)
print(f"train: {args.steps} steps, w={w:.3f} b={b:.3f} loss={loss:.4f}")
with open(os.path.join(os.environ.get("KINETIC_OUTPUT_DIR", "."), "model.json"), "w") as f:
    json.dump({"steps": args.steps, "w": w, "b": b, "loss": loss}, f)
