# The pipeline runner's launch check (lib/backend/gke/pipeline_runner.py launch_problem) against
# launches a bad plan could hold: run by test_pipeline_runner_launch.cpp with the embedded runner's
# source as argv[1]. Each case's verdict must be the one in the table: "" (it may be created) or
# a refusal containing the text given. Prints what went wrong; exits 1 if anything did.
import copy
import importlib.util
import sys

spec = importlib.util.spec_from_file_location("runner", sys.argv[1])
runner = importlib.util.module_from_spec(spec)
spec.loader.exec_module(runner)

NS = "team"
ACCOUNT = "kinetic-job"
JOBS = "/apis/batch/v1/namespaces/team/jobs"
OWN_SECRET = "/api/v1/namespaces/team/secrets/kinetic-job-1"


def good_launch():
    # A step's launch as `kinetic pipeline run --detach` writes it.
    pod = {"serviceAccountName": ACCOUNT,
           "containers": [{"name": "job", "image": "i",
                           "envFrom": [{"secretRef": {"name": "kinetic-job-1"}}]}]}
    return {"create": JOBS, "object": JOBS + "/job-1", "job": "job-1", "secret": OWN_SECRET,
            "manifest": {"apiVersion": "batch/v1", "kind": "Job",
                         "metadata": {"name": "job-1", "namespace": NS},
                         "spec": {"template": {"spec": pod}}}}


def pod_of(launch):
    return launch["manifest"]["spec"]["template"]["spec"]


def case(change):
    launch = good_launch()
    change(launch)
    return launch


def no_account(launch):
    del pod_of(launch)["serviceAccountName"]


def alias_too(launch):
    pod_of(launch)["serviceAccount"] = "kinetic-pipeline-runner"


def only_alias(launch):
    del pod_of(launch)["serviceAccountName"]
    pod_of(launch)["serviceAccount"] = ACCOUNT


def pull_secret(launch):
    pod_of(launch)["imagePullSecrets"] = [{"name": "registry-key"}]


def secret_volume(launch):
    pod_of(launch)["volumes"] = [{"name": "v", "secret": {"secretName": "kinetic-job-2"}}]


def secret_env(launch):
    pod_of(launch)["containers"][0]["env"] = [
        {"name": "K", "valueFrom": {"secretKeyRef": {"name": "kinetic-job-2", "key": "K"}}}]


def other_namespace(launch):
    launch["manifest"]["metadata"]["namespace"] = "kube-system"


def other_paths(launch):
    launch["object"] = JOBS + "/someone-elses"


def a_pod(launch):
    launch["manifest"]["apiVersion"], launch["manifest"]["kind"] = "v1", "Pod"


def foreign_secret_path(launch):
    launch["secret"] = "/api/v1/namespaces/kube-system/secrets/x"


CASES = [
    ("the launch kinetic writes", case(lambda launch: None), ""),
    ("a pod that names no account runs as the namespace's default", case(no_account),
     "would run as service account default; a step's run as kinetic-job"),
    ("the deprecated serviceAccount naming another account", case(alias_too),
     "would run as service account kinetic-pipeline-runner"),
    ("the deprecated serviceAccount alone naming the jobs' account", case(only_alias),
     "would run as service account default"),
    ("an image pull Secret", case(pull_secret), "would use the Secret registry-key"),
    ("another step's Secret as a volume", case(secret_volume), "would use the Secret kinetic-job-2"),
    ("another step's Secret in env", case(secret_env), "would use the Secret kinetic-job-2"),
    ("another namespace", case(other_namespace), "is in namespace 'kube-system'"),
    ("paths that are not its workload's", case(other_paths), "its paths are not its workload's"),
    ("a bare Pod", case(a_pod), "a step runs a batch/v1 Job or a JobSet"),
    ("a Secret elsewhere", case(foreign_secret_path), "its Secret is not in namespace team"),
]

failed = 0
for name, launch, want in CASES:
    got = runner.launch_problem(copy.deepcopy(launch), NS, ACCOUNT)
    if (want == "" and got != "") or (want != "" and want not in got):
        print("%s: launch_problem said %r, expected %r" % (name, got, want or "no problem"))
        failed += 1
sys.exit(1 if failed else 0)
