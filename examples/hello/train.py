"""A tiny "training" job: prints progress, writes a model file and a metrics file to
KINETIC_OUTPUT_DIR, and exits 0. Run it with: kinetic run examples/hello/train.py"""
import json
import os
import sys

out_dir = os.environ.get("KINETIC_OUTPUT_DIR", "out")
os.makedirs(out_dir, exist_ok=True)
epochs = int(sys.argv[sys.argv.index("--epochs") + 1]) if "--epochs" in sys.argv else 3

with open("data.txt") as f:  # relative paths work: the job runs in a mirror of its folder
    data = [float(x) for x in f.read().split()]

weight = 0.0
for epoch in range(1, epochs + 1):
    weight += sum(data) / len(data) / epochs
    loss = abs(2.0 - weight)
    print(f"epoch {epoch}/{epochs}: loss={loss:.4f}")

with open(os.path.join(out_dir, "model.json"), "w") as f:
    json.dump({"weight": weight}, f)
with open(os.path.join(out_dir, "metrics.json"), "w") as f:
    json.dump({"loss": loss, "epochs": epochs, "job": os.environ.get("KINETIC_JOB_ID")}, f)
print(f"saved model to {out_dir}", file=sys.stderr)
