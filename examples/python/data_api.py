"""kinetic.Data: a directory and a file as arguments, nested in a list, and as a volume.

    KINETIC_BIN=build/kinetic python3 examples/python/data_api.py

(A volume at an absolute path such as /data needs a backend that can create it: GKE, or a
local machine where that path is writable.)
"""

import json
import os
import tempfile

import kinetic
from kinetic import Data


@kinetic.run(accelerator="cpu")
def describe(data_dir: str, config_path: str) -> dict:
    with open(config_path) as f:
        config = json.load(f)
    with open(os.path.join(data_dir, "train.csv")) as f:
        rows = f.read().splitlines()[1:]
    return {"files": sorted(os.listdir(data_dir)), "rows": len(rows), "lr": config["lr"]}


@kinetic.run(accelerator="cpu")
def count_files(datasets: list) -> list:
    return [len(os.listdir(d)) for d in datasets]


def make_data(root: str):
    dataset = os.path.join(root, "dataset")
    os.makedirs(dataset)
    with open(os.path.join(dataset, "train.csv"), "w") as f:
        f.write("x,y\n" + "\n".join(f"{i},{2 * i}" for i in range(10)) + "\n")
    config = os.path.join(root, "config.json")
    with open(config, "w") as f:
        json.dump({"lr": 0.01}, f)
    return dataset, config


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as root:
        dataset, config = make_data(root)
        print(describe(Data(dataset), Data(config)))
        print(describe(Data(dataset), config_path=Data(config)))  # the file's cache is reused
        shared = Data(dataset)
        print(count_files([shared, shared]))                      # one mount, used twice
        if os.environ.get("KINETIC_EXAMPLE_VOLUMES") == "1":
            @kinetic.run(accelerator="cpu", volumes={"/data": Data(dataset)})
            def list_volume():
                return sorted(os.listdir("/data"))
            print(list_volume())
