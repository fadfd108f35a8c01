"""The notebooks execute top to bottom through a Jupyter kernel, are committed without outputs,
and show their figures."""
import os
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")  # the `test` extra installs nbformat / nbclient
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((pathlib.Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


def test_the_rig_notebooks_exist():
    assert {"candy_wrapper", "binding_methods", "rig_tour"} <= {p.stem for p in NOTEBOOKS}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    kinds = [c.cell_type for c in nb.cells]
    assert kinds[0] == "markdown" and kinds.count("markdown") >= 3  # prose between the code


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_executes(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    env_backend = os.environ.get("MPLBACKEND")
    os.environ.pop("MPLBACKEND", None)  # let the kernel use its inline backend
    try:
        client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                         resources={"metadata": {"path": str(tmp_path)}})
        client.execute()
    finally:
        if env_backend is not None:
            os.environ["MPLBACKEND"] = env_backend
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors
    images = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code"
                 for o in c.outputs)
    assert images >= 2, "the notebook's figures did not display"
