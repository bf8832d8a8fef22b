"""run_async_map: a learning-rate sweep as a group of jobs (results, as_completed,
status_counts, failures, attach_batch). One learning rate diverges on purpose.

    KINETIC_BIN=build/kinetic python3 examples/python/collections_sweep.py
"""

import kinetic


@kinetic.run(accelerator="cpu")
def train(lr: float, epochs: int) -> dict:
    w = 0.0
    for _ in range(epochs * 10):
        w -= lr * 2 * (w - 2)
    loss = (w - 2) ** 2
    if loss > 1e6:
        raise ValueError(f"lr={lr} diverged (loss {loss:.3g})")
    return {"lr": lr, "epochs": epochs, "loss": loss}


if __name__ == "__main__":
    batch = train.run_async_map([{"lr": 0.01, "epochs": 5}, {"lr": 0.1, "epochs": 5},
                                 {"lr": 1.5, "epochs": 5}], max_concurrent=2)
    print("group", batch.group_id)
    for job in batch.as_completed(timeout=600):
        print("finished:", job.job_id, "index", job.group_index)
    print("counts:", batch.status_counts())
    for value in batch.results(return_exceptions=True, cleanup=False):
        print("  ", value)
    print("failed:", [j.job_id for j in batch.failures()])
    again = kinetic.attach_batch(batch.group_id)
    print("attached the group again:", len(again.jobs), "jobs")
    again.cleanup()
