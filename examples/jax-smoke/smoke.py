# Is the accelerator there, and do all hosts of the slice talk to each other? Prints what JAX
# sees and runs one psum across every device of every host: each device adds 1, so the sum is
# the device count when the slice is whole. Exits 1 when it is not.
#
#   kinetic run smoke.py --accelerator v5litepod-8      # one host, 8 chips
#   kinetic run smoke.py --accelerator v5litepod-16     # 4 hosts: a JobSet, one pod per host
#   kinetic run smoke.py                                # here, with the CPU fallback
#
# Without jax installed (the local backend installs no requirements), it says so and runs the
# same sum over this machine's CPU cores in plain Python, so the example works anywhere.
import os
import sys


def with_jax(jax):
    import jax.numpy as jnp

    # kinetic sets JAX_COORDINATOR_ADDRESS on every host of a multi-host slice (and the TPU
    # webhook TPU_WORKER_ID), so initialize() needs no arguments; one host needs no coordinator.
    if int(os.environ.get("KINETIC_SLICE_HOSTS", "1")) > 1:
        jax.distributed.initialize()
    print("jax %s on %s: process %d of %d, %d local device(s), %d in all"
          % (jax.__version__, jax.default_backend(), jax.process_index(), jax.process_count(),
             jax.local_device_count(), jax.device_count()))
    for d in jax.local_devices():
        print("  ", d)
    ones = jnp.ones(jax.local_device_count())
    total = jax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")(ones)
    return float(total[0]), jax.device_count()


def without_jax():
    print("jax is not installed here: running the CPU fallback (the image kinetic builds for a "
          "TPU installs jax[tpu]; here, pip install jax to use it)")
    cores = os.cpu_count() or 1
    print("CPU fallback: %d core(s)" % cores)
    return float(sum(1 for _ in range(cores))), cores


def main():
    try:
        import jax
    except ImportError:
        total, devices = without_jax()
    else:
        total, devices = with_jax(jax)
    ok = total == devices
    print("psum over %d device(s) = %g: %s" % (devices, total, "ok" if ok else "MISMATCH"))
    out = os.environ.get("KINETIC_OUTPUT_DIR")
    if out:
        with open(os.path.join(out, "smoke.txt"), "w") as f:
            f.write("devices=%d psum=%g\n" % (devices, total))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
