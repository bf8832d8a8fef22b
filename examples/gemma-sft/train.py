# Supervised fine-tuning of Gemma 3 1B with KerasHub, LoRA, on the prompt/response pairs of
# data.jsonl; then a few generations. The weights come from Kaggle, so the job needs your Kaggle
# credentials, passed without ever being written to the spec or the image:
#
#   export KAGGLE_USERNAME=... KAGGLE_KEY=...
#   kinetic run examples/gemma-sft/train.py --accelerator v5litepod-8 \
#       --capture-env 'KAGGLE_*' -- --epochs 3
#
# Writes generations.jsonl to KINETIC_OUTPUT_DIR (it comes back to ./kinetic-out/JOB/), and
# the LoRA weights after each epoch to KINETIC_CHECKPOINT_DIR: a retried or preempted attempt
# resumes from the last epoch it finished.
import argparse
import json
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")

TEMPLATE = "<start_of_turn>user\n{prompt}<end_of_turn>\n<start_of_turn>model\n{response}"


def load_examples(path):
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [TEMPLATE.format(prompt=r["prompt"], response=r["response"]) for r in rows], rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--preset", default="gemma3_instruct_1b")
    parser.add_argument("--rank", type=int, default=8, help="LoRA rank")
    parser.add_argument("--sequence-length", type=int, default=256)
    parser.add_argument("--data", default="data.jsonl")
    args = parser.parse_args()

    if not (os.environ.get("KAGGLE_USERNAME") and os.environ.get("KAGGLE_KEY")):
        print("KAGGLE_USERNAME and KAGGLE_KEY are not set: the Gemma weights come from Kaggle; "
              "pass them with --capture-env 'KAGGLE_*'", file=sys.stderr)
        return 2

    import keras
    import keras_hub

    texts, rows = load_examples(args.data)
    print("%d examples from %s; %s on %s" % (len(texts), args.data, args.preset,
                                              keras.backend.backend()))

    model = keras_hub.models.Gemma3CausalLM.from_preset(args.preset)
    model.backbone.enable_lora(rank=args.rank)
    model.preprocessor.sequence_length = args.sequence_length
    model.compile(
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        optimizer=keras.optimizers.Adam(learning_rate=5e-5),
        weighted_metrics=[keras.metrics.SparseCategoricalAccuracy()],
        sampler="greedy",
    )

    # Resume: the LoRA weights of the last epoch a previous attempt finished.
    ckpt_dir = os.environ.get("KINETIC_CHECKPOINT_DIR", "checkpoints")
    os.makedirs(ckpt_dir, exist_ok=True)
    state_path = os.path.join(ckpt_dir, "state.json")
    first = 0
    if os.path.exists(state_path):
        with open(state_path) as f:
            first = json.load(f)["epochs_done"]
        model.backbone.load_lora_weights(os.path.join(ckpt_dir, "lora.lora.h5"))
        print("resuming after epoch %d" % first)

    class SaveLora(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            model.backbone.save_lora_weights(os.path.join(ckpt_dir, "lora.lora.h5"))
            with open(state_path, "w") as f:
                json.dump({"epochs_done": epoch + 1}, f)

    if first < args.epochs:
        model.fit(texts, epochs=args.epochs, initial_epoch=first, batch_size=1,
                  callbacks=[SaveLora()])

    out_dir = os.environ.get("KINETIC_OUTPUT_DIR", "out")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "generations.jsonl"), "w", encoding="utf-8") as f:
        for r in rows[:4]:
            prompt = TEMPLATE.format(prompt=r["prompt"], response="")
            answer = model.generate(prompt, max_length=args.sequence_length)[len(prompt):]
            f.write(json.dumps({"prompt": r["prompt"], "generated": answer,
                                "expected": r["response"]}) + "\n")
            print("> %s\n%s\n" % (r["prompt"], answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
