"""The same random-weight Inception file as fid_run.py (test_fid_checkpoint's own fixture)."""
import runpy

runpy.run_path("fid_run.py", run_name="__main__")
