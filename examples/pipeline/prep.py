"""Makes the data: noisy points on the line y = 3x + 1, in KINETIC_OUTPUT_DIR/data.csv."""
import argparse
import os
import random

parser = argparse.ArgumentParser()
parser.add_argument("--points", type=int, default=100)
args = parser.parse_args()

random.seed(0)
out = os.path.join(os.environ.get("KINETIC_OUTPUT_DIR", "."), "data.csv")
with open(out, "w") as f:
    for _ in range(args.points):
        x = random.uniform(-1, 1)
        f.write(f"{x},{3 * x + 1 + random.gauss(0, 0.1)}\n")
print(f"prep: {args.points} points in data.csv")
