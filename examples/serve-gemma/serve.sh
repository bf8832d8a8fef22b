#!/bin/sh
# vLLM's OpenAI-compatible server on a TPU, for `kinetic serve` (see README.md): the model a job
# passed with --from JOB when it left one in outputs/model/ (Hugging Face format), else the base
# model named by $MODEL (default google/gemma-3-1b-it, which needs HF_TOKEN: pass it with -e).
set -eu
model="${MODEL:-google/gemma-3-1b-it}"
if [ -n "${KINETIC_INPUT_DIR:-}" ]; then
  for dir in "$KINETIC_INPUT_DIR"/*/model; do
    if [ -f "$dir/config.json" ]; then model="$dir"; fi
  done
fi
echo "serving $model on port $KINETIC_SERVE_PORT"
exec vllm serve "$model" --host 0.0.0.0 --port "$KINETIC_SERVE_PORT" \
  --tensor-parallel-size "${TENSOR_PARALLEL:-1}" --max-model-len "${MAX_MODEL_LEN:-2048}" "$@"
