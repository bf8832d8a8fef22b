"""run_async, status, tail, result, attach, list_jobs and cleanup: two jobs at once.

    KINETIC_BIN=build/kinetic python3 examples/python/async_jobs.py
"""

import kinetic


def _descend(lr: float, steps: int) -> float:
    w = 0.0  # minimise (w - 2)^2
    for _ in range(steps):
        w -= lr * 2 * (w - 2)
    return (w - 2) ** 2


@kinetic.run(accelerator="cpu")
def train_model_a() -> float:
    print("model a training", flush=True)
    return _descend(0.1, 50)


@kinetic.run(accelerator="cpu")
def train_model_b() -> float:
    print("model b training", flush=True)
    return _descend(0.01, 50)


if __name__ == "__main__":
    job_a, job_b = train_model_a.run_async(), train_model_b.run_async()
    print("submitted", job_a.job_id, job_b.job_id)
    print("status of a:", job_a.status().value)
    loss_a = job_a.result(cleanup=False)          # keep the record to attach again below
    print("a's log tail:", job_a.tail(n=5).strip())
    job = kinetic.attach(job_a.job_id)            # works from any process
    print("attached:", job.job_id, job.func_name, job.status().value)
    print("loss a:", loss_a, "loss b:", job_b.result())
    for j in kinetic.list_jobs()[:5]:
        print("known job:", j.job_id, j.func_name, j.accelerator)
    job_a.cleanup()
