"""The example notebook runs from top to bottom (so it cannot rot)."""

from __future__ import annotations

from pathlib import Path

import nbclient
import nbformat

from conftest import REPO


def test_the_tour_notebook_runs(tmp_path: Path):
    path = REPO / "examples" / "rtlab-tour.ipynb"
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "EDF accepts 100 of 100" in text
    assert "sha256:" in text
