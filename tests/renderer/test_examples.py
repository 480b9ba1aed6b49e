"""The example clusters' live files are what `gpu-gitops import` writes from their live objects.

python -m tests.renderer.test_examples     # rewrites clusters/lab1/kubevirt.yaml
"""

from __future__ import annotations

from kubedata.yaml_io import load_all
from renderer.kubevirt_file import kubevirt_file_text
from renderer.live_file import ImportMark
from tests.conftest import REPO_ROOT

LIVE = REPO_ROOT / "tests" / "data" / "examples" / "lab1-kubevirt.yaml"
FILE = REPO_ROOT / "clusters" / "lab1" / "kubevirt.yaml"
MARK = ImportMark("https://api.lab1.example.net:6443 (context lab1-admin)", "2026-11-30T09:00:00Z")


def lab1_kubevirt() -> str:
    [live] = load_all(LIVE.read_text())
    return kubevirt_file_text(live, "lab1", MARK)


def test_lab1_kubevirt_yaml_is_the_import_of_its_live_cr() -> None:
    assert FILE.read_text() == lab1_kubevirt()


if __name__ == "__main__":
    FILE.write_text(lab1_kubevirt())
