"""The layer checker refuses what it should (ctest `layers_rules`): each rule is fed a package
that breaks it and one that keeps it."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import check_layers  # noqa: E402


class PythonLayer(unittest.TestCase):
    def problems_of(self, files):
        with tempfile.TemporaryDirectory() as root:
            package = os.path.join(root, "python", "kinetic")
            os.makedirs(package)
            for name, text in files.items():
                with open(os.path.join(package, name), "w", encoding="utf-8") as f:
                    f.write(text)
            return check_layers.python_layer_problems(package)

    def test_the_engine_door_may_run_the_binary(self):
        self.assertEqual(self.problems_of({
            "_engine.py": "import json, subprocess\nsubprocess.run(['kinetic'])\n",
            "_jobs.py": "from . import _engine\nimport cloudpickle\nfrom typing import Any\n",
        }), [])

    def test_another_module_may_not_start_processes(self):
        problems = self.problems_of({
            "_jobs.py": "import os\nimport json, subprocess\n",
            "_data.py": "import os\n\nos.system('gsutil cp x y')\n",
        })
        self.assertEqual(len(problems), 2, problems)
        self.assertIn("_data.py:3: os.system starts a process", problems[0])
        self.assertIn("_jobs.py:2: imports subprocess", problems[1])

    def test_only_the_standard_library_and_cloudpickle(self):
        problems = self.problems_of({"_core.py": "import requests\nfrom google.cloud import storage\n"})
        self.assertEqual(len(problems), 2, problems)
        self.assertIn("imports requests", problems[0])
        self.assertIn("imports google", problems[1])

    def test_the_real_package_keeps_the_rule(self):
        package = os.path.join(os.path.dirname(__file__), "..", "..", "python", "kinetic")
        self.assertEqual(check_layers.python_layer_problems(os.path.normpath(package)), [])


if __name__ == "__main__":
    unittest.main()
