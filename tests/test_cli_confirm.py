"""`warplint --confirm` end to end through the CLI, on real Warp (CPU)."""

import json
import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent(
    """
    import warp as wp

    @wp.kernel
    def k(a: wp.array(dtype=float)):
        a[0] = a[0] + 1.0

    def run():
        a = wp.zeros(1, dtype=float, device="cpu")
        wp.launch(k, dim=1, inputs=[a], device="cpu")
        wp.set_module_options({"max_unroll": 3})
        wp.launch(k, dim=1, inputs=[a], device="cpu")
        if a.numpy()[0] > 100:
            wp.force_load(device="cpu")  # never runs

    if __name__ == "__main__":
        run()
    """
)


def test_confirm_json_end_to_end(tmp_path):
    (tmp_path / "app.py").write_text(PROGRAM)
    proc = subprocess.run(
        [sys.executable, "-m", "warplint", "app.py", "--format", "json", "--confirm", "--", sys.executable, "app.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 1, proc.stderr
    document = json.loads(proc.stdout)
    by_code = {f["code"]: f for f in document["findings"]}
    assert by_code["WC102"]["confirm"]["verdict"] == "confirmed"
    assert by_code["WC102"]["confirm"]["cost_ms"] > 0
    assert by_code["WC501"]["confirm"]["verdict"] == "not-exercised"
    assert document["confirm"]["summary"]["recorder_ok"] is True
    assert not list(tmp_path.glob("**/__pycache__")), "--confirm must not write into the project"


def test_confirm_failing_program_reports_static_findings_and_exits_2(tmp_path):
    (tmp_path / "app.py").write_text("import warp as wp\nwp.force_load()  # static finding\nraise SystemExit(3)\n")
    proc = subprocess.run(
        [sys.executable, "-m", "warplint", "app.py", "--format", "concise", "--confirm", "--",
         sys.executable, "app.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 2
    assert "app.py:2:1: WC501" in proc.stdout
    assert "--confirm" in proc.stderr
