"""Compares the models of the steps it needs; writes report.txt naming the best."""
import json
import os

inputs = os.environ["KINETIC_INPUT_DIR"]  # one folder per step it needs
models = {}
for step in sorted(os.listdir(inputs)):
    with open(os.path.join(inputs, step, "model.json")) as f:
        models[step] = json.load(f)
best = min(models, key=lambda step: models[step]["loss"])
lines = [f"{step}: loss={m['loss']:.4f}" for step, m in models.items()] + [f"best: {best}"]
print("\n".join(lines))
with open(os.path.join(os.environ.get("KINETIC_OUTPUT_DIR", "."), "report.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
