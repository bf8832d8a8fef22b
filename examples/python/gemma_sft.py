"""Gemma 3 1B supervised fine-tuning with KerasHub on a TPU v5e chip (the original's
gemma3_sft_demo as a decorated function). It needs a GKE context (`kinetic up`), Kaggle
credentials for the weights and a requirements.txt next to it with keras-hub and jax[tpu].
Without KINETIC_EXAMPLE_REAL=1 it only prints what it would do:

    python3 examples/python/gemma_sft.py                            # a dry description
    KAGGLE_USERNAME=... KAGGLE_KEY=... KINETIC_EXAMPLE_REAL=1 python3 examples/python/gemma_sft.py
"""

import os

import kinetic

ACCELERATOR = "v5litepod-1"


@kinetic.run(accelerator=ACCELERATOR, capture_env_vars=["KAGGLE_USERNAME", "KAGGLE_KEY"],
             timeout="2h", max_cost=5)
def train_gemma():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    import keras_hub  # installed in the job's image from requirements.txt

    gemma_lm = keras_hub.models.Gemma3CausalLM.from_preset("gemma3_1b")
    gemma_lm.backbone.enable_lora(rank=4)
    gemma_lm.fit(x={"prompts": ["What is kinetic?", "Name a TPU."],
                    "responses": ["A tool that runs jobs on TPUs.", "TPU v5e."]},
                 batch_size=1, epochs=1)
    out = os.environ.get("KINETIC_OUTPUT_DIR", ".")
    gemma_lm.save_to_preset(os.path.join(out, "gemma3_1b_sft"))


if __name__ == "__main__":
    if os.environ.get("KINETIC_EXAMPLE_REAL") == "1":
        train_gemma()
    else:
        print(f"would run train_gemma on {ACCELERATOR} (timeout 2h, at most $5), passing "
              "KAGGLE_USERNAME and KAGGLE_KEY, and bring the LoRA-tuned preset back into "
              "kinetic-out/JOB/gemma3_1b_sft; set KINETIC_EXAMPLE_REAL=1 to run it")
